// Internal: the openblas provider's prepared kernels (src/providers/openblas_prepared.cc) for
// compiled plans: linear and conv with the bias and the fused pointwise stages applied in the GEMM's
// output pass, matmul (one gemm per broadcast batch matrix, or per block of its rows), add/sub by
// axpy. nullopt where the ordinary kernel would hand the node to the reference (payload errors,
// non-finite conv weights, empty extents, extents beyond BLAS ints).
#pragma once

#include <optional>

#include "denote/plan/prepared.h"

namespace denote {

template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_linear(const PrepareArgs<S>& args);
template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_matmul(const PrepareArgs<S>& args);
template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_conv(const PrepareArgs<S>& args);
template <class S, bool kSub>
std::optional<PreparedKernel<S>> openblas_prepare_axpy(const PrepareArgs<S>& args);

}  // namespace denote
