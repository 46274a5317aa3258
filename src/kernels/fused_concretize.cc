// CROWN's fused product and concretisation (src/kernels/fused_concretize.h), in three copies (AVX-512,
// AVX2+FMA, the baseline) of one body (fused_concretize_kernel.inc). Compiled with -ffp-contract=off
// (CMakeLists.txt): the concretisation's products t = a lo / a hi must be rounded as written (the pass
// bounds their sum by gamma(terms + 2) sum |t|), so only the coefficient products, whose error the linear
// rule's slack covers for any evaluation order, use an explicit fused multiply-add.
#include "kernels/fused_concretize.h"

#include "base/cpu.h"

#include "kernels/isa_targets.h"

#include <cmath>
#include <vector>

#include "kernels/row_sums.h"

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

// Each ISA's lanes. concretize: t = a * (a > 0 ? lo : hi), +0 where a == 0 (so 0 * inf adds nothing), NaN
// where a is NaN; then p += t, q += |t|, c += (a != 0), and the vertex (a >= 0 ? lo : hi) where asked.
// sum: the lanes' sum, pairwise (any order: the sums are bounded a priori).
struct Avx512 {
  using V = __m512d;
  static constexpr int kLanes = 8;
  DENOTE_T512 static inline V zero() { return _mm512_setzero_pd(); }
  DENOTE_T512 static inline V set1(double x) { return _mm512_set1_pd(x); }
  DENOTE_T512 static inline V load(const double* p) { return _mm512_loadu_pd(p); }
  DENOTE_T512 static inline V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  DENOTE_T512 static inline void concretize(V& p, V& q, V& c, V a, const double* lo, const double* hi, double* vertex) {
    if (vertex) {
      const __mmask8 nonneg = _mm512_cmp_pd_mask(a, zero(), _CMP_GE_OQ);
      _mm512_storeu_pd(vertex, _mm512_mask_blend_pd(nonneg, load(hi), load(lo)));
    }
    const __mmask8 pos = _mm512_cmp_pd_mask(a, zero(), _CMP_GT_OQ), nonzero = _mm512_cmp_pd_mask(a, zero(), _CMP_NEQ_UQ);
    const V t = _mm512_maskz_mul_pd(nonzero, a, _mm512_mask_blend_pd(pos, load(hi), load(lo)));
    p = _mm512_add_pd(p, t);
    q = _mm512_add_pd(q, _mm512_abs_pd(t));
    c = _mm512_mask_add_pd(c, nonzero, c, set1(1.0));
  }
  // Not _mm512_reduce_add_pd, whose GCC 12 header trips -Wmaybe-uninitialized once inlined here.
  DENOTE_T512 static inline double sum(V v) {
    alignas(64) double x[8];
    _mm512_store_pd(x, v);
    return ((x[0] + x[4]) + (x[1] + x[5])) + ((x[2] + x[6]) + (x[3] + x[7]));
  }
};

struct Avx2 {
  using V = __m256d;
  static constexpr int kLanes = 4;
  DENOTE_T256 static inline V zero() { return _mm256_setzero_pd(); }
  DENOTE_T256 static inline V set1(double x) { return _mm256_set1_pd(x); }
  DENOTE_T256 static inline V load(const double* p) { return _mm256_loadu_pd(p); }
  DENOTE_T256 static inline V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  DENOTE_T256 static inline void concretize(V& p, V& q, V& c, V a, const double* lo, const double* hi, double* vertex) {
    if (vertex) _mm256_storeu_pd(vertex, _mm256_blendv_pd(load(hi), load(lo), _mm256_cmp_pd(a, zero(), _CMP_GE_OQ)));
    const V pos = _mm256_cmp_pd(a, zero(), _CMP_GT_OQ), nonzero = _mm256_cmp_pd(a, zero(), _CMP_NEQ_UQ);
    const V t = _mm256_and_pd(_mm256_mul_pd(a, _mm256_blendv_pd(load(hi), load(lo), pos)), nonzero);
    p = _mm256_add_pd(p, t);
    q = _mm256_add_pd(q, _mm256_andnot_pd(set1(-0.0), t));
    c = _mm256_add_pd(c, _mm256_and_pd(nonzero, set1(1.0)));
  }
  DENOTE_T256 static inline double sum(V v) {
    alignas(32) double x[4];
    _mm256_store_pd(x, v);
    return (x[0] + x[2]) + (x[1] + x[3]);
  }
};

struct Base {
  using V = double;
  static constexpr int kLanes = 1;
  static inline V zero() { return 0.0; }
  static inline V set1(double x) { return x; }
  static inline V load(const double* p) { return *p; }
  static inline V fma(V a, V b, V c) { return a * b + c; }  // two roundings: the slack covers either
  static inline void concretize(V& p, V& q, V& c, V a, const double* lo, const double* hi, double* vertex) {
    if (vertex) *vertex = a >= 0 ? *lo : *hi;
    const double t = a > 0 ? a * *lo : a == 0 ? 0.0 : a * *hi;
    p += t, q += std::fabs(t), c += a != 0 ? 1.0 : 0.0;
  }
  static inline double sum(V v) { return v; }
};

// The kernel body (fused_concretize_kernel.inc), compiled once per target (isa_copies.inc).
#define DENOTE_KERNEL_BODY "kernels/fused_concretize_kernel.inc"
#include "kernels/isa_copies.inc"

}  // namespace

bool fused_fits(int64_t k, int64_t m) {
  return k > 0 && k <= kMaxFusedTerms && m > 0 && k * m <= (int64_t{1} << 16);  // w: at most 512 KiB
}

void product_concretize_rows(const double* as, int64_t rows, int64_t k, const double* w, int64_t m, const double* lo,
                             const double* hi, double* sum, double* mag, double* terms, double* vertex) {
  if (have_avx512f()) return k512::fused(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
  if (have_avx2_fma()) return k256::fused(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
  kbase::fused(as, rows, k, w, m, lo, hi, sum, mag, terms, vertex);
}

}  // namespace denote::kernels
