// Internal: IBP's conv rule for f64/f32 endpoints, midpoint-radius on the batched conv of CROWN's
// conv rule (src/bounds/crown_conv.h: im2col, then one dgemm per group). With x = xm +- xr and point
// weights W, each output lies in W*xm +- |W|*xr, and the box comes from the same bound as the dense
// linear rule's (ibp::linear_out, src/bounds/ibp_affine.h) with n = group_in * k_vol terms (the most
// any output sums; fewer at the border, and the bound grows with n): the three sums (centre, radius,
// magnitude) in double in any order, the evaluator's fold and bias add in the endpoint format.
// Interval weights, a shape or record the conv rule would reject, or a non-finite sum: nullopt
// (the generic interval rule runs instead).
#pragma once

#include <cmath>
#include <optional>
#include <vector>

#include "bounds/crown_conv.h"
#include "bounds/ibp_affine.h"
#include "ops/window_eval.h"

namespace denote::ibp {

template <class E>
std::optional<Tensor<Interval<typename E::Value>>> interval_conv(const IntervalContext<E>& ctx, const Node& n,
                                                                 const Payload<Interval<typename E::Value>>& payload,
                                                                 const Tensor<Interval<typename E::Value>>& x,
                                                                 const Shape& out_shape) {
  using V = typename E::Value;
  const auto* cfg = std::get_if<ConvConfig>(&n.attrs);
  const auto* rec = find_record(payload.conv, n.id);
  if (!cfg || !rec || !rules::check_conv_record(n, rec, x.shape).ok()) return std::nullopt;
  if (x.data.size() != static_cast<size_t>(numel(x.shape))) return std::nullopt;
  std::vector<double> w(rec->weight.size());
  for (size_t i = 0; i < w.size(); ++i) {
    const V lo = rec->weight[i].lo, hi = rec->weight[i].hi;
    if (!(lo == hi) || !(std::fabs(lo) <= std::numeric_limits<V>::max())) return std::nullopt;
    w[i] = static_cast<double>(lo);
  }
  std::vector<MidRad> bias;
  for (const auto& b : rec->bias) bias.push_back(mid_rad(to_d(ctx, b)));
  const std::vector<double> zero(rec->bias.size(), 0.0);
  crown::ConvBackward cw;  // its |W| (weight_abs) serves the radius and magnitude sums
  if (!crown::conv_plan(*cfg, x.shape, out_shape, std::move(w), zero, cw)) return std::nullopt;
  const size_t in = x.data.size(), out = static_cast<size_t>(numel(out_shape));
  std::vector<double> mid(in), rad(in), mag(in), c(out), r(out), a(out);
  for (size_t i = 0; i < in; ++i) {
    const MidRad v = mid_rad(to_d(ctx, x.data[i]));
    mid[i] = v.m, rad[i] = v.r, mag[i] = up(std::fabs(v.m) + v.r);
  }
  crown::conv_forward(cw, mid.data(), cw.lead, c.data());
  crown::conv_forward(cw, rad.data(), cw.lead, r.data(), nullptr, /*magnitudes=*/true);
  crown::conv_forward(cw, mag.data(), cw.lead, a.data(), nullptr, /*magnitudes=*/true);
  const LinearOutTerms terms =
      linear_out_terms(static_cast<double>(cw.group_in * cw.k_vol), format_model(ctx.endpoints()));
  Tensor<Interval<V>> y;
  y.shape = out_shape;
  y.data.resize(out);
  for (size_t o = 0; o < out; ++o) {
    const size_t co = (o / static_cast<size_t>(cw.out_vol)) % static_cast<size_t>(cw.cout);
    const auto box = linear_out(LinearSums{c[o], a[o], r[o]}, bias[co], terms);
    if (!box) return std::nullopt;
    y.data[o] = ctx.make(box->lo, box->hi);
  }
  return y;
}

}  // namespace denote::ibp
