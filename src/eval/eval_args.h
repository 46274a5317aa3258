// Internal: what an evaluation rule receives, and helpers every rule uses.
#pragma once

#include <span>
#include <string>

#include "denote/base/status.h"
#include "denote/eval/eval.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/tensor/tensor.h"

namespace denote::rules {

template <class S>
struct EvalArgs {
  const Node& node;
  std::span<const Tensor<S>* const> parents;  // values of node.parents, in order
  const Payload<S>& payload;
  const Shape& out_shape;     // inferred from the parents' shapes by the op's shape rule (== declared)
  const Tensor<S>* supplied;  // input nodes: the value supplied by the caller
  const EvalOptions& options;

  const Tensor<S>& in(size_t k = 0) const { return *parents[k]; }
};

#define DENOTE_OP(name, tag, minp, maxp, family, attr, flags, shape, meaning) \
  template <class Ctx>                                                        \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a);
#include "denote/ir/ops.def"
#undef DENOTE_OP

// "IR eval: {what}"
inline Status eval_error(const std::string& what) { return error_status("IR eval: " + what); }

// Applies `f` to every element of a unary op's parent.
template <class S, class F>
Tensor<S> map_unary(const Tensor<S>& x, F&& f) {
  Tensor<S> out;
  out.shape = x.shape;
  out.data.resize(x.data.size());  // sized first and written by index: the loop can vectorise
  for (size_t i = 0; i < x.data.size(); ++i) out.data[i] = f(x.data[i]);
  return out;
}

// Applies `f` pairwise to two equally shaped tensors.
template <class S, class F>
Tensor<S> map_binary(const Tensor<S>& x, const Tensor<S>& y, F&& f) {
  Tensor<S> out;
  out.shape = x.shape;
  out.data.resize(x.data.size());
  for (size_t i = 0; i < x.data.size(); ++i) out.data[i] = f(x.data[i], y.data[i]);
  return out;
}

}  // namespace denote::rules
