// Internal: evaluation rules of the reductions.
#pragma once

#include "../eval/eval_args.h"

namespace denote::rules {

// Left fold from zero, in row-major order.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Sum(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  auto acc = ctx.zero();
  for (const auto& v : a.in().data) acc = ctx.add(acc, v);
  return Tensor<typename Ctx::Scalar>(Shape{}, {acc});
}

}  // namespace denote::rules
