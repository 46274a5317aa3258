// Hand-vectorised round-to-nearest-even add, sub and mul of the small formats (fp8, fp6, fp4,
// binary(E,F) with p <= 11: binary_fast_simd_block.h), 16 lanes under AVX-512.
//
// A word w (sign s, exponent field e, fraction f) decodes to binary32 exactly as
//   (-1)^s * float(f | [e != 0] 2^F) * 2^(max(e, 1) - bias - F),
// the integer conversion and the power-of-two product both exact. The binary32 sum or product is
// then rounded once more: in the normal range by integer round-half-even on its bits (correct since
// 24 >= 2p + 2; a product is exact in binary32 anyway), below 2^emin on the subnormal grid by
// scaling to units of the least subnormal (exact) and rounding to an integer (a sum there is
// exact: both operands are multiples of that unit). Inexact: TwoSum's error or dropped bits;
// underflow: tiny, inexact and below 2^emin after rounding at p bits (as binary_fast_kernel.h).
// Special operands (inf, NaN) and results above the largest finite value are left to the general
// routine, as are whole blocks holding malformed words.
#include <bit>
#include <cstring>

#include "scalar/binary_fast_simd_block.h"

#if defined(__x86_64__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12, inside avx512fintrin.h
#include <immintrin.h>
#endif

namespace denote::fastsimd {

std::optional<SmallParams> SmallParams::of(const FastFormat& ff) {
  const BinaryFormat& f = ff.format;
  const int F = f.frac_bits, emin = f.emin(), emax = f.emax();
  if (ff.kind != FastFormat::Kind::Other || !f.has_sign() || f.storage_bits() > 16 || F < 1 || F > 10 ||
      emax > 62 || 2 * (emin - F) < -126)
    return std::nullopt;
  if (f.encoding != Encoding::Ieee && f.encoding != Encoding::Fn && f.encoding != Encoding::Fnuz &&
      f.encoding != Encoding::Finite)
    return std::nullopt;
  SmallParams p;
  p.frac_bits = static_cast<uint32_t>(F);
  p.sign_shift = static_cast<uint32_t>(ff.sign_shift);
  p.frac_mask = static_cast<uint32_t>(ff.frac_mask);
  p.field_ones = static_cast<uint32_t>(ff.field_ones);
  const uint32_t all_ones = (p.field_ones << F) | p.frac_mask, never = uint32_t{1} << p.sign_shift;
  p.special_lo = f.encoding == Encoding::Ieee ? p.field_ones << F : (f.encoding == Encoding::Fn ? all_ones : never);
  p.nan_word = f.encoding == Encoding::Fnuz ? static_cast<uint32_t>(ff.sign_word) : 0xffffffffu;
  p.no_neg_zero = f.encoding == Encoding::Fnuz ? 0xffffffffu : 0;
  p.scale_adj = static_cast<uint32_t>(127 - f.bias - F);
  p.drop = static_cast<uint32_t>(23 - F);
  p.exp_adj = static_cast<uint32_t>(127 - f.bias) << F;
  p.min_normal = static_cast<uint32_t>(127 + emin) << 23;
  double max_value = 0;
  std::memcpy(&max_value, &ff.max_bits, sizeof max_value);
  p.max_bits = std::bit_cast<uint32_t>(static_cast<float>(max_value));  // exact: p <= 11, emax <= 62
  p.to_units = std::bit_cast<float>(static_cast<uint32_t>(127 + F - emin) << 23);
  p.high_bits = ~ff.word_mask;
  return p;
}

#if defined(__x86_64__)

#define DENOTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl")))

namespace {

inline const long long* ll(const FpWord* p) { return reinterpret_cast<const long long*>(p); }
inline long long* ll(FpWord* p) { return reinterpret_cast<long long*>(p); }

// The lane constants, broadcast once per block.
struct V {
  __m128i frac_bits, sign_shift, drop, sign_down;
  __m512i frac_mask, field_ones, special_lo, nan_word, scale_adj, exp_adj, min_normal, max_bits, mag_word;
  __m512 to_units;
  __mmask16 no_neg_zero;
};

DENOTE_AVX512 inline __m512i b(uint32_t x) { return _mm512_set1_epi32(static_cast<int>(x)); }

DENOTE_AVX512 V broadcast(const SmallParams& p) {
  V v;
  v.frac_bits = _mm_cvtsi32_si128(static_cast<int>(p.frac_bits));
  v.sign_shift = _mm_cvtsi32_si128(static_cast<int>(p.sign_shift));
  v.drop = _mm_cvtsi32_si128(static_cast<int>(p.drop));
  v.sign_down = _mm_cvtsi32_si128(static_cast<int>(31 - p.sign_shift));
  v.frac_mask = b(p.frac_mask), v.field_ones = b(p.field_ones), v.special_lo = b(p.special_lo);
  v.nan_word = b(p.nan_word), v.scale_adj = b(p.scale_adj), v.exp_adj = b(p.exp_adj);
  v.min_normal = b(p.min_normal), v.max_bits = b(p.max_bits), v.mag_word = b((uint32_t{1} << p.sign_shift) - 1);
  v.to_units = _mm512_set1_ps(p.to_units);
  v.no_neg_zero = p.no_neg_zero != 0 ? 0xffff : 0;
  return v;
}

// The exact binary32 values of 16 words; `special` marks inf and NaN words.
DENOTE_AVX512 inline __m512 decode(const V& v, __m512i w, __mmask16& special) {
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i field = _mm512_and_si512(_mm512_srl_epi32(w, v.frac_bits), v.field_ones);
  const __m512i sig = _mm512_or_si512(_mm512_and_si512(w, v.frac_mask), _mm512_sll_epi32(_mm512_min_epu32(field, one), v.frac_bits));
  const __m512i scale = _mm512_slli_epi32(_mm512_add_epi32(_mm512_max_epu32(field, one), v.scale_adj), 23);
  const __m512 mag = _mm512_mul_ps(_mm512_cvtepi32_ps(sig), _mm512_castsi512_ps(scale));
  const __m512i sign = _mm512_slli_epi32(_mm512_srl_epi32(w, v.sign_shift), 31);
  special |= _mm512_cmpge_epu32_mask(_mm512_and_si512(w, v.mag_word), v.special_lo) | _mm512_cmpeq_epi32_mask(w, v.nan_word);
  return _mm512_castsi512_ps(_mm512_or_si512(_mm512_castps_si512(mag), sign));
}

DENOTE_AVX512 inline __m512i narrow(__m512i lo, __m512i hi) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_epi32(lo, idx, hi);
}

template <Op O>
DENOTE_AVX512 BlockResult block(const SmallParams& p, const FpWord* a, const FpWord* b, FpWord* out, size_t len) {
  const V v = broadcast(p);
  const __m512i mag32 = _mm512_set1_epi32(0x7fffffff), sign32 = _mm512_set1_epi32(INT32_MIN);
  const __m512i low = _mm512_set1_epi32(static_cast<int>((uint32_t{1} << p.drop) - 1));
  const __m512i half = _mm512_srli_epi32(low, 1), one = _mm512_set1_epi32(1), zero = _mm512_setzero_si512();
  const __m512i high_bits = _mm512_set1_epi64(static_cast<long long>(p.high_bits));
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 16, 2, 16, 3, 16, 4, 16, 5, 16, 6, 16, 7, 16);
  const __m512i hi_idx = _mm512_setr_epi32(8, 16, 9, 16, 10, 16, 11, 16, 12, 16, 13, 16, 14, 16, 15, 16);
  __m512i high = zero;
  __mmask16 inexact = 0, underflow = 0;
  BlockResult res;
  for (size_t i = 0; i < len; i += 16) {
    const size_t m = len - i < 16 ? len - i : 16;
    const __mmask16 lm = static_cast<__mmask16>(m == 16 ? 0xffffu : (1u << m) - 1);
    const __mmask8 m0 = static_cast<__mmask8>(lm & 0xff), m1 = static_cast<__mmask8>(lm >> 8);
    const __m512i a0 = _mm512_maskz_loadu_epi64(m0, ll(a + i)), a1 = _mm512_maskz_loadu_epi64(m1, ll(a + i + 8));
    const __m512i b0 = _mm512_maskz_loadu_epi64(m0, ll(b + i)), b1 = _mm512_maskz_loadu_epi64(m1, ll(b + i + 8));
    high = _mm512_ternarylogic_epi64(high, a0, a1, 0xfe);
    high = _mm512_ternarylogic_epi64(high, b0, b1, 0xfe);
    __mmask16 bad = 0;
    const __m512 x = decode(v, narrow(a0, a1), bad);
    __m512 y = decode(v, narrow(b0, b1), bad);
    if constexpr (O == Op::Sub) y = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(y), sign32));
    __m512 s;
    __mmask16 err = 0;  // TwoSum: the binary32 sum is inexact
    if constexpr (O == Op::Mul) {
      s = _mm512_mul_ps(x, y);  // exact
    } else {
      s = _mm512_add_ps(x, y);
      const __m512 bb = _mm512_sub_ps(s, x);
      const __m512 e = _mm512_add_ps(_mm512_sub_ps(x, _mm512_sub_ps(s, bb)), _mm512_sub_ps(y, bb));
      err = _mm512_cmp_ps_mask(e, _mm512_setzero_ps(), _CMP_NEQ_UQ);
    }
    const __m512i sb = _mm512_castps_si512(s);
    const __m512i mag = _mm512_and_si512(sb, mag32);
    // Normal range: round half even at p bits (unbounded exponent), then rebias.
    const __m512i lsb = _mm512_and_si512(_mm512_srl_epi32(mag, v.drop), one);
    const __m512i r = _mm512_andnot_si512(low, _mm512_add_epi32(mag, _mm512_add_epi32(half, lsb)));
    const __m512i word_n = _mm512_sub_epi32(_mm512_srl_epi32(r, v.drop), v.exp_adj);
    // Below 2^emin (zero included): the value in least-subnormal units, rounded to an integer.
    const __mmask16 tiny = _mm512_cmplt_epu32_mask(mag, v.min_normal);
    const __m512 t = _mm512_mul_ps(_mm512_castsi512_ps(mag), v.to_units);
    const __m512 kf = _mm512_roundscale_ps(t, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    const __mmask16 tiny_inexact = _mm512_cmp_ps_mask(kf, t, _CMP_NEQ_UQ);
    const __m512i word = _mm512_mask_blend_epi32(tiny, word_n, _mm512_cvttps_epi32(kf));
    const __mmask16 inex = static_cast<__mmask16>((tiny & tiny_inexact) | (~tiny & (_mm512_test_epi32_mask(mag, low) | err)));
    const __mmask16 uf = tiny & tiny_inexact & _mm512_cmplt_epu32_mask(r, v.min_normal);
    bad = static_cast<__mmask16>((bad | _mm512_cmpgt_epu32_mask(r, v.max_bits)) & lm);
    // The sign bit moved to the word's; fnuz has no -0.
    __m512i sign_w = _mm512_srl_epi32(_mm512_and_si512(sb, sign32), v.sign_down);
    sign_w = _mm512_mask_mov_epi32(sign_w, _mm512_testn_epi32_mask(word, word) & v.no_neg_zero, zero);
    const __m512i res_w = _mm512_or_si512(word, sign_w);
    inexact |= inex & ~bad & lm;
    underflow |= uf & ~bad & lm;
    _mm512_mask_storeu_epi64(ll(out + i), m0, _mm512_permutex2var_epi32(res_w, lo_idx, zero));
    _mm512_mask_storeu_epi64(ll(out + i + 8), m1, _mm512_permutex2var_epi32(res_w, hi_idx, zero));
    res.bad |= uint64_t{bad} << i;
  }
  res.inexact = inexact != 0;
  res.underflow = underflow != 0;
  res.malformed = _mm512_test_epi64_mask(high, high_bits) != 0;
  return res;
}

}  // namespace

BlockResult small_block512(Op op, const SmallParams& p, const FpWord* a, const FpWord* b, FpWord* out,
                           size_t len) {
  if (op == Op::Add) return block<Op::Add>(p, a, b, out, len);
  if (op == Op::Sub) return block<Op::Sub>(p, a, b, out, len);
  return block<Op::Mul>(p, a, b, out, len);
}

#else

BlockResult small_block512(Op, const SmallParams&, const FpWord*, const FpWord*, FpWord*, size_t len) {
  BlockResult r;
  r.bad = len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1;  // never called off x86-64
  return r;
}

#endif

}  // namespace denote::fastsimd
