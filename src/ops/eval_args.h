// Internal: what an evaluation rule receives, and helpers every rule uses.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/base/eval_options.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/tensor/tensor.h"
#include "generated.h"

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

#define DENOTE_OP(name, ...) \
  template <class Ctx>                                                        \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a);
#include "denote/ir/ops.def"
#undef DENOTE_OP

// A rule's error, without node context: the walker (src/eval/walk.h) renders it as
// "IR eval: node {i}: {what} ({summary})". `field` names the attribute, payload record field or
// parent the error is about.
inline Status eval_error(const std::string& what, std::string_view field = {}) {
  Status s = Status::error(ErrorCode::kEval, what);
  return field.empty() ? s : s.with_field(std::string(field));
}

// An error whose text is the seed's own and names its node itself ("IR eval: linear 1: ..."): kept
// exactly, attributed to the node so the walker leaves it as it is.
inline Status seed_node_error(const Node& node, const std::string& text, std::string_view field = {}) {
  return eval_error(text, field).with_node(node.id, text);
}

// Applies `f` to every element of a unary op's parent.
template <class S, class F>
Tensor<S> map_unary(const Tensor<S>& x, F&& f) {
  const S* in = x.data.data();
  return Tensor<S>(x.shape, generated_values<S>(x.data.size(), [&](size_t i) { return f(in[i]); }));
}

// Applies `f` pairwise to two equally shaped tensors.
template <class S, class F>
Tensor<S> map_binary(const Tensor<S>& x, const Tensor<S>& y, F&& f) {
  const S *a = x.data.data(), *b = y.data.data();
  return Tensor<S>(x.shape, generated_values<S>(x.data.size(), [&](size_t i) { return f(a[i], b[i]); }));
}

}  // namespace denote::rules
