// Internal: derivative rules of the normalization family, written over any scalar context on the
// forward rules' lanes (src/ops/axis_lanes.h). y is the forward value (DiffArgs::out).
//   softmax              JVP y * (t - sum(t * y)); VJP y * (g - sum(g * y)) (the Jacobian is symmetric)
//   log_softmax          JVP t - sum(exp(y) * t); VJP g - exp(y) * sum(g)
//   hard_masked_softmax  softmax's rule over the allowed entries of the last axis; blocked entries
//                        and fully blocked rows get zero
//   layernorm            with n = (x - mean) / d, d = sqrt(var + eps) recomputed as the forward does:
//                        J u = (u - mean(u) - n * mean(n * u)) / d per row (symmetric); JVP gamma * J t,
//                        VJP J (gamma * g); params weight (gamma: sum of g * n) and bias (beta: sum of g),
//                        shape normalized_shape, only when the payload has them
//   batch_norm_eval      JVP t * gamma / d, VJP g * gamma / d per channel; params weight (gamma: sum of
//                        g * n) and bias (beta: sum of g), [channels]; running mean/var get none
//                        (PyTorch's eval mode)
//
//   DENOTE_ASSIGN_OR_RETURN(Tensor<double> dy, ad::jvp_Softmax(ctx, args, tangents));
#pragma once

#include <utility>
#include <vector>

#include "diff_args.h"
#include "../ops/normalization_eval.h"

namespace denote::ad {

namespace norm_diff {

using ad::set_parent;
using ad::wants;

// dst = y * (u - sum(u * y)) on lane l over the entries `keep` accepts; other entries stay zero.
template <class Ctx, class Keep>
void softmax_lane_diff(Ctx& ctx, const std::vector<typename Ctx::Scalar>& y, const std::vector<typename Ctx::Scalar>& u,
                       std::vector<typename Ctx::Scalar>& dst, const rules::AxisLanes& lanes, int64_t l, Keep keep) {
  using S = typename Ctx::Scalar;
  S s = ctx.zero();
  for (int64_t k = 0; k < lanes.extent; ++k) {
    const int64_t i = lanes.at(l, k);
    if (keep(i)) s = ctx.add(s, ctx.mul(u[i], y[i]));
  }
  for (int64_t k = 0; k < lanes.extent; ++k) {
    const int64_t i = lanes.at(l, k);
    if (keep(i)) dst[i] = ctx.mul(y[i], ctx.sub(u[i], s));
  }
}

// softmax_lane_diff over every lane of `axis` (the softmax JVP and VJP alike).
template <class Ctx, class Keep>
Tensor<typename Ctx::Scalar> softmax_diff(Ctx& ctx, const Tensor<typename Ctx::Scalar>& y,
                                          const Tensor<typename Ctx::Scalar>& u, int64_t axis, Keep keep) {
  const rules::AxisLanes lanes = rules::axis_lanes(y.shape, axis);
  auto dst = zeros(ctx, y.shape);
  for (int64_t l = 0; l < lanes.count(); ++l) softmax_lane_diff(ctx, y.data, u.data, dst.data, lanes, l, keep);
  return dst;
}

inline bool keep_all(int64_t) { return true; }

// log_softmax on every lane of `axis`: the JVP t - sum(exp(y) * t) (transpose false) or the VJP
// g - exp(y) * sum(g) (transpose true).
template <class Ctx>
Tensor<typename Ctx::Scalar> log_softmax_diff(Ctx& ctx, const Tensor<typename Ctx::Scalar>& y,
                                              const Tensor<typename Ctx::Scalar>& u, int64_t axis, bool transpose) {
  using S = typename Ctx::Scalar;
  const rules::AxisLanes lanes = rules::axis_lanes(y.shape, axis);
  auto dst = zeros(ctx, y.shape);
  for (int64_t l = 0; l < lanes.count(); ++l) {
    S s = ctx.zero();
    for (int64_t k = 0; k < lanes.extent; ++k) {
      const int64_t i = lanes.at(l, k);
      s = ctx.add(s, transpose ? u.data[i] : ctx.mul(ctx.exp(y.data[i]), u.data[i]));
    }
    for (int64_t k = 0; k < lanes.extent; ++k) {
      const int64_t i = lanes.at(l, k);
      dst.data[i] = ctx.sub(u.data[i], transpose ? ctx.mul(ctx.exp(y.data[i]), s) : s);
    }
  }
  return dst;
}

// One layernorm row's statistics, computed exactly as rules::eval_Layernorm does.
template <class S>
struct RowStats {
  S mean, denom;
};

template <class Ctx>
RowStats<typename Ctx::Scalar> row_stats(Ctx& ctx, const typename Ctx::Scalar* x, int64_t width,
                                         const typename Ctx::Scalar& w, const typename Ctx::Scalar& eps) {
  using S = typename Ctx::Scalar;
  S sum = ctx.zero();
  for (int64_t j = 0; j < width; ++j) sum = ctx.add(sum, x[j]);
  const S mean = ctx.div(sum, w);
  S sq = ctx.zero();
  for (int64_t j = 0; j < width; ++j) {
    const S d = ctx.sub(x[j], mean);
    sq = ctx.add(sq, ctx.mul(d, d));
  }
  return {mean, ctx.sqrt(ctx.add(ctx.div(sq, w), eps))};
}

// Everything a layernorm derivative needs: the rows, the parameters, width and eps as scalars,
// and two row buffers (n and the row's input to J).
template <class Ctx>
struct LayerNormDiff {
  using S = typename Ctx::Scalar;
  rules::AxisLanes rows;
  rules::LayerNormParams<S> p;
  S width, eps;
  std::vector<S> n, u;
};

template <class Ctx>
Result<LayerNormDiff<Ctx>> layernorm_diff(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a) {
  const int64_t axis = std::get<AxisAttrs>(a.node.attrs).axis;
  LayerNormDiff<Ctx> d{rules::suffix_lanes(a.in().shape, axis), {}, ctx.zero(), ctx.zero(), {}, {}};
  DENOTE_ASSIGN_OR_RETURN(d.p, rules::layernorm_params(a.eval_args(a.parents), axis, d.rows.extent));
  d.width = ctx.from_double(static_cast<double>(d.rows.extent));
  d.eps = ctx.from_double(d.p.eps);
  d.n.assign(static_cast<size_t>(d.rows.extent), ctx.zero());
  d.u.assign(static_cast<size_t>(d.rows.extent), ctx.zero());
  return d;
}

// Fills d.n with row r's normalized values and returns the row's denominator.
template <class Ctx>
typename Ctx::Scalar layernorm_row(Ctx& ctx, LayerNormDiff<Ctx>& d, const typename Ctx::Scalar* x) {
  const auto st = row_stats(ctx, x, d.rows.extent, d.width, d.eps);
  for (int64_t j = 0; j < d.rows.extent; ++j) d.n[j] = ctx.div(ctx.sub(x[j], st.mean), st.denom);
  return st.denom;
}

// dst[j] = (u[j] - mean(u) - n[j] * mean(n * u)) / denom, then times gamma[j] when `gamma` is set.
template <class Ctx>
void layernorm_apply_j(Ctx& ctx, const LayerNormDiff<Ctx>& d, const typename Ctx::Scalar& denom,
                       const std::vector<typename Ctx::Scalar>* gamma, typename Ctx::Scalar* dst) {
  using S = typename Ctx::Scalar;
  S su = ctx.zero(), snu = ctx.zero();
  for (int64_t j = 0; j < d.rows.extent; ++j) {
    su = ctx.add(su, d.u[j]);
    snu = ctx.add(snu, ctx.mul(d.n[j], d.u[j]));
  }
  const S mu = ctx.div(su, d.width), mnu = ctx.div(snu, d.width);
  for (int64_t j = 0; j < d.rows.extent; ++j) {
    const S v = ctx.div(ctx.sub(ctx.sub(d.u[j], mu), ctx.mul(d.n[j], mnu)), denom);
    dst[j] = gamma ? ctx.mul(v, (*gamma)[j]) : v;
  }
}

// A ParamGrad of `values` for field `field` of node `id`.
template <class S>
ParamGrad<S> param_grad(int64_t id, const char* field, Shape shape, std::vector<S> values) {
  return ParamGrad<S>{id, field, std::move(shape), std::move(values)};
}

}  // namespace norm_diff

// ---- softmax

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Softmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return norm_diff::softmax_diff(ctx, a.out, *tangents[0], std::get<AxisAttrs>(a.node.attrs).axis,
                                 norm_diff::keep_all);
}

template <class Ctx>
Status vjp_Softmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  if (norm_diff::wants(out, 0))
    norm_diff::set_parent(
        out, 0, norm_diff::softmax_diff(ctx, a.out, cot, std::get<AxisAttrs>(a.node.attrs).axis, norm_diff::keep_all));
  return ok_status();
}

// ---- log_softmax

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_LogSoftmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                    std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return norm_diff::log_softmax_diff(ctx, a.out, *tangents[0], std::get<AxisAttrs>(a.node.attrs).axis, false);
}

template <class Ctx>
Status vjp_LogSoftmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                      VjpOut<typename Ctx::Scalar>& out) {
  if (norm_diff::wants(out, 0))
    norm_diff::set_parent(out, 0,
                          norm_diff::log_softmax_diff(ctx, a.out, cot, std::get<AxisAttrs>(a.node.attrs).axis, true));
  return ok_status();
}

// ---- hard_masked_softmax

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_HardMaskedSoftmax(
    Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  const HardMask& mask = std::get<HardMask>(a.node.attrs);
  return norm_diff::softmax_diff(ctx, a.out, *tangents[0], static_cast<int64_t>(a.out.shape.size()) - 1,
                                 [&](int64_t i) { return mask.allowed[static_cast<size_t>(i)] != 0; });
}

template <class Ctx>
Status vjp_HardMaskedSoftmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                             VjpOut<typename Ctx::Scalar>& out) {
  if (!norm_diff::wants(out, 0)) return ok_status();
  const HardMask& mask = std::get<HardMask>(a.node.attrs);
  norm_diff::set_parent(out, 0,
                        norm_diff::softmax_diff(ctx, a.out, cot, static_cast<int64_t>(a.out.shape.size()) - 1,
                                                [&](int64_t i) { return mask.allowed[static_cast<size_t>(i)] != 0; }));
  return ok_status();
}

// ---- layernorm

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Layernorm(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                   std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  DENOTE_ASSIGN_OR_RETURN(auto d, norm_diff::layernorm_diff(ctx, a));
  const auto& x = a.in().data;
  const auto& t = tangents[0]->data;
  auto dy = zeros(ctx, a.out.shape);
  for (int64_t r = 0; r < d.rows.count(); ++r) {
    const int64_t b = d.rows.base(r);
    const auto denom = norm_diff::layernorm_row(ctx, d, x.data() + b);
    for (int64_t j = 0; j < d.rows.extent; ++j) d.u[j] = t[b + j];
    norm_diff::layernorm_apply_j(ctx, d, denom, d.p.gamma, dy.data.data() + b);
  }
  return dy;
}

template <class Ctx>
Status vjp_Layernorm(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                     VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  const bool want_x = norm_diff::wants(out, 0);
  DENOTE_ASSIGN_OR_RETURN(auto d, norm_diff::layernorm_diff(ctx, a));
  const bool want_p = out.want_params && d.p.gamma != nullptr;
  if (!want_x && !want_p) return ok_status();
  const auto& x = a.in().data;
  Tensor<S> dx = want_x ? zeros(ctx, a.in().shape) : Tensor<S>{};
  std::vector<S> dgamma(want_p ? d.n.size() : 0, ctx.zero()), dbeta(dgamma.size(), ctx.zero());
  for (int64_t r = 0; r < d.rows.count(); ++r) {
    const int64_t b = d.rows.base(r);
    const S denom = norm_diff::layernorm_row(ctx, d, x.data() + b);
    for (int64_t j = 0; j < d.rows.extent && want_p; ++j) {
      dgamma[j] = ctx.add(dgamma[j], ctx.mul(cot.data[b + j], d.n[j]));
      dbeta[j] = ctx.add(dbeta[j], cot.data[b + j]);
    }
    if (!want_x) continue;
    for (int64_t j = 0; j < d.rows.extent; ++j)
      d.u[j] = d.p.gamma ? ctx.mul(cot.data[b + j], (*d.p.gamma)[j]) : cot.data[b + j];
    norm_diff::layernorm_apply_j(ctx, d, denom, nullptr, dx.data.data() + b);
  }
  if (want_x) norm_diff::set_parent(out, 0, std::move(dx));
  if (want_p) {
    const Shape shape(a.in().shape.begin() + std::get<AxisAttrs>(a.node.attrs).axis, a.in().shape.end());
    out.params.push_back(norm_diff::param_grad(a.node.id, "weight", shape, std::move(dgamma)));
    out.params.push_back(norm_diff::param_grad(a.node.id, "bias", shape, std::move(dbeta)));
  }
  return ok_status();
}

// ---- batch_norm_eval

namespace norm_diff {

// The validated batch_norm_eval record of node `a`, or its error.
template <class S>
Result<const BatchNormRecord<S>*> batch_norm_record(const DiffArgs<S>& a) {
  const auto& attrs = std::get<BatchNormAttrs>(a.node.attrs);
  const auto* rec = find_record(a.payload.batch_norm, a.node.id);
  if (!rec) return diff_error("missing batch_norm_eval payload", "payload");
  DENOTE_RETURN_IF_ERROR(rules::check_batch_norm_record(*rec, a.node.id, attrs.channels));
  return rec;
}

// Per channel: d = sqrt(var + eps) as the forward computes it, and gamma / d.
template <class Ctx>
void batch_norm_scales(Ctx& ctx, const BatchNormRecord<typename Ctx::Scalar>& rec,
                       std::vector<typename Ctx::Scalar>& denom, std::vector<typename Ctx::Scalar>& scale) {
  const auto eps = ctx.from_double(rec.eps);
  for (size_t c = 0; c < rec.var.size(); ++c) {
    denom.push_back(ctx.sqrt(ctx.add(rec.var[c], eps)));
    scale.push_back(ctx.div(rec.gamma[c], denom.back()));
  }
}

}  // namespace norm_diff

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_BatchNormEval(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                       std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const BatchNormRecord<S>* rec, norm_diff::batch_norm_record(a));
  std::vector<S> denom, scale;
  norm_diff::batch_norm_scales(ctx, *rec, denom, scale);
  const auto lanes = rules::axis_lanes(a.in().shape, std::get<BatchNormAttrs>(a.node.attrs).channel_axis);
  const auto& t = tangents[0]->data;
  auto dy = zeros(ctx, a.out.shape);
  for (int64_t l = 0; l < lanes.count(); ++l)
    for (int64_t c = 0; c < lanes.extent; ++c) {
      const int64_t i = lanes.at(l, c);
      dy.data[i] = ctx.mul(t[i], scale[c]);
    }
  return dy;
}

template <class Ctx>
Status vjp_BatchNormEval(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                         VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  const bool want_x = norm_diff::wants(out, 0), want_p = out.want_params;
  if (!want_x && !want_p) return ok_status();
  DENOTE_ASSIGN_OR_RETURN(const BatchNormRecord<S>* rec, norm_diff::batch_norm_record(a));
  std::vector<S> denom, scale;
  norm_diff::batch_norm_scales(ctx, *rec, denom, scale);
  const auto& x = a.in();
  const auto lanes = rules::axis_lanes(x.shape, std::get<BatchNormAttrs>(a.node.attrs).channel_axis);
  Tensor<S> dx = want_x ? zeros(ctx, x.shape) : Tensor<S>{};
  std::vector<S> dgamma(want_p ? scale.size() : 0, ctx.zero()), dbeta(dgamma.size(), ctx.zero());
  for (int64_t l = 0; l < lanes.count(); ++l)
    for (int64_t c = 0; c < lanes.extent; ++c) {
      const int64_t i = lanes.at(l, c);
      const S& g = cot.data[i];
      if (want_x) dx.data[i] = ctx.mul(g, scale[c]);
      if (!want_p) continue;
      const S n = ctx.div(ctx.sub(x.data[i], rec->mean[c]), denom[c]);
      dgamma[c] = ctx.add(dgamma[c], ctx.mul(g, n));
      dbeta[c] = ctx.add(dbeta[c], g);
    }
  if (want_x) norm_diff::set_parent(out, 0, std::move(dx));
  if (want_p) {
    const Shape shape{static_cast<int64_t>(scale.size())};
    out.params.push_back(norm_diff::param_grad(a.node.id, "weight", shape, std::move(dgamma)));
    out.params.push_back(norm_diff::param_grad(a.node.id, "bias", shape, std::move(dbeta)));
  }
  return ok_status();
}

}  // namespace denote::ad
