// Hand-vectorised round-to-nearest-even bfloat16/binary16 add, sub and mul (binary_fast_simd.h).
// Words are 64-bit FpWords: each block of up to 64 is loaded (masked at the tail), narrowed to 32-bit
// lanes, decoded to binary32 (bfloat16: the word shifted by 16; binary16: vcvtph2ps), computed,
// rounded (bfloat16: integer round-half-even on the binary32 bits; binary16: vcvtps2ph in its
// nearest-even mode) and widened back. Every lane reports whether the general routine must redo it;
// high bits above the 16-bit word anywhere in a block send the whole block there. Packed uint16_t
// words (rne_elementwise16) are loaded and stored as they are, with the same lane computation.
#include "scalar/binary_fast_simd.h"

#include <algorithm>
#include <atomic>

#include "base/cpu.h"
#include "scalar/binary_fast_simd_block.h"

#include "denote/scalar/binary_ops.h"

#if defined(__x86_64__)
// GCC 12 warns inside avx512fintrin.h (the _mm512_undefined_* operands of set1/cvt intrinsics).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace denote::fastsimd {
namespace {

using BlockFn = BlockResult (*)(const FpWord*, const FpWord*, FpWord*, size_t);

enum class Fmt : uint8_t { Bf16, Fp16 };

// binary32's bits of the format's 2^emin.
template <Fmt F>
constexpr uint32_t kMinNormal = F == Fmt::Bf16 ? 0x00800000u : 0x38800000u;  // 2^-126, 2^-14
// The least binary32 magnitude that rounds to inf (to nearest, ties to even: the largest finite
// value's last bit is odd): halfway between the largest finite value and 2^(emax + 1).
template <Fmt F>
constexpr uint32_t kRoundsToInf = F == Fmt::Bf16 ? 0x7f7f8000u : 0x477ff000u;  // 0x1.ffp127, 65520
// The binary32 bits below the format's last place for a normal value.
template <Fmt F>
constexpr uint32_t kDropped = F == Fmt::Bf16 ? 0xffffu : 0x1fffu;

uint64_t general(Op op, const BinaryFormat& f, FpEnv& env, uint64_t x, uint64_t y) {
  if (op == Op::Add) return fp_add(f, env, x, y);
  if (op == Op::Sub) return fp_sub(f, env, x, y);
  return fp_mul(f, env, x, y);
}

#if defined(__x86_64__)

#define DENOTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))
#define DENOTE_AVX2 __attribute__((target("avx2,f16c")))

inline const long long* ll(const FpWord* p) { return reinterpret_cast<const long long*>(p); }
inline long long* ll(FpWord* p) { return reinterpret_cast<long long*>(p); }
static_assert(sizeof(FpWord) == sizeof(long long));

// ---- AVX-512: 16 lanes ----

template <Fmt F>
DENOTE_AVX512 inline __m512 decode512(__m512i w) {
  if constexpr (F == Fmt::Bf16) return _mm512_castsi512_ps(_mm512_slli_epi32(w, 16));
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(w));
}

// The low dwords of 16 qwords (two vectors), in order: one two-source permute.
DENOTE_AVX512 inline __m512i narrow512(__m512i lo, __m512i hi) {
  const __m512i idx = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  return _mm512_permutex2var_epi32(lo, idx, hi);
}

// What 16 lanes give: the rounded words (bfloat16: 32-bit lanes in r32; binary16: 16-bit words in
// r16), the inexact lanes among those settled here and the lanes left to the general routine.
struct Lanes16 {
  __m512i r32;
  __m256i r16;
  __mmask16 inexact;
  __mmask16 bad;
};

// x op y for 16 exact binary32 decodings, rounded to the format to nearest-even.
template <Fmt F, Op O>
DENOTE_AVX512 inline Lanes16 lanes512(__m512 x, __m512 y) {
  const __m512i mag32 = _mm512_set1_epi32(0x7fffffff);
  const __m512i min_normal = _mm512_set1_epi32(static_cast<int>(kMinNormal<F>));
  const __m512i range = _mm512_set1_epi32(static_cast<int>(kRoundsToInf<F> - kMinNormal<F>));
  if constexpr (O == Op::Sub) y = _mm512_castsi512_ps(_mm512_xor_si512(_mm512_castps_si512(y), _mm512_set1_epi32(INT32_MIN)));
  Lanes16 l;
  __m512 s;
  __mmask16 inex = 0;
  if constexpr (O == Op::Mul) {
    s = _mm512_mul_ps(x, y);  // exact unless it leaves the normal range (then tiny or overflowing: bad)
  } else {
    s = _mm512_add_ps(x, y);
    const __m512 bb = _mm512_sub_ps(s, x);
    const __m512 e = _mm512_add_ps(_mm512_sub_ps(x, _mm512_sub_ps(s, bb)), _mm512_sub_ps(y, bb));
    inex = _mm512_cmp_ps_mask(e, _mm512_setzero_ps(), _CMP_NEQ_UQ);
  }
  const __m512i sb = _mm512_castps_si512(s);
  inex |= _mm512_test_epi32_mask(sb, _mm512_set1_epi32(static_cast<int>(kDropped<F>)));
  if constexpr (F == Fmt::Bf16) {
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(sb, 16), _mm512_set1_epi32(1));
    l.r32 = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(sb, _mm512_set1_epi32(0x7fff)), lsb), 16);
  } else {
    l.r16 = _mm512_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  }
  // Bad: |s| in (0, 2^emin) or rounding to inf (NaN and inf included), by one unsigned range test.
  const __m512i mag = _mm512_and_si512(sb, mag32);
  __mmask16 bad = _mm512_cmpge_epu32_mask(_mm512_sub_epi32(mag, min_normal), range);
  if constexpr (O == Op::Mul) {  // a zero product is exact when an operand is zero (inf * 0 is NaN: bad)
    bad &= ~(_mm512_testn_epi32_mask(mag, mag) & (_mm512_testn_epi32_mask(_mm512_castps_si512(x), mag32) |
                                                  _mm512_testn_epi32_mask(_mm512_castps_si512(y), mag32)));
  } else {
    bad &= _mm512_test_epi32_mask(mag, mag);  // an exact zero sum is settled here
  }
  l.bad = bad;
  l.inexact = inex & ~bad;
  return l;
}

template <Fmt F, Op O>
DENOTE_AVX512 BlockResult block512(const FpWord* a, const FpWord* b, FpWord* out, size_t len) {
  const __m512i high_bits = _mm512_set1_epi64(~0xffffLL);
  // Widening r's dwords 0-7 and 8-15 to qwords: index 16 picks the zero vector's first dword.
  const __m512i lo_idx = _mm512_setr_epi32(0, 16, 1, 16, 2, 16, 3, 16, 4, 16, 5, 16, 6, 16, 7, 16);
  const __m512i hi_idx = _mm512_setr_epi32(8, 16, 9, 16, 10, 16, 11, 16, 12, 16, 13, 16, 14, 16, 15, 16);
  __m512i high = _mm512_setzero_si512();
  __mmask16 inexact = 0;
  BlockResult res;
  for (size_t i = 0; i < len; i += 16) {
    const size_t m = len - i < 16 ? len - i : 16;
    const __mmask16 lm = static_cast<__mmask16>(m == 16 ? 0xffffu : (1u << m) - 1);
    const __mmask8 m0 = static_cast<__mmask8>(lm & 0xff), m1 = static_cast<__mmask8>(lm >> 8);
    const __m512i a0 = _mm512_maskz_loadu_epi64(m0, ll(a + i)), a1 = _mm512_maskz_loadu_epi64(m1, ll(a + i + 8));
    const __m512i b0 = _mm512_maskz_loadu_epi64(m0, ll(b + i)), b1 = _mm512_maskz_loadu_epi64(m1, ll(b + i + 8));
    high = _mm512_ternarylogic_epi64(high, a0, a1, 0xfe);  // or of three
    high = _mm512_ternarylogic_epi64(high, b0, b1, 0xfe);
    const Lanes16 l = lanes512<F, O>(decode512<F>(narrow512(a0, a1)), decode512<F>(narrow512(b0, b1)));
    const __m512i r = F == Fmt::Bf16 ? l.r32 : _mm512_cvtepu16_epi32(l.r16);
    inexact |= l.inexact & lm;
    _mm512_mask_storeu_epi64(ll(out + i), m0, _mm512_permutex2var_epi32(r, lo_idx, _mm512_setzero_si512()));
    _mm512_mask_storeu_epi64(ll(out + i + 8), m1, _mm512_permutex2var_epi32(r, hi_idx, _mm512_setzero_si512()));
    res.bad |= static_cast<uint64_t>(l.bad & lm) << i;
  }
  res.inexact = inexact != 0;
  res.malformed = _mm512_test_epi64_mask(high, high_bits) != 0;
  return res;
}

// Packed 16-bit words (rne_elementwise16), 16 a step: bfloat16 decodes by widening each word into
// the upper half of a 32-bit lane, binary16 by vcvtph2ps; the tail is loaded masked (zeros: +0 op
// +0 is exact and settled here) and stored masked.
template <Fmt F, Op O>
DENOTE_AVX512 BlockResult block512_16(const uint16_t* a, const uint16_t* b, uint16_t* out, size_t len) {
  __mmask16 inexact = 0;
  BlockResult res;
  for (size_t i = 0; i < len; i += 16) {
    const size_t m = len - i < 16 ? len - i : 16;
    const __mmask16 lm = static_cast<__mmask16>(m == 16 ? 0xffffu : (1u << m) - 1);
    const __m256i va = _mm256_maskz_loadu_epi16(lm, a + i), vb = _mm256_maskz_loadu_epi16(lm, b + i);
    Lanes16 l;
    if constexpr (F == Fmt::Bf16) {
      l = lanes512<F, O>(_mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(va), 16)),
                         _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(vb), 16)));
      _mm256_mask_storeu_epi16(out + i, lm, _mm512_cvtepi32_epi16(l.r32));
    } else {
      l = lanes512<F, O>(_mm512_cvtph_ps(va), _mm512_cvtph_ps(vb));
      _mm256_mask_storeu_epi16(out + i, lm, l.r16);
    }
    inexact |= l.inexact & lm;
    res.bad |= static_cast<uint64_t>(l.bad & lm) << i;
  }
  res.inexact = inexact != 0;
  return res;
}

// ---- AVX2 + F16C: 8 lanes ----

template <Fmt F>
DENOTE_AVX2 inline __m256 decode256(__m256i w) {
  if constexpr (F == Fmt::Bf16) return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  return _mm256_cvtph_ps(_mm_packus_epi32(_mm256_castsi256_si128(w), _mm256_extracti128_si256(w, 1)));
}

// The low dwords of 8 qwords, in order.
DENOTE_AVX2 inline __m256i narrow256(__m256i lo, __m256i hi) {
  const __m256i idx = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
  return _mm256_permute2x128_si256(_mm256_permutevar8x32_epi32(lo, idx), _mm256_permutevar8x32_epi32(hi, idx), 0x20);
}

DENOTE_AVX2 inline __m256i lanes_below(size_t m, int first) {
  return _mm256_cmpgt_epi64(_mm256_set1_epi64x(static_cast<long long>(m)), _mm256_setr_epi64x(first, first + 1, first + 2, first + 3));
}

// What 8 lanes give: the rounded words (bfloat16: 32-bit lanes in r32; binary16: 16-bit words in
// r16), nonzero bits in `inexact` for the inexact lanes among those settled here, and the lanes
// left to the general routine (a bit mask).
struct Lanes8 {
  __m256i r32;
  __m128i r16;
  __m256i inexact;
  unsigned bad;
};

// x op y for 8 exact binary32 decodings, rounded to the format to nearest-even. The common case
// costs a range test and one movemask; lanes whose |s| is outside [2^emin, the overflow threshold)
// (zero, tiny, overflowing, inf, NaN) take a second look: an exact zero is settled here, the rest
// are bad.
template <Fmt F, Op O>
DENOTE_AVX2 inline Lanes8 lanes256(__m256 x, __m256 y) {
  const __m256i mag32 = _mm256_set1_epi32(0x7fffffff);
  const __m256i min_normal = _mm256_set1_epi32(static_cast<int>(kMinNormal<F>));
  const __m256i range = _mm256_set1_epi32(static_cast<int>(kRoundsToInf<F> - kMinNormal<F>));
  const __m256i dropped = _mm256_set1_epi32(static_cast<int>(kDropped<F>));
  if constexpr (O == Op::Sub) y = _mm256_xor_ps(y, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
  Lanes8 l;
  __m256 s;
  __m256i inexact;
  const __m256i sb = _mm256_castps_si256(s = O == Op::Mul ? _mm256_mul_ps(x, y) : _mm256_add_ps(x, y));
  if constexpr (O == Op::Mul) {
    inexact = _mm256_and_si256(sb, dropped);  // a product is exact in binary32 (or bad)
  } else {
    // The binary32 sum is exact iff s - x == y and s - y == x: when it is not, the difference with
    // the larger operand is computed exactly (Fast2Sum) and differs from the other operand.
    const __m256 ne = _mm256_or_ps(_mm256_cmp_ps(_mm256_sub_ps(s, x), y, _CMP_NEQ_UQ),
                                   _mm256_cmp_ps(_mm256_sub_ps(s, y), x, _CMP_NEQ_UQ));
    inexact = _mm256_or_si256(_mm256_and_si256(sb, dropped), _mm256_castps_si256(ne));
  }
  if constexpr (F == Fmt::Bf16) {
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(sb, 16), _mm256_set1_epi32(1));
    l.r32 = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(sb, _mm256_set1_epi32(0x7fff)), lsb), 16);
  } else {
    l.r16 = _mm256_cvtps_ph(s, _MM_FROUND_TO_NEAREST_INT);
  }
  // Outside the range: |s| - 2^emin >= range, unsigned.
  const __m256i mag = _mm256_and_si256(sb, mag32);
  const __m256i t = _mm256_sub_epi32(mag, min_normal);
  __m256i out_of_range = _mm256_cmpeq_epi32(_mm256_max_epu32(t, range), t);
  l.bad = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(out_of_range)));
  if (l.bad != 0) {
    const __m256 zero = _mm256_setzero_ps();
    __m256i settled = _mm256_cmpeq_epi32(mag, _mm256_setzero_si256());  // an exact zero sum
    if constexpr (O == Op::Mul)  // a zero product is exact only when an operand is zero (inf * 0 is NaN)
      settled = _mm256_and_si256(settled, _mm256_castps_si256(_mm256_or_ps(_mm256_cmp_ps(x, zero, _CMP_EQ_OQ),
                                                                           _mm256_cmp_ps(y, zero, _CMP_EQ_OQ))));
    out_of_range = _mm256_andnot_si256(settled, out_of_range);
    inexact = _mm256_andnot_si256(out_of_range, inexact);
    l.bad = static_cast<unsigned>(_mm256_movemask_ps(_mm256_castsi256_ps(out_of_range)));
  }
  l.inexact = inexact;
  return l;
}

template <Fmt F, Op O>
DENOTE_AVX2 BlockResult block256(const FpWord* a, const FpWord* b, FpWord* out, size_t len) {
  const __m256i high_bits = _mm256_set1_epi64x(~0xffffLL), zero = _mm256_setzero_si256();
  __m256i high = zero, inexact = zero;
  BlockResult res;
  for (size_t i = 0; i < len; i += 8) {
    const size_t m = len - i < 8 ? len - i : 8;
    const __m256i k0 = lanes_below(m, 0), k1 = lanes_below(m, 4);
    __m256i a0, a1, b0, b1;
    if (m == 8) {
      a0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i));
      a1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + i + 4));
      b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i));
      b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 4));
    } else {
      a0 = _mm256_maskload_epi64(ll(a + i), k0), a1 = _mm256_maskload_epi64(ll(a + i + 4), k1);
      b0 = _mm256_maskload_epi64(ll(b + i), k0), b1 = _mm256_maskload_epi64(ll(b + i + 4), k1);
    }
    high = _mm256_or_si256(high, _mm256_or_si256(_mm256_or_si256(a0, a1), _mm256_or_si256(b0, b1)));
    const Lanes8 l = lanes256<F, O>(decode256<F>(narrow256(a0, a1)), decode256<F>(narrow256(b0, b1)));
    inexact = _mm256_or_si256(inexact, l.inexact);
    __m256i r;
    if constexpr (F == Fmt::Bf16)
      r = l.r32;
    else
      r = _mm256_cvtepu16_epi32(l.r16);
    const __m256i w0 = _mm256_cvtepu32_epi64(_mm256_castsi256_si128(r));
    const __m256i w1 = _mm256_cvtepu32_epi64(_mm256_extracti128_si256(r, 1));
    if (m == 8) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), w0);
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i + 4), w1);
    } else {
      _mm256_maskstore_epi64(ll(out + i), k0, w0);
      _mm256_maskstore_epi64(ll(out + i + 4), k1, w1);
    }
    res.bad |= uint64_t{l.bad & ((1u << m) - 1)} << i;  // lanes past m hold +0 op +0: exact
  }
  res.inexact = _mm256_testz_si256(inexact, inexact) == 0;
  res.malformed = _mm256_testz_si256(high, high_bits) == 0;
  return res;
}

// 8 packed binary16 words as binary32.
DENOTE_AVX2 inline __m256 half_words(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// 16 packed words of a and b at p (a full group), as two halves of 8 exact binary32 values, computed
// and stored back. bfloat16: unpacking each 16-bit word into the upper half of a 32-bit lane is
// the decoding, in the unpack's lane order (elements 0-3 and 8-11 in the low half, 4-7 and 12-15
// in the high), which packus restores; binary16: vcvtph2ps / vcvtps2ph on 8 words in order.
// Returns the bad elements as a 16-bit mask in element order.
template <Fmt F, Op O>
DENOTE_AVX2 inline unsigned group16(const uint16_t* a, const uint16_t* b, uint16_t* out, __m256i& inexact) {
  Lanes8 lo, hi;
  if constexpr (F == Fmt::Bf16) {
    const __m256i z = _mm256_setzero_si256();
    const __m256i va = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
    const __m256i vb = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b));
    lo = lanes256<F, O>(_mm256_castsi256_ps(_mm256_unpacklo_epi16(z, va)), _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, vb)));
    hi = lanes256<F, O>(_mm256_castsi256_ps(_mm256_unpackhi_epi16(z, va)), _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, vb)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_packus_epi32(lo.r32, hi.r32));
  } else {
    lo = lanes256<F, O>(half_words(a), half_words(b));
    hi = lanes256<F, O>(half_words(a + 8), half_words(b + 8));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), lo.r16);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 8), hi.r16);
  }
  inexact = _mm256_or_si256(inexact, _mm256_or_si256(lo.inexact, hi.inexact));
  if ((lo.bad | hi.bad) == 0) return 0;
  if constexpr (F == Fmt::Bf16)
    return (lo.bad & 0xfu) | ((hi.bad & 0xfu) << 4) | ((lo.bad >> 4) << 8) | ((hi.bad >> 4) << 12);
  return lo.bad | (hi.bad << 8);
}

// Packed 16-bit words (rne_elementwise16), 16 a group; a block's tail goes through zeroed 16-word
// buffers (+0 op +0 is exact and settled here).
template <Fmt F, Op O>
DENOTE_AVX2 BlockResult block256_16(const uint16_t* a, const uint16_t* b, uint16_t* out, size_t len) {
  __m256i inexact = _mm256_setzero_si256();
  BlockResult res;
  for (size_t i = 0; i < len; i += 16) {
    const size_t m = len - i < 16 ? len - i : 16;
    unsigned bad;
    if (m == 16) {
      bad = group16<F, O>(a + i, b + i, out + i, inexact);
    } else {
      uint16_t ta[16] = {}, tb[16] = {}, to[16];
      for (size_t j = 0; j < m; ++j) ta[j] = a[i + j], tb[j] = b[i + j];
      bad = group16<F, O>(ta, tb, to, inexact) & ((1u << m) - 1);
      for (size_t j = 0; j < m; ++j) out[i + j] = to[j];
    }
    res.bad |= uint64_t{bad} << i;
  }
  res.inexact = _mm256_testz_si256(inexact, inexact) == 0;
  return res;
}

// CPUID leaf 1, ECX bit 29 (clang 14 has no "f16c" for __builtin_cpu_supports).
bool have_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
}

int cpu_level() {
  static const int level = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f")) && __builtin_cpu_supports("avx512bw") &&
                                   __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl")
                               ? 2
                               : (__builtin_cpu_supports("avx2") && have_f16c() ? 1 : 0);
  return level;
}

bool mxcsr_default() { return (_mm_getcsr() & 0xe040u) == 0; }  // rounding control, FTZ, DAZ

#else

int cpu_level() { return 0; }
bool mxcsr_default() { return false; }

#endif

// The process-wide level (base/cpu.h), at most what these kernels find on the CPU.
int level_now() { return std::min(denote::simd_level(), cpu_level()); }

template <Fmt F, Op O>
BlockFn pick(int level) {
#if defined(__x86_64__)
  if (level >= 2) return &block512<F, O>;
  if (level == 1) return &block256<F, O>;
#endif
  (void)level;
  return nullptr;
}

template <Fmt F>
BlockFn pick(Op op, int level) {
  if (op == Op::Add) return pick<F, Op::Add>(level);
  if (op == Op::Sub) return pick<F, Op::Sub>(level);
  return pick<F, Op::Mul>(level);
}

using BlockFn16 = BlockResult (*)(const uint16_t*, const uint16_t*, uint16_t*, size_t);

template <Fmt F, Op O>
BlockFn16 pick16(int level) {
#if defined(__x86_64__)
  if (level >= 2) return &block512_16<F, O>;
  if (level == 1) return &block256_16<F, O>;
#endif
  (void)level;
  return nullptr;
}

template <Fmt F>
BlockFn16 pick16(Op op, int level) {
  if (op == Op::Add) return pick16<F, Op::Add>(level);
  if (op == Op::Sub) return pick16<F, Op::Sub>(level);
  return pick16<F, Op::Mul>(level);
}

inline uint64_t bits_of(FpWord w) { return w.bits; }
inline uint64_t bits_of(uint16_t w) { return w; }
inline void set_bits(FpWord& w, uint64_t b) { w.bits = b; }
inline void set_bits(uint16_t& w, uint64_t b) { w = static_cast<uint16_t>(b); }

template <class W>
bool overlaps(const W* x, const W* out, size_t n) {
  const auto xb = reinterpret_cast<uintptr_t>(x), ob = reinterpret_cast<uintptr_t>(out);
  const uintptr_t bytes = n * sizeof(W);
  return xb < ob + bytes && ob < xb + bytes;
}

}  // namespace

int set_simd_level(int level) {
  denote::set_simd_level(level);
  return level_now();
}

namespace {

// Runs block(a, b, dst, len) over blocks of kBlock and redoes the lanes it leaves (all of a block
// with a malformed word) with the general routine, in index order.
template <class W, class Block>
void run_blocks(Op op, const FastFormat& ff, FpEnv& env, const W* a, const W* b, W* out, size_t n, Block block) {
  // In place (or overlapping), a block is computed into res first: its bad lanes reread a and b.
  const bool alias = overlaps(a, out, n) || overlaps(b, out, n);
  bool inexact = false, underflow = false;
  W res[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = n - base < kBlock ? n - base : kBlock;
    W* const dst = alias ? res : out + base;
    const BlockResult r = block(a + base, b + base, dst, len);
    uint64_t bad = r.bad;
    if (r.malformed) {
      bad = len == 64 ? ~uint64_t{0} : (uint64_t{1} << len) - 1;
    } else {
      inexact = inexact || r.inexact;
      underflow = underflow || r.underflow;
    }
    for (; bad != 0; bad &= bad - 1) {
      const size_t i = static_cast<size_t>(__builtin_ctzll(bad));
      set_bits(dst[i], general(op, ff.format, env, bits_of(a[base + i]), bits_of(b[base + i])));
    }
    if (alias)
      for (size_t i = 0; i < len; ++i) out[base + i] = res[i];
  }
  if (inexact) env.flags |= kFpInexact;
  if (underflow) env.flags |= kFpUnderflow;
}

}  // namespace

int simd_level() { return level_now(); }
bool mxcsr_is_default() { return mxcsr_default(); }

bool rne_elementwise(Op op, const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out,
                     size_t n) {
  if (env.rounding != Rounding::NearestEven) return false;
  const int level = level_now();
  if (level == 0 || !mxcsr_default()) return false;
  if (ff.kind == FastFormat::Kind::Other) {
    const std::optional<SmallParams> p = SmallParams::of(ff);
    if (level < 2 || !p) return false;
    run_blocks(op, ff, env, a, b, out, n, [&](const FpWord* x, const FpWord* y, FpWord* dst, size_t len) {
      return small_block512(op, *p, x, y, dst, len);
    });
    return true;
  }
  const BlockFn fn = ff.kind == FastFormat::Kind::Bfloat16 ? pick<Fmt::Bf16>(op, level) : pick<Fmt::Fp16>(op, level);
  if (fn == nullptr) return false;
  run_blocks(op, ff, env, a, b, out, n, fn);
  return true;
}

bool rne_elementwise16(Op op, const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out,
                       size_t n) {
  if (env.rounding != Rounding::NearestEven || ff.kind == FastFormat::Kind::Other) return false;
  const int level = level_now();
  if (level == 0 || !mxcsr_default()) return false;
  const BlockFn16 fn =
      ff.kind == FastFormat::Kind::Bfloat16 ? pick16<Fmt::Bf16>(op, level) : pick16<Fmt::Fp16>(op, level);
  if (fn == nullptr) return false;
  run_blocks(op, ff, env, a, b, out, n, fn);
  return true;
}

}  // namespace denote::fastsimd
