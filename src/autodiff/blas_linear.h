// Internal: the OpenBLAS path of vjp's linear nodes (GradOptions::kernels = GradKernels::Blas),
// f32 and f64 only. The forward value and the VJP are each one gemm (y = X W^T + b, gX = G W,
// gW = G^T X) and gb a column sum; OpenBLAS blocks the sums, so the result differs from the exact
// left-to-right fold by the usual gemm bound (|err| <= k u sum |a||b|, k the inner extent, u the
// unit roundoff), not bit for bit. blas_linear_available() is false when the library was built
// without libopenblas-dev; the functions then return false and the caller keeps the exact loops.
#pragma once

#include <cstdint>

#include "denote/ir/payload.h"

namespace denote::ad {

bool blas_linear_available();

// y[rows, out] = x[rows, in] W^T + b. False when BLAS is missing or an extent does not fit an int.
template <class S>
bool blas_linear_forward(const LinearRecord<S>& rec, int64_t rows, const S* x, S* y);

// gx[rows, in] = g W (when gx), gw[out, in] = g^T x and gb[out] = column sums of g (when gw);
// buffers are overwritten. False as above.
template <class S>
bool blas_linear_backward(const LinearRecord<S>& rec, int64_t rows, const S* x, const S* g, S* gx, S* gw, S* gb);

}  // namespace denote::ad
