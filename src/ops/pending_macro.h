// Internal, temporary: the error-returning placeholder for an op whose rule is not written yet.
#pragma once

#include <fmt/format.h>

#include "../eval/eval_args.h"

#define DENOTE_PENDING(name)                                                                           \
  template <class Ctx>                                                                                 \
  Result<Tensor<typename Ctx::Scalar>> eval_##name(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {   \
    return ::denote::rules::eval_error(                                                                \
        fmt::format("node {}: no evaluation rule for {} yet", a.node.id, op_tag(a.node.op)));          \
  }
