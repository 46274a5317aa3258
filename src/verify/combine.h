// Internal: refuting a conjunction of atoms on an input box by a nonnegative combination of their
// linear lower bounds (src/verify/combine.cc; docs/VERIFY.md, "Combined atoms").
//
// CROWN bounds each atom's left-hand side f_k(x) = c_k . y(x) on a box B by a linear function of the
// input: f_k(x) >= a_k . x + beta_k on B, and low_k <= min_B (a_k . x) + beta_k. Hence, for x in B,
//   f_k(x) >= low_k + sum_i |a_ki| d_ki(x_i),
// with d_ki(x_i) = x_i - lo_i where a_ki >= 0 and hi_i - x_i otherwise. A point violating the property
// needs f_k(x) <= rhs_k for every k. Per atom, low_k > rhs_k refutes it; when no single atom does, a
// combination with multipliers lambda_k >= 0 still can:
//   min_B sum_k lambda_k (f_k(x) - rhs_k) >= sum_k lambda_k (low_k - rhs_k) + sum_i w_i min(P_i, N_i) > 0,
// where w_i = hi_i - lo_i, P_i = sum over a_ki > 0 of lambda_k a_ki, N_i = sum over a_ki < 0 of
// lambda_k |a_ki|. The best lambda solves a small linear program (a dense simplex here: a few atoms,
// a few inputs); the proof does not trust it: the right-hand side is evaluated again with every
// operation rounded down, and only a positive result refutes the conjunction.
#pragma once

#include <optional>
#include <span>
#include <vector>

namespace denote::verify_detail {

// maximize c . v subject to A v <= b, v >= 0, with b >= 0 (the origin is feasible), A rows x cols
// row-major. Dense tableau, Bland's rule (no cycling), at most max_pivots pivots. nullopt when the
// problem is unbounded, the input is malformed or not finite, or the pivots run out.
std::optional<std::vector<double>> lp_max_origin_feasible(const std::vector<double>& c, const std::vector<double>& A,
                                                          const std::vector<double>& b, int max_pivots = 1000);

// The atoms' lower bounds low (K), right-hand sides rounded up rhs (K), the input coefficients of the
// lower bounds coef (K x n, row-major) and the box [lo, hi] (n each): the multipliers lambda >= 0 that
// prove no point of the box satisfies every atom (the bound above, rounded down, is positive), or
// nullopt. Atoms with an infinite or NaN bound take no part.
std::optional<std::vector<double>> refuting_combination(std::span<const double> low, std::span<const double> rhs,
                                                        std::span<const double> coef, std::span<const double> lo,
                                                        std::span<const double> hi);

// The bound sum_k lambda_k (low_k - rhs_k) + sum_i w_i min(P_i, N_i) with every operation rounded down
// (a lower bound of its exact value); -inf when something is not finite.
double combined_lower_bound(std::span<const double> lambda, std::span<const double> low, std::span<const double> rhs,
                            std::span<const double> coef, std::span<const double> lo, std::span<const double> hi);

}  // namespace denote::verify_detail
