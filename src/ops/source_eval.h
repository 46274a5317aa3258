// Internal: evaluation rules of the source family (input, const, rand_uniform, bernoulli_mask)
// and custom.
#pragma once

#include <fmt/format.h>

#include "../eval/eval_args.h"

namespace denote::rules {

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Input(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  if (a.supplied->shape != a.node.out_shape)
    return eval_error("shape mismatch: expected " + to_string(a.node.out_shape) + ", got " +
                      to_string(a.supplied->shape));
  if (a.supplied->data.size() != static_cast<size_t>(numel(a.node.out_shape)))
    return eval_error(fmt::format("input {}: {} values for shape {}", a.node.id, a.supplied->data.size(),
                                  to_string(a.node.out_shape)));
  return *a.supplied;
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Const(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  const auto* rec = find_record(a.payload.consts, a.node.id);
  if (!rec) return eval_error(fmt::format("missing const payload for node {}", a.node.id));
  const int64_t size = numel(a.out_shape);
  if (static_cast<int64_t>(rec->values.size()) != size)
    return eval_error(fmt::format("const {}: flat length mismatch: have {}, expected {}", a.node.id,
                                  rec->values.size(), size));
  return Tensor<typename Ctx::Scalar>(a.out_shape, rec->values);
}

}  // namespace denote::rules
