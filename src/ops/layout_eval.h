// Internal: evaluation rules of the storage-only family.
#pragma once

#include "../eval/eval_args.h"

namespace denote::rules {

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Reshape(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  return Tensor<typename Ctx::Scalar>(a.out_shape, a.in().data);
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Flatten(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  return Tensor<typename Ctx::Scalar>(a.out_shape, a.in().data);
}

}  // namespace denote::rules
