// The small formats' inner-product fold in binary32 lanes (AVX-512; fp8, fp6, fp4 and binary(E,F)
// with p <= 11: binary_fast_simd_block.h), a tile of rne_fold (binary_fast_simd_fold.cc).
//
// Each step is the evaluator's p = mul(A, B) rounded, acc = add(acc, p) rounded, from +0. A product
// of two values is exact in binary32 and normal there (SmallParams: 2 (emin - F) >= -126). It is
// rounded to the format in nearest-even: at or above 2^emin by integer round-half-even on its bits
// (p bits, unbounded exponent), below on the subnormal grid (scaled exactly to units of the least
// subnormal, rounded to an integer, scaled back). Underflow: tiny, inexact and below 2^emin after the
// unbounded rounding. A sum is rounded in binary32 (Fast2Sum's check tells whether that was exact)
// and then at p bits (innocuous double rounding, 24 >= 2p + 2); a sum below 2^emin is exact (both
// operands lie on the subnormal grid) and has at most F significant bits, so that rounding leaves it.
// A result above the largest finite value becomes +-inf (fn's NaN pattern, a finite format's
// saturation and an IEEE overflow all do), which stays non-finite: the tile is handed back whole.
#include <bit>
#include <cstring>

#include "scalar/binary_fast_simd_block.h"

#if defined(__x86_64__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12, inside avx512fintrin.h
#include <immintrin.h>
#endif

namespace denote::fastsimd {

uint64_t small_word(const SmallParams& p, float v) {
  const uint32_t b = std::bit_cast<uint32_t>(v), mag = b & 0x7fffffffu;
  const uint32_t w = mag >= p.min_normal ? (mag >> p.drop) - p.exp_adj
                                         : static_cast<uint32_t>(std::bit_cast<float>(mag) * p.to_units);
  const bool neg = (b >> 31) != 0 && !(w == 0 && p.no_neg_zero != 0);
  return neg ? w | (uint32_t{1} << p.sign_shift) : w;
}

#if defined(__x86_64__)

namespace {

#define DENOTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

struct C {
  __m512i mag32, sign32, low, half, one, min_normal, max_bits, inf;
  __m512 to_units, unit;
  __m128i drop;
};

DENOTE_AVX512 inline C constants(const SmallParams& p) {
  C c;
  c.mag32 = _mm512_set1_epi32(0x7fffffff);
  c.sign32 = _mm512_set1_epi32(INT32_MIN);
  c.low = _mm512_set1_epi32(static_cast<int>((uint32_t{1} << p.drop) - 1));
  c.half = _mm512_srli_epi32(c.low, 1);
  c.one = _mm512_set1_epi32(1);
  c.min_normal = _mm512_set1_epi32(static_cast<int>(p.min_normal));
  c.max_bits = _mm512_set1_epi32(static_cast<int>(p.max_bits));
  c.inf = _mm512_set1_epi32(0x7f800000);
  c.to_units = _mm512_set1_ps(p.to_units);
  c.unit = _mm512_set1_ps(1.0f / p.to_units);  // a power of two: exact
  c.drop = _mm_cvtsi32_si128(static_cast<int>(p.drop));
  return c;
}

// |v|'s bits rounded half-even at p bits (unbounded exponent), +inf above the largest finite value.
DENOTE_AVX512 inline __m512i round_mag(const C& c, __m512i mag) {
  const __m512i lsb = _mm512_and_si512(_mm512_srl_epi32(mag, c.drop), c.one);
  const __m512i r = _mm512_andnot_si512(c.low, _mm512_add_epi32(mag, _mm512_add_epi32(c.half, lsb)));
  return _mm512_mask_mov_epi32(r, _mm512_cmpgt_epu32_mask(r, c.max_bits), c.inf);
}

DENOTE_AVX512 inline __m512 step(const C& c, __m512 acc, __m512 x, __m512 w, __mmask16& inexact,
                                 __mmask16& underflow) {
  const __m512i pb = _mm512_castps_si512(_mm512_mul_ps(x, w));
  const __m512i pmag = _mm512_and_si512(pb, c.mag32);
  const __m512i r = round_mag(c, pmag);
  const __mmask16 tiny = _mm512_cmplt_epu32_mask(pmag, c.min_normal);
  const __m512 t = _mm512_mul_ps(_mm512_castsi512_ps(pmag), c.to_units);
  const __m512 kf = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  const __mmask16 tiny_inexact = tiny & _mm512_cmp_ps_mask(kf, t, _CMP_NEQ_UQ);
  const __m512i rmag = _mm512_mask_blend_epi32(tiny, r, _mm512_castps_si512(_mm512_mul_ps(kf, c.unit)));
  const __m512 pr = _mm512_castsi512_ps(_mm512_ternarylogic_epi32(rmag, pb, c.sign32, 0xf8));  // rmag | (pb & sign)
  underflow |= tiny_inexact & _mm512_cmplt_epu32_mask(r, c.min_normal);
  const __m512 s = _mm512_add_ps(acc, pr);
  const __m512i sb = _mm512_castps_si512(s);
  const __m512i smag = _mm512_and_si512(sb, c.mag32);
  inexact |= tiny_inexact | static_cast<__mmask16>(~tiny & _mm512_test_epi32_mask(pmag, c.low)) |
             _mm512_cmp_ps_mask(_mm512_sub_ps(s, acc), pr, _CMP_NEQ_UQ) |
             _mm512_cmp_ps_mask(_mm512_sub_ps(s, pr), acc, _CMP_NEQ_UQ) | _mm512_test_epi32_mask(smag, c.low);
  return _mm512_castsi512_ps(_mm512_ternarylogic_epi32(round_mag(c, smag), sb, c.sign32, 0xf8));
}

template <int R, int V>
DENOTE_AVX512 bool tile(const SmallParams& p, const float* a, int64_t k, const float* b, int64_t ldb,
                        float (*out)[64], bool& inexact, bool& underflow) {
  const C c = constants(p);
  __m512 acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  __mmask16 in = 0, un = 0;
  for (int64_t r = 0; r < k; ++r) {
    __m512 w[V];
    for (int v = 0; v < V; ++v) w[v] = _mm512_loadu_ps(b + r * ldb + 16 * v);
    for (int i = 0; i < R; ++i) {
      const __m512 x = _mm512_set1_ps(a[i * k + r]);
      for (int v = 0; v < V; ++v) acc[i][v] = step(c, acc[i][v], x, w[v], in, un);
    }
  }
  __mmask16 special = 0;
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) {
      special |= _mm512_fpclass_ps_mask(acc[i][v], 0x99);  // QNaN, +inf, -inf, SNaN
      _mm512_storeu_ps(out[i] + 16 * v, acc[i][v]);
    }
  if (special != 0) return false;
  inexact = inexact || in != 0;
  underflow = underflow || un != 0;
  return true;
}

template <int V>
DENOTE_AVX512 bool conv(const SmallParams& p, const ConvLanes& in, float* out, bool& inexact, bool& underflow) {
  const C c = constants(p);
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
  __mmask16 inx = 0, un = 0;
  for (int64_t s = 0; s < in.steps; ++s) {
    const __m512 x = _mm512_set1_ps(in.x[s]);
    const float* w = in.w + in.row[s] * 16;
    for (int v = 0; v < V; ++v) acc[v] = step(c, acc[v], x, _mm512_loadu_ps(w + v * in.block_stride), inx, un);
  }
  __mmask16 special = 0;
  for (int v = 0; v < V; ++v) {  // the bias: 1 * b is b exactly, so this step is add(acc, b)
    acc[v] = step(c, acc[v], _mm512_set1_ps(1.0f), _mm512_loadu_ps(in.bias + 16 * v), inx, un);
    special |= _mm512_fpclass_ps_mask(acc[v], 0x99);
    _mm512_storeu_ps(out + 16 * v, acc[v]);
  }
  if (special != 0) return false;
  inexact = inexact || inx != 0;
  underflow = underflow || un != 0;
  return true;
}

}  // namespace

bool small_conv_blocks(const SmallParams& p, const ConvLanes& in, float* out, bool& inexact, bool& underflow) {
  switch (in.blocks) {
    case 1: return conv<1>(p, in, out, inexact, underflow);
    case 2: return conv<2>(p, in, out, inexact, underflow);
    case 3: return conv<3>(p, in, out, inexact, underflow);
    default: return conv<4>(p, in, out, inexact, underflow);
  }
}

SmallTileFn small_fold_tile(int rows, int vecs) {
  if (rows == 4) return vecs == 1 ? &tile<4, 1> : &tile<4, 2>;
  switch (vecs) {
    case 1: return &tile<1, 1>;
    case 2: return &tile<1, 2>;
    case 3: return &tile<1, 3>;
    default: return &tile<1, 4>;
  }
}

#else

SmallTileFn small_fold_tile(int, int) { return nullptr; }
bool small_conv_blocks(const SmallParams&, const ConvLanes&, float*, bool&, bool&) { return false; }

#endif

}  // namespace denote::fastsimd
