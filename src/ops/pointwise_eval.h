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

// ---- floor, ceil, round (ties to even), sign: exact in every context, written with the context's
// own primitives. floor(x) is div_floor(x, 1) (the floor of the exact quotient, rounded once: exact,
// since the floor of a representable number is representable); infinities and NaN are returned
// unchanged (x - x is NaN exactly for them). The interval context takes the dedicated monotone
// rules of src/bounds/ibp_rules.h instead.
template <class Ctx>
typename Ctx::Scalar floor_of(Ctx& ctx, const typename Ctx::Scalar& x) {
  if (ctx.is_nan(ctx.sub(x, x))) return x;
  return ctx.div_floor(x, ctx.one());
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Floor(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  return map_unary(a.in(), [&](const S& x) { return floor_of(ctx, x); });
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Ceil(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  return map_unary(a.in(), [&](const S& x) { return ctx.neg(floor_of(ctx, ctx.neg(x))); });
}

// f = floor(x), d = x - f in [0, 1) (exact: f and x share the binade or f is 0); d > 1/2 rounds up,
// d < 1/2 down, d = 1/2 to the even one of f and f + 1. f + 1 is exact wherever d > 0 (|x| < 2^p).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Round(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const S one = ctx.one(), two = ctx.add(one, one), half = ctx.div(one, two);
  return map_unary(a.in(), [&](const S& x) {
    if (ctx.is_nan(ctx.sub(x, x))) return x;
    const S f = ctx.div_floor(x, one);
    const S d = ctx.sub(x, f);
    if (ctx.less(half, d)) return ctx.add(f, one);
    if (ctx.less(d, half)) return f;
    return ctx.less(ctx.zero(), ctx.remainder(f, two)) ? ctx.add(f, one) : f;
  });
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Sign(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  return map_unary(a.in(), [&](const S& x) {
    if (ctx.less(ctx.zero(), x)) return ctx.one();
    if (ctx.less(x, ctx.zero())) return ctx.neg(ctx.one());
    return x;  // +-0 and NaN
  });
}

}  // namespace denote::rules
