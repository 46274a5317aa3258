// Refuting a conjunction by a combination of its atoms' linear lower bounds (src/verify/combine.h).
#include "verify/combine.h"

#include <algorithm>
#include <cmath>

#include "denote/base/next_float.h"

namespace denote::verify_detail {

namespace {

double add_dn(double a, double b) { return next_down(a + b); }
double mul_dn(double a, double b) { return next_down(a * b); }

bool all_finite(std::span<const double> v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

// The simplex tableau: rows 0..m-1 the constraints [A | I | b], row m the reduced costs (last entry:
// minus the objective). basis[i] = the variable row i solves for.
struct Tableau {
  size_t m, width;
  std::vector<double> t;
  std::vector<size_t> basis;
  double& at(size_t i, size_t j) { return t[i * width + j]; }

  void pivot(size_t r, size_t e) {
    const double p = at(r, e);
    for (size_t j = 0; j < width; ++j) at(r, j) /= p;
    for (size_t i = 0; i <= m; ++i) {
      const double f = at(i, e);
      if (i == r || f == 0) continue;
      for (size_t j = 0; j < width; ++j) at(i, j) -= f * at(r, j);
    }
    basis[r] = e;
  }
};

}  // namespace

std::optional<std::vector<double>> lp_max_origin_feasible(const std::vector<double>& c, const std::vector<double>& A,
                                                          const std::vector<double>& b, int max_pivots) {
  const size_t n = c.size(), m = b.size();
  if (A.size() != m * n || !all_finite(c) || !all_finite(A) || !all_finite(b)) return std::nullopt;
  if (std::any_of(b.begin(), b.end(), [](double x) { return x < 0; })) return std::nullopt;
  double cmax = 0, amax = 0;
  for (double x : c) cmax = std::max(cmax, std::fabs(x));
  for (double x : A) amax = std::max(amax, std::fabs(x));
  const double eps_cost = 1e-12 * std::max(cmax, 1e-300), eps_piv = 1e-12 * std::max(amax, 1.0);
  const size_t vars = n + m;
  Tableau T{m, vars + 1, std::vector<double>((m + 1) * (vars + 1), 0.0), std::vector<size_t>(m)};
  for (size_t i = 0; i < m; ++i) {
    for (size_t j = 0; j < n; ++j) T.at(i, j) = A[i * n + j];
    T.at(i, n + i) = 1;
    T.at(i, vars) = b[i];
    T.basis[i] = n + i;
  }
  for (size_t j = 0; j < n; ++j) T.at(m, j) = c[j];
  for (int it = 0;; ++it) {
    size_t e = vars;  // Bland: the first improving column
    for (size_t j = 0; j < vars && e == vars; ++j)
      if (T.at(m, j) > eps_cost) e = j;
    if (e == vars) break;
    if (it == max_pivots) return std::nullopt;
    size_t r = m;
    double best = INFINITY;
    for (size_t i = 0; i < m; ++i) {
      const double a = T.at(i, e);
      if (a <= eps_piv) continue;
      const double ratio = T.at(i, vars) / a;
      if (ratio < best || (ratio == best && T.basis[i] < T.basis[r])) best = ratio, r = i;
    }
    if (r == m) return std::nullopt;  // unbounded
    T.pivot(r, e);
  }
  std::vector<double> v(n, 0.0);
  for (size_t i = 0; i < m; ++i)
    if (T.basis[i] < n) v[T.basis[i]] = std::max(T.at(i, vars), 0.0);
  return v;
}

double combined_lower_bound(std::span<const double> lambda, std::span<const double> low, std::span<const double> rhs,
                            std::span<const double> coef, std::span<const double> lo, std::span<const double> hi) {
  const size_t K = lambda.size(), n = lo.size();
  if (low.size() != K || rhs.size() != K || coef.size() != K * n || hi.size() != n) return -INFINITY;
  double total = 0;
  for (size_t k = 0; k < K; ++k) {
    if (!(lambda[k] >= 0) || !std::isfinite(lambda[k])) return -INFINITY;
    if (lambda[k] == 0) continue;
    if (!std::isfinite(low[k]) || !std::isfinite(rhs[k])) return -INFINITY;
    total = add_dn(total, mul_dn(lambda[k], next_down(low[k] - rhs[k])));
  }
  for (size_t i = 0; i < n; ++i) {
    double p = 0, q = 0;  // lower bounds of P_i and N_i
    for (size_t k = 0; k < K; ++k) {
      const double a = coef[k * n + i];
      if (lambda[k] == 0 || a == 0) continue;
      if (!std::isfinite(a)) return -INFINITY;
      if (a > 0)
        p = add_dn(p, mul_dn(lambda[k], a));
      else
        q = add_dn(q, mul_dn(lambda[k], -a));
    }
    const double w = next_down(hi[i] - lo[i]);
    if (!std::isfinite(w)) return -INFINITY;
    const double pq = std::min(p, q);
    if (w > 0 && pq > 0) total = add_dn(total, mul_dn(w, pq));  // a term <= 0 is dropped: still a lower bound
  }
  return std::isfinite(total) ? total : -INFINITY;
}

std::optional<std::vector<double>> refuting_combination(std::span<const double> low, std::span<const double> rhs,
                                                        std::span<const double> coef, std::span<const double> lo,
                                                        std::span<const double> hi) {
  const size_t K = low.size(), n = lo.size();
  if (rhs.size() != K || coef.size() != K * n || hi.size() != n || K < 2) return std::nullopt;
  // Atoms that can take part: finite bounds, and F's upper estimate sum_k lambda_k (s_k + 1/2 sum_i
  // w_i |a_ki|) (min(P, N) <= (P + N) / 2) positive for at least one of them, else no lambda can prove.
  std::vector<size_t> use;
  size_t hopeful = 0;
  for (size_t k = 0; k < K; ++k) {
    const double s = low[k] - rhs[k];
    if (!std::isfinite(s)) continue;
    double spread = 0;
    for (size_t i = 0; i < n; ++i) spread += (hi[i] - lo[i]) * std::fabs(coef[k * n + i]);
    if (!std::isfinite(spread)) continue;
    use.push_back(k);
    if (s + spread / 2 > 0) ++hopeful;
  }
  if (use.size() < 2 || hopeful == 0) return std::nullopt;
  // Variables: lambda (one per atom used), then z_i = w_i min(P_i, N_i) (scaled by the width so the
  // columns are of the size of the gaps). maximize sum_k s_k lambda_k + sum_i z_i subject to
  // sum lambda <= 1, z_i <= w_i P_i, z_i <= w_i N_i. (F is homogeneous: any positive optimum serves.)
  const size_t u = use.size(), cols = u + n, rows = 1 + 2 * n;
  std::vector<double> c(cols, 0.0), A(rows * cols, 0.0), b(rows, 0.0);
  for (size_t j = 0; j < u; ++j) c[j] = low[use[j]] - rhs[use[j]], A[j] = 1;
  b[0] = 1;
  for (size_t i = 0; i < n; ++i) {
    c[u + i] = 1;
    const double w = hi[i] - lo[i];
    double* pr = A.data() + (1 + i) * cols;
    double* nr = A.data() + (1 + n + i) * cols;
    pr[u + i] = nr[u + i] = 1;
    for (size_t j = 0; j < u; ++j) {
      const double a = coef[use[j] * n + i];
      if (a > 0) pr[j] = -w * a;
      if (a < 0) nr[j] = w * a;
    }
  }
  const auto v = lp_max_origin_feasible(c, A, b);
  if (!v) return std::nullopt;
  std::vector<double> lambda(K, 0.0);
  for (size_t j = 0; j < u; ++j) lambda[use[j]] = (*v)[j];
  if (combined_lower_bound(lambda, low, rhs, coef, lo, hi) > 0) return lambda;
  return std::nullopt;
}

}  // namespace denote::verify_detail
