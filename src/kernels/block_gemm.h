// Internal: block-scaled matrix products with binary32 accumulation, the OCP MX dot products' fast path
// (src/typed/mx_dot_fast.cc). Each output is a fold over the K blocks in order: the block's sum of
// products (exact in binary64: the caller's precondition), times the row's and the column's power-of-two
// factors (exact), rounded once to binary32, then added to the running binary32 sum (rounded). Every
// value is therefore the same at every level (base/cpu.h: AVX-512, AVX2+FMA, the baseline loops), and the
// same as the element-by-element definition; tests/unit/kernels_test.cc compares the levels.
#pragma once

#include <cstdint>
#include <vector>

namespace denote::kernels {

// Columns per panel of a packed right operand.
inline constexpr int kBlockPanel = 16;

// The right operand packed once (a layer's weights: once per prepared model): n columns of k elements,
// the columns in panels of kBlockPanel (the last one padded with zero columns of factor 1), each panel's
// k rows contiguous, then each panel's per-block factors.
struct BlockPanel {
  int64_t n = 0, k = 0, block = 0, blocks = 0;
  std::vector<double> b;  // [panel][k][kBlockPanel]
  std::vector<double> s;  // [panel][blocks][kBlockPanel]
};
// b: [n, k] (column j's elements at b + j * k), s: [n, blocks] with blocks = ceil(k / block).
BlockPanel pack_block_panel(const double* b, const double* s, int64_t n, int64_t k, int64_t block);

// y[m, n] (row-major) = for each output, over blocks q = 0 .. blocks - 1 in order,
//   f_q = rn32((sum over the block's i of a[m, i] b[i, n]) * sa[m, q] * sb[n, q]);  y = f_0, then rn32(y + f_q);
// a: [m, k] row-major, sa: [m, blocks]. Preconditions: every partial sum of a block's products is an exact
// binary64 value (integers of magnitude below 2^53), the factors are powers of two whose products with
// those sums are exact, and the rounding mode is to nearest even (the MXCSR's default). Returns false
// where some rounded value is not finite or is inexact below 2^-124 (where tininess decides the flags:
// the caller takes its exact path; y is then partly written); `inexact` is set when some rounding was
// inexact. k = 0 gives zeros.
bool block_gemm_f32(const double* a, const double* sa, int64_t m, const BlockPanel& p, float* y, bool& inexact);

// The copy in use at the current level: 2 AVX-512, 1 AVX2+FMA, 0 the baseline.
int block_gemm_level();

}  // namespace denote::kernels
