// bfloat16/binary16 inner-product folds to nearest-even in binary32 lanes (binary_fast_simd.h,
// rne_fold): R rows x V vectors of outputs folded at once (16 lanes a vector under AVX-512, 8 under
// AVX2 + F16C), each output in its own order.
//
// Each step is the evaluator's: p = mul(A, B) rounded to the format, then acc = add(acc, p) rounded,
// from acc = +0. In binary32 lanes:
// - A product of two format values is exact in binary32 (2p <= 22 bits) unless it is tiny there:
//   binary16 products are >= 2^-48 (never tiny in binary32), bfloat16 ones stay >= 2^-124 because
//   operands below 2^-62 are refused. It is rounded to the format: bfloat16 by integer round-half-
//   even on its bits, binary16 by vcvtps2ph (nearest-even, subnormals on their grid) and back.
// - A sum of two format values rounded to nearest in binary32 and then to nearest in the format is
//   one correct rounding (24 >= 2p + 2). A sum below 2^emin is exact: both operands are multiples of
//   the least subnormal, and so is the sum, which the format then holds.
// - Inexact: the product's rounding changed it, or the sum's binary32 rounding did (s - acc != p or
//   s - p != acc: the difference with the larger operand is exact, Fast2Sum), or its rounding to the
//   format did. Underflow (tiny after rounding and inexact) only for binary16 products: tiny after
//   rounding is |p| < 2^-14 - 2^-26, the midpoint below 2^-14 at 11 bits (a tie goes up to 2^-14).
// - Overflow: a product or sum that rounds above the largest finite value becomes infinite, and an
//   accumulator stays non-finite from then on (inf + x, inf - inf), so a tile whose accumulators end
//   non-finite is handed back whole (redo), with none of its flags.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "scalar/binary_fast_simd.h"
#include "scalar/binary_fast_simd_block.h"

#if defined(__x86_64__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // inside avx512fintrin.h (GCC 12)
#include <immintrin.h>
#endif

namespace denote::fastsimd {

bool has_tiny_bf16_operand(const double* v, int64_t n) {
  bool tiny = false;
  for (int64_t i = 0; i < n; ++i) tiny |= v[i] != 0.0 && std::fabs(v[i]) < 0x1p-62;
  return tiny;
}

#if defined(__x86_64__)

namespace {

#define DENOTE_AVX512 __attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,f16c")))

enum class Fmt : uint8_t { Bf16, Fp16 };

template <Fmt F>
DENOTE_AVX512 inline __m512 round_to(__m512 v) {
  if constexpr (F == Fmt::Bf16) {
    const __m512i b = _mm512_castps_si512(v);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7fff)), lsb);
    return _mm512_castsi512_ps(_mm512_and_si512(r, _mm512_set1_epi32(static_cast<int>(0xffff0000u))));
  } else {
    return _mm512_cvtph_ps(_mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

// acc + x * w, each step rounded to the format; inexact and underflow lanes or-ed into the masks.
template <Fmt F>
DENOTE_AVX512 inline __m512 step(__m512 acc, __m512 x, __m512 w, __mmask16& inexact, __mmask16& underflow) {
  const __m512 p = _mm512_mul_ps(x, w);
  const __m512 pr = round_to<F>(p);
  const __mmask16 p_inexact = _mm512_cmp_ps_mask(pr, p, _CMP_NEQ_UQ);
  if constexpr (F == Fmt::Fp16)
    underflow |= _mm512_mask_cmp_ps_mask(p_inexact, _mm512_abs_ps(p), _mm512_set1_ps(0x1.ffep-15f), _CMP_LT_OQ);
  const __m512 s = _mm512_add_ps(acc, pr);
  const __m512 sr = round_to<F>(s);
  inexact |= p_inexact | _mm512_cmp_ps_mask(_mm512_sub_ps(s, acc), pr, _CMP_NEQ_UQ) |
             _mm512_cmp_ps_mask(_mm512_sub_ps(s, pr), acc, _CMP_NEQ_UQ) | _mm512_cmp_ps_mask(sr, s, _CMP_NEQ_UQ);
  return sr;
}

// One tile: rows a[i * k ..] (i < R) against the 16 * V columns at b (row stride ldb); the
// accumulators into out[i][16 * v + l]. Returns false when one ended non-finite (an overflow).
template <Fmt F, int R, int V>
DENOTE_AVX512 bool tile(const float* a, int64_t k, const float* b, int64_t ldb, float (*out)[64], __mmask16& inexact,
                        __mmask16& underflow) {
  __m512 acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = _mm512_setzero_ps();
  __mmask16 in = 0, un = 0;
  for (int64_t r = 0; r < k; ++r) {
    __m512 w[V];
    for (int v = 0; v < V; ++v) w[v] = _mm512_loadu_ps(b + r * ldb + 16 * v);
    for (int i = 0; i < R; ++i) {
      const __m512 x = _mm512_set1_ps(a[i * k + r]);
      for (int v = 0; v < V; ++v) acc[i][v] = step<F>(acc[i][v], x, w[v], in, un);
    }
  }
  __mmask16 special = 0;  // QNaN, +inf, -inf, SNaN
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) {
      special |= _mm512_fpclass_ps_mask(acc[i][v], 0x99);
      _mm512_storeu_ps(out[i] + 16 * v, acc[i][v]);
    }
  if (special != 0) return false;
  inexact |= in;
  underflow |= un;
  return true;
}

using TileFn = bool (*)(const float*, int64_t, const float*, int64_t, float (*)[64], __mmask16&, __mmask16&);

template <Fmt F, int R>
TileFn tile_for(int v) {
  switch (v) {
    case 1: return &tile<F, R, 1>;
    case 2: return &tile<F, R, 2>;
    case 3: return &tile<F, R, 3>;
    default: return &tile<F, R, 4>;
  }
}

// ---- AVX2 + F16C: 8 lanes, the same steps with vector masks ----

#define DENOTE_AVX2 __attribute__((target("avx2,f16c")))

template <Fmt F>
DENOTE_AVX2 inline __m256 round_to8(__m256 v) {
  if constexpr (F == Fmt::Bf16) {
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7fff)), lsb);
    return _mm256_castsi256_ps(_mm256_and_si256(r, _mm256_set1_epi32(static_cast<int>(0xffff0000u))));
  } else {
    return _mm256_cvtph_ps(_mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
}

template <Fmt F>
DENOTE_AVX2 inline __m256 step8(__m256 acc, __m256 x, __m256 w, __m256& inexact, __m256& underflow) {
  const __m256 p = _mm256_mul_ps(x, w);
  const __m256 pr = round_to8<F>(p);
  const __m256 p_inexact = _mm256_cmp_ps(pr, p, _CMP_NEQ_UQ);
  if constexpr (F == Fmt::Fp16) {
    const __m256 mag = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), p);
    underflow = _mm256_or_ps(underflow, _mm256_and_ps(p_inexact, _mm256_cmp_ps(mag, _mm256_set1_ps(0x1.ffep-15f), _CMP_LT_OQ)));
  }
  const __m256 s = _mm256_add_ps(acc, pr);
  const __m256 sr = round_to8<F>(s);
  const __m256 s_inexact = _mm256_or_ps(_mm256_cmp_ps(_mm256_sub_ps(s, acc), pr, _CMP_NEQ_UQ),
                                        _mm256_cmp_ps(_mm256_sub_ps(s, pr), acc, _CMP_NEQ_UQ));
  inexact = _mm256_or_ps(inexact, _mm256_or_ps(_mm256_or_ps(p_inexact, s_inexact), _mm256_cmp_ps(sr, s, _CMP_NEQ_UQ)));
  return sr;
}

template <Fmt F, int R, int V>
DENOTE_AVX2 bool tile8(const float* a, int64_t k, const float* b, int64_t ldb, float (*out)[64], __mmask16& inexact,
                       __mmask16& underflow) {
  __m256 acc[R][V];
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) acc[i][v] = _mm256_setzero_ps();
  __m256 in = _mm256_setzero_ps(), un = _mm256_setzero_ps();
  for (int64_t r = 0; r < k; ++r) {
    __m256 w[V];
    for (int v = 0; v < V; ++v) w[v] = _mm256_loadu_ps(b + r * ldb + 8 * v);
    for (int i = 0; i < R; ++i) {
      const __m256 x = _mm256_set1_ps(a[i * k + r]);
      for (int v = 0; v < V; ++v) acc[i][v] = step8<F>(acc[i][v], x, w[v], in, un);
    }
  }
  __m256 special = _mm256_setzero_ps();  // acc - acc is NaN exactly for inf and NaN
  for (int i = 0; i < R; ++i)
    for (int v = 0; v < V; ++v) {
      special = _mm256_or_ps(special, _mm256_cmp_ps(_mm256_sub_ps(acc[i][v], acc[i][v]), _mm256_setzero_ps(), _CMP_UNORD_Q));
      _mm256_storeu_ps(out[i] + 8 * v, acc[i][v]);
    }
  if (_mm256_movemask_ps(special) != 0) return false;
  if (_mm256_movemask_ps(in) != 0) inexact = 1;
  if (_mm256_movemask_ps(un) != 0) underflow = 1;
  return true;
}

template <Fmt F, int R>
TileFn tile8_for(int v) {
  switch (v) {
    case 2: return &tile8<F, R, 2>;
    default: return &tile8<F, R, 4>;
  }
}

// Conv blocks (rne_conv_blocks): V blocks of 16 lanes, AVX-512 one vector a block, AVX2 two.
template <Fmt F, int V>
DENOTE_AVX512 bool conv16(const ConvLanes& in, float* out, __mmask16& inexact, __mmask16& underflow) {
  __m512 acc[V];
  for (int v = 0; v < V; ++v) acc[v] = _mm512_setzero_ps();
  __mmask16 inx = 0, un = 0;
  for (int64_t s = 0; s < in.steps; ++s) {
    const __m512 x = _mm512_set1_ps(in.x[s]);
    const float* w = in.w + in.row[s] * 16;
    for (int v = 0; v < V; ++v) acc[v] = step<F>(acc[v], x, _mm512_loadu_ps(w + v * in.block_stride), inx, un);
  }
  __mmask16 special = 0;
  for (int v = 0; v < V; ++v) {  // the bias: 1 * b is b exactly, so this step is add(acc, b)
    acc[v] = step<F>(acc[v], _mm512_set1_ps(1.0f), _mm512_loadu_ps(in.bias + 16 * v), inx, un);
    special |= _mm512_fpclass_ps_mask(acc[v], 0x99);
    _mm512_storeu_ps(out + 16 * v, acc[v]);
  }
  if (special != 0) return false;
  inexact |= inx;
  underflow |= un;
  return true;
}

template <Fmt F, int V>
DENOTE_AVX2 bool conv8(const ConvLanes& in, float* out, __mmask16& inexact, __mmask16& underflow) {
  __m256 acc[2 * V];
  for (int v = 0; v < 2 * V; ++v) acc[v] = _mm256_setzero_ps();
  __m256 inx = _mm256_setzero_ps(), un = _mm256_setzero_ps();
  for (int64_t s = 0; s < in.steps; ++s) {
    const __m256 x = _mm256_set1_ps(in.x[s]);
    const float* w = in.w + in.row[s] * 16;
    for (int v = 0; v < 2 * V; ++v)
      acc[v] = step8<F>(acc[v], x, _mm256_loadu_ps(w + (v / 2) * in.block_stride + 8 * (v % 2)), inx, un);
  }
  __m256 special = _mm256_setzero_ps();
  for (int v = 0; v < 2 * V; ++v) {
    acc[v] = step8<F>(acc[v], _mm256_set1_ps(1.0f), _mm256_loadu_ps(in.bias + 8 * v), inx, un);
    special = _mm256_or_ps(special, _mm256_cmp_ps(_mm256_sub_ps(acc[v], acc[v]), _mm256_setzero_ps(), _CMP_UNORD_Q));
    _mm256_storeu_ps(out + 8 * v, acc[v]);
  }
  if (_mm256_movemask_ps(special) != 0) return false;
  if (_mm256_movemask_ps(inx) != 0) inexact = 1;
  if (_mm256_movemask_ps(un) != 0) underflow = 1;
  return true;
}

template <Fmt F>
bool conv_blocks(int level, const ConvLanes& in, float* out, __mmask16& inexact, __mmask16& underflow) {
  if (level >= 2) {
    switch (in.blocks) {
      case 1: return conv16<F, 1>(in, out, inexact, underflow);
      case 2: return conv16<F, 2>(in, out, inexact, underflow);
      case 3: return conv16<F, 3>(in, out, inexact, underflow);
      default: return conv16<F, 4>(in, out, inexact, underflow);
    }
  }
  switch (in.blocks) {
    case 1: return conv8<F, 1>(in, out, inexact, underflow);
    case 2: return conv8<F, 2>(in, out, inexact, underflow);
    case 3: return conv8<F, 3>(in, out, inexact, underflow);
    default: return conv8<F, 4>(in, out, inexact, underflow);
  }
}

// The word of a format value held in binary32.
template <Fmt F>
DENOTE_AVX2 inline uint64_t word_of(float v) {
  if constexpr (F == Fmt::Bf16) {
    uint32_t b;
    __builtin_memcpy(&b, &v, sizeof b);
    return b >> 16;
  } else {
    return _cvtss_sh(v, _MM_FROUND_TO_NEAREST_INT);  // exact: v is a binary16 value
  }
}

struct Shape {
  int64_t m, k, n;
  int lanes;       // 16 (AVX-512) or 8 (AVX2)
  int rows, vecs;  // the tile: R rows x V vectors of `lanes`
  int64_t mp, np;  // m and n padded to whole tiles
};

// The operands as binary32, padded with zeros to whole tiles (zero products and sums are exact).
void to_floats(const double* a, const double* b, const Shape& s, std::vector<float>& af, std::vector<float>& bf) {
  af.assign(static_cast<size_t>(s.mp * s.k), 0.0f);
  bf.assign(static_cast<size_t>(s.k * s.np), 0.0f);
  for (int64_t i = 0; i < s.m * s.k; ++i) af[static_cast<size_t>(i)] = static_cast<float>(a[i]);
  for (int64_t r = 0; r < s.k; ++r)
    for (int64_t j = 0; j < s.n; ++j) bf[static_cast<size_t>(r * s.np + j)] = static_cast<float>(b[r * s.n + j]);
}

template <Fmt F>
TileFn pick_tile(const Shape& s) {
  if (s.lanes == 16) return s.rows == 4 ? tile_for<F, 4>(s.vecs) : tile_for<F, 1>(s.vecs);
  return s.rows == 2 ? tile8_for<F, 2>(s.vecs) : tile8_for<F, 1>(s.vecs);
}

// Every tile through tile(a, b, acc) (false: hand it back), every settled output's word by word(v).
template <class Tile, class Word>
void fold(const Shape& s, const std::vector<float>& af, const std::vector<float>& bf, FpWord* out,
          const std::function<void(int64_t, int64_t)>& redo, Tile&& tile, Word&& word) {
  const int64_t width = s.lanes * s.vecs;
  float acc[4][64];
  // Column panels outside, row tiles inside: a panel of B (k x width) stays in cache across the rows.
  for (int64_t j0 = 0; j0 < s.np; j0 += width) {
    const int64_t jn = std::min(s.n, j0 + width);
    for (int64_t i0 = 0; i0 < s.mp; i0 += s.rows) {
      const int64_t in = std::min(s.m, i0 + s.rows);
      if (!tile(af.data() + i0 * s.k, bf.data() + j0, acc)) {
        for (int64_t i = i0; i < in; ++i)
          for (int64_t j = j0; j < jn; j += 16) redo(i, j);
        continue;
      }
      for (int64_t i = i0; i < in; ++i)
        for (int64_t j = j0; j < jn; ++j) out[i * s.n + j].bits = word(acc[i - i0][j - j0]);
    }
  }
}

template <Fmt F>
void fold16(const Shape& s, const std::vector<float>& af, const std::vector<float>& bf, FpWord* out, uint32_t& flags,
            const std::function<void(int64_t, int64_t)>& redo) {
  const TileFn fn = pick_tile<F>(s);
  __mmask16 inexact = 0, underflow = 0;
  fold(
      s, af, bf, out, redo,
      [&](const float* a, const float* b, float (*acc)[64]) { return fn(a, s.k, b, s.np, acc, inexact, underflow); },
      [](float v) { return word_of<F>(v); });
  if (inexact) flags |= kFpInexact;
  if (underflow) flags |= kFpUnderflow;
}

void fold_small(const SmallParams& p, const Shape& s, const std::vector<float>& af, const std::vector<float>& bf,
                FpWord* out, uint32_t& flags, const std::function<void(int64_t, int64_t)>& redo) {
  const SmallTileFn fn = small_fold_tile(s.rows, s.vecs);
  bool inexact = false, underflow = false;
  fold(
      s, af, bf, out, redo,
      [&](const float* a, const float* b, float (*acc)[64]) {
        return fn(p, a, s.k, b, s.np, acc, inexact, underflow);
      },
      [&](float v) { return small_word(p, v); });
  if (inexact) flags |= kFpInexact;
  if (underflow) flags |= kFpUnderflow;
}

// Tiles of whole blocks of 16 outputs (the unit handed back): AVX-512 4 rows x 2 vectors (1 x up to 4
// for one row); AVX2 2 rows x 2 vectors of 8 (1 x 4 for one row). m and n padded to whole tiles.
Shape shape_for(int level, int64_t m, int64_t k, int64_t n) {
  const int64_t blocks = (n + 15) / 16;
  Shape s{m, k, n, 16, 1, 1, 0, 0};
  if (level >= 2) {
    s.rows = m >= 4 ? 4 : 1;
    s.vecs = static_cast<int>(std::min<int64_t>(s.rows == 4 ? 2 : 4, blocks));
  } else {
    s.lanes = 8;
    s.rows = m >= 2 ? 2 : 1;
    s.vecs = s.rows == 1 && blocks > 1 ? 4 : 2;
  }
  const int64_t block_cols = s.lanes * s.vecs;
  s.mp = (m + s.rows - 1) / s.rows * s.rows;
  s.np = (n + block_cols - 1) / block_cols * block_cols;
  return s;
}

}  // namespace

bool rne_fold(const FastFormat& ff, Rounding mode, const double* a, const double* b, int64_t m, int64_t k, int64_t n,
              FpWord* out, uint32_t& flags, const std::function<void(int64_t, int64_t)>& redo) {
  const int level = simd_level();
  if (mode != Rounding::NearestEven || level < 1 || !mxcsr_is_default() || m <= 0 || n <= 0) return false;
  std::optional<SmallParams> small;
  if (ff.kind == FastFormat::Kind::Other && (level < 2 || !(small = SmallParams::of(ff)))) return false;
  const bool bf16 = ff.kind == FastFormat::Kind::Bfloat16;
  if (bf16 && (has_tiny_bf16_operand(a, m * k) || has_tiny_bf16_operand(b, k * n))) return false;
  const Shape s = shape_for(level, m, k, n);
  std::vector<float> af, bf;
  to_floats(a, b, s, af, bf);
  if (small)
    fold_small(*small, s, af, bf, out, flags, redo);
  else if (bf16)
    fold16<Fmt::Bf16>(s, af, bf, out, flags, redo);
  else
    fold16<Fmt::Fp16>(s, af, bf, out, flags, redo);
  return true;
}

bool conv_lanes_apply(const FastFormat& ff, Rounding mode) {
  const int level = simd_level();
  if (mode != Rounding::NearestEven || level < 1 || !mxcsr_is_default()) return false;
  return ff.kind != FastFormat::Kind::Other || (level >= 2 && SmallParams::of(ff).has_value());
}

bool rne_conv_blocks(const FastFormat& ff, const ConvLanes& in, uint64_t* words, uint32_t& flags) {
  float out[64];
  const int count = 16 * in.blocks;
  if (ff.kind == FastFormat::Kind::Other) {
    const std::optional<SmallParams> p = SmallParams::of(ff);
    bool inexact = false, underflow = false;
    if (!p || !small_conv_blocks(*p, in, out, inexact, underflow)) return false;
    for (int i = 0; i < count; ++i) words[i] = small_word(*p, out[i]);
    flags |= (inexact ? kFpInexact : 0u) | (underflow ? kFpUnderflow : 0u);
    return true;
  }
  __mmask16 inexact = 0, underflow = 0;
  const bool bf16 = ff.kind == FastFormat::Kind::Bfloat16;
  const int level = simd_level();
  if (!(bf16 ? conv_blocks<Fmt::Bf16>(level, in, out, inexact, underflow)
             : conv_blocks<Fmt::Fp16>(level, in, out, inexact, underflow)))
    return false;
  for (int i = 0; i < count; ++i) words[i] = bf16 ? word_of<Fmt::Bf16>(out[i]) : word_of<Fmt::Fp16>(out[i]);
  flags |= (inexact ? kFpInexact : 0u) | (underflow ? kFpUnderflow : 0u);
  return true;
}

#else

bool conv_lanes_apply(const FastFormat&, Rounding) { return false; }
bool rne_conv_blocks(const FastFormat&, const ConvLanes&, uint64_t*, uint32_t&) { return false; }

bool rne_fold(const FastFormat&, Rounding, const double*, const double*, int64_t, int64_t, int64_t, FpWord*,
              uint32_t&, const std::function<void(int64_t, int64_t)>&) {
  return false;
}

#endif

}  // namespace denote::fastsimd
