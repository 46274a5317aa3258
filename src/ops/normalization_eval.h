// Internal: evaluation rules of the normalization family (softmax, log_softmax,
// hard_masked_softmax, layernorm, batch_norm_eval). Each works on the lanes of one axis (see
// axis_lanes.h) with strided indexing, so interior axes work the same as the last one.
#pragma once

#include <fmt/format.h>

#include "eval_args.h"
#include "axis_lanes.h"

namespace denote::rules {

// Softmax (or log-softmax) of lane `l` of x into y, numerically stable: the lane maximum is
// subtracted first. `keep(i)` says whether flat entry i takes part; a blocked entry stays as y
// holds it (zero), and a lane with no kept entry is left all zero.
// x and y are whole tensors (flat, row-major); the compiled plans' prepared softmax
// (src/providers/reference_prepared.cc) calls this same function on its buffers.
template <class Ctx, class Keep>
void softmax_lane(Ctx& ctx, const typename Ctx::Scalar* x, typename Ctx::Scalar* y, const AxisLanes& lanes, int64_t l,
                  bool log_form, Keep keep) {
  using S = typename Ctx::Scalar;
  bool any = false;
  S m = ctx.zero();
  for (int64_t k = 0; k < lanes.extent; ++k) {
    const int64_t i = lanes.at(l, k);
    if (!keep(i)) continue;
    m = any ? ctx.max(m, x[i]) : x[i];
    any = true;
  }
  if (!any) return;
  S total = ctx.zero();
  for (int64_t k = 0; k < lanes.extent; ++k) {
    const int64_t i = lanes.at(l, k);
    if (!keep(i)) continue;
    y[i] = ctx.exp(ctx.sub(x[i], m));
    total = ctx.add(total, y[i]);
  }
  const S log_total = log_form ? ctx.log(total) : ctx.zero();
  for (int64_t k = 0; k < lanes.extent; ++k) {
    const int64_t i = lanes.at(l, k);
    if (!keep(i)) continue;
    y[i] = log_form ? ctx.sub(ctx.sub(x[i], m), log_total) : ctx.div(y[i], total);
  }
}

// Softmax or log-softmax along the node's axis (any axis).
template <class Ctx>
Tensor<typename Ctx::Scalar> softmax_along_axis(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a, bool log_form) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in();
  const AxisLanes lanes = axis_lanes(x.shape, std::get<AxisAttrs>(a.node.attrs).axis);
  Tensor<S> y = Tensor<S>::filled(x.shape, ctx.zero());
  for (int64_t l = 0; l < lanes.count(); ++l)
    softmax_lane(ctx, x.data.data(), y.data.data(), lanes, l, log_form, [](int64_t) { return true; });
  return y;
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Softmax(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  return softmax_along_axis(ctx, a, /*log_form=*/false);
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_LogSoftmax(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  return softmax_along_axis(ctx, a, /*log_form=*/true);
}

// Softmax over the allowed entries of the last axis; blocked entries and fully blocked rows are 0.
// The shape rule has checked the mask's shape and entry count against the input.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_HardMaskedSoftmax(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in();
  const HardMask& mask = std::get<HardMask>(a.node.attrs);
  const AxisLanes lanes = axis_lanes(x.shape, static_cast<int64_t>(x.shape.size()) - 1);
  Tensor<S> y = Tensor<S>::filled(x.shape, ctx.zero());
  for (int64_t l = 0; l < lanes.count(); ++l)
    softmax_lane(ctx, x.data.data(), y.data.data(), lanes, l, /*log_form=*/false,
                 [&](int64_t i) { return mask.allowed[static_cast<size_t>(i)] != 0; });
  return y;
}

// The layernorm parameters after validation: gamma/beta absent means the identity affine map.
template <class S>
struct LayerNormParams {
  const std::vector<S>* gamma = nullptr;
  const std::vector<S>* beta = nullptr;
  double eps = 1e-5;
};

// Reads the optional layernorm payload of node `a` and checks it against x.shape[axis:].
template <class S>
Result<LayerNormParams<S>> layernorm_params(const EvalArgs<S>& a, int64_t axis, int64_t width) {
  LayerNormParams<S> p;
  const auto* rec = find_record(a.payload.layernorm, a.node.id);
  if (!rec) return p;
  const Shape& in = a.in().shape;
  const Shape suffix(in.begin() + axis, in.end());
  if (rec->normalized_shape != suffix)
    return eval_error(fmt::format("layernorm: normalized_shape {} differs from the input's shape {} from axis {}",
                                  to_string(rec->normalized_shape), to_string(suffix), axis),
                      "normalized_shape");
  if (static_cast<int64_t>(rec->gamma.size()) != width || static_cast<int64_t>(rec->beta.size()) != width)
    return eval_error(fmt::format("layernorm: gamma has {} values and beta {}, expected {} each", rec->gamma.size(),
                                  rec->beta.size(), width),
                      "gamma");
  p.gamma = &rec->gamma;
  p.beta = &rec->beta;
  p.eps = rec->eps;
  return p;
}

// Normalizes each row over x.shape[axis:]: (x - mean) / sqrt(var + eps) * gamma + beta, with the
// population variance; both means are left folds from zero divided by the row width.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Layernorm(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in();
  const int64_t axis = std::get<AxisAttrs>(a.node.attrs).axis;
  const AxisLanes rows = suffix_lanes(x.shape, axis);
  DENOTE_ASSIGN_OR_RETURN(const LayerNormParams<S> p, layernorm_params(a, axis, rows.extent));
  const S width = ctx.from_double(static_cast<double>(rows.extent));
  const S eps = ctx.from_double(p.eps);
  Tensor<S> y = Tensor<S>::filled(x.shape, ctx.zero());
  for (int64_t r = 0; r < rows.count(); ++r) {
    const int64_t b = rows.base(r);
    S sum = ctx.zero();
    for (int64_t j = 0; j < rows.extent; ++j) sum = ctx.add(sum, x.data[b + j]);
    const S mean = ctx.div(sum, width);
    S sq = ctx.zero();
    for (int64_t j = 0; j < rows.extent; ++j) {
      const S d = ctx.sub(x.data[b + j], mean);
      sq = ctx.add(sq, ctx.mul(d, d));
    }
    const S denom = ctx.sqrt(ctx.add(ctx.div(sq, width), eps));
    for (int64_t j = 0; j < rows.extent; ++j) {
      const S n = ctx.div(ctx.sub(x.data[b + j], mean), denom);
      y.data[b + j] = p.gamma ? ctx.add(ctx.mul(n, (*p.gamma)[j]), (*p.beta)[j]) : n;
    }
  }
  return y;
}

// Checks that every batch_norm_eval record field has one value per channel.
template <class S>
Status check_batch_norm_record(const BatchNormRecord<S>& rec, int64_t id, int64_t channels) {
  const std::pair<const char*, const std::vector<S>*> fields[] = {
      {"gamma", &rec.gamma}, {"beta", &rec.beta}, {"mean", &rec.mean}, {"var", &rec.var}};
  for (const auto& [name, values] : fields)
    if (static_cast<int64_t>(values->size()) != channels)
      return eval_error(fmt::format("batch_norm_eval: {} has {} values, expected {} (one per channel)", name,
                                    values->size(), channels),
                        name);
  return ok_status();
}

// (x - mean) / sqrt(var + eps) * gamma + beta, per channel along channel_axis (any axis).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_BatchNormEval(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const auto& attrs = std::get<BatchNormAttrs>(a.node.attrs);
  const auto* rec = find_record(a.payload.batch_norm, a.node.id);
  if (!rec) return eval_error("missing batch_norm_eval payload", "payload");
  DENOTE_RETURN_IF_ERROR(check_batch_norm_record(*rec, a.node.id, attrs.channels));
  const Tensor<S>& x = a.in();
  const AxisLanes lanes = axis_lanes(x.shape, attrs.channel_axis);
  const S eps = ctx.from_double(rec->eps);
  std::vector<S> denom;
  denom.reserve(static_cast<size_t>(lanes.extent));
  for (int64_t c = 0; c < lanes.extent; ++c) denom.push_back(ctx.sqrt(ctx.add(rec->var[c], eps)));
  Tensor<S> y = Tensor<S>::filled(x.shape, ctx.zero());
  for (int64_t l = 0; l < lanes.count(); ++l)
    for (int64_t c = 0; c < lanes.extent; ++c) {
      const int64_t i = lanes.at(l, c);
      const S n = ctx.div(ctx.sub(x.data[i], rec->mean[c]), denom[c]);
      y.data[i] = ctx.add(ctx.mul(n, rec->gamma[c]), rec->beta[c]);
    }
  return y;
}

}  // namespace denote::rules
