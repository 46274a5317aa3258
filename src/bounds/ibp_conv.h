// Internal: IBP's conv rule for f64/f32 endpoints, midpoint-radius on the batched conv of CROWN's
// conv rule (src/bounds/crown_conv.h: im2col, then one dgemm per group). With x = xm +- xr and point
// weights W, each output lies in W*xm +- |W|*xr, and the box comes from the same bound as the dense
// linear rule's (ibp::linear_out, src/bounds/ibp_affine.h) with n = group_in * k_vol terms (the most
// any output sums; fewer at the border, and the bound grows with n): the three sums (centre, radius,
// magnitude) in double in any order, the evaluator's fold and bias add in the endpoint format.
// Interval weights, a shape or record the conv rule would reject, or a non-finite sum: nullopt
// (the generic interval rule runs instead).
// IbpPrepared keeps each conv node's plan (ConvBoxes: the model's ConvPlans, shared with CROWN) when
// its weights are points of the endpoint format; the interval tensors' rule and the double-array
// pass (ibp_boxes.h) both run conv_blocks on it, over any number of leading entries (a batch of
// samples is one product).
#pragma once

#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "bounds/crown_conv.h"
#include "bounds/ibp_affine.h"
#include "ops/window_eval.h"

namespace denote::ibp {

// A conv node's prepared IBP data: the plan (its weights the endpoint format's points) and the bias
// as the endpoint format's intervals.
struct ConvBoxes {
  const crown::ConvBackward* plan = nullptr;
  std::vector<MidRad> bias;
};
using ConvMap = std::map<int64_t, ConvBoxes>;

// The boxes of the conv over `in_size` input elements (whole leading entries of [cin, in_vol]) with
// endpoints lo[i], hi[i]: output o's box goes to put(o, box); false (nothing put) when an input or an
// output box is not finite.
template <class Put>
bool conv_blocks(const crown::ConvBackward& cb, const std::vector<MidRad>& bias, const FormatModel& fm, size_t in_size,
                 const double* lo, const double* hi, Put put) {
  const size_t per_in = static_cast<size_t>(cb.cin * cb.in_vol), per_out = static_cast<size_t>(cb.cout * cb.out_vol);
  if (per_in == 0 || in_size % per_in != 0 || bias.size() != static_cast<size_t>(cb.cout)) return false;
  const size_t count = in_size / per_in, out = count * per_out;
  std::vector<double> mid(in_size), rad(in_size), mag(in_size), c(out), r(out), a(out);
  mid_rad_arrays(lo, hi, in_size, mid.data(), rad.data(), mag.data());
  const auto batch = static_cast<int64_t>(count);
  crown::conv_forward(cb, mid.data(), batch, c.data());
  crown::conv_forward(cb, rad.data(), batch, r.data(), nullptr, /*magnitudes=*/true);
  crown::conv_forward(cb, mag.data(), batch, a.data(), nullptr, /*magnitudes=*/true);
  const LinearOutTerms terms = linear_out_terms(static_cast<double>(cb.group_in * cb.k_vol), fm);
  // The boxes overwrite the centre and radius sums (each read once, before its own output is written).
  if (!linear_out_arrays(c.data(), a.data(), r.data(), bias.data(), bias.size(), static_cast<size_t>(cb.out_vol), terms,
                         out, c.data(), r.data()))
    return false;
  for (size_t o = 0; o < out; ++o) put(o, DInterval{c[o], r[o]});
  return true;
}

// The rule on interval tensors: with `prepared` (IbpPrepared's) its plan, else one built for this call.
template <class E>
std::optional<Tensor<Interval<typename E::Value>>> interval_conv(const IntervalContext<E>& ctx, const Node& n,
                                                                 const Payload<Interval<typename E::Value>>& payload,
                                                                 const Tensor<Interval<typename E::Value>>& x,
                                                                 const Shape& out_shape,
                                                                 const ConvBoxes* prepared = nullptr) {
  using V = typename E::Value;
  if (x.data.size() != static_cast<size_t>(numel(x.shape))) return std::nullopt;
  crown::ConvBackward own;
  ConvBoxes built;
  if (!prepared) {
    const auto* cfg = std::get_if<ConvConfig>(&n.attrs);
    const auto* rec = find_record(payload.conv, n.id);
    if (!cfg || !rec || !rules::check_conv_record(n, rec, x.shape).ok()) return std::nullopt;
    std::vector<double> w(rec->weight.size());
    for (size_t i = 0; i < w.size(); ++i) {
      const V lo = rec->weight[i].lo, hi = rec->weight[i].hi;
      if (!(lo == hi) || !(std::fabs(lo) <= std::numeric_limits<V>::max())) return std::nullopt;
      w[i] = static_cast<double>(lo);
    }
    for (const auto& b : rec->bias) built.bias.push_back(mid_rad(to_d(ctx, b)));
    const std::vector<double> zero(rec->bias.size(), 0.0);
    if (!crown::conv_plan(*cfg, x.shape, out_shape, std::move(w), zero, own)) return std::nullopt;
    built.plan = &own;
    prepared = &built;
  }
  std::vector<double> lo(x.data.size()), hi(x.data.size());
  for (size_t i = 0; i < lo.size(); ++i) {
    const DInterval v = to_d(ctx, x.data[i]);
    lo[i] = v.lo, hi[i] = v.hi;
  }
  Tensor<Interval<V>> y;
  y.shape = out_shape;
  y.data.resize(static_cast<size_t>(numel(out_shape)));
  const bool ok = conv_blocks(*prepared->plan, prepared->bias, format_model(ctx.endpoints()), x.data.size(), lo.data(),
                              hi.data(), [&](size_t o, DInterval b) { y.data[o] = ctx.make(b.lo, b.hi); });
  if (!ok || y.data.size() != static_cast<size_t>(numel(out_shape))) return std::nullopt;
  return y;
}

// IbpPrepared's ConvBoxes of conv node n: its plan from `plans` (built from the model's double
// weights) where the endpoint format holds every weight as a finite point (so the plan's weights are
// the prepared payload's); nullopt otherwise (the generic rule then runs).
template <class E>
std::optional<ConvBoxes> prepare_conv(const IntervalContext<E>& ctx, const Graph& g, const Payload<double>& payload,
                                      const Payload<Interval<typename E::Value>>& endpoint_payload, const Node& n,
                                      crown::ConvPlans& plans) {
  using V = typename E::Value;
  const auto* rec = find_record(endpoint_payload.conv, n.id);
  if (!rec || n.parents.size() != 1) return std::nullopt;
  for (const auto& w : rec->weight)
    if (!(w.lo == w.hi) || !(std::fabs(w.lo) <= std::numeric_limits<V>::max())) return std::nullopt;
  ConvBoxes out;
  out.plan = plans.get(g, payload, n);
  if (!out.plan || out.plan->bias.size() != rec->bias.size()) return std::nullopt;
  for (const auto& b : rec->bias) out.bias.push_back(mid_rad(to_d(ctx, b)));
  return out;
}

}  // namespace denote::ibp
