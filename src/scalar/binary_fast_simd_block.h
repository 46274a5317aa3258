// Internal to binary_fast_simd*.cc: what one block of up to 64 elements reports, and the
// small-format kernel (binary_fast_simd_small.cc) that the driver in binary_fast_simd.cc calls.
//
// The small formats are those whose values, sums and products binary32 holds with room to spare:
// at most 16 storage bits, p = F + 1 <= 11 (so 24 >= 2p + 2: a binary32 sum rounded once more to p
// bits is rounded correctly), every product of two values a normal binary32 number (2 (emin - F)
// >= -126, emax <= 62). That is the OCP fp8/fp6/fp4 encodings and binary(E,F) with small E and F.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_simd.h"

namespace denote::fastsimd {

constexpr size_t kBlock = 64;

struct BlockResult {
  uint64_t bad = 0;        // bit i: lane i left to the general routine
  bool inexact = false;    // some lane settled here is inexact
  bool underflow = false;  // some lane settled here is tiny after rounding and inexact
  bool malformed = false;  // some word of the block has bits above the format's width
};

// The 32-bit lane constants of one small format (see the top of this file), or nullopt.
struct SmallParams {
  uint32_t frac_bits = 0, sign_shift = 0, frac_mask = 0, field_ones = 0;
  uint32_t special_lo = 0;  // word magnitudes >= this are inf/NaN (ieee, fn; finite and fnuz: never)
  uint32_t nan_word = 0;    // fnuz: the NaN word (the sign bit alone); else a value no word has
  uint32_t no_neg_zero = 0; // fnuz: all ones (a zero result is +0), else 0
  uint32_t scale_adj = 0;   // 127 - bias - F, two's complement: binary32 exponent of a unit at field 1
  uint32_t drop = 0;        // 23 - F: binary32 fraction bits below the format's last place
  uint32_t exp_adj = 0;     // (127 - bias) << F: binary32 exponent field -> the word's
  uint32_t min_normal = 0;  // binary32 bits of 2^emin
  uint32_t max_bits = 0;    // binary32 bits of the largest finite value
  float to_units = 0;       // 2^(F - emin): a tiny value in units of the least subnormal
  uint64_t high_bits = 0;   // ~word_mask: bits no word may have
  static std::optional<SmallParams> of(const FastFormat& ff);
};

// The block kernel for the small formats under AVX-512 (F/BW/DQ/VL); only call it when the CPU has
// them. Lanes: the bfloat16/binary16 conventions of binary_fast_simd.cc.
BlockResult small_block512(Op op, const SmallParams& p, const FpWord* a, const FpWord* b, FpWord* out,
                           size_t len);

// The small formats' tile of rne_fold (binary_fast_simd_fold_small.cc; AVX-512 only): rows a[i * k ..]
// (i < rows) against 16 * vecs columns of b (row stride ldb), accumulators into out[i][col]; false
// when one ended non-finite (an overflow: the caller folds the tile again the general way); inexact
// and underflow of a tile that succeeded are or-ed in. nullptr off x86-64. rows is 1 or 4 (vecs <= 2).
using SmallTileFn = bool (*)(const SmallParams& p, const float* a, int64_t k, const float* b, int64_t ldb,
                             float (*out)[64], bool& inexact, bool& underflow);
SmallTileFn small_fold_tile(int rows, int vecs);
// The small formats' conv blocks of rne_conv_blocks (binary_fast_simd_fold_small.cc; AVX-512 only):
// accumulators into out[b * 16 + l]; false when one ended non-finite.
bool small_conv_blocks(const SmallParams& p, const ConvLanes& in, float* out, bool& inexact, bool& underflow);
// The word of a finite value of the format held in binary32 (fnuz: a zero is +0).
uint64_t small_word(const SmallParams& p, float v);

}  // namespace denote::fastsimd
