// Internal: hand-vectorised bfloat16 and binary16 add/sub/mul in round-to-nearest-even, the default
// mode (binary_fast_simd.cc), 16 lanes under AVX-512 and 8 under AVX2 + F16C; and the same for the
// small formats (fp8, fp6, fp4, binary(E,F) with p <= 11: binary_fast_simd_block.h,
// binary_fast_simd_small.cc) under AVX-512. binary_fast.cc's bulk kernels call it first and keep
// their own float and double lanes (binary_fast_kernel32.h, binary_fast_kernel.h) for the other
// modes and for CPUs without these instructions.
//
// Why binary32 arithmetic rounded once more is exact here: a bfloat16 or binary16 value is exact in
// binary32; a product of two is exact (2p <= 22 bits) unless it leaves binary32's normal range, and
// rounding a sum to nearest at 24 bits and then to nearest at p bits equals one rounding at p bits
// since 24 >= 2p + 2 (double rounding is innocuous; p = 8 or 11; binary16 sums below 2^-14 are exact
// multiples of 2^-24). Inexactness comes from TwoSum's error term and the bits the second rounding
// drops. Lanes the kernels cannot settle (special operands, tiny or overflowing results) and whole
// blocks holding malformed words go to the general routine (binary_ops.h) in index order, so words,
// flags and the first error are those of fp_add & co.
//
//   if (fastsimd::rne_elementwise(fastsimd::Op::Add, ff, env, a, b, out, n)) return;  // done
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>

#include "denote/scalar/binary_fast.h"

namespace denote::fastsimd {

enum class Op : uint8_t { Add, Sub, Mul };

// out[i] = a[i] op b[i] for ff.kind bfloat16 or binary16 (AVX2 + F16C or AVX-512) or a small format
// (SmallParams::of, AVX-512) when env.rounding is NearestEven, the CPU has the kernels and the
// thread's MXCSR is in its default state (round to nearest, no FTZ/DAZ);
// otherwise returns false and touches nothing. out may alias a or b.
bool rne_elementwise(Op op, const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out,
                     size_t n);

// The same on packed 16-bit words (bfloat16 or binary16 only; AVX-512 16 lanes, AVX2 + F16C 8):
// out[i] = a[i] op b[i] for uint16_t storage, the words and flags rne_elementwise gives on the
// widened words. False (nothing touched) in the cases where rne_elementwise is.
bool rne_elementwise16(Op op, const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out,
                       size_t n);

// bfloat16/binary16 inner-product folds in nearest-even, binary32 lanes (16 under AVX-512, 8 under
// AVX2 + F16C; binary_fast_simd_fold.cc), and of the small formats (SmallParams; AVX-512 only,
// binary_fast_simd_fold_small.cc), for fast_matmul / fast_linear (binary_fast_fold.cc). Output (i, j),
// i < m, j < n, is the evaluator's fold: acc = +0, then acc = add(acc, mul(A(i, r), B(r, j))) for
// r < k in order, with A(i, r) = a[i * k + r] and B(r, j) = b[r * n + j] (finite values of the
// format, as doubles). Writes out[i * n + j] and ors the flags into `flags`, except for the blocks of
// 16 outputs (i, j0 .. j0 + 15) in which a step overflowed: those it leaves to redo(i, j0), which
// the caller does the general way, with their flags. False, having done nothing, where
// rne_elementwise would be (format, mode, CPU, MXCSR), and for bfloat16 when
// a nonzero operand is below 2^-62 in magnitude (two such could make a tiny product).
bool rne_fold(const FastFormat& ff, Rounding mode, const double* a, const double* b, int64_t m, int64_t k,
              int64_t n, FpWord* out, uint32_t& flags, const std::function<void(int64_t, int64_t)>& redo);

// Up to 4 blocks of 16 output channels of one conv position (FastConv, binary_fast_fold.cc) in the
// binary32 lanes of rne_fold: for block b and lane l, acc = +0, then acc = add(acc, mul(x[s],
// w[b * block_stride + row[s] * 16 + l])) for s < steps in order, then add(acc, bias[b * 16 + l]);
// words[b * 16 + l] gets the word and `flags` the flags. The operands are finite values of the format
// as binary32 (bfloat16: none nonzero below 2^-62 in magnitude). False, with nothing written and no
// flags, when a lane overflowed: the caller does those blocks the general way. Call only where
// conv_lanes_apply(ff, mode) holds.
struct ConvLanes {
  const float* x;
  const int64_t* row;
  int64_t steps;
  const float* w;
  int64_t block_stride;
  const float* bias;
  int blocks;  // 1 to 4
};
bool conv_lanes_apply(const FastFormat& ff, Rounding mode);
// Whether a nonzero value among v[0..n) is below 2^-62 in magnitude: bfloat16 operands the binary32
// lanes refuse (two of them could make a product tiny in binary32).
bool has_tiny_bf16_operand(const double* v, int64_t n);
bool rne_conv_blocks(const FastFormat& ff, const ConvLanes& in, uint64_t* words, uint32_t& flags);

// The kernel level in effect (set_simd_level) and whether the thread's MXCSR is in its default
// state (round to nearest, no FTZ/DAZ): what every kernel here needs.
int simd_level();
bool mxcsr_is_default();

// For tests: the widest kernel to use, 0 none, 1 AVX2 + F16C, 2 AVX-512 (capped by the CPU);
// returns the level now in effect. The default is the widest the CPU has. It sets the process-wide
// level (base/cpu.h), which every other kernel follows too.
int set_simd_level(int level);

}  // namespace denote::fastsimd
