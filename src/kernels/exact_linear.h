// Internal: the bit-exact folds of the reference interpreter's linear rule for f32 and f64, in AVX2
// lanes (src/ops/native_fold.h calls them, with its portable tiled loops as the fallback). Unlike the
// other kernels (gemm.h) the summation order is fixed: each output is its own left fold from zero over
// the inputs in index order, mul then add, each rounded (compiled with -ffp-contract=off), so the values
// equal the plain loop's bit for bit at every level (base/cpu.h; level 0 runs the fallback).
#pragma once

#include <cstdint>

namespace denote::kernels {

// y[lead, out] = x[lead, in] W^T + b, bias may be null (no + b).
// The same values in AVX2 lanes across outputs (exact_linear.cc); false, with y
// untouched, when the CPU has no AVX2 or out is under one vector.
bool linear_simd(const float* x, const float* w, const float* bias, int64_t lead, int64_t in, int64_t out, float* y);
bool linear_simd(const double* x, const double* w, const double* bias, int64_t lead, int64_t in, int64_t out,
                 double* y);

// acc[i] = acc[i] + s[r] * w[r * stride + i] for r = 0 .. rows - 1 in turn (the linear VJP's fold over
// output features), in AVX2 lanes; false, with acc untouched, when the CPU has no AVX2.
bool axpy_rows_simd(float* acc, const float* s, const float* w, int64_t rows, int64_t stride, int64_t n);
bool axpy_rows_simd(double* acc, const double* s, const double* w, int64_t rows, int64_t stride, int64_t n);

// acc[r * n + i] = acc[r * n + i] + s[r] * x[i] for r < rows (the linear VJP's weight gradient of one
// row of x), in AVX2 lanes; false, with acc untouched, when the CPU has no AVX2.
bool outer_add_simd(float* acc, const float* s, const float* x, int64_t rows, int64_t n);
bool outer_add_simd(double* acc, const double* s, const double* x, int64_t rows, int64_t n);

}  // namespace denote::kernels
