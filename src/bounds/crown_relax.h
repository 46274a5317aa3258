// Internal: sound linear relaxations of elementwise functions on an interval [l, u]:
//   lo.a x + lo.b <= f(x) <= up.a x + up.b   for every real x in [l, u], in exact arithmetic.
// The slopes are computed in double and may be off; every intercept is then chosen (rounded
// outward) so that the inequality holds for the slope actually used (docs/NUMERICS.md, "Linear
// bounds"). Shapes: relu and abs (piecewise linear), convex (exp, softplus, inv on l > 0),
// concave (log, sqrt, inv on u < 0), S-shaped with the inflection at 0 (tanh, sigmoid, erf).
#pragma once

#include <algorithm>
#include <cmath>

#include "bounds/crown_state.h"

namespace denote::crown {

struct Line {
  double a = 0, b = 0;
};
struct Relax {
  Line lo, up;
  bool ok = true;  // false: no relaxation (outside the function's domain, non-finite values)
};

// A lower bound of f(p) - a p and an upper bound, given f's value enclosure [flo, fhi] at p.
inline double lower_intercept(double flo, double a, double p) { return dn(dn(flo) - up(a * p)); }
inline double upper_intercept(double fhi, double a, double p) { return up(up(fhi) - dn(a * p)); }

// relu: adaptive lower slope (auto_LiRPA's default: 1 when u > -l, else 0) unless alpha >= 0 is
// given; upper line through (l, 0) and (u, u).
inline Relax relax_relu(double l, double u, double alpha = -1) {
  Relax r;
  if (l >= 0) {
    r.lo = r.up = {1, 0};
  } else if (u <= 0) {
    r.lo = r.up = {0, 0};
  } else {
    const double s = u / (u - l);
    r.up = {s, std::max(up(-(s * l)), up(u - dn(s * u)))};
    r.lo = {alpha >= 0 ? alpha : (u > -l ? 1.0 : 0.0), 0};
  }
  return r;
}

// abs: exact when the sign is known; else the chord above and a slope in [-1, 1] below.
inline Relax relax_abs(double l, double u, double alpha = -2) {
  Relax r;
  if (l >= 0) {
    r.lo = r.up = {1, 0};
  } else if (u <= 0) {
    r.lo = r.up = {-1, 0};
  } else {
    const double s = (u + l) / (u - l);
    r.up = {s, std::max(up(-l - dn(s * l)), up(u - dn(s * u)))};
    r.lo = {alpha >= -1 ? alpha : std::clamp(s, -1.0, 1.0), 0};
  }
  return r;
}

// A smooth function with its derivative, both libm values within `rel` relative error.
struct Smooth {
  double (*f)(double);
  double (*df)(double);
  double rel = 16 * kU;  // of f and of df
  double dabs = 0;       // absolute error of df on top (1 - tanh^2, s (1 - s) cancel)
};
inline double flo(const Smooth& s, double x) {
  const double v = s.f(x);
  return v - std::fabs(v) * s.rel - 1e-300;
}
inline double fhi(const Smooth& s, double x) {
  const double v = s.f(x);
  return v + std::fabs(v) * s.rel + 1e-300;
}

// Tangent line at d (in [l, u]) below a convex f: f(x) >= f(d) + f'(d)(x - d); the slope's error
// |a - f'(d)| times the largest |x - d| is subtracted.
inline Line tangent_below(const Smooth& s, double l, double u, double d) {
  const double a = s.df(d);
  const double da = std::fabs(a) * s.rel + s.dabs + 1e-300;
  const double w = up(std::max(up(u - d), up(d - l)));
  return {a, dn(lower_intercept(flo(s, d), a, d) - up(da * w))};
}
inline Line tangent_above(const Smooth& s, double l, double u, double d) {
  const double a = s.df(d);
  const double da = std::fabs(a) * s.rel + s.dabs + 1e-300;
  const double w = up(std::max(up(u - d), up(d - l)));
  return {a, up(upper_intercept(fhi(s, d), a, d) + up(da * w))};
}
// The line of slope a above f at l and at u (above a convex f on [l, u]: it is above the chord).
inline Line chord_above(const Smooth& s, double l, double u, double a) {
  return {a, std::max(upper_intercept(fhi(s, l), a, l), upper_intercept(fhi(s, u), a, u))};
}
inline Line chord_below(const Smooth& s, double l, double u, double a) {
  return {a, std::min(lower_intercept(flo(s, l), a, l), lower_intercept(flo(s, u), a, u))};
}
inline double chord_slope(const Smooth& s, double l, double u) {
  return u > l ? (s.f(u) - s.f(l)) / (u - l) : s.df(l);
}

inline Relax finish(Relax r) {
  r.ok = std::isfinite(r.lo.a) && std::isfinite(r.lo.b) && std::isfinite(r.up.a) && std::isfinite(r.up.b);
  return r;
}

inline Relax relax_convex(const Smooth& s, double l, double u) {
  Relax r;
  r.lo = tangent_below(s, l, u, l + (u - l) / 2);
  r.up = chord_above(s, l, u, chord_slope(s, l, u));
  return finish(r);
}
inline Relax relax_concave(const Smooth& s, double l, double u) {
  Relax r;
  r.up = tangent_above(s, l, u, l + (u - l) / 2);
  r.lo = chord_below(s, l, u, chord_slope(s, l, u));
  return finish(r);
}

// sin and cos on a box holding none of their zeros (the inflection points: sin's at k pi, cos's at
// pi / 2 + k pi; decided with a margin of 1e-9 in k, as the interval rule's period analysis): concave where
// the function is positive, convex where negative. A box that may hold a zero, is wider than 3 or beyond
// 1e6: not ok (cut at its box).
inline Relax relax_periodic(const Smooth& s, double phase, double l, double u) {
  if (!(u - l < 3) || !(std::fabs(l) < 1e6) || !(std::fabs(u) < 1e6)) return Relax{{}, {}, false};
  constexpr double kPi = 3.141592653589793;
  if (std::floor((l - phase) / kPi - 1e-9) != std::floor((u - phase) / kPi + 1e-9)) return Relax{{}, {}, false};
  return s.f(l + (u - l) / 2) > 0 ? relax_concave(s, l, u) : relax_convex(s, l, u);
}
inline double sin_value(double x) { return std::sin(x); }
inline double cos_value(double x) { return std::cos(x); }
inline double neg_sin_value(double x) { return -std::sin(x); }
inline Relax relax_sin(double l, double u) { return relax_periodic(Smooth{sin_value, cos_value}, 0.0, l, u); }
inline Relax relax_cos(double l, double u) {
  return relax_periodic(Smooth{cos_value, neg_sin_value}, 1.5707963267948966, l, u);
}

// Increasing, convex on x <= 0 and concave on x >= 0, l < 0 < u. A lower line of slope f'(d) at a point
// d in [l, 0], under the tangent at d and under f at u (f_u: a lower enclosure of f(u)): below f on
// [l, 0] (under the tangent, f convex there) and on [0, u] (under f at 0 and at u, f concave there).
// The upper line mirrors it: slope f'(d), d in [0, u], above the tangent at d and above f at l.
inline Line s_lower_at(const Smooth& s, double l, double u, double d, double f_u) {
  Line ln = tangent_below(s, l, u, d);
  ln.b = std::min(ln.b, lower_intercept(f_u, ln.a, u));
  return ln;
}
inline Line s_upper_at(const Smooth& s, double l, double u, double d, double f_l) {
  Line ln = tangent_above(s, l, u, d);
  ln.b = std::max(ln.b, upper_intercept(f_l, ln.a, l));
  return ln;
}
// CROWN's tangent points: d in [l, 0] whose tangent passes through (u, f(u)) (lower), d in [0, u] whose
// tangent passes through (l, f(l)) (upper); NaN when the endpoint's own tangent already misses it (then the
// chord is the line). By bisection on g(d) = f(d) + f'(d) (u - d) - f(u), increasing on [l, 0] (g' =
// f''(d) (u - d) >= 0; the upper's g' = f''(d) (l - d) >= 0 on [0, u] too); its accuracy does not matter
// for soundness (s_lower_at and s_upper_at hold for every d).
inline double s_lower_point(const Smooth& s, double l, double u) {
  const double fu = s.f(u);
  auto g = [&](double d) { return s.f(d) + s.df(d) * (u - d) - fu; };
  if (!(g(l) <= 0)) return NAN;
  if (g(0) <= 0) return 0;
  double a = l, b = 0;
  for (int i = 0; i < 40; ++i) {
    const double mid = a + (b - a) / 2;
    (g(mid) <= 0 ? a : b) = mid;
  }
  return a;
}
inline double s_upper_point(const Smooth& s, double l, double u) {
  const double fl = s.f(l);
  auto g = [&](double d) { return s.f(d) + s.df(d) * (l - d) - fl; };
  if (!(g(u) >= 0)) return NAN;
  if (g(0) >= 0) return 0;
  double a = 0, b = u;
  for (int i = 0; i < 40; ++i) {
    const double mid = a + (b - a) / 2;
    (g(mid) >= 0 ? b : a) = mid;
  }
  return b;
}

// Mixed sign: below, CROWN's tangent through (u, f(u)) (s_lower_point, s_lower_at), or the tangent at
// the midpoint when that point is left of the midpoint (every point left of it is valid; auto_LiRPA's
// default too: tighter on the long side of a lopsided interval); where there is none,
// the line through l with slope a <= min(f'(l), chord) under f at l, 0 and u (convex part: under the
// tangent at l; concave part: under the chord from 0 to u); above, the mirror image at u.
inline Relax relax_s_shaped(const Smooth& s, double l, double u) {
  if (u <= 0) return relax_convex(s, l, u);
  if (l >= 0) return relax_concave(s, l, u);
  const double c = chord_slope(s, l, u);
  Relax r;
  const double mid = l + (u - l) / 2;
  if (const double d = s_lower_point(s, l, u); !std::isnan(d)) {
    r.lo = s_lower_at(s, l, u, std::min(d, mid), flo(s, u));
  } else {
    const double al = std::max(0.0, std::min(c, s.df(l) * (1 - 4 * s.rel) - 2 * s.dabs - 1e-300));
    r.lo = {al, std::min({lower_intercept(flo(s, l), al, l), lower_intercept(flo(s, 0), al, 0),
                           lower_intercept(flo(s, u), al, u)})};
  }
  if (const double d = s_upper_point(s, l, u); !std::isnan(d)) {
    r.up = s_upper_at(s, l, u, std::max(d, mid), fhi(s, l));
  } else {
    const double au = std::max(0.0, std::min(c, s.df(u) * (1 - 4 * s.rel) - 2 * s.dabs - 1e-300));
    r.up = {au, std::max({upper_intercept(fhi(s, l), au, l), upper_intercept(fhi(s, 0), au, 0),
                           upper_intercept(fhi(s, u), au, u)})};
  }
  return finish(r);
}

}  // namespace denote::crown
