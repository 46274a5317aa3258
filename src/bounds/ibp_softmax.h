// Internal: the dedicated interval rule of softmax, log_softmax and hard_masked_softmax.
//
// Exact part. On a lane with kept entries K (|K| = m >= 2), softmax_i = 1 / (1 + s_i) and
// log_softmax_i = -log1p(s_i) with s_i = sum_{j != i} exp(x_j - x_i). s_i is smallest at
// x_i = hi_i, x_j = lo_j and largest at x_i = lo_i, x_j = hi_j, and these corners are attained, so
// the per-element ranges are exact:
//   s_i in [exp(L - hi_i) · (Q - exp(lo_i - L)),  exp(M - lo_i) · (P - exp(hi_i - M))]
// with M = max hi, L = max lo, P = sum_j exp(hi_j - M), Q = sum_j exp(lo_j - L) (O(m) per lane;
// every quantity is an outward-rounded double interval, the differences are clamped at 0).
//
// Format part. The generic evaluator computes d_j = fl(x_j - max), e_j = fl(exp(d_j)),
// total = left fold of e_j, then fl(e_i / total) or fl(d_i - fl(log(total))). With D the lane's
// spread (max hi - min lo), u the unit roundoff and f the relative error of exp/log, each e_j is
// off relatively by e = expm1(1.01·D·u) + f(1+f) (the argument's rounding is amplified by exp),
// total by t = (1+e)(1+gamma_m)(1+m·eta) - 1 (total >= 1: the maximum's term is exp(0) = 1), so
//   softmax:     relative error <= (1+e)(1+t)/(1-t)(1+u) - 1
//   log_softmax: absolute error <= D·u + t/(1-t) + f·(log(m+1) + D) + u·(D + log(m+1))
// and the box is widened by 1.05 times these. The rule applies when D <= 600, D·u <= 0.1,
// t <= 0.25 and no step overflows the format (D + log(m+1) and 1.5 m below its largest value);
// otherwise the generic rule's box stands.
#pragma once

#include <optional>

#include "../ops/axis_lanes.h"
#include "../ops/normalization_eval.h"
#include "ibp_support.h"

namespace denote::ibp {

// Exact enclosures of softmax (or log_softmax) for each kept entry of one lane; nullopt when the
// rule's preconditions fail.
inline std::optional<std::vector<DInterval>> softmax_exact(const std::vector<DInterval>& x, bool log_form,
                                                           const FormatModel& fm) {
  const size_t m = x.size();
  double max_hi = -INFINITY, max_lo = -INFINITY, min_lo = INFINITY;
  for (const DInterval& v : x) {
    if (!std::isfinite(v.lo) || !std::isfinite(v.hi)) return std::nullopt;
    max_hi = std::max(max_hi, v.hi);
    max_lo = std::max(max_lo, v.lo);
    min_lo = std::min(min_lo, v.lo);
  }
  const double spread = up(max_hi - min_lo);
  if (!(spread <= 600 && spread * fm.u <= 0.1)) return std::nullopt;
  // No step of the evaluation overflows the format: |d_j| <= spread, total <= m (1 + t) and
  // log_softmax's d_i - log(total); e.g. e4m3fn (largest 448) at a spread of 500, or a lane of
  // 10 entries in a format whose largest value is 8, is left to the generic rule.
  const double lane = static_cast<double>(m);
  if (!(up(up(spread + std::log(lane + 1)) + 1) * 1.01 < fm.max_finite && 1.5 * lane < fm.max_finite))
    return std::nullopt;
  DContext dc;
  auto pt = [&](double v) { return dc.make(v, v); };
  DInterval p = dc.zero(), q = dc.zero();
  for (const DInterval& v : x) {
    p = dc.add(p, dc.exp(dc.sub(pt(v.hi), pt(max_hi))));
    q = dc.add(q, dc.exp(dc.sub(pt(v.lo), pt(max_lo))));
  }
  std::vector<DInterval> out;
  out.reserve(m);
  for (const DInterval& v : x) {
    const DInterval rest_hi = dc.sub(p, dc.exp(dc.sub(pt(v.hi), pt(max_hi))));
    const DInterval rest_lo = dc.sub(q, dc.exp(dc.sub(pt(v.lo), pt(max_lo))));
    const DInterval s_hi = dc.mul(dc.exp(dc.sub(pt(max_hi), pt(v.lo))), dc.max(rest_hi, dc.zero()));
    const DInterval s_lo = dc.mul(dc.exp(dc.sub(pt(max_lo), pt(v.hi))), dc.max(rest_lo, dc.zero()));
    const DInterval s{std::max(0.0, s_lo.lo), s_hi.hi};
    out.push_back(log_form ? dc.neg(dc.log1p(s)) : dc.div(dc.one(), dc.add(dc.one(), s)));
  }
  if (!dc.take_error().empty()) return std::nullopt;
  // rel: the evaluator's relative error of each e_j (and so of total, up to the fold's gamma).
  const double md = static_cast<double>(m), logm = std::log(md + 1);
  const double e_rel = std::expm1(1.01 * spread * fm.u) + fm.fn_rel * (1 + fm.fn_rel);
  const double t_rel = (1 + e_rel) * (1 + fm.gamma(md)) * (1 + md * fm.eta) - 1;
  if (!(t_rel <= 0.25)) return std::nullopt;
  const double rel = 1.05 * ((1 + e_rel) * (1 + t_rel) / (1 - t_rel) * (1 + fm.u) - 1);  // of e_i / total
  const double log_err = 1.05 * (spread * fm.u + t_rel / (1 - t_rel) + fm.fn_rel * (logm + spread) +
                                 fm.u * (spread + logm) * 1.01);
  for (DInterval& y : out) {
    if (log_form) {
      y = widen(y, log_err + fm.eta);
      y.hi = std::min(y.hi, 0.0);
    } else {
      const double abs = (md + 3) * fm.eta;
      y = {std::max(0.0, down(y.lo * (1 - rel) - abs)), std::min(1.0, up(y.hi * (1 + rel) + abs))};
    }
  }
  return out;
}

// The rule over every lane along `axis`; `keep(i)` selects the entries that take part (the mask).
template <class E, class Keep>
Result<Tensor<Interval<typename E::Value>>> softmax_rule(IntervalContext<E>& ctx,
                                                         const rules::EvalArgs<Interval<typename E::Value>>& a,
                                                         int64_t axis, bool log_form, Keep keep,
                                                         Result<Tensor<Interval<typename E::Value>>> generic) {
  using S = Interval<typename E::Value>;
  if (!generic.ok()) return generic;  // an error of the node itself, not of the intervals
  // A generic rule that found no box (e.g. a total whose interval reaches 0) leaves only ours.
  const bool have_generic = ctx.take_error().empty();
  const Tensor<S>& x = a.in();
  const rules::AxisLanes lanes = rules::axis_lanes(x.shape, axis);
  const FormatModel fm = format_model(ctx.endpoints());
  Tensor<S> y = have_generic ? std::move(*generic) : Tensor<S>::filled(x.shape, ctx.zero());
  std::vector<int64_t> kept;
  std::vector<DInterval> xs;
  for (int64_t l = 0; l < lanes.count(); ++l) {
    kept.clear();
    xs.clear();
    for (int64_t k = 0; k < lanes.extent; ++k)
      if (const int64_t i = lanes.at(l, k); keep(i)) {
        kept.push_back(i);
        xs.push_back(to_d(ctx, x.data[i]));
      }
    if (kept.empty()) continue;  // all blocked: zeros, as the evaluator
    if (kept.size() == 1) {      // exp(0) / exp(0): exactly 1 (log: 0) in every format
      y.data[kept[0]] = log_form ? ctx.zero() : ctx.one();
      continue;
    }
    const auto exact = softmax_exact(xs, log_form, fm);
    if (!exact) {
      if (!have_generic) return rules::eval_error("interval: softmax has no sound box");
      continue;
    }
    for (size_t k = 0; k < kept.size(); ++k)
      y.data[kept[k]] = meet(ctx, (*exact)[k], have_generic ? &y.data[kept[k]] : nullptr);
  }
  return y;
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_softmax(IntervalContext<E>& ctx,
                                                        const rules::EvalArgs<Interval<typename E::Value>>& a) {
  auto generic = rules::eval_Softmax(ctx, a);
  return softmax_rule(ctx, a, std::get<AxisAttrs>(a.node.attrs).axis, false, [](int64_t) { return true; },
                      std::move(generic));
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_log_softmax(IntervalContext<E>& ctx,
                                                            const rules::EvalArgs<Interval<typename E::Value>>& a) {
  auto generic = rules::eval_LogSoftmax(ctx, a);
  return softmax_rule(ctx, a, std::get<AxisAttrs>(a.node.attrs).axis, true, [](int64_t) { return true; },
                      std::move(generic));
}

template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_hard_masked_softmax(
    IntervalContext<E>& ctx, const rules::EvalArgs<Interval<typename E::Value>>& a) {
  auto generic = rules::eval_HardMaskedSoftmax(ctx, a);
  const HardMask& mask = std::get<HardMask>(a.node.attrs);
  return softmax_rule(ctx, a, static_cast<int64_t>(a.in().shape.size()) - 1, false,
                      [&](int64_t i) { return mask.allowed[static_cast<size_t>(i)] != 0; }, std::move(generic));
}

}  // namespace denote::ibp
