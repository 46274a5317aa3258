// Internal: derivative rules of the elementwise ops (and mse_loss, safe_log, cast). A unary op is
// one line: its local derivative d(x, y) from the input x and the output y; the JVP is t * d and
// the VJP g * d. A binary op gives its two partials. Non-differentiable points follow PyTorch
// (docs/AUTODIFF.md): relu'(0) = 0, |x|'(0) = 0, clamp_min passes where x >= bound, max/min ties
// split the gradient in halves, sqrt'(0) = +inf, pow's exponent-0 and base-0 cases.
#pragma once

#include <cmath>

#include <fmt/format.h>

#include "diff_args.h"

namespace denote::ad {

// pi in the context's precision (MPFR beyond 53 bits; a double constant rounded otherwise).
template <class Ctx>
typename Ctx::Scalar pi_of(Ctx& ctx) {
  if constexpr (requires { ctx.pi(); })
    return ctx.pi();
  else
    return ctx.from_double(M_PI);
}

// 2 / sqrt(pi): erf'(x) = 2/sqrt(pi) e^(-x^2).
template <class Ctx>
typename Ctx::Scalar two_over_sqrt_pi(Ctx& ctx) {
  return ctx.div(ctx.from_double(2.0), ctx.sqrt(pi_of(ctx)));
}

template <class Ctx>
typename Ctx::Scalar sign_of(Ctx& ctx, const typename Ctx::Scalar& x) {
  if (ctx.is_nan(x)) return x;
  if (ctx.less(ctx.zero(), x)) return ctx.one();
  if (ctx.less(x, ctx.zero())) return ctx.neg(ctx.one());
  return ctx.zero();
}

// gelu'(x) = Phi(x) + x phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2, phi(x) = e^(-x^2/2) / sqrt(2 pi).
template <class Ctx>
typename Ctx::Scalar gelu_derivative(Ctx& ctx, const typename Ctx::Scalar& x) {
  const auto two = ctx.from_double(2.0);
  const auto half = ctx.from_double(0.5);
  const auto cdf = ctx.mul(half, ctx.add(ctx.one(), ctx.erf(ctx.div(x, ctx.sqrt(two)))));
  const auto pdf = ctx.div(ctx.exp(ctx.neg(ctx.mul(half, ctx.mul(x, x)))), ctx.sqrt(ctx.mul(two, pi_of(ctx))));
  return ctx.add(cdf, ctx.mul(x, pdf));
}

// t * d(x, y) for every element.
template <class Ctx, class D>
Tensor<typename Ctx::Scalar> unary_jvp(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                       const Tensor<typename Ctx::Scalar>& t, D&& d) {
  const auto* x = a.in().data.data();
  const auto* y = a.out.data.data();
  const auto* tv = t.data.data();
  return Tensor<typename Ctx::Scalar>(t.shape, rules::generated_values<typename Ctx::Scalar>(
                                                   t.data.size(), [&](size_t i) { return ctx.mul(tv[i], d(x[i], y[i])); }));
}

template <class Ctx, class D>
Status unary_vjp(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& g,
                 VjpOut<typename Ctx::Scalar>& out, D&& d) {
  if (out.want[0]) out.parents[0] = unary_jvp(ctx, a, g, d);
  return ok_status();
}

#define DENOTE_DIFF_UNARY(name, expr)                                                                          \
  template <class Ctx>                                                                                         \
  Result<Tensor<typename Ctx::Scalar>> jvp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,           \
                                                  std::span<const Tensor<typename Ctx::Scalar>* const> tangents) { \
    using S = typename Ctx::Scalar;                                                                            \
    return unary_jvp(ctx, a, *tangents[0], [&](const S& x, const S& y) { return expr; });                     \
  }                                                                                                            \
  template <class Ctx>                                                                                         \
  Status vjp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot, \
                    VjpOut<typename Ctx::Scalar>& out) {                                                       \
    using S = typename Ctx::Scalar;                                                                            \
    return unary_vjp(ctx, a, cot, out, [&](const S& x, const S& y) { return expr; });                         \
  }

// (void)x / (void)y: a derivative reads the input, the output or both.
DENOTE_DIFF_UNARY(Abs, ((void)y, sign_of(ctx, x)))
DENOTE_DIFF_UNARY(Sqrt, ((void)x, ctx.div(ctx.one(), ctx.add(y, y))))
DENOTE_DIFF_UNARY(Inv, ((void)x, ctx.neg(ctx.mul(y, y))))
// threshold_backward: the gradient passes unless the output is <= 0, so a NaN passes it.
DENOTE_DIFF_UNARY(Relu, ((void)y, ctx.less(ctx.zero(), x) || ctx.is_nan(x) ? ctx.one() : ctx.zero()))
DENOTE_DIFF_UNARY(Tanh, ((void)x, ctx.sub(ctx.one(), ctx.mul(y, y))))
DENOTE_DIFF_UNARY(Sigmoid, ((void)x, ctx.mul(y, ctx.sub(ctx.one(), y))))
DENOTE_DIFF_UNARY(Exp, ((void)x, y))
DENOTE_DIFF_UNARY(Log, ((void)y, ctx.div(ctx.one(), x)))
DENOTE_DIFF_UNARY(Sin, ((void)y, ctx.cos(x)))
DENOTE_DIFF_UNARY(Cos, ((void)y, ctx.neg(ctx.sin(x))))
DENOTE_DIFF_UNARY(Softplus, ((void)y, ctx.sigmoid(x)))
DENOTE_DIFF_UNARY(Neg, ((void)x, (void)y, ctx.neg(ctx.one())))
DENOTE_DIFF_UNARY(Rsqrt, ((void)x, ctx.mul(ctx.from_double(-0.5), ctx.mul(y, ctx.mul(y, y)))))
DENOTE_DIFF_UNARY(Erf, ((void)y, ctx.mul(two_over_sqrt_pi(ctx), ctx.exp(ctx.neg(ctx.mul(x, x))))))
DENOTE_DIFF_UNARY(Gelu, ((void)y, gelu_derivative(ctx, x)))
// torch.clamp_min: the gradient passes where x >= bound (ties included).
DENOTE_DIFF_UNARY(ClampMin, ((void)y, ctx.less(x, ctx.from_double(std::get<ClampAttrs>(a.node.attrs).bound))
                                          ? ctx.zero()
                                          : (ctx.is_nan(x) ? ctx.zero() : ctx.one())))
#undef DENOTE_DIFF_UNARY

// A float cast's derivative is 1 (the tangent and cotangent pass unchanged, as PyTorch's .to()
// backward); an integer or bool target has none.
template <class Ctx>
Status cast_differentiable(const Node& n) {
  const auto& c = std::get<CastAttrs>(n.attrs);
  DENOTE_ASSIGN_OR_RETURN(const CastTarget target, cast_target(c));
  if (!target.format)
    return diff_error(fmt::format("cast to {} has no derivative (integer or bool target)", c.dtype), "dtype");
  return ok_status();
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Cast(Ctx&, const DiffArgs<typename Ctx::Scalar>& a,
                                              std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  DENOTE_RETURN_IF_ERROR(cast_differentiable<Ctx>(a.node));
  return *tangents[0];
}

template <class Ctx>
Status vjp_Cast(Ctx&, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                VjpOut<typename Ctx::Scalar>& out) {
  DENOTE_RETURN_IF_ERROR(cast_differentiable<Ctx>(a.node));
  if (out.want[0]) out.parents[0] = cot;
  return ok_status();
}

// mx_cast's derivative is straight-through, 1 (the tangent and cotangent pass unchanged, as quantization-
// aware training's fake quantization takes it; the true derivative is 0 almost everywhere).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_MxCast(Ctx&, const DiffArgs<typename Ctx::Scalar>&,
                                                std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return *tangents[0];
}

template <class Ctx>
Status vjp_MxCast(Ctx&, const DiffArgs<typename Ctx::Scalar>&, const Tensor<typename Ctx::Scalar>& cot,
                  VjpOut<typename Ctx::Scalar>& out) {
  if (out.want[0]) out.parents[0] = cot;
  return ok_status();
}

// Binary elementwise ops: partials(i) -> {d out / d a, d out / d b} at element i.
template <class Ctx, class P>
Tensor<typename Ctx::Scalar> binary_jvp(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                        std::span<const Tensor<typename Ctx::Scalar>* const> t, P&& partials) {
  Tensor<typename Ctx::Scalar> r;
  r.shape = a.out.shape;
  r.data.resize(a.out.data.size());
  for (size_t i = 0; i < r.data.size(); ++i) {
    const auto [da, db] = partials(i);
    r.data[i] = ctx.add(ctx.mul(t[0]->data[i], da), ctx.mul(t[1]->data[i], db));
  }
  return r;
}

template <class Ctx, class P>
Status binary_vjp(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& g,
                  VjpOut<typename Ctx::Scalar>& out, P&& partials) {
  for (size_t k = 0; k < 2; ++k)
    if (out.want[k]) out.parents[k] = Tensor<typename Ctx::Scalar>::filled(a.in(k).shape, ctx.zero());
  for (size_t i = 0; i < g.data.size(); ++i) {
    const auto [da, db] = partials(i);
    if (out.want[0]) out.parents[0].data[i] = ctx.mul(g.data[i], da);
    if (out.want[1]) out.parents[1].data[i] = ctx.mul(g.data[i], db);
  }
  return ok_status();
}

#define DENOTE_DIFF_BINARY(name, da, db)                                                                       \
  template <class Ctx>                                                                                         \
  auto partials_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a) {                                    \
    return [&ctx, &a](size_t i) {                                                                              \
      using S = typename Ctx::Scalar;                                                                          \
      const S& x = a.in(0).data[i];                                                                            \
      const S& z = a.in(1).data[i];                                                                            \
      const S& y = a.out.data[i];                                                                              \
      (void)x, (void)z, (void)y;                                                                               \
      return std::pair<S, S>{da, db};                                                                          \
    };                                                                                                         \
  }                                                                                                            \
  template <class Ctx>                                                                                         \
  Result<Tensor<typename Ctx::Scalar>> jvp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,           \
                                                  std::span<const Tensor<typename Ctx::Scalar>* const> tangents) { \
    return binary_jvp(ctx, a, tangents, partials_##name(ctx, a));                                              \
  }                                                                                                            \
  template <class Ctx>                                                                                         \
  Status vjp_##name(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot, \
                    VjpOut<typename Ctx::Scalar>& out) {                                                       \
    return binary_vjp(ctx, a, cot, out, partials_##name(ctx, a));                                              \
  }

// torch.maximum / minimum: the larger (smaller) operand takes the gradient; a tie splits it in halves.
template <class Ctx>
std::pair<typename Ctx::Scalar, typename Ctx::Scalar> max_partials(Ctx& ctx, const typename Ctx::Scalar& x,
                                                                   const typename Ctx::Scalar& z) {
  if (ctx.less(z, x)) return {ctx.one(), ctx.zero()};
  if (ctx.less(x, z)) return {ctx.zero(), ctx.one()};
  if (ctx.is_nan(x) || ctx.is_nan(z)) return {ctx.one(), ctx.one()};  // neither mask applies (PyTorch)
  const auto half = ctx.from_double(0.5);
  return {half, half};
}

// pow: d/da = b a^(b-1) (0 where b == 0), d/db = a^b log a (0 where a == 0 and b >= 0), as PyTorch.
template <class Ctx>
typename Ctx::Scalar pow_base_partial(Ctx& ctx, const typename Ctx::Scalar& x, const typename Ctx::Scalar& z) {
  if (!ctx.less(z, ctx.zero()) && !ctx.less(ctx.zero(), z) && !ctx.is_nan(z)) return ctx.zero();
  return ctx.mul(z, ctx.pow(x, ctx.sub(z, ctx.one())));
}
template <class Ctx>
typename Ctx::Scalar pow_exponent_partial(Ctx& ctx, const typename Ctx::Scalar& x, const typename Ctx::Scalar& z,
                                          const typename Ctx::Scalar& y) {
  const bool x_zero = !ctx.less(x, ctx.zero()) && !ctx.less(ctx.zero(), x) && !ctx.is_nan(x);
  if (x_zero && !ctx.less(z, ctx.zero()) && !ctx.is_nan(z)) return ctx.zero();
  return ctx.mul(y, ctx.log(x));
}

DENOTE_DIFF_BINARY(Add, ctx.one(), ctx.one())
DENOTE_DIFF_BINARY(Sub, ctx.one(), ctx.neg(ctx.one()))
DENOTE_DIFF_BINARY(MulElem, z, x)
DENOTE_DIFF_BINARY(Div, ctx.div(ctx.one(), z), ctx.neg(ctx.div(y, z)))
DENOTE_DIFF_BINARY(MaxElem, max_partials(ctx, x, z).first, max_partials(ctx, x, z).second)
DENOTE_DIFF_BINARY(MinElem, max_partials(ctx, z, x).first, max_partials(ctx, z, x).second)
// Python's %: a - b floor(a / b); d/db = -floor(a / b) (PyTorch).
DENOTE_DIFF_BINARY(Remainder, ctx.one(), ctx.neg(ctx.div_floor(x, z)))
DENOTE_DIFF_BINARY(Pow, pow_base_partial(ctx, x, z), pow_exponent_partial(ctx, x, z, y))
#undef DENOTE_DIFF_BINARY

// mse_loss = sum (a - b)^2 / n: d/da = 2 (a - b) / n, d/db = -d/da (divisor 1 for an empty tensor).
template <class Ctx>
typename Ctx::Scalar mse_scale(Ctx& ctx, const Tensor<typename Ctx::Scalar>& x) {
  const double n = x.data.empty() ? 1.0 : static_cast<double>(x.data.size());
  return ctx.div(ctx.from_double(2.0), ctx.from_double(n));
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_MseLoss(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> t) {
  auto acc = ctx.zero();
  const auto& x = a.in(0).data;
  const auto& z = a.in(1).data;
  for (size_t i = 0; i < x.size(); ++i)
    acc = ctx.add(acc, ctx.mul(ctx.sub(x[i], z[i]), ctx.sub(t[0]->data[i], t[1]->data[i])));
  return Tensor<typename Ctx::Scalar>{{}, {ctx.mul(mse_scale(ctx, a.in(0)), acc)}};
}

template <class Ctx>
Status vjp_MseLoss(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  const auto k = ctx.mul(mse_scale(ctx, a.in(0)), cot.data[0]);
  const auto& x = a.in(0).data;
  const auto& z = a.in(1).data;
  Tensor<typename Ctx::Scalar> d = a.in(0);
  for (size_t i = 0; i < x.size(); ++i) d.data[i] = ctx.mul(k, ctx.sub(x[i], z[i]));
  if (out.want[1]) {
    out.parents[1] = d;
    for (auto& v : out.parents[1].data) v = ctx.neg(v);
  }
  if (out.want[0]) out.parents[0] = std::move(d);
  return ok_status();
}

// safe_log = log(softplus(x) + eps): d/dx = sigmoid(x) / (softplus(x) + eps), d/deps = 1 / (softplus(x) + eps).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_SafeLog(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> t) {
  const auto eps = a.in(1).data[0];
  const auto teps = t[1]->data[0];
  Tensor<typename Ctx::Scalar> r = *t[0];
  const auto& x = a.in(0).data;
  for (size_t i = 0; i < x.size(); ++i) {
    const auto num = ctx.add(ctx.mul(ctx.sigmoid(x[i]), t[0]->data[i]), teps);
    r.data[i] = ctx.div(num, ctx.add(ctx.softplus(x[i]), eps));
  }
  return r;
}

template <class Ctx>
Status vjp_SafeLog(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  const auto eps = a.in(1).data[0];
  const auto& x = a.in(0).data;
  auto eps_acc = ctx.zero();
  if (out.want[0]) out.parents[0] = a.in(0);
  for (size_t i = 0; i < x.size(); ++i) {
    const auto q = ctx.div(cot.data[i], ctx.add(ctx.softplus(x[i]), eps));
    if (out.want[0]) out.parents[0].data[i] = ctx.mul(q, ctx.sigmoid(x[i]));
    eps_acc = ctx.add(eps_acc, q);
  }
  if (out.want[1]) out.parents[1] = Tensor<typename Ctx::Scalar>{{}, {eps_acc}};
  return ok_status();
}

}  // namespace denote::ad
