// CROWN's fused product and concretisation (src/kernels/fused_concretize.h). Compiled with
// -ffp-contract=off (CMakeLists.txt): the concretisation's products t = a lo / a hi must be rounded
// as written (the pass bounds their sum by gamma(terms + 2) sum |t|), so only the coefficient
// products, whose error the linear rule's slack covers for any evaluation order, use an explicit
// fused multiply-add.
#include "kernels/fused_concretize.h"

#include <cmath>
#include <vector>

#include "base/cpu.h"
#include "kernels/row_sums.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace denote::kernels {

namespace {

// One coefficient a_j = sum_t as[t] w[t, j], in order, plain products and sums.
double coefficient(const double* as, int64_t k, const double* w, int64_t m, int64_t j) {
  double a = 0;
  for (int64_t t = 0; t < k; ++t) a += as[t] * w[t * m + j];
  return a;
}

// The vertex a row attains: lo where its coefficient is >= 0, else hi.
void vertex_of(const double* a, const double* lo, const double* hi, int64_t m, double* v) {
  for (int64_t j = 0; j < m; ++j) v[j] = a[j] >= 0 ? lo[j] : hi[j];
}

void fused_base(const double* as, int64_t rows, int64_t k, const double* w, int64_t m, const double* lo,
                const double* hi, double* sum, double* mag, double* terms, double* vertex) {
  std::vector<double> a(static_cast<size_t>(m));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t j = 0; j < m; ++j) a[static_cast<size_t>(j)] = coefficient(as + r * k, k, w, m, j);
    concretize_row(a.data(), lo, hi, m, sum[r], mag[r], terms[r]);
    if (vertex) vertex_of(a.data(), lo, hi, m, vertex + r * m);
  }
}

#if defined(__x86_64__)
// t = a * (a > 0 ? lo : hi), +0 where a == 0 (so 0 * inf adds nothing), NaN where a is NaN; then
// sum += t, mag += |t|, count += (a != 0), in eight lanes.
struct Lanes {
  __m512d p, q, c;
};
__attribute__((target("avx512f"))) inline void concretize8(Lanes& L, __m512d a, const double* lo, const double* hi,
                                                           double* vertex) {
  if (vertex) {
    const __mmask8 nonneg = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_GE_OQ);
    _mm512_storeu_pd(vertex, _mm512_mask_blend_pd(nonneg, _mm512_loadu_pd(hi), _mm512_loadu_pd(lo)));
  }
  const __mmask8 pos = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_GT_OQ);
  const __mmask8 nonzero = _mm512_cmp_pd_mask(a, _mm512_setzero_pd(), _CMP_NEQ_UQ);
  const __m512d x = _mm512_mask_blend_pd(pos, _mm512_loadu_pd(hi), _mm512_loadu_pd(lo));
  const __m512d t = _mm512_maskz_mul_pd(nonzero, a, x);
  L.p = _mm512_add_pd(L.p, t);
  L.q = _mm512_add_pd(L.q, _mm512_abs_pd(t));
  L.c = _mm512_mask_add_pd(L.c, nonzero, L.c, _mm512_set1_pd(1.0));
}

// The lanes' sum, pairwise (any order: the sums are bounded a priori). Not _mm512_reduce_add_pd,
// whose GCC 12 header trips -Wmaybe-uninitialized once inlined here.
__attribute__((target("avx512f"))) inline double lane_sum(__m512d v) {
  alignas(64) double x[8];
  _mm512_store_pd(x, v);
  return ((x[0] + x[4]) + (x[1] + x[5])) + ((x[2] + x[6]) + (x[3] + x[7]));
}

// Four accumulators of eight lanes: 32 coefficients of a row at a time, held in registers.
__attribute__((target("avx512f"))) void fused_512(const double* as, int64_t rows, int64_t k, const double* w, int64_t m,
                                                  const double* lo, const double* hi, double* sum, double* mag,
                                                  double* terms, double* vertex) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* ar = as + r * k;
    double* vr = vertex ? vertex + r * m : nullptr;
    auto at = [vr](int64_t j) { return vr ? vr + j : nullptr; };
    Lanes L{_mm512_setzero_pd(), _mm512_setzero_pd(), _mm512_setzero_pd()};
    int64_t j = 0;
    for (; j + 32 <= m; j += 32) {
      __m512d v0 = _mm512_setzero_pd(), v1 = v0, v2 = v0, v3 = v0;
      for (int64_t t = 0; t < k; ++t) {
        const __m512d x = _mm512_set1_pd(ar[t]);
        const double* wt = w + t * m + j;
        v0 = _mm512_fmadd_pd(x, _mm512_loadu_pd(wt), v0);
        v1 = _mm512_fmadd_pd(x, _mm512_loadu_pd(wt + 8), v1);
        v2 = _mm512_fmadd_pd(x, _mm512_loadu_pd(wt + 16), v2);
        v3 = _mm512_fmadd_pd(x, _mm512_loadu_pd(wt + 24), v3);
      }
      concretize8(L, v0, lo + j, hi + j, at(j));
      concretize8(L, v1, lo + j + 8, hi + j + 8, at(j + 8));
      concretize8(L, v2, lo + j + 16, hi + j + 16, at(j + 16));
      concretize8(L, v3, lo + j + 24, hi + j + 24, at(j + 24));
    }
    for (; j + 8 <= m; j += 8) {
      __m512d v = _mm512_setzero_pd();
      for (int64_t t = 0; t < k; ++t) v = _mm512_fmadd_pd(_mm512_set1_pd(ar[t]), _mm512_loadu_pd(w + t * m + j), v);
      concretize8(L, v, lo + j, hi + j, at(j));
    }
    double s = lane_sum(L.p), g = lane_sum(L.q), n = lane_sum(L.c);
    double tail[8];
    const int64_t rest = m - j;
    for (int64_t i = 0; i < rest; ++i) tail[i] = coefficient(ar, k, w, m, j + i);
    concretize_row(tail, lo + j, hi + j, rest, s, g, n);
    if (vr) vertex_of(tail, lo + j, hi + j, rest, vr + j);
    sum[r] += s;
    mag[r] += g;
    terms[r] += n;
  }
}

// The AVX2 copy: t = a * (a > 0 ? lo : hi) in four lanes, +0 where a == 0 (an and-mask instead of
// AVX-512's zero-masking), NaN where a is NaN.
struct Lanes4 {
  __m256d p, q, c;
};
__attribute__((target("avx2,fma"))) inline void concretize4(Lanes4& L, __m256d a, const double* lo, const double* hi,
                                                            double* vertex) {
  const __m256d zero = _mm256_setzero_pd();
  if (vertex) _mm256_storeu_pd(vertex, _mm256_blendv_pd(_mm256_loadu_pd(hi), _mm256_loadu_pd(lo), _mm256_cmp_pd(a, zero, _CMP_GE_OQ)));
  const __m256d pos = _mm256_cmp_pd(a, zero, _CMP_GT_OQ), nonzero = _mm256_cmp_pd(a, zero, _CMP_NEQ_UQ);
  const __m256d x = _mm256_blendv_pd(_mm256_loadu_pd(hi), _mm256_loadu_pd(lo), pos);
  const __m256d t = _mm256_and_pd(_mm256_mul_pd(a, x), nonzero);
  L.p = _mm256_add_pd(L.p, t);
  L.q = _mm256_add_pd(L.q, _mm256_andnot_pd(_mm256_set1_pd(-0.0), t));
  L.c = _mm256_add_pd(L.c, _mm256_and_pd(nonzero, _mm256_set1_pd(1.0)));
}

__attribute__((target("avx2,fma"))) inline double lane_sum4(__m256d v) {
  alignas(32) double x[4];
  _mm256_store_pd(x, v);
  return (x[0] + x[2]) + (x[1] + x[3]);
}

// Four accumulators of four lanes: 16 coefficients of a row at a time, held in registers.
__attribute__((target("avx2,fma"))) void fused_256(const double* as, int64_t rows, int64_t k, const double* w, int64_t m,
                                                   const double* lo, const double* hi, double* sum, double* mag,
                                                   double* terms, double* vertex) {
  for (int64_t r = 0; r < rows; ++r) {
    const double* ar = as + r * k;
    double* vr = vertex ? vertex + r * m : nullptr;
    auto at = [vr](int64_t j) { return vr ? vr + j : nullptr; };
    Lanes4 L{_mm256_setzero_pd(), _mm256_setzero_pd(), _mm256_setzero_pd()};
    int64_t j = 0;
    for (; j + 16 <= m; j += 16) {
      __m256d v0 = _mm256_setzero_pd(), v1 = v0, v2 = v0, v3 = v0;
      for (int64_t t = 0; t < k; ++t) {
        const __m256d x = _mm256_set1_pd(ar[t]);
        const double* wt = w + t * m + j;
        v0 = _mm256_fmadd_pd(x, _mm256_loadu_pd(wt), v0);
        v1 = _mm256_fmadd_pd(x, _mm256_loadu_pd(wt + 4), v1);
        v2 = _mm256_fmadd_pd(x, _mm256_loadu_pd(wt + 8), v2);
        v3 = _mm256_fmadd_pd(x, _mm256_loadu_pd(wt + 12), v3);
      }
      concretize4(L, v0, lo + j, hi + j, at(j));
      concretize4(L, v1, lo + j + 4, hi + j + 4, at(j + 4));
      concretize4(L, v2, lo + j + 8, hi + j + 8, at(j + 8));
      concretize4(L, v3, lo + j + 12, hi + j + 12, at(j + 12));
    }
    for (; j + 4 <= m; j += 4) {
      __m256d v = _mm256_setzero_pd();
      for (int64_t t = 0; t < k; ++t) v = _mm256_fmadd_pd(_mm256_set1_pd(ar[t]), _mm256_loadu_pd(w + t * m + j), v);
      concretize4(L, v, lo + j, hi + j, at(j));
    }
    double s = lane_sum4(L.p), g = lane_sum4(L.q), n = lane_sum4(L.c);
    double tail[4];
    const int64_t rest = m - j;
    for (int64_t i = 0; i < rest; ++i) tail[i] = coefficient(ar, k, w, m, j + i);
    concretize_row(tail, lo + j, hi + j, rest, s, g, n);
    if (vr) vertex_of(tail, lo + j, hi + j, rest, vr + j);
    sum[r] += s;
    mag[r] += g;
    terms[r] += n;
  }
}
#endif

}  // namespace

bool fused_fits(int64_t k, int64_t m) {
  return k > 0 && k <= kMaxFusedTerms && m > 0 && k * m <= (int64_t{1} << 16);  // w: at most 512 KiB
}

void product_concretize_rows(const double* as, int64_t rows, int64_t k, const double* w, int64_t m, const double* lo,
                             const double* hi, double* sum, double* mag, double* terms, double* vertex) {
#if defined(__x86_64__)
  if (have_avx512f()) return fused_512(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
  if (have_avx2_fma()) return fused_256(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
#endif
  fused_base(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
}

}  // namespace denote::kernels
