// Internal: evaluation rules of the elementwise families. Each rule is one line over the context;
// the few with a check (log's domain, cast's target) or an extra operand (safe_log's eps,
// clamp_min's bound) are written out below the one-liners.
#pragma once

#include <fmt/format.h>

#include "eval_args.h"

namespace denote::rules {

// The one-line elementwise rules, by op name: X(Op, expression in ctx and x [, y]). Each becomes a
// scalar rule (Unary<Op>::apply / Binary<Op>::apply) that the tensor rules below and the reference
// provider's prepared kernels (src/providers/reference_prepared.cc) both call, so the two cannot drift.
#define DENOTE_UNARY_RULES(X)                                                                      \
  X(Relu, ctx.relu(x)) X(Tanh, ctx.tanh(x)) X(Abs, ctx.abs(x)) X(Sqrt, ctx.sqrt(x))               \
  X(Inv, ctx.div(ctx.one(), x)) X(Sigmoid, ctx.sigmoid(x)) X(Exp, ctx.exp(x)) X(Sin, ctx.sin(x))   \
  X(Cos, ctx.cos(x)) X(Softplus, ctx.softplus(x)) X(Neg, ctx.neg(x)) X(Rsqrt, ctx.rsqrt(x))        \
  X(Erf, ctx.erf(x)) X(Gelu, ctx.gelu(x))
#define DENOTE_BINARY_RULES(X)                                                                     \
  X(Add, ctx.add(x, y)) X(Sub, ctx.sub(x, y)) X(MulElem, ctx.mul(x, y)) X(MaxElem, ctx.max(x, y))  \
  X(MinElem, ctx.min(x, y)) X(Div, ctx.div(x, y)) X(DivTrunc, ctx.div_trunc(x, y))                 \
  X(DivFloor, ctx.div_floor(x, y)) X(Remainder, ctx.remainder(x, y)) X(Pow, ctx.pow(x, y))

#define DENOTE_SCALAR_UNARY(name, expr)                        \
  struct Unary##name {                                         \
    template <class Ctx, class S>                              \
    static S apply(Ctx& ctx, const S& x) {                     \
      return expr;                                             \
    }                                                          \
  };
#define DENOTE_SCALAR_BINARY(name, expr)                       \
  struct Binary##name {                                        \
    template <class Ctx, class S>                              \
    static S apply(Ctx& ctx, const S& x, const S& y) {         \
      return expr;                                             \
    }                                                          \
  };
DENOTE_UNARY_RULES(DENOTE_SCALAR_UNARY)
DENOTE_BINARY_RULES(DENOTE_SCALAR_BINARY)
#undef DENOTE_SCALAR_UNARY
#undef DENOTE_SCALAR_BINARY

#define DENOTE_EVAL_UNARY(name, expr)                                                              \
  template <class Ctx>                                                                             \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) { \
    using S = typename Ctx::Scalar;                                                                \
    return map_unary(a.in(), [&](const S& x) { return Unary##name::apply(ctx, x); });              \
  }
#define DENOTE_EVAL_BINARY(name, expr)                                                             \
  template <class Ctx>                                                                             \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) { \
    using S = typename Ctx::Scalar;                                                                \
    return map_binary(a.in(0), a.in(1), [&](const S& x, const S& y) { return Binary##name::apply(ctx, x, y); }); \
  }
DENOTE_UNARY_RULES(DENOTE_EVAL_UNARY)
DENOTE_BINARY_RULES(DENOTE_EVAL_BINARY)
#undef DENOTE_EVAL_UNARY
#undef DENOTE_EVAL_BINARY

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
  if (!ctx.can_cast(c.dtype, c.rounding)) {
    // A target that is no format (binary(-1,3), an unknown rounding) is that, in every context.
    if (auto t = cast_target(c); !t.ok()) return eval_error(fmt::format("cast to {}: {}", c.dtype, t.message()), t.status().field());
    return eval_error(fmt::format("cast to {} with rounding {} is not available in the {} context; it needs the "
                                  "binary-format context",
                                  c.dtype, c.rounding, Ctx::kName),
                      "dtype");
  }
  // The target is parsed once per node; a context with a parsed-target cast takes it, so nothing
  // is re-parsed per element (the string form stays for contexts without one).
  if constexpr (requires(const S& x, const BinaryFormat& f, Rounding r) { ctx.cast(x, f, r); }) {
    DENOTE_ASSIGN_OR_RETURN(const CastTarget target, cast_target(c));
    if (target.format)
      return map_unary(a.in(), [&](const S& x) { return ctx.cast(x, *target.format, target.rounding); });
  }
  return map_unary(a.in(), [&](const S& x) { return ctx.cast(x, c.dtype, c.rounding); });
}

// mx_cast: every value read as a double (exact for f64, f32 and the binary formats up to binary64; an
// MPFR value rounded to nearest), then OCP MX quantization and dequantization (include/denote/tensor/mx.h),
// whose values are exact in binary32 (the conversion into a narrower context format rounds as any
// constant does, with its flags); a scalar is one block of one element. A context with IEEE flags also
// gets the conversion's (inexact, underflow, overflow and saturated, mapped special values). The interval
// context has its own rule (src/bounds/ibp_rules.h).
struct MxRoundTrip {
  Tensor<double> y;
  uint32_t flags = 0;  // mx_quantize's FpFlag bits
};
Result<MxRoundTrip> mx_round_trip(const MxCastAttrs& a, const Tensor<double>& x);

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_MxCast(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  if constexpr (requires(const S& x) { ctx.to_double(x); ctx.from_double(0.0); }) {
    const Tensor<S>& in = a.in();
    Tensor<double> x(in.shape, std::vector<double>(in.data.size()));
    for (size_t i = 0; i < in.data.size(); ++i) x.data[i] = ctx.to_double(in.data[i]);
    DENOTE_ASSIGN_OR_RETURN(const MxRoundTrip r, mx_round_trip(std::get<MxCastAttrs>(a.node.attrs), x));
    if constexpr (requires { ctx.env().flags |= r.flags; }) ctx.env().flags |= r.flags;
    return Tensor<S>(r.y.shape, generated_values<S>(r.y.data.size(), [&](size_t i) { return ctx.from_double(r.y.data[i]); }));
  } else {
    return eval_error(std::string("mx_cast is not available in the ") + Ctx::kName + " context", "format");
  }
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
