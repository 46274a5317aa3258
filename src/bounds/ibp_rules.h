// Internal: the interval context's rule overrides. run_ibp evaluates each node with the op table's
// generic rule over IntervalContext, except for the ops listed here, whose dedicated rules are
// tighter (softmax family, layernorm: dependency-free exact ranges; mse_loss: a proper square),
// faster (linear on hardware endpoints: midpoint-radius), stricter (sqrt: no box where it can be
// NaN) or the only ones (mx_cast, whose evaluation reads plain values). The table is built from ops.def,
// one entry per op, so a new op automatically gets the generic rule.
#pragma once

#include <cmath>
#include <type_traits>

#include "../eval/evaluator_impl.h"
#include "ibp_affine.h"
#include "ibp_mx.h"
#include "ibp_softmax.h"

namespace denote {

namespace ibp {

template <class E>
using IbpFn = detail::EvalFn<IntervalContext<E>>;

template <class E>
inline constexpr bool kHardwareEndpoints =
    std::is_same_v<E, NativeEndpoints<double>> || std::is_same_v<E, NativeEndpoints<float>>;

// The sqrt op: unlike the square roots inside rules (variances, whose computed value is >= 0), a
// graph's sqrt of a box reaching below 0 is NaN at some point, so the node gets no box.
template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_sqrt(IntervalContext<E>& ctx,
                                                     const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  return rules::map_unary(a.in(), [&](const S& x) { return ctx.sqrt_of_value(x); });
}

// floor, ceil, round, sign: nondecreasing, so [f(lo), f(hi)]. Each endpoint goes to a double
// outward (to_double), the integer function is applied there (monotone again) and the result comes
// back outward: the box holds f of every real in [lo, hi] and of every endpoint-format value.
enum class Step { Floor, Ceil, Round, Sign };

template <Step K>
double step_of(double v) {
  if constexpr (K == Step::Floor) return std::floor(v);
  else if constexpr (K == Step::Ceil) return std::ceil(v);
  else if constexpr (K == Step::Round) return std::nearbyint(v);  // the default mode: ties to even
  else return v > 0 ? 1.0 : (v < 0 ? -1.0 : 0.0);
}

template <class E, Step K>
Result<Tensor<Interval<typename E::Value>>> ibp_step(IntervalContext<E>& ctx,
                                                     const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  const E& e = ctx.endpoints();
  return rules::map_unary(a.in(), [&](const S& x) {
    return S{e.from_double(step_of<K>(e.to_double(x.lo, Dir::Down)), Dir::Down),
             e.from_double(step_of<K>(e.to_double(x.hi, Dir::Up)), Dir::Up)};
  });
}

// mx_cast: every block over its possible shared exponents (ibp_mx.h), on the endpoints taken outward to doubles.
template <class E>
Result<Tensor<Interval<typename E::Value>>> ibp_mx_cast(IntervalContext<E>& ctx,
                                                        const rules::EvalArgs<Interval<typename E::Value>>& a) {
  using S = Interval<typename E::Value>;
  const E& e = ctx.endpoints();
  const Tensor<S>& x = a.in();
  std::vector<double> lo(x.data.size()), hi(x.data.size());
  for (size_t i = 0; i < lo.size(); ++i)
    lo[i] = e.to_double(x.data[i].lo, Dir::Down), hi[i] = e.to_double(x.data[i].hi, Dir::Up);
  DENOTE_RETURN_IF_ERROR(mx_cast_boxes(std::get<MxCastAttrs>(a.node.attrs), x.shape, lo, hi));
  Tensor<S> y(x.shape, std::vector<S>(lo.size()));
  for (size_t i = 0; i < lo.size(); ++i) y.data[i] = S{e.from_double(lo[i], Dir::Down), e.from_double(hi[i], Dir::Up)};
  return y;
}

// The dedicated rule of op O over endpoints E (nullptr: the generic rule).
template <class E, Op O>
struct Dedicated {
  static constexpr IbpFn<E> fn = nullptr;
};
template <class E>
struct Dedicated<E, Op::Softmax> {
  static constexpr IbpFn<E> fn = &ibp_softmax<E>;
};
template <class E>
struct Dedicated<E, Op::LogSoftmax> {
  static constexpr IbpFn<E> fn = &ibp_log_softmax<E>;
};
template <class E>
struct Dedicated<E, Op::HardMaskedSoftmax> {
  static constexpr IbpFn<E> fn = &ibp_hard_masked_softmax<E>;
};
template <class E>
struct Dedicated<E, Op::Layernorm> {
  static constexpr IbpFn<E> fn = &ibp_layernorm<E>;
};
template <class E>
struct Dedicated<E, Op::MseLoss> {
  static constexpr IbpFn<E> fn = &ibp_mse_loss<E>;
};
template <class E>
struct Dedicated<E, Op::Sqrt> {
  static constexpr IbpFn<E> fn = &ibp_sqrt<E>;
};
template <class E>
struct Dedicated<E, Op::Floor> {
  static constexpr IbpFn<E> fn = &ibp_step<E, Step::Floor>;
};
template <class E>
struct Dedicated<E, Op::Ceil> {
  static constexpr IbpFn<E> fn = &ibp_step<E, Step::Ceil>;
};
template <class E>
struct Dedicated<E, Op::Round> {
  static constexpr IbpFn<E> fn = &ibp_step<E, Step::Round>;
};
template <class E>
struct Dedicated<E, Op::Sign> {
  static constexpr IbpFn<E> fn = &ibp_step<E, Step::Sign>;
};
template <class E>
struct Dedicated<E, Op::MxCast> {
  static constexpr IbpFn<E> fn = &ibp_mx_cast<E>;
};
template <class E>
struct Dedicated<E, Op::Linear> {
  static constexpr IbpFn<E> fn = kHardwareEndpoints<E> ? &ibp_linear<E> : nullptr;
};

}  // namespace ibp

namespace detail {

template <class E>
struct RuleOverride<IntervalContext<E>> {
  static EvalFn<IntervalContext<E>> find(Op op) {
    static constexpr EvalFn<IntervalContext<E>> kRules[] = {
#define DENOTE_OP(name, ...) ibp::Dedicated<E, Op::name>::fn,
#include "denote/ir/ops.def"
#undef DENOTE_OP
    };
    return kRules[static_cast<size_t>(op)];
  }
};

}  // namespace detail

}  // namespace denote
