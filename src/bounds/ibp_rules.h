// Internal: the interval context's rule overrides. run_ibp evaluates each node with the op table's
// generic rule over IntervalContext, except for the ops listed here, whose dedicated rules are
// tighter (softmax family, layernorm: dependency-free exact ranges; mse_loss: a proper square),
// faster (linear on hardware endpoints: midpoint-radius) or stricter (sqrt: no box where it can be
// NaN). The table is built from ops.def, one entry per op, so a new op automatically gets the
// generic rule.
#pragma once

#include <type_traits>

#include "../eval/evaluator_impl.h"
#include "ibp_affine.h"
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
