// Internal: what a derivative rule receives, the rule declarations generated from ops.def's diff
// column, and the helpers the elementwise rules share.
//
// Every op whose diff column is `Rule` has two rules per context (src/autodiff/diff_<family>.h):
//   jvp_<Op>(ctx, a, tangents) -> the output's tangent. tangents[k] has parent k's shape; a parent
//       that does not depend on the inputs gets zeros (the walker materialises them).
//   vjp_<Op>(ctx, a, cot, out) -> for every parent k with out.want[k], out.parents[k] = the
//       cotangent contribution (parent k's shape); when out.want_params, the gradients of the node's
//       payload parameters go to out.params (one ParamGrad per record field, PyTorch names:
//       weight, bias; batch_norm_eval and layernorm: weight (gamma), bias (beta)).
// Both are computed in the context's own arithmetic (every add and mul rounds as the context does).
// A rule may return an error (e.g. cast to an integer dtype has no derivative); the walker
// attaches the node.
#pragma once

#include <span>
#include <utility>
#include <string>
#include <vector>

#include "denote/autodiff/grad.h"
#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/tensor/tensor.h"
#include "../ops/eval_args.h"

namespace denote {

// ParamGrad (the gradient of one payload record field) is public: include/denote/autodiff/grad.h.

namespace ad {

template <class S>
struct DiffArgs {
  const Node& node;
  std::span<const Tensor<S>* const> parents;  // forward values of node.parents, in order
  const Tensor<S>& out;                       // forward value of the node
  const Payload<S>& payload;
  const EvalOptions& options;
  bool blas = false;  // GradKernels::Blas: linear VJPs may use OpenBLAS (f32, f64)

  const Tensor<S>& in(size_t k = 0) const { return *parents[k]; }
  // The node's eval arguments over other parent values (e.g. the tangents, for a linear op whose
  // JVP is the op itself).
  rules::EvalArgs<S> eval_args(std::span<const Tensor<S>* const> values) const {
    return rules::EvalArgs<S>{node, values, payload, out.shape, nullptr, options};
  }
};

template <class S>
struct VjpOut {
  std::vector<bool> want;          // want[k]: parent k needs its cotangent
  std::vector<Tensor<S>> parents;  // parents[k]: the contribution to parent k (empty when !want[k])
  bool want_params = false;        // the node's payload parameters need their gradients
  std::vector<ParamGrad<S>> params;
};

#define DENOTE_OP(name, ...)                                                                                  \
  template <class Ctx>                                                                                        \
  Result<Tensor<typename Ctx::Scalar>> jvp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,          \
                                                  std::span<const Tensor<typename Ctx::Scalar>* const> tangents); \
  template <class Ctx>                                                                                        \
  Status vjp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,  \
                    VjpOut<typename Ctx::Scalar>& out);
#include "denote/ir/ops.def"
#undef DENOTE_OP

// Whether parent k of a VJP needs its cotangent contribution.
template <class S>
bool wants(const VjpOut<S>& out, size_t k) {
  return k < out.want.size() && out.want[k];
}

// Stores parent k's contribution (growing out.parents as needed).
template <class S>
void set_parent(VjpOut<S>& out, size_t k, Tensor<S> t) {
  if (out.parents.size() <= k) out.parents.resize(k + 1);
  out.parents[k] = std::move(t);
}

// A derivative rule's error, without node context (the walker attaches the node).
inline Status diff_error(const std::string& what, std::string_view field = {}) {
  Status s = Status::error(ErrorCode::kEval, what);
  return field.empty() ? s : s.with_field(std::string(field));
}

// A tensor of `shape` filled with the context's zero.
template <class Ctx>
Tensor<typename Ctx::Scalar> zeros(Ctx& ctx, const Shape& shape) {
  return Tensor<typename Ctx::Scalar>::filled(shape, ctx.zero());
}

// acc += x elementwise in the context's arithmetic (equal shapes).
template <class Ctx>
void accumulate(Ctx& ctx, Tensor<typename Ctx::Scalar>& acc, const Tensor<typename Ctx::Scalar>& x) {
  for (size_t i = 0; i < acc.data.size(); ++i) acc.data[i] = ctx.add(acc.data[i], x.data[i]);
}

}  // namespace ad
}  // namespace denote
