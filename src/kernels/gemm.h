// Internal: the kernels layer's matrix products (src/kernels/, docs/ARCHITECTURE.md "Kernels"). Every
// caller outside this folder that multiplies matrices in an unspecified summation order comes here:
// CROWN's backward and forward products (src/bounds/), verify's batched sampling chain
// (src/verify/dense_chain.cc) and the BLAS path of vjp's linear nodes (src/autodiff/blas_linear.cc).
// The bit-exact folds of the reference interpreter are apart (exact_linear.h), as are the avx2
// provider's fixed-order panels (panel_gemm.h).
//
// Which code runs follows the one level switch (base/cpu.h): at level 1 or 2, OpenBLAS where the
// build has it (one thread, blas.h) and AVX2 copies of the sparse-row loops; at level 0 the portable
// loops only (no intrinsics, no BLAS), which is how tests run the fallbacks on a machine that has
// both (tests/unit/kernels_test.cc). The values differ between levels by rounding only: every caller
// bounds the error a priori (|fl(AB) - AB| <= gamma_k |A||B| for any order, with or without fma).
#pragma once

#include <cstddef>
#include <cstdint>

namespace denote::kernels {

// The build has OpenBLAS (libopenblas-dev at configure time).
bool blas_built();
// The products call BLAS now: built, and the level (base/cpu.h) is at least 1.
bool blas_in_use();

// C[m, n] = op(A) op(B) + beta C, row-major: op(A) is [m, k] (A stored [k, m] when trans_a), op(B) is
// [k, n] (B stored [n, k] when trans_b), C's rows ldc apart. beta = 0 overwrites C (NaNs in it too).
template <class S>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S beta, S* c,
          int64_t ldc);
extern template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, const float*, float, float*,
                                 int64_t);
extern template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, const double*, double,
                                  double*, int64_t);

// CROWN's two shapes, C overwritten. gemm_nn: C[m, n] = A[m, k] B[k, n]; an A with at most one nonzero
// in 16 (a pass's start rows) is accumulated over its nonzeros only (a zero coefficient adds nothing,
// also against an infinite entry of B). One or two rows against a large B go through gemv.
void gemm_nn(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);
// C[m, n] = A[m, k] B[n, k]^T.
void gemm_nt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);

// Forward linear bounds' product (src/bounds/crown_symbolic.cc): acc[o, :k] = sum_i W[o, i] *
// (W[o, i] < 0 ? S[i, :k] : R[i, :k]), W out x in, R and S in x k, products rounded as
// written (no fma), in any order.
void sign_rows(const double* W, size_t out, size_t in, const double* R, const double* S, size_t k, double* acc);

}  // namespace denote::kernels
