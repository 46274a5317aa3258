// Internal: the reference provider's prepared kernels (src/providers/reference_prepared.cc).
#pragma once

#include <optional>

#include "denote/plan/prepared.h"

namespace denote {

// The prepared form of the reference rule of args.node.op, or nullopt (the plan then runs the
// ordinary reference kernel): unary elementwise ops, same-shape binary elementwise ops, pooling,
// batch_norm_eval, matmul, softmax, log_softmax, hard_masked_softmax.
template <class S>
std::optional<PreparedKernel<S>> reference_prepare(const PrepareArgs<S>& args);

extern template std::optional<PreparedKernel<double>> reference_prepare<double>(const PrepareArgs<double>&);
extern template std::optional<PreparedKernel<float>> reference_prepare<float>(const PrepareArgs<float>&);

}  // namespace denote
