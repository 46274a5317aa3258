// Internal: what the dedicated interval rules (ibp_rules.h) share. A dedicated rule computes an
// enclosure of the exact real image in double intervals (IntervalContext<NativeEndpoints<double>>,
// outward rounded), then widens it by a bound on the rounding error of the evaluator that runs in
// the endpoint format (FormatModel), because a box must also contain the value the generic
// evaluator computes in that format (see interval.h). Finally it is intersected with the generic
// rule's box (both are sound, so the intersection is) and rounded outward into the endpoint type.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "denote/bounds/interval.h"
#include "denote/base/next_float.h"
#include "../ops/eval_args.h"

namespace denote::ibp {

using DInterval = Interval<double>;
using DContext = IntervalContext<NativeEndpoints<double>>;

inline double up(double x) { return next_up(x); }
inline double down(double x) { return next_down(x); }

// How the endpoint format's own evaluator rounds: unit roundoff u, the relative error of its exp /
// log / log1p / sqrt (libm: NativeEndpoints::kLibmUlps ulps = 2·kLibmUlps·u; software formats are
// correctly rounded: u), an absolute error that covers underflow of one operation (eta), and a
// lower bound of the largest finite value.
struct FormatModel {
  double u = 0, fn_rel = 0, eta = 0, max_finite = 0;
  // gamma_n = n·u / (1 - n·u), the classic bound of an n-term floating-point sum or product.
  double gamma(double n) const { return n * u < 0.5 ? n * u / (1 - n * u) : std::numeric_limits<double>::infinity(); }
};

template <class T>
FormatModel format_model(const NativeEndpoints<T>&) {
  FormatModel m;
  m.u = std::numeric_limits<T>::epsilon() / 2;
  m.fn_rel = 2.0 * NativeEndpoints<T>::kLibmUlps * m.u;
  m.eta = 8.0 * static_cast<double>(std::numeric_limits<T>::denorm_min());
  m.max_finite = static_cast<double>(std::numeric_limits<T>::max());
  return m;
}

inline FormatModel format_model(const BinaryEndpoints& e) {
  const BinaryFormat& f = e.format();
  FormatModel m;
  m.u = std::ldexp(1.0, -f.precision());
  m.fn_rel = m.u;
  m.eta = std::ldexp(1.0, f.emin() - f.frac_bits);
  m.max_finite = std::ldexp(1.0, f.emax());
  return m;
}

// The endpoints of a box element as doubles (outward where the format is not inside binary64).
template <class E>
DInterval to_d(const IntervalContext<E>& ctx, const Interval<typename E::Value>& v) {
  return {ctx.lo_double(v), ctx.hi_double(v)};
}

// [lo - slack, hi + slack] rounded outward.
inline DInterval widen(DInterval v, double slack) { return {down(v.lo - slack), up(v.hi + slack)}; }

// The dedicated box `d`, intersected with the generic box `g`, rounded outward into the endpoints.
template <class E>
Interval<typename E::Value> meet(const IntervalContext<E>& ctx, DInterval d, const Interval<typename E::Value>* g) {
  if (g) {
    const DInterval gd = to_d(ctx, *g);
    const double lo = std::max(d.lo, gd.lo), hi = std::min(d.hi, gd.hi);
    if (!(lo <= hi)) return *g;  // cannot happen for sound boxes; keep the generic one
    d = {lo, hi};
  }
  return ctx.make(d.lo, d.hi);
}

inline bool all_finite(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double x) { return std::isfinite(x); });
}

}  // namespace denote::ibp
