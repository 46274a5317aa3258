// The avx2 provider's GEMM micro-kernels (see panel_gemm.h): MR x 16 floats (or MR x 8 doubles) of
// accumulators in registers, one fused multiply-add per k and element, compiled for AVX2 + FMA with
// target attributes and used only when the CPU reports both (cpu_supported); the AVX-512 ones where
// the level allows (base/cpu.h: have_avx512f).
#include "kernels/panel_gemm.h"

#include "base/cpu.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define DENOTE_AVX2_KERNELS 1
#endif

#include <algorithm>
#include <cmath>
#include <type_traits>

namespace denote::kernels::panel {

#ifdef DENOTE_AVX2_KERNELS

bool cpu_supported() { return cpu_avx2_fma(); }

namespace {

// Accumulators as named variables (an array of __m256 makes GCC store it to the stack every k).
#define DENOTE_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
// The store's bias and relu, per register (see Output).
struct Store {
  const float* col = nullptr;  // PerColumn: the panel's first column of the padded bias
  const float* row = nullptr;  // PerRow: the block's first row
  bool relu = false;
};

using MicroFn32 = void (*)(int64_t, const float*, int64_t, const float*, const int32_t*, int64_t, float*, int64_t,
                          const Store&, bool);

__attribute__((target("avx2,fma"))) inline __m256 finish(__m256 v, const Store& s, const float* col, int r) {
  if (s.col) v = _mm256_add_ps(v, _mm256_loadu_ps(col));
  if (s.row) v = _mm256_add_ps(v, _mm256_broadcast_ss(s.row + r));
  if (s.relu) v = _mm256_and_ps(v, _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_NLE_UQ));
  return v;
}

// kHalf: only the first 8 columns (panels with n <= 8: no wasted half register).
template <int MR, bool kHalf>
__attribute__((target("avx2,fma"))) void micro_f32(int64_t K, const float* a, int64_t lda, const float* b,
                                                    const int32_t* boff, int64_t n, float* c, int64_t ldc,
                                                    const Store& st, bool resume) {
#define DENOTE_ZERO(r) __m256 lo##r = _mm256_setzero_ps(), hi##r = _mm256_setzero_ps();
  DENOTE_ROWS(DENOTE_ZERO)
#undef DENOTE_ZERO
  if (resume) {  // continue the sums stored by the previous k block (exact: a float stored and reloaded)
#define DENOTE_LOAD(r)                                              \
  if constexpr (MR > r) {                                           \
    alignas(32) float tmp[16] = {};                                 \
    std::copy(c + r * ldc, c + r * ldc + n, tmp);                   \
    lo##r = _mm256_load_ps(tmp);                                    \
    hi##r = _mm256_load_ps(tmp + 8);                                \
  }
    DENOTE_ROWS(DENOTE_LOAD)
#undef DENOTE_LOAD
  }
  for (int64_t k = 0; k < K; ++k) {
    const float* bk = b + boff[k];
    const __m256 b0 = _mm256_loadu_ps(bk), b1 = kHalf ? b0 : _mm256_loadu_ps(bk + 8);
#define DENOTE_FMA(r)                                               \
  if constexpr (MR > r) {                                           \
    const __m256 x = _mm256_broadcast_ss(a + r * lda + k);          \
    lo##r = _mm256_fmadd_ps(x, b0, lo##r);                          \
    if constexpr (!kHalf) hi##r = _mm256_fmadd_ps(x, b1, hi##r);    \
  }
    DENOTE_ROWS(DENOTE_FMA)
#undef DENOTE_FMA
  }
#define DENOTE_STORE(r)                                             \
  if constexpr (MR > r) {                                           \
    float* cr = c + r * ldc;                                        \
    lo##r = finish(lo##r, st, st.col, r);                           \
    if constexpr (!kHalf) hi##r = finish(hi##r, st, st.col + 8, r); \
    if (n == 16) {                                                  \
      _mm256_storeu_ps(cr, lo##r);                                  \
      _mm256_storeu_ps(cr + 8, hi##r);                              \
    } else {                                                        \
      alignas(32) float tmp[16];                                    \
      _mm256_store_ps(tmp, lo##r);                                  \
      _mm256_store_ps(tmp + 8, hi##r);                              \
      std::copy(tmp, tmp + n, cr);                                  \
    }                                                               \
  }
  DENOTE_ROWS(DENOTE_STORE)
#undef DENOTE_STORE
}

// Up to 4 rows x 24 columns (12 accumulators): a conv output row of 17 to 24 pixels in one panel.
#define DENOTE_ROWS4(X) X(0) X(1) X(2) X(3)
template <int MR>
__attribute__((target("avx2,fma"))) void micro24_f32(int64_t K, const float* a, int64_t lda, const float* b,
                                                      const int32_t* boff, int64_t n, float* c, int64_t ldc,
                                                      const Store& st, bool resume) {
  alignas(32) float init[4][24] = {};
  if (resume)
    for (int r = 0; r < MR; ++r) std::copy(c + r * ldc, c + r * ldc + n, init[r]);
#define DENOTE_ZERO(r)                                                                           \
  __m256 x0##r = _mm256_load_ps(init[r]), x1##r = _mm256_load_ps(init[r] + 8),                  \
         x2##r = _mm256_load_ps(init[r] + 16);
  DENOTE_ROWS4(DENOTE_ZERO)
#undef DENOTE_ZERO
  for (int64_t k = 0; k < K; ++k) {
    const float* bk = b + boff[k];
    const __m256 b0 = _mm256_loadu_ps(bk), b1 = _mm256_loadu_ps(bk + 8), b2 = _mm256_loadu_ps(bk + 16);
#define DENOTE_FMA(r)                                      \
  if constexpr (MR > r) {                                  \
    const __m256 x = _mm256_broadcast_ss(a + r * lda + k); \
    x0##r = _mm256_fmadd_ps(x, b0, x0##r);                 \
    x1##r = _mm256_fmadd_ps(x, b1, x1##r);                 \
    x2##r = _mm256_fmadd_ps(x, b2, x2##r);                 \
  }
    DENOTE_ROWS4(DENOTE_FMA)
#undef DENOTE_FMA
  }
#define DENOTE_STORE(r)                                                        \
  if constexpr (MR > r) {                                                      \
    alignas(32) float tmp[24];                                                 \
    _mm256_store_ps(tmp, finish(x0##r, st, st.col, r));                       \
    _mm256_store_ps(tmp + 8, finish(x1##r, st, st.col + 8, r));               \
    _mm256_store_ps(tmp + 16, finish(x2##r, st, st.col + 16, r));             \
    std::copy(tmp, tmp + n, c + r * ldc);                                      \
  }
  DENOTE_ROWS4(DENOTE_STORE)
#undef DENOTE_STORE
}
#undef DENOTE_ROWS4

// One row against up to four panels at once (8 independent accumulator chains: a lone row would
// otherwise wait on the FMA latency of two).
__attribute__((target("avx2,fma"))) void row_f32(int64_t K, const float* a, const float* const* b, const int32_t* boff,
                                                  const int64_t* n, float* const* c, const Store* st, bool resume) {
  alignas(32) float init[64] = {};
  if (resume)
    for (int j = 0; j < 4; ++j) std::copy(c[j], c[j] + n[j], init + 16 * j);
#define DENOTE_ZERO(j) __m256 lo##j = _mm256_load_ps(init + 16 * j), hi##j = _mm256_load_ps(init + 16 * j + 8);
  DENOTE_ZERO(0) DENOTE_ZERO(1) DENOTE_ZERO(2) DENOTE_ZERO(3)
#undef DENOTE_ZERO
  for (int64_t k = 0; k < K; ++k) {
    const __m256 x = _mm256_broadcast_ss(a + k);
    const int64_t o = boff[k];
#define DENOTE_FMA(j)                                                        \
  lo##j = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[j] + o), lo##j);              \
  hi##j = _mm256_fmadd_ps(x, _mm256_loadu_ps(b[j] + o + 8), hi##j);
    DENOTE_FMA(0) DENOTE_FMA(1) DENOTE_FMA(2) DENOTE_FMA(3)
#undef DENOTE_FMA
  }
  alignas(32) float tmp[64];
#define DENOTE_STORE(j)                                           \
  _mm256_store_ps(tmp + 16 * j, finish(lo##j, st[j], st[j].col, 0));     \
  _mm256_store_ps(tmp + 16 * j + 8, finish(hi##j, st[j], st[j].col + 8, 0));
  DENOTE_STORE(0) DENOTE_STORE(1) DENOTE_STORE(2) DENOTE_STORE(3)
#undef DENOTE_STORE
  for (int j = 0; j < 4; ++j) std::copy(tmp + 16 * j, tmp + 16 * j + n[j], c[j]);
}
#undef DENOTE_ROWS

// AVX-512: up to 12 rows x one 16-float panel (one zmm accumulator a row), n in (0, 16]: loads and
// stores of C masked to the n valid columns. The same fma chain per output as micro_f32.
#define DENOTE_ROWS12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define DENOTE_AVX512 __attribute__((target("avx512f")))
DENOTE_AVX512 inline __m512 finish512(__m512 v, const Store& s, int r) {
  if (s.col) v = _mm512_add_ps(v, _mm512_loadu_ps(s.col));
  if (s.row) v = _mm512_add_ps(v, _mm512_set1_ps(s.row[r]));
  if (s.relu) v = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_NLE_UQ), v);
  return v;
}

template <int MR>
DENOTE_AVX512 void micro512_f32(int64_t K, const float* a, int64_t lda, const float* b, const int32_t* boff,
                                int64_t n, float* c, int64_t ldc, const Store& st, bool resume) {
  const __mmask16 m = static_cast<__mmask16>(n >= 16 ? 0xffffu : (1u << n) - 1);
#define DENOTE_ZERO(r) __m512 acc##r = _mm512_setzero_ps();
  DENOTE_ROWS12(DENOTE_ZERO)
#undef DENOTE_ZERO
  if (resume) {  // continue the sums stored by the previous k block (exact: a float stored and reloaded)
#define DENOTE_LOAD(r) \
  if constexpr (MR > r) acc##r = _mm512_maskz_loadu_ps(m, c + r * ldc);
    DENOTE_ROWS12(DENOTE_LOAD)
#undef DENOTE_LOAD
  }
  for (int64_t k = 0; k < K; ++k) {
    const __m512 bk = _mm512_loadu_ps(b + boff[k]);
#define DENOTE_FMA(r) \
  if constexpr (MR > r) acc##r = _mm512_fmadd_ps(_mm512_set1_ps(a[r * lda + k]), bk, acc##r);
    DENOTE_ROWS12(DENOTE_FMA)
#undef DENOTE_FMA
  }
#define DENOTE_STORE(r) \
  if constexpr (MR > r) _mm512_mask_storeu_ps(c + r * ldc, m, finish512(acc##r, st, r));
  DENOTE_ROWS12(DENOTE_STORE)
#undef DENOTE_STORE
}
#undef DENOTE_ROWS12

// AVX-512: up to 8 rows x two panels side by side (two zmm a row: 16 accumulators; two B loads and
// eight broadcasts per k for 16 FMAs). The second panel's n1 columns are masked.
#define DENOTE_ROWS8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
template <int MR>
DENOTE_AVX512 void micro512x2_f32(int64_t K, const float* a, int64_t lda, const float* b0, const float* b1,
                                  const int32_t* boff, int64_t n1, float* c0, float* c1, int64_t ldc,
                                  const Store& st0, const Store& st1, bool resume) {
  const __mmask16 m1 = static_cast<__mmask16>(n1 >= 16 ? 0xffffu : (1u << n1) - 1);
#define DENOTE_ZERO(r) __m512 x##r = _mm512_setzero_ps(), y##r = _mm512_setzero_ps();
  DENOTE_ROWS8(DENOTE_ZERO)
#undef DENOTE_ZERO
  if (resume) {
#define DENOTE_LOAD(r)                                  \
  if constexpr (MR > r) {                               \
    x##r = _mm512_loadu_ps(c0 + r * ldc);               \
    y##r = _mm512_maskz_loadu_ps(m1, c1 + r * ldc);     \
  }
    DENOTE_ROWS8(DENOTE_LOAD)
#undef DENOTE_LOAD
  }
  for (int64_t k = 0; k < K; ++k) {
    const __m512 p = _mm512_loadu_ps(b0 + boff[k]), q = _mm512_loadu_ps(b1 + boff[k]);
#define DENOTE_FMA(r)                                   \
  if constexpr (MR > r) {                               \
    const __m512 v = _mm512_set1_ps(a[r * lda + k]);    \
    x##r = _mm512_fmadd_ps(v, p, x##r);                 \
    y##r = _mm512_fmadd_ps(v, q, y##r);                 \
  }
    DENOTE_ROWS8(DENOTE_FMA)
#undef DENOTE_FMA
  }
#define DENOTE_STORE(r)                                                    \
  if constexpr (MR > r) {                                                  \
    _mm512_storeu_ps(c0 + r * ldc, finish512(x##r, st0, r));               \
    _mm512_mask_storeu_ps(c1 + r * ldc, m1, finish512(y##r, st1, r));      \
  }
  DENOTE_ROWS8(DENOTE_STORE)
#undef DENOTE_STORE
}
#undef DENOTE_ROWS8

using Micro2Fn = void (*)(int64_t, const float*, int64_t, const float*, const float*, const int32_t*, int64_t, float*,
                          float*, int64_t, const Store&, const Store&, bool);
constexpr int kMr512x2 = 8;
constexpr Micro2Fn kMicro512x2[] = {nullptr,           &micro512x2_f32<1>, &micro512x2_f32<2>, &micro512x2_f32<3>,
                                    &micro512x2_f32<4>, &micro512x2_f32<5>, &micro512x2_f32<6>, &micro512x2_f32<7>,
                                    &micro512x2_f32<8>};

constexpr int kMr512 = 12;
constexpr MicroFn32 kMicro512[] = {nullptr,          &micro512_f32<1>,  &micro512_f32<2>,  &micro512_f32<3>,
                                   &micro512_f32<4>,  &micro512_f32<5>,  &micro512_f32<6>,  &micro512_f32<7>,
                                   &micro512_f32<8>,  &micro512_f32<9>,  &micro512_f32<10>, &micro512_f32<11>,
                                   &micro512_f32<12>};

struct StoreF64 {
  const double* col = nullptr;
  const double* row = nullptr;
  bool relu = false;
};

template <int MR>
__attribute__((target("avx2,fma"))) void micro_f64(int64_t K, const double* a, int64_t lda, const double* b,
                                                    const int32_t* boff, int64_t n, double* c, int64_t ldc,
                                                    const StoreF64& st, bool resume) {
  __m256d lo[MR], hi[MR];
  for (int r = 0; r < MR; ++r) {
    alignas(32) double tmp[8] = {};
    if (resume) std::copy(c + r * ldc, c + r * ldc + n, tmp);
    lo[r] = _mm256_load_pd(tmp);
    hi[r] = _mm256_load_pd(tmp + 4);
  }
  for (int64_t k = 0; k < K; ++k) {
    const double* bk = b + boff[k];
    const __m256d b0 = _mm256_loadu_pd(bk), b1 = _mm256_loadu_pd(bk + 4);
    for (int r = 0; r < MR; ++r) {
      const __m256d x = _mm256_broadcast_sd(a + r * lda + k);
      lo[r] = _mm256_fmadd_pd(x, b0, lo[r]);
      hi[r] = _mm256_fmadd_pd(x, b1, hi[r]);
    }
  }
  for (int r = 0; r < MR; ++r) {
    alignas(32) double tmp[8];
    _mm256_store_pd(tmp, lo[r]);
    _mm256_store_pd(tmp + 4, hi[r]);
    for (int64_t j = 0; j < n; ++j) {
      double v = tmp[j];
      if (st.col) v += st.col[j];
      if (st.row) v += st.row[r];
      if (st.relu) v = (v > 0 || std::isnan(v)) ? v : 0.0;
      c[r * ldc + j] = v;
    }
  }
}

template <class S>
using StoreOf = std::conditional_t<std::is_same_v<S, float>, Store, StoreF64>;
template <class S>
using MicroFn = void (*)(int64_t, const S*, int64_t, const S*, const int32_t*, int64_t, S*, int64_t, const StoreOf<S>&,
                         bool);

template <class S>
StoreOf<S> store_for(const S* bias, Output out, int64_t row0, const Panel& p) {
  StoreOf<S> s;
  if (out.bias == Output::Bias::PerColumn) s.col = bias + p.c_offset;
  if (out.bias == Output::Bias::PerRow) s.row = bias + row0;
  s.relu = out.relu;
  return s;
}

template <class S>
MicroFn<S> micro(int rows, bool half) {
  if constexpr (std::is_same_v<S, float>) {
    static constexpr MicroFn<float> kFns[] = {nullptr,
                                              &micro_f32<1, false>, &micro_f32<2, false>, &micro_f32<3, false>,
                                              &micro_f32<4, false>, &micro_f32<5, false>, &micro_f32<6, false>,
                                              &micro_f32<1, true>,  &micro_f32<2, true>,  &micro_f32<3, true>,
                                              &micro_f32<4, true>,  &micro_f32<5, true>,  &micro_f32<6, true>};
    return kFns[half ? rows + 6 : rows];
  } else {
    static constexpr MicroFn<double> kFns[] = {nullptr,        &micro_f64<1>, &micro_f64<2>, &micro_f64<3>,
                                               &micro_f64<4>, &micro_f64<5>, &micro_f64<6>};
    (void)half;
    return kFns[rows];
  }
}

// Fewer than 4 rows (a batch-1 linear): each row against four panels at a time (16-column panels).
void few_rows_f32(int64_t M, int64_t K, const float* a, int64_t lda, const float* b, const int32_t* boff,
                  const std::vector<Panel>& panels, float* c, int64_t ldc, const float* bias, Output out, bool resume) {
  const size_t full = panels.size() / 4 * 4;
  for (int64_t i = 0; i < M; ++i) {
    for (size_t p = 0; p < full; p += 4) {
      const float* bs[4];
      float* cs[4];
      int64_t ns[4];
      Store st[4];
      for (size_t j = 0; j < 4; ++j) {
        bs[j] = b + panels[p + j].b_offset;
        cs[j] = c + i * ldc + panels[p + j].c_offset;
        ns[j] = panels[p + j].n;
        st[j] = store_for(bias, out, i, panels[p + j]);
      }
      row_f32(K, a + i * lda, bs, boff, ns, cs, st, resume);
    }
    for (size_t p = full; p < panels.size(); ++p)
      micro<float>(1, panels[p].n <= 8)(K, a + i * lda, lda, b + panels[p].b_offset, boff, panels[p].n,
                                        c + i * ldc + panels[p].c_offset, ldc, store_for(bias, out, i, panels[p]),
                                        resume);
  }
}

}  // namespace

// Panels outer (a panel of B stays in L1 while every row block uses it), row blocks inner: blocks of
// 6 rows, or of 4 when M is a multiple of 4 but not of 6 (no thin tail block).
// K in blocks of kKc (a block of a panel stays in L1 across the row blocks); a later block resumes the
// stored sums, so each output is still one fma chain in k order. Bias and relu at the last block.
template <class S>
void gemm(int64_t M, int64_t K, const S* a, int64_t lda, const S* b, const int32_t* boff,
          const std::vector<Panel>& panels, S* c, int64_t ldc, const S* bias, Output out) {
  constexpr int64_t kKc = 512;
  const int mr = (M % 6 != 0 && M % 4 == 0 && M < 24) ? 4 : 6;
  for (int64_t k0 = 0; k0 < K; k0 += kKc) {
    const int64_t kn = std::min(kKc, K - k0);
    const bool resume = k0 > 0;
    const Output now = k0 + kn == K ? out : Output{};
    if constexpr (std::is_same_v<S, float>) {
      if (M < 4) {
        few_rows_f32(M, kn, a + k0, lda, b, boff + k0, panels, c, ldc, bias, now, resume);
        continue;
      }
    }
    for (size_t pi = 0; pi < panels.size(); ++pi) {
      const Panel& p = panels[pi];
      if constexpr (std::is_same_v<S, float>) {
        if (have_avx512f() && p.n == 16 && pi + 1 < panels.size() && panels[pi + 1].n <= 16) {
          const Panel& q = panels[++pi];  // two panels at once
          for (int64_t i = 0; i < M; i += kMr512x2) {
            const int rows = static_cast<int>(std::min<int64_t>(kMr512x2, M - i));
            kMicro512x2[rows](kn, a + i * lda + k0, lda, b + p.b_offset, b + q.b_offset, boff + k0, q.n,
                              c + i * ldc + p.c_offset, c + i * ldc + q.c_offset, ldc, store_for(bias, now, i, p),
                              store_for(bias, now, i, q), resume);
          }
          continue;
        }
        if (p.n > 16) {  // a 24-column panel: blocks of 4 rows
          static constexpr MicroFn<float> kWide[] = {nullptr, &micro24_f32<1>, &micro24_f32<2>, &micro24_f32<3>,
                                                     &micro24_f32<4>};
          for (int64_t i = 0; i < M; i += 4) {
            const int rows = static_cast<int>(std::min<int64_t>(4, M - i));
            kWide[rows](kn, a + i * lda + k0, lda, b + p.b_offset, boff + k0, p.n, c + i * ldc + p.c_offset, ldc,
                        store_for(bias, now, i, p), resume);
          }
          continue;
        }
      }
      const bool half = p.n <= kNr<S> / 2;
      if constexpr (std::is_same_v<S, float>) {
        if (!half && have_avx512f()) {  // one zmm a row: blocks of 12 rows
          for (int64_t i = 0; i < M; i += kMr512) {
            const int rows = static_cast<int>(std::min<int64_t>(kMr512, M - i));
            kMicro512[rows](kn, a + i * lda + k0, lda, b + p.b_offset, boff + k0, p.n, c + i * ldc + p.c_offset, ldc,
                            store_for(bias, now, i, p), resume);
          }
          continue;
        }
      }
      for (int64_t i = 0; i < M; i += mr) {
        const int rows = static_cast<int>(std::min<int64_t>(mr, M - i));
        micro<S>(rows, half)(kn, a + i * lda + k0, lda, b + p.b_offset, boff + k0, p.n, c + i * ldc + p.c_offset, ldc,
                             store_for(bias, now, i, p), resume);
      }
    }
  }
}

#else  // not x86-64 GCC/Clang: no kernels, the provider reports no device

bool cpu_supported() { return false; }

template <class S>
void gemm(int64_t, int64_t, const S*, int64_t, const S*, const int32_t*, const std::vector<Panel>&, S*, int64_t,
          const S*, Output) {}

#endif

template void gemm<float>(int64_t, int64_t, const float*, int64_t, const float*, const int32_t*,
                          const std::vector<Panel>&, float*, int64_t, const float*, Output);
template void gemm<double>(int64_t, int64_t, const double*, int64_t, const double*, const int32_t*,
                           const std::vector<Panel>&, double*, int64_t, const double*, Output);

}  // namespace denote::kernels::panel
