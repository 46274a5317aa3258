// Internal: evaluation rules of the elementwise families. Each rule is one line over the context;
// the few with a check (log's domain, cast's target) or an extra operand (safe_log's eps,
// clamp_min's bound) are written out below the one-liners.
#pragma once

#include <fmt/format.h>

#include "eval_args.h"

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
DENOTE_EVAL_BINARY(MaxElem, ctx.max(x, y))
DENOTE_EVAL_BINARY(MinElem, ctx.min(x, y))
DENOTE_EVAL_BINARY(Div, ctx.div(x, y))
DENOTE_EVAL_BINARY(DivTrunc, ctx.div_trunc(x, y))
DENOTE_EVAL_BINARY(DivFloor, ctx.div_floor(x, y))
DENOTE_EVAL_BINARY(Remainder, ctx.remainder(x, y))
DENOTE_EVAL_BINARY(Pow, ctx.pow(x, y))

DENOTE_EVAL_UNARY(Relu, ctx.relu(x))
DENOTE_EVAL_UNARY(Tanh, ctx.tanh(x))
DENOTE_EVAL_UNARY(Abs, ctx.abs(x))
DENOTE_EVAL_UNARY(Sqrt, ctx.sqrt(x))
DENOTE_EVAL_UNARY(Inv, ctx.div(ctx.one(), x))
DENOTE_EVAL_UNARY(Sigmoid, ctx.sigmoid(x))
DENOTE_EVAL_UNARY(Exp, ctx.exp(x))
DENOTE_EVAL_UNARY(Sin, ctx.sin(x))
DENOTE_EVAL_UNARY(Cos, ctx.cos(x))
DENOTE_EVAL_UNARY(Softplus, ctx.softplus(x))
DENOTE_EVAL_UNARY(Neg, ctx.neg(x))
DENOTE_EVAL_UNARY(Rsqrt, ctx.rsqrt(x))
DENOTE_EVAL_UNARY(Erf, ctx.erf(x))
DENOTE_EVAL_UNARY(Gelu, ctx.gelu(x))

// max(x, bound) with the bound taken from the node's ClampAttrs.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_ClampMin(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const double bound = std::get<ClampAttrs>(a.node.attrs).bound;
  return map_unary(a.in(), [&](const S& x) { return ctx.clamp_min(x, bound); });
}

// Natural log; an error (never a NaN or -inf) unless the context says every entry is > 0.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Log(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  for (const S& x : a.in().data)
    if (!ctx.log_domain_ok(x))
      return eval_error("log: input contains values <= 0 (or NaN); use `safe_log`, which is log(softplus(x) + eps)");
  return map_unary(a.in(), [&](const S& x) { return ctx.log(x); });
}

// log(softplus(x) + eps) with the scalar eps as the second parent; no domain check.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_SafeLog(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const S eps = a.in(1).data[0];  // the shape rule made it [] (one value)
  return map_unary(a.in(0), [&](const S& x) { return ctx.log(ctx.add(ctx.softplus(x), eps)); });
}

// Rounds every entry once to the target dtype. The context decides which targets it can honour
// (the native ones: binary64 and binary32 with nearest-even); any other target is an error until
// the binary-format context (issue 4) evaluates it, never an invented value.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Cast(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const auto& c = std::get<CastAttrs>(a.node.attrs);
  if (!ctx.can_cast(c.dtype, c.rounding))
    return eval_error(fmt::format("cast to {} with rounding {} is not available in the {} context; it needs the "
                                  "binary-format context",
                                  c.dtype, c.rounding, Ctx::kName),
                      "dtype");
  // The target is parsed once per node; a context with a parsed-target cast takes it, so nothing
  // is re-parsed per element (the string form stays for contexts without one).
  if constexpr (requires(const S& x, const BinaryFormat& f, Rounding r) { ctx.cast(x, f, r); }) {
    DENOTE_ASSIGN_OR_RETURN(const CastTarget target, cast_target(c));
    if (target.format)
      return map_unary(a.in(), [&](const S& x) { return ctx.cast(x, *target.format, target.rounding); });
  }
  return map_unary(a.in(), [&](const S& x) { return ctx.cast(x, c.dtype, c.rounding); });
}

}  // namespace denote::rules
