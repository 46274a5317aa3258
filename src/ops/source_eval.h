// Internal: evaluation rules of the source family (input, const, rand_uniform, bernoulli_mask)
// and custom, plus the splitmix64 stream of the random ops.
#pragma once

#include <cstdint>

#include <fmt/format.h>

#include "eval_args.h"
#include "denote/base/splitmix.h"

namespace denote::rules {

// The caller's value for an input node must have the node's declared shape.
template <class S>
Status check_supplied(const EvalArgs<S>& a) {
  if (a.supplied->shape != a.node.out_shape)
    return eval_error("input shape mismatch: expected " + to_string(a.node.out_shape) + ", got " +
                          to_string(a.supplied->shape),
                      "input");
  if (a.supplied->data.size() != static_cast<size_t>(numel(a.node.out_shape)))
    return eval_error(fmt::format("input has {} values for shape {}", a.supplied->data.size(), to_string(a.node.out_shape)),
                      "input");
  return ok_status();
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Input(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  DENOTE_RETURN_IF_ERROR(check_supplied(a));
  return *a.supplied;
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Const(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  const auto* rec = find_record(a.payload.consts, a.node.id);
  if (!rec) return eval_error("missing const payload", "payload");
  const int64_t size = numel(a.out_shape);
  if (static_cast<int64_t>(rec->values.size()) != size)
    return eval_error(fmt::format("const: flat length mismatch: have {}, expected {}", rec->values.size(), size),
                      "values");
  return Tensor<typename Ctx::Scalar>(a.out_shape, rec->values);
}

// The uniform stream of a random node: u_j = (splitmix64(key + j) mod 2^32) / 2^32, where
// key = splitmix64(seed + node id); the conversion and the division happen in the scalar.
template <class Ctx>
class UniformStream {
 public:
  UniformStream(Ctx& ctx, uint64_t seed, int64_t node_id)
      : ctx_(ctx), key_(splitmix64(seed + static_cast<uint64_t>(node_id))), scale_(ctx.from_double(4294967296.0)) {}

  typename Ctx::Scalar at(int64_t j) const {
    const uint64_t bits = splitmix64(key_ + static_cast<uint64_t>(j)) & 0xFFFFFFFFULL;
    return ctx_.div(ctx_.from_double(static_cast<double>(bits)), scale_);
  }

 private:
  Ctx& ctx_;
  uint64_t key_;
  typename Ctx::Scalar scale_;
};

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_RandUniform(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const UniformStream<Ctx> stream(ctx, std::get<SeedAttrs>(a.node.attrs).seed, a.node.id);
  const int64_t n = numel(a.out_shape);
  Tensor<S> out;
  out.shape = a.out_shape;
  out.data.reserve(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) out.data.push_back(stream.at(j));
  return out;
}

// Element j is 0 if p <= 0 (or p is NaN), 1 if p >= 1, else (p > u_j ? 1 : 0).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_BernoulliMask(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const UniformStream<Ctx> stream(ctx, std::get<SeedAttrs>(a.node.attrs).seed, a.node.id);
  const S p = a.in().data[0];  // the shape rule makes the parent a scalar []
  const int64_t n = numel(a.out_shape);
  const bool positive = ctx.less(ctx.zero(), p);
  const bool certain = positive && !ctx.less(p, ctx.one());
  Tensor<S> out;
  out.shape = a.out_shape;
  out.data.reserve(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    const bool keep = certain || (positive && ctx.less(stream.at(j), p));
    out.data.push_back(keep ? ctx.one() : ctx.zero());
  }
  return out;
}

// One call of the payload body per output element, in row-major order; its errors propagate.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Custom(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const auto* body = find_record(a.payload.custom, a.node.id);
  if (!body || !*body) return eval_error("missing custom payload", "payload");
  const int64_t n = numel(a.out_shape);
  Tensor<S> out;
  out.shape = a.out_shape;
  out.data.reserve(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) {
    Result<S> v = (*body)(a.parents, j);
    if (!v.ok()) return v.status();
    out.data.push_back(std::move(*v));
  }
  return out;
}

}  // namespace denote::rules
