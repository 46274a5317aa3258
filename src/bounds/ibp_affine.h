// Internal: dedicated interval rules of layernorm, mse_loss and (hardware endpoints) linear.
//
// layernorm. Exact part per row of m entries: the centred value c_j = x_j - mean is written as
// ((m-1)·x_j - sum_{k != j} x_k) / m, in which every entry occurs once, so its range is exact; the
// variance is enclosed by the mean of the squared c_j ranges (sound, as all c_j lie in their
// ranges) and only bounds sigma for the error terms; n_j = c_j / sqrt(c_j^2/m + K_j) with K_j the
// rest of the variance plus eps is monotone in c_j and in K_j (see below), so its box comes from the
// end points of c_j and K_j; and the box is cut at |n_j| <= sqrt(m - 1)
// (the other c_k sum to -c_j, so var >= (c_j^2 + c_j^2 / (m-1)) / m = c_j^2 / (m-1)). Format part: the
// evaluator's centred values are off by at most Delta = 1.15·(m+4)·u·max|x| (left-fold mean,
// division by the width, subtraction), its sigma relatively by g = 0.55·(m+8)·u + f and absolutely
// by Delta (the RMS of the errors) while no sum overflows (m·max|x| and 4·m·max|x|^2 below the
// format's largest value, else no box from this rule), so with sigma' >= sigma/2 (required: Delta·(1+g) <= sigma/4,
// g <= 1/4):
//   |n' - n| <= 1.1·(2·Delta'/sigma + 2·sqrt(m-1)·(Delta'/sigma + g) + u·(sqrt(m-1)+1)),  Delta' = Delta·(1+g)
// and gamma/beta add |gamma|·that + 2.02·u·(|gamma|·(sqrt(m-1) + that) + |beta|).
//
// mse_loss: the generic rule with the square of an interval computed as |d|·|d| (>= 0, tight).
//
// linear (f64/f32 endpoints): midpoint-radius. With x = xm ± xr, W = Wm ± Wr (point weights: Wr = 0),
// W·x lies in Wm·xm ± (|Wm|·xr + Wr·(|xm| + xr)). All of it is computed in double in round to
// nearest; the radius adds gamma_n(double)·A for the centre's own error and gamma_(n+1)(format)·A
// + u·(|c| + A + |b|) for the evaluator's left fold and bias add in the endpoint format, where
// A = (|Wm| + Wr)·(|xm| + xr) bounds every |w|·|x|; the radius sums' own rounding and underflow
// terms on top.
#pragma once

#include <bit>
#include <cstdint>
#include <optional>

#include "../ops/axis_lanes.h"
#include "../ops/contraction_eval.h"
#include "../ops/normalization_eval.h"
#include "../ops/reduction_eval.h"
#include "ibp_support.h"

namespace denote::ibp {

// Exact-plus-format enclosures of one layernorm row; gamma/beta empty when the node has none.
inline std::optional<std::vector<DInterval>> layernorm_exact(const std::vector<DInterval>& x,
                                                             const std::vector<DInterval>& gamma,
                                                             const std::vector<DInterval>& beta, double eps,
                                                             const FormatModel& fm) {
  const size_t m = x.size();
  const double md = static_cast<double>(m);
  DContext dc;
  auto pt = [&](double v) { return dc.make(v, v); };
  DInterval sum_lo = dc.zero(), sum_hi = dc.zero();
  double big = 0;
  for (const DInterval& v : x) {
    if (!std::isfinite(v.lo) || !std::isfinite(v.hi)) return std::nullopt;
    sum_lo = dc.add(sum_lo, pt(v.lo));
    sum_hi = dc.add(sum_hi, pt(v.hi));
    big = std::max({big, std::fabs(v.lo), std::fabs(v.hi)});
  }
  std::vector<DInterval> c, sq;
  c.reserve(m);
  sq.reserve(m);
  DInterval sq_lo = dc.zero(), sq_hi = dc.zero();  // enclosures of sum lo(c_j^2) and sum hi(c_j^2)
  for (const DInterval& v : x) {
    const double rest_lo = dc.sub(sum_lo, pt(v.lo)).lo, rest_hi = dc.sub(sum_hi, pt(v.hi)).hi;
    const double lo = dc.div(dc.sub(dc.mul(pt(md - 1), pt(v.lo)), pt(rest_hi)), pt(md)).lo;
    const double hi = dc.div(dc.sub(dc.mul(pt(md - 1), pt(v.hi)), pt(rest_lo)), pt(md)).hi;
    c.push_back({lo, hi});
    const DInterval a = dc.abs(c.back());
    sq.push_back(dc.mul(a, a));
    sq_lo = dc.add(sq_lo, pt(sq.back().lo));
    sq_hi = dc.add(sq_hi, pt(sq.back().hi));
  }
  // The evaluator's sums (of x, of the squared centred values) stay below the format's overflow
  // threshold, else its variance can be inf and its output 0 (binary16 at |x| = 300): no box here.
  const double most = std::max(md * big, 4 * md * big * big) * 1.01;
  if (!(most < fm.max_finite)) return std::nullopt;
  const DInterval sigma = dc.sqrt(dc.add(dc.div(dc.make(sq_lo.lo, sq_hi.hi), pt(md)), pt(eps)));
  if (!dc.take_error().empty() || !(sigma.lo > 0) || !std::isfinite(sigma.hi)) return std::nullopt;
  const double bound = up(std::sqrt(md - 1));
  const double delta = 1.15 * (md + 4) * fm.u * big, g = 0.55 * (md + 8) * fm.u + fm.fn_rel;
  const double delta_g = delta * (1 + g);
  if (!(delta_g <= sigma.lo / 4 && g <= 0.25)) return std::nullopt;
  const double sn =
      1.1 * (2 * delta_g / sigma.lo + 2 * bound * (delta_g / sigma.lo + g) + fm.u * (bound + 1)) + (md + 10) * fm.eta;
  std::vector<DInterval> out;
  out.reserve(m);
  for (size_t j = 0; j < m; ++j) {
    // n_j = c_j / sqrt(c_j^2 / m + K_j), K_j = (sum_{k != j} c_k^2) / m + eps: increasing in c_j,
    // and moving away from 0 as K_j shrinks; c_j and K_j are enclosed independently (sound).
    const double k_lo = std::max(0.0, dc.sub(sq_lo, pt(sq[j].lo)).lo), k_hi = dc.sub(sq_hi, pt(sq[j].hi)).hi;
    const DInterval klo = dc.add(dc.div(pt(k_lo), pt(md)), pt(eps)), khi = dc.add(dc.div(pt(k_hi), pt(md)), pt(eps));
    auto f = [&](double cv, const DInterval& k) {
      return dc.div(pt(cv), dc.sqrt(dc.add(dc.div(dc.mul(pt(cv), pt(cv)), pt(md)), k)));
    };
    DInterval n{(c[j].lo < 0 ? f(c[j].lo, klo) : f(c[j].lo, khi)).lo,
                (c[j].hi > 0 ? f(c[j].hi, klo) : f(c[j].hi, khi)).hi};
    n = {std::max(n.lo, -bound), std::min(n.hi, bound)};
    if (gamma.empty()) {
      out.push_back(widen(n, sn));
      continue;
    }
    const double ga = std::max(std::fabs(gamma[j].lo), std::fabs(gamma[j].hi));
    const double ba = std::max(std::fabs(beta[j].lo), std::fabs(beta[j].hi));
    if (!((ga * (bound + sn) + ba) * 1.01 < fm.max_finite)) return std::nullopt;  // gamma n + beta may overflow
    const double slack = ga * sn * (1 + fm.u) + 2.02 * fm.u * (ga * (bound + sn) + ba) + 2 * fm.eta;
    out.push_back(widen(dc.add(dc.mul(n, gamma[j]), beta[j]), slack));
  }
  if (!dc.take_error().empty()) return std::nullopt;
  return out;
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_layernorm(IntervalContext<E>& ctx,
                                                          const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  auto generic = rules::eval_Layernorm(ctx, a);
  if (!generic.ok()) return generic;  // a payload error of the node itself
  const bool have_generic = ctx.take_error().empty();
  const Tensor<S>& x = a.in();
  const int64_t axis = std::get<AxisAttrs>(a.node.attrs).axis;
  const rules::AxisLanes rows = rules::suffix_lanes(x.shape, axis);
  DENOTE_ASSIGN_OR_RETURN(const rules::LayerNormParams<S> p, rules::layernorm_params(a, axis, rows.extent));
  std::vector<DInterval> gamma, beta, xs;
  for (int64_t j = 0; p.gamma && j < rows.extent; ++j) {
    gamma.push_back(to_d(ctx, (*p.gamma)[j]));
    beta.push_back(to_d(ctx, (*p.beta)[j]));
  }
  const FormatModel fm = format_model(ctx.endpoints());
  Tensor<S> y = have_generic ? std::move(*generic) : Tensor<S>::filled(x.shape, ctx.zero());
  for (int64_t r = 0; r < rows.count(); ++r) {
    const int64_t b = rows.base(r);
    xs.clear();
    for (int64_t j = 0; j < rows.extent; ++j) xs.push_back(to_d(ctx, x.data[b + j]));
    const auto exact = layernorm_exact(xs, gamma, beta, p.eps, fm);
    if (!exact) {
      if (!have_generic) return rules::eval_error("interval: layernorm has no sound box");
      continue;
    }
    for (int64_t j = 0; j < rows.extent; ++j)
      y.data[b + j] = meet(ctx, (*exact)[j], have_generic ? &y.data[b + j] : nullptr);
  }
  return y;
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_mse_loss(IntervalContext<E>& ctx,
                                                         const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  const std::vector<S>& y = a.in(0).data;
  const std::vector<S>& t = a.in(1).data;
  S acc = ctx.zero();
  for (size_t i = 0; i < y.size(); ++i) {
    const S d = ctx.abs(ctx.sub(y[i], t[i]));
    acc = ctx.add(acc, ctx.mul(d, d));
  }
  const double count = y.empty() ? 1.0 : static_cast<double>(y.size());
  return Tensor<S>(Shape{}, {ctx.div(acc, ctx.from_double(count))});
}

// next_up / next_down of a finite x without a branch (the same values; loops over them vectorise):
// one integer step of the bit pattern away from or towards zero, the zeros to the least subnormal.
// Not finite in, not finite (or NaN) out.
inline double step_up(double x) {
  const auto b = std::bit_cast<uint64_t>(x);
  const double r = std::bit_cast<double>(static_cast<int64_t>(b) >= 0 ? b + 1 : b - 1);
  return x == 0 ? std::numeric_limits<double>::denorm_min() : r;
}
inline double step_down(double x) { return -step_up(-x); }

// Midpoint and radius of a box element (radius rounded up).
struct MidRad {
  double m = 0, r = 0;
};
// A point is its own midpoint with radius 0; otherwise m = (lo + hi) / 2 and r the larger distance to an
// endpoint, rounded up. Without a branch, so that loops over it vectorise (mid_rad_arrays).
[[gnu::always_inline]] inline MidRad mid_rad(DInterval v) {
  const double m0 = 0.5 * v.lo + 0.5 * v.hi;
  const double r0 = std::max(step_up(v.hi - m0), step_up(m0 - v.lo));
  const bool point = v.lo == v.hi;
  return {point ? v.lo : m0, point ? 0.0 : r0};
}
// mid_rad over arrays of finite endpoints, with each element's magnitude bound up(|m| + r) (a non-finite
// endpoint gives a non-finite magnitude).
inline void mid_rad_arrays(const double* lo, const double* hi, size_t n, double* mid, double* rad, double* mag) {
  for (size_t i = 0; i < n; ++i) {
    const MidRad v = mid_rad(DInterval{lo[i], hi[i]});
    mid[i] = v.m, rad[i] = v.r, mag[i] = step_up(std::fabs(v.m) + v.r);
  }
}

// One output of the midpoint-radius product: centre c, |W|(|x|) bound a, radius part b.
struct LinearSums {
  double c = 0, a = 0, b = 0;
};
inline LinearSums linear_sums(const MidRad* w, const MidRad* x, int64_t n) {
  double c[4] = {0, 0, 0, 0}, a[4] = {0, 0, 0, 0}, b[4] = {0, 0, 0, 0};
  int64_t k = 0;
  for (; k + 4 <= n; k += 4)
    for (int t = 0; t < 4; ++t) {
      const MidRad& wk = w[k + t];
      const MidRad& xk = x[k + t];
      const double ax = std::fabs(xk.m) + xk.r;
      c[t] += wk.m * xk.m;
      a[t] += (std::fabs(wk.m) + wk.r) * ax;
      b[t] += std::fabs(wk.m) * xk.r + wk.r * ax;
    }
  for (; k < n; ++k) {
    const double ax = std::fabs(x[k].m) + x[k].r;
    c[0] += w[k].m * x[k].m;
    a[0] += (std::fabs(w[k].m) + w[k].r) * ax;
    b[0] += std::fabs(w[k].m) * x[k].r + w[k].r * ax;
  }
  return {(c[0] + c[1]) + (c[2] + c[3]), (a[0] + a[1]) + (a[2] + a[3]), (b[0] + b[1]) + (b[2] + b[3])};
}

// The factors of linear_out that depend on n (the terms per output) and the format only: computed
// once per layer.
struct LinearOutTerms {
  double g = 0, b_factor = 0, u_eval = 0, eta = 0;
};
inline LinearOutTerms linear_out_terms(double nd, const FormatModel& fm) {
  const double ud = std::numeric_limits<double>::epsilon() / 2;
  return {nd * ud / (1 - nd * ud) + fm.gamma(nd + 1), 1 + (2 * nd + 4) * ud * 1.01, fm.u * 1.01, (2 * nd + 8) * fm.eta};
}
// The box of one output from its sums and bias (nullopt when not finite), n terms: the centre is
// off by gamma_n(double)·a; s.b and bias.r, computed in round to nearest, by (1 + gamma_(2n+4));
// the evaluator's left fold and bias add in the endpoint format by gamma_(n+1)·a + u·(|c| + a + |b|).
[[gnu::always_inline]] inline DInterval linear_out_box(const LinearSums& s, MidRad bias, const LinearOutTerms& t) {
  const double ud = std::numeric_limits<double>::epsilon() / 2;
  const double centre = s.c + bias.m;
  const double radius = (s.b + bias.r) * t.b_factor +
                        1.01 * (t.g * s.a + t.u_eval * (std::fabs(s.c) + s.a + std::fabs(bias.m) + bias.r) +
                                2 * ud * (std::fabs(s.c) + std::fabs(bias.m))) +
                        t.eta;
  return DInterval{centre - radius, centre + radius};  // not yet rounded outward
}
inline std::optional<DInterval> linear_out(const LinearSums& s, MidRad bias, const LinearOutTerms& t) {
  const DInterval b = linear_out_box(s, bias, t);
  if (!std::isfinite(b.lo) || !std::isfinite(b.hi)) return std::nullopt;
  return DInterval{step_down(b.lo), step_up(b.hi)};
}
// linear_out for n outputs (sums c, a, b; output k's bias bias[k / per % nb]): the boxes into lo and hi;
// false when one is not finite.
inline bool linear_out_arrays(const double* c, const double* a, const double* b, const MidRad* bias, size_t nb, size_t per,
                              const LinearOutTerms& t, size_t n, double* lo, double* hi) {
  bool finite = true;
  for (size_t k = 0; k < n; ++k) {
    const DInterval box = linear_out_box(LinearSums{c[k], a[k], b[k]}, bias[(k / per) % nb], t);
    finite &= std::isfinite(box.lo) & std::isfinite(box.hi);
    lo[k] = step_down(box.lo), hi[k] = step_up(box.hi);
  }
  return finite;
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_linear(IntervalContext<E>& ctx,
                                                       const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  const auto* rec = find_record(a.payload.linear, a.node.id);
  const Tensor<S>& x = a.in();
  const int64_t out = rec ? rec->out_dim : 0, in = rec ? rec->in_dim : 0;
  Shape expected = x.shape;
  if (rec) expected.back() = out;
  // Anything the generic rule would reject: let it produce the error.
  if (!rec || expected != a.node.out_shape || x.shape.back() != in ||
      static_cast<int64_t>(rec->weight.size()) != out * in || static_cast<int64_t>(rec->bias.size()) != out)
    return rules::eval_Linear(ctx, a);
  std::vector<MidRad> w(rec->weight.size()), xm(x.data.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = mid_rad(to_d(ctx, rec->weight[i]));
  for (size_t i = 0; i < xm.size(); ++i) xm[i] = mid_rad(to_d(ctx, x.data[i]));
  const LinearOutTerms terms = linear_out_terms(static_cast<double>(in), format_model(ctx.endpoints()));
  const int64_t lead = numel(x.shape.begin(), x.shape.end() - 1);
  Tensor<S> y;
  y.shape = expected;
  y.data.resize(static_cast<size_t>(lead * out));
  for (int64_t r = 0; r < lead; ++r)
    for (int64_t o = 0; o < out; ++o) {
      const LinearSums s = linear_sums(w.data() + o * in, xm.data() + r * in, in);
      const auto box = linear_out(s, mid_rad(to_d(ctx, rec->bias[o])), terms);
      if (!box) return rules::eval_Linear(ctx, a);
      y.data[static_cast<size_t>(r * out + o)] = ctx.make(box->lo, box->hi);
    }
  return y;
}

}  // namespace denote::ibp
