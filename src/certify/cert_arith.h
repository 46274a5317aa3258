// Internal: the checker's arithmetic. Everything is computed in binary64 with round to nearest (any
// order, fused or not), and every result that a proof rests on is widened by an a-priori bound of its
// rounding error: a sum of n products with |error| <= gamma_n * sum |p_i| + n * eta (Higham, Accuracy
// and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and section 3.1), plus one step outward
// (next_up / next_down) after the last operation. No rounding mode is switched, so nothing depends on
// how a compiler orders floating-point operations around fesetround. Shares no code with src/bounds/.
#pragma once

#include <cmath>
#include <cstdint>

#include "denote/base/next_float.h"

namespace denote::certify {

inline constexpr double kUnit = 0x1p-53;   // unit roundoff of binary64
inline constexpr double kEta = 0x1p-1074;  // the smallest subnormal: underflow's absolute error

// An upper bound of the rounding error of a sum of up to n operations whose terms have absolute sum t
// (t itself computed in round to nearest): 2 (n + 2) u t + (n + 2) eta, with slack for computing it.
inline double err_bound(double t, double n) { return (n + 2) * (2.02 * kUnit) * t + (n + 2) * (2 * kEta); }

// a + b with a, b upper bounds: an upper bound of the exact sum.
inline double add_up(double a, double b) { return next_up(a + b); }
inline double add_dn(double a, double b) { return next_down(a + b); }

// A lower (and upper) bound of a sum of exact products and exact doubles.
struct Sum {
  double s = 0, t = 0;
  double n = 0;
  void add(double v) { s += v, t += std::fabs(v), n += 1; }
  void add_prod(double x, double y) {
    const double p = x * y;
    s += p, t += std::fabs(p), n += 2;
  }
  // -inf / +inf when something was not finite.
  double lower() const {
    const double v = next_down(s - err_bound(t, n));
    return std::isnan(v) ? -INFINITY : v;
  }
  double upper() const {
    const double v = next_up(s + err_bound(t, n));
    return std::isnan(v) ? INFINITY : v;
  }
};

// binary32: a bound of one f32 evaluation's error on a sum of n terms (products and a bias) whose
// magnitudes sum to t, in any order (gamma_n u32 t, Higham's Lemma 3.1), its parameters rounded to f32
// first (u32 t more): (n + 1) u32 t with slack, plus underflow.
inline constexpr double kUnit32 = 0x1p-24, kEta32 = 0x1p-149;
inline double f32_err(double t, double n) { return next_up(next_up(t * ((n + 1) * (1.02 * kUnit32))) + (n + 3) * kEta32); }

// A sum of products whose radius terms and rounding are folded into one nonnegative accumulation:
// q = sum (r_i + kappa(n) |m_i|) |w_i| bounds both the radii's part and the rounding error of sum m_i w_i
// over n operations (kappa(n) = err_bound's coefficient); radius_folded adds q's own rounding and underflow.
inline double kappa(double n) { return (n + 2) * (2.02 * kUnit); }
inline double radius_folded(double q, double n) {
  return next_up(next_up(q * (1 + (n + 2) * (2.02 * kUnit))) + (n + 2) * (2 * kEta));
}

// A lower bound of a h - mu z (terms with a zero factor are exactly 0): one rounding of each product
// and of the difference, bounded by 4 u of the products' magnitudes plus underflow.
inline double lower_of_difference(double a, double h, double mu, double z) {
  const double p = a != 0 && h != 0 ? a * h : 0.0, q = mu != 0 && z != 0 ? mu * z : 0.0;
  return (p - q) - ((std::fabs(p) + std::fabs(q)) * (4 * kUnit) + 4 * kEta);
}

// An interval held as midpoint and radius: the exact value lies in [mid - rad, mid + rad], rad >= 0.
// From computed sums: s (the midpoint's sum), t (sum of |terms| of s), q (sum of the radii's terms,
// all >= 0) over n operations.
inline double radius_of(double t, double q, double n) {
  const double qq = next_up(q * (1 + (n + 2) * (2.02 * kUnit)));
  return next_up(qq + err_bound(t, n));
}
inline double lo_of(double mid, double rad) { return next_down(mid - rad); }
inline double hi_of(double mid, double rad) { return next_up(mid + rad); }
// Midpoint and radius of [lo, hi].
inline void mid_rad(double lo, double hi, double& mid, double& rad) {
  mid = 0.5 * lo + 0.5 * hi;
  rad = next_up(std::fmax(next_up(hi - mid), next_up(mid - lo)) + 2 * kEta);
}

}  // namespace denote::certify
