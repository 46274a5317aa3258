// Internal: the reference provider's kernel (the generic evaluator's rule for the node's op in the
// native context of S), shared by providers that defer to the reference for payload validation
// errors and for extents their library cannot take.
#pragma once

#include "denote/plan/executor.h"
#include "denote/plan/native_context.h"

namespace denote {

// Runs the op rule of args.node.op (src/ops/*_eval.h) with NativeContextFor<S>.
template <class S>
Result<Tensor<S>> reference_kernel(const KernelArgs<S>& args);

extern template Result<Tensor<double>> reference_kernel<double>(const KernelArgs<double>&);
extern template Result<Tensor<float>> reference_kernel<float>(const KernelArgs<float>&);

}  // namespace denote
