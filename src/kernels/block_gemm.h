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
  std::vector<double> norm;  // [panel][blocks][kBlockPanel]: block_norms of b (empty unless packed with divisors)
  std::vector<double> t;     // [panel][blocks][kBlockPanel]: a power of two dividing every element of the block
};
// out[r * blocks + q] >= the Euclidean norm of block q of row r of v ([rows, k]; blocks of `block`, the
// last one partial): the roundings of the sum of squares and of the root bounded above. |v| < 2^500.
void block_norms(const double* v, int64_t rows, int64_t k, int64_t block, double* out);
// b: [n, k] (column j's elements at b + j * k), s: [n, blocks] with blocks = ceil(k / block); t: null, or
// [n, blocks] powers of two dividing every element of each block (for block_gemm_f32_certified).
BlockPanel pack_block_panel(const double* b, const double* s, int64_t n, int64_t k, int64_t block,
                            const double* t = nullptr);

// y[m, n] (row-major) = for each output, over blocks q = 0 .. blocks - 1 in order,
//   f_q = rn32((sum over the block's i of a[m, i] b[i, n]) * sa[m, q] * sb[n, q]);  y = f_0, then rn32(y + f_q);
// a: [m, k] row-major, sa: [m, blocks]. Preconditions: every partial sum of a block's products is an exact
// binary64 value (integers of magnitude below 2^53), the factors are powers of two whose products with
// those sums are exact, and the rounding mode is to nearest even (the MXCSR's default). Returns false
// where some block value rounds past binary32's range or is nonzero below 2^-124 (where tininess decides
// the flags: the caller takes its exact path; y is then partly written); `inexact` is set when some
// rounding was inexact. k = 0 gives zeros.
bool block_gemm_f32(const double* a, const double* sa, int64_t m, const BlockPanel& p, float* y, bool& inexact);

// The value of block q of output (row, col), rounded to binary32 by the caller's exact path (its flags
// are the caller's to keep).
struct ExactBlock {
  float (*fn)(void* ctx, int64_t row, int64_t col, int64_t block) = nullptr;
  void* ctx = nullptr;
};

// The same fold where a block's sum need not be exact in binary64 (OCP MX's E5M2: products up to 2^63):
// each block's sum S in fma lanes and M = |a_q| |b_q| (the blocks' norms: M >= sum |a| |b| by Cauchy and
// Schwarz, for one multiply instead of a second sum), |S - T| <= (2n + 8) u M for the block's n terms
// (u = 2^-53, the sum's and the interval's roundings included). Where every point of that interval
// rounds to one binary32 value f and f lies outside it, T rounds to f and inexactly: taken without forming
// T; where the interval rounds to two values, exact.fn gives the block's value; where f lies in it (T may
// be f exactly), f is taken and exact.fn is called for those blocks only if no block rounded for certain
// (the inexact flag is one bit for the whole product). The panel must hold b's norms and divisors
// (pack_block_panel with t). Returns false as block_gemm_f32 does.
// ta: [m, blocks] powers of two dividing every element of a's blocks; na: [m, blocks] block_norms of a.
// Where the block's M is below 2^52 ta tb, every partial sum is a multiple of ta tb below 2^53 of them:
// S = T exactly.
bool block_gemm_f32_certified(const double* a, const double* sa, const double* ta, const double* na, int64_t m,
                              const BlockPanel& p, float* y, bool& inexact, const ExactBlock& exact);

// The copy in use at the current level: 2 AVX-512, 1 AVX2+FMA, 0 the baseline.
int block_gemm_level();

}  // namespace denote::kernels
