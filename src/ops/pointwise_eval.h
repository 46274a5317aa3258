// Internal: evaluation rules of the elementwise families. Each rule is one line over the context.
#pragma once

#include "../eval/eval_args.h"

namespace denote::rules {

#define DENOTE_EVAL_UNARY(name, expr)                                                              \
  template <class Ctx>                                                                             \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) { \
    using S = typename Ctx::Scalar;                                                                \
    return map_unary(a.in(), [&](const S& x) { return expr; });                                    \
  }
#define DENOTE_EVAL_BINARY(name, expr)                                                             \
  template <class Ctx>                                                                             \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) { \
    using S = typename Ctx::Scalar;                                                                \
    return map_binary(a.in(0), a.in(1), [&](const S& x, const S& y) { return expr; });             \
  }

DENOTE_EVAL_BINARY(Add, ctx.add(x, y))
DENOTE_EVAL_BINARY(Sub, ctx.sub(x, y))
DENOTE_EVAL_BINARY(MulElem, ctx.mul(x, y))
DENOTE_EVAL_UNARY(Relu, ctx.relu(x))
DENOTE_EVAL_UNARY(Tanh, ctx.tanh(x))

}  // namespace denote::rules
