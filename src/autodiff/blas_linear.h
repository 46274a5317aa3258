// Internal: the OpenBLAS path of vjp's linear nodes (GradOptions::kernels = GradKernels::Blas), f32 and f64 only,
// through the kernels layer (src/kernels/gemm.h). The forward value and the VJP are each one gemm (y = X W^T + b, gX =
// G W, gW = G^T X) and gb a column sum; OpenBLAS blocks the sums, so the result differs from the exact left-to-right
// fold by the usual gemm bound (|err| <= k u sum |a||b|, k the inner extent, u the unit roundoff), not bit for bit.
// blas_linear_available() is false when the library was built without libopenblas-dev; the functions then return false
// and the caller keeps the exact loops.
#pragma once

#include <cstdint>
#include <vector>

#include "denote/ir/payload.h"

namespace denote::ad {

bool blas_linear_available();

// Below this many rows (a batch of 1 to 3) GradKernels::Blas keeps the exact rules for linear nodes:
// there they are faster than a gemm (mnistfc at batch 1, f32: 50 against 170 us a gradient), and
// their values are within the gemm's error bound too (they are the exact order itself).
inline constexpr int64_t kBlasMinRows = 4;

// y[rows, out] = x[rows, in] W^T + b, where y holds b in every row on entry (the caller writes the
// bias rows once, blas_linear_bias_rows, instead of zeros then the bias). False when BLAS is missing
// or off (SIMD level 0, base/cpu.h) or an extent does not fit an int.
// rows copies of the bias, the y that blas_linear_forward expects (one pass, no zero fill first).
template <class S>
std::vector<S> blas_linear_bias_rows(const LinearRecord<S>& rec, int64_t rows) {
  std::vector<S> y;
  y.reserve(static_cast<size_t>(rows * rec.out_dim));
  for (int64_t r = 0; r < rows; ++r) y.insert(y.end(), rec.bias.begin(), rec.bias.end());
  return y;
}

template <class S>
bool blas_linear_forward(const LinearRecord<S>& rec, int64_t rows, const S* x, S* y);

// gx[rows, in] += g W (when gx), gw[out, in] += g^T x and gb[out] += column sums of g (when gw):
// the buffers hold zeros on entry (as vjp allocates them), so OpenBLAS need not scale them by a
// beta of 0 in a pass of its own. False as above.
template <class S>
bool blas_linear_backward(const LinearRecord<S>& rec, int64_t rows, const S* x, const S* g, S* gx, S* gw, S* gb);

}  // namespace denote::ad
