// alpha-CROWN's tangent points of the S-shaped ops (src/bounds/crown_tangents.h).
#include "bounds/crown_tangents.h"

#include <algorithm>
#include <cmath>

namespace denote::crown {

TangentBox tangent_box(const Smooth& s, double l, double u) {
  TangentBox e{l, u, flo(s, u), fhi(s, l)};
  if (l < 0 && u > 0) e.lower_max = s_lower_point(s, l, u), e.upper_min = s_upper_point(s, l, u);
  return e;
}

bool lower_range(const TangentBox& e, double& lo, double& hi) {
  if (!(e.l < e.u) || e.l >= 0) return false;
  if (e.u <= 0) return lo = e.l, hi = e.u, true;
  if (std::isnan(e.lower_max)) return false;
  return lo = e.l, hi = std::max(e.l, e.lower_max), true;
}
bool upper_range(const TangentBox& e, double& lo, double& hi) {
  if (!(e.l < e.u) || e.u <= 0) return false;
  if (e.l >= 0) return lo = e.l, hi = e.u, true;
  if (std::isnan(e.upper_min)) return false;
  return lo = std::min(e.u, e.upper_min), hi = e.u, true;
}

bool tangent_lower(const Smooth& s, const TangentBox& e, double d, Line& out, double* pivot) {
  double lo = 0, hi = 0;
  if (std::isnan(d) || !lower_range(e, lo, hi)) return false;
  d = std::clamp(d, lo, hi);
  out = e.u > 0 ? s_lower_at(s, e.l, e.u, d, e.f_u) : tangent_below(s, e.l, e.u, d);
  if (pivot) *pivot = e.u > 0 && out.b == lower_intercept(e.f_u, out.a, e.u) ? e.u : d;
  return std::isfinite(out.a) && std::isfinite(out.b);
}
bool tangent_upper(const Smooth& s, const TangentBox& e, double d, Line& out, double* pivot) {
  double lo = 0, hi = 0;
  if (std::isnan(d) || !upper_range(e, lo, hi)) return false;
  d = std::clamp(d, lo, hi);
  out = e.l < 0 ? s_upper_at(s, e.l, e.u, d, e.f_l) : tangent_above(s, e.l, e.u, d);
  if (pivot) *pivot = e.l < 0 && out.b == upper_intercept(e.f_l, out.a, e.l) ? e.l : d;
  return std::isfinite(out.a) && std::isfinite(out.b);
}

void init_tangents(const Smooth& s, const DoubleBox& xb, int64_t rows, std::vector<double>& t) {
  const size_t m = xb.lo.size(), n = static_cast<size_t>(rows) * m;
  t.assign(2 * n, NAN);
  for (size_t j = 0; j < m; ++j) {
    const TangentBox e = tangent_box(s, xb.lo[j], xb.hi[j]);
    const double mid = e.l + (e.u - e.l) / 2;
    double lo = 0, hi = 0, dl = NAN, du = NAN;
    if (lower_range(e, lo, hi)) dl = std::min(mid, hi);  // crown_relax.h's relax_s_shaped / relax_convex
    if (upper_range(e, lo, hi)) du = std::max(mid, lo);
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) t[r * m + j] = dl, t[n + r * m + j] = du;
  }
}

void tangent_step(const Smooth& s, const DoubleBox& xb, const std::vector<double>& A, const std::vector<double>& X,
                  int64_t rows, double lr, double c1, double c2, std::vector<double>& t, std::vector<double>& m,
                  std::vector<double>& v) {
  const double b1 = 0.9, b2 = 0.999;
  const size_t width = xb.lo.size(), n = static_cast<size_t>(rows) * width;
  if (t.size() != 2 * n || A.size() != n || X.size() != n) return;
  std::vector<TangentBox> boxes(width);
  for (size_t j = 0; j < width; ++j) boxes[j] = tangent_box(s, xb.lo[j], xb.hi[j]);
  for (size_t i = 0; i < 2 * n; ++i) {
    if (std::isnan(t[i])) continue;
    const bool lower = i < n;
    const size_t k = lower ? i : i - n;
    const TangentBox& e = boxes[k % width];
    double lo = 0, hi = 0;
    if (!(lower ? lower_range(e, lo, hi) : upper_range(e, lo, hi))) continue;
    // The bound adds A * (line at X): the lower line where A >= 0, the upper one where A < 0, whose
    // value moves with d as f''(d) (X - pivot); f'' by a central difference of f'.
    double grad = 0;
    if (lower ? A[k] > 0 : A[k] < 0) {
      Line ln;
      double pivot = 0;
      const bool ok = lower ? tangent_lower(s, e, t[i], ln, &pivot) : tangent_upper(s, e, t[i], ln, &pivot);
      const double d = std::clamp(t[i], lo, hi), h = 1e-4 * std::max(1.0, std::fabs(d));
      const double f2 = (s.df(d + h) - s.df(d - h)) / (2 * h);
      if (ok && std::isfinite(f2)) grad = A[k] * f2 * (X[k] - pivot);
    }
    m[i] = b1 * m[i] + (1 - b1) * grad;
    v[i] = b2 * v[i] + (1 - b2) * grad * grad;
    // The step in units of the range: Adam's step is about lr, so the parameters move like relu's slopes.
    t[i] = std::clamp(t[i] + lr * (m[i] / c1) / (std::sqrt(v[i] / c2) + 1e-8), lo, hi);
  }
}

}  // namespace denote::crown
