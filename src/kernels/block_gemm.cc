// Block-scaled products with binary32 accumulation (src/kernels/block_gemm.h), in three copies
// (AVX-512, AVX2+FMA, the baseline) of one kernel body (block_gemm_kernel.inc). The values do not depend
// on the copy: the block sums are exact, and every rounding is one binary32 conversion or addition.
#include "kernels/block_gemm.h"

#include "base/cpu.h"

#include "kernels/isa_targets.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

namespace denote::kernels {

namespace {


// The smallest magnitude that rounds to an infinite binary32 (to nearest even: the midpoint between
// FLT_MAX and 2^128, whose tie goes to the even 2^128).
constexpr double kFloatOverflow = 0x1p128 - 0x1p103;

// Each ISA's operations: V holds kLanes doubles, F the same lanes as binary32; the mask helpers return
// an int that is nonzero when some lane is set.
struct Avx512 {
  using V = __m512d;
  using F = __m256;
  static constexpr int kLanes = 8, kRows = 4;
  DENOTE_T512 static inline V zero() { return _mm512_setzero_pd(); }
  DENOTE_T512 static inline F fzero() { return _mm256_setzero_ps(); }
  DENOTE_T512 static inline V load(const double* p) { return _mm512_loadu_pd(p); }
  DENOTE_T512 static inline V set1(double x) { return _mm512_set1_pd(x); }
  DENOTE_T512 static inline V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  DENOTE_T512 static inline V mul(V a, V b) { return _mm512_mul_pd(a, b); }
  DENOTE_T512 static inline V div(V a, V b) { return _mm512_div_pd(a, b); }
  DENOTE_T512 static inline V add(V a, V b) { return _mm512_add_pd(a, b); }
  DENOTE_T512 static inline V sub(V a, V b) { return _mm512_sub_pd(a, b); }
  DENOTE_T512 static inline int le(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LE_OQ); }
  DENOTE_T512 static inline int lt(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_LT_OQ); }
  DENOTE_T512 static inline F narrow(V x) { return _mm512_cvtpd_ps(x); }
  DENOTE_T512 static inline V widen(F x) { return _mm512_cvtps_pd(x); }
  DENOTE_T512 static inline int differ(V a, V b) { return _mm512_cmp_pd_mask(a, b, _CMP_NEQ_UQ); }
  DENOTE_T512 static inline V abs(V x) { return _mm512_abs_pd(x); }
  // |x| nonzero below 2^-124 (where tininess decides the flags), rounding past binary32's largest value, or NaN
  DENOTE_T512 static inline int outside_normal(V x) {
    const V m = _mm512_abs_pd(x);
    return (_mm512_cmp_pd_mask(m, _mm512_set1_pd(0x1p-124), _CMP_LT_OQ) & _mm512_cmp_pd_mask(m, zero(), _CMP_GT_OQ)) |
           _mm512_cmp_pd_mask(m, _mm512_set1_pd(kFloatOverflow), _CMP_NLT_UQ);
  }
  DENOTE_T512 static inline F fadd(F a, F b) { return _mm256_add_ps(a, b); }
  DENOTE_T512 static inline F fsub(F a, F b) { return _mm256_sub_ps(a, b); }
  DENOTE_T512 static inline int fdiffer(F a, F b) { return _mm256_movemask_ps(_mm256_cmp_ps(a, b, _CMP_NEQ_UQ)); }
  DENOTE_T512 static inline int nonzero(F x) { return _mm256_movemask_ps(_mm256_cmp_ps(x, fzero(), _CMP_NEQ_UQ)); }
  DENOTE_T512 static inline int infinite(F x) {
    const F mag = _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x);
    return _mm256_movemask_ps(_mm256_cmp_ps(mag, _mm256_set1_ps(FLT_MAX), _CMP_NLE_UQ));
  }
  DENOTE_T512 static inline void store(float* p, F x) { _mm256_storeu_ps(p, x); }
  DENOTE_T512 static inline void dstore(double* p, V x) { _mm512_storeu_pd(p, x); }
  DENOTE_T512 static inline F fload(const float* p) { return _mm256_loadu_ps(p); }
};

struct Avx2 {
  using V = __m256d;
  using F = __m128;
  static constexpr int kLanes = 4, kRows = 2;
  DENOTE_T256 static inline V zero() { return _mm256_setzero_pd(); }
  DENOTE_T256 static inline F fzero() { return _mm_setzero_ps(); }
  DENOTE_T256 static inline V load(const double* p) { return _mm256_loadu_pd(p); }
  DENOTE_T256 static inline V set1(double x) { return _mm256_set1_pd(x); }
  DENOTE_T256 static inline V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  DENOTE_T256 static inline V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  DENOTE_T256 static inline V div(V a, V b) { return _mm256_div_pd(a, b); }
  DENOTE_T256 static inline V add(V a, V b) { return _mm256_add_pd(a, b); }
  DENOTE_T256 static inline V sub(V a, V b) { return _mm256_sub_pd(a, b); }
  DENOTE_T256 static inline int le(V a, V b) { return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LE_OQ)); }
  DENOTE_T256 static inline int lt(V a, V b) { return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_LT_OQ)); }
  DENOTE_T256 static inline F narrow(V x) { return _mm256_cvtpd_ps(x); }
  DENOTE_T256 static inline V widen(F x) { return _mm256_cvtps_pd(x); }
  DENOTE_T256 static inline int differ(V a, V b) { return _mm256_movemask_pd(_mm256_cmp_pd(a, b, _CMP_NEQ_UQ)); }
  DENOTE_T256 static inline V abs(V x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
  DENOTE_T256 static inline int outside_normal(V x) {
    const V m = abs(x);
    const V tiny = _mm256_and_pd(_mm256_cmp_pd(m, _mm256_set1_pd(0x1p-124), _CMP_LT_OQ), _mm256_cmp_pd(m, zero(), _CMP_GT_OQ));
    return _mm256_movemask_pd(_mm256_or_pd(tiny, _mm256_cmp_pd(m, _mm256_set1_pd(kFloatOverflow), _CMP_NLT_UQ)));
  }
  DENOTE_T256 static inline F fadd(F a, F b) { return _mm_add_ps(a, b); }
  DENOTE_T256 static inline F fsub(F a, F b) { return _mm_sub_ps(a, b); }
  DENOTE_T256 static inline int fdiffer(F a, F b) { return _mm_movemask_ps(_mm_cmp_ps(a, b, _CMP_NEQ_UQ)); }
  DENOTE_T256 static inline int nonzero(F x) { return _mm_movemask_ps(_mm_cmp_ps(x, fzero(), _CMP_NEQ_UQ)); }
  DENOTE_T256 static inline int infinite(F x) {
    const F mag = _mm_andnot_ps(_mm_set1_ps(-0.0f), x);
    return _mm_movemask_ps(_mm_cmp_ps(mag, _mm_set1_ps(FLT_MAX), _CMP_NLE_UQ));
  }
  DENOTE_T256 static inline void store(float* p, F x) { _mm_storeu_ps(p, x); }
  DENOTE_T256 static inline void dstore(double* p, V x) { _mm256_storeu_pd(p, x); }
  DENOTE_T256 static inline F fload(const float* p) { return _mm_loadu_ps(p); }
};

// The baseline: one lane, plain double and float operations (SSE2 scalars on x86-64, each rounded as
// written).
struct Base {
  using V = double;
  using F = float;
  static constexpr int kLanes = 1, kRows = 2;
  static inline V zero() { return 0.0; }
  static inline F fzero() { return 0.0f; }
  static inline V load(const double* p) { return *p; }
  static inline V set1(double x) { return x; }
  static inline V fma(V a, V b, V c) { return a * b + c; }  // exact either way: integer sums below 2^53
  static inline V mul(V a, V b) { return a * b; }
  static inline V div(V a, V b) { return a / b; }
  static inline V add(V a, V b) { return a + b; }
  static inline V sub(V a, V b) { return a - b; }
  static inline int le(V a, V b) { return a <= b ? 1 : 0; }
  static inline int lt(V a, V b) { return a < b ? 1 : 0; }
  static inline F narrow(V x) { return static_cast<float>(x); }
  static inline V widen(F x) { return static_cast<double>(x); }
  static inline int differ(V a, V b) { return a != b ? 1 : 0; }
  static inline V abs(V x) { return std::fabs(x); }
  static inline int outside_normal(V x) {
    const double m = std::fabs(x);
    return (m > 0 && m < 0x1p-124) || !(m < kFloatOverflow) ? 1 : 0;
  }
  static inline F fadd(F a, F b) { return a + b; }
  static inline F fsub(F a, F b) { return a - b; }
  static inline int fdiffer(F a, F b) { return a != b ? 1 : 0; }
  static inline int nonzero(F x) { return x != 0.0f ? 1 : 0; }
  static inline int infinite(F x) { return std::fabs(x) <= FLT_MAX ? 0 : 1; }
  static inline void store(float* p, F x) { *p = x; }
  static inline void dstore(double* p, V x) { *p = x; }
  static inline F fload(const float* p) { return *p; }
};

// A block of one output, for the certified variant's deferred exactness checks.
struct BlockAt {
  int64_t row, col, block;
};

// The kernel body (block_gemm_kernel.inc), compiled once per target (isa_copies.inc).
#define DENOTE_KERNEL_BODY "kernels/block_gemm_kernel.inc"
#include "kernels/isa_copies.inc"

}  // namespace

BlockPanel pack_block_panel(const double* b, const double* s, int64_t n, int64_t k, int64_t block, const double* t) {
  BlockPanel p;
  p.n = n, p.k = k, p.block = std::max<int64_t>(block, 1);
  p.blocks = (k + p.block - 1) / p.block;
  const int64_t panels = (n + kBlockPanel - 1) / kBlockPanel;
  p.b.assign(static_cast<size_t>(panels * k * kBlockPanel), 0.0);
  p.s.assign(static_cast<size_t>(panels * p.blocks * kBlockPanel), 1.0);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t pn = j / kBlockPanel, c = j % kBlockPanel;
    for (int64_t i = 0; i < k; ++i) p.b[static_cast<size_t>((pn * k + i) * kBlockPanel + c)] = b[j * k + i];
    for (int64_t q = 0; q < p.blocks; ++q)
      p.s[static_cast<size_t>((pn * p.blocks + q) * kBlockPanel + c)] = s[j * p.blocks + q];
  }
  if (t) {
    std::vector<double> norms(static_cast<size_t>(n * p.blocks));
    block_norms(b, n, k, p.block, norms.data());
    p.norm.assign(p.s.size(), 0.0);
    p.t.assign(p.s.size(), 1.0);
    for (int64_t j = 0; j < n; ++j)
      for (int64_t q = 0; q < p.blocks; ++q) {
        const auto at = static_cast<size_t>(((j / kBlockPanel) * p.blocks + q) * kBlockPanel + j % kBlockPanel);
        p.t[at] = t[j * p.blocks + q], p.norm[at] = norms[static_cast<size_t>(j * p.blocks + q)];
      }
  }
  return p;
}

void block_norms(const double* v, int64_t rows, int64_t k, int64_t block, double* out) {
  block = std::max<int64_t>(block, 1);
  const int64_t blocks = (k + block - 1) / block;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < blocks; ++q) {
      const int64_t lo = q * block, hi = std::min(k, lo + block);
      double s = 0;
      for (int64_t i = lo; i < hi; ++i) s += v[r * k + i] * v[r * k + i];
      // The computed sum of n squares is within gamma_n <= 2 n u of the true one (n u <= 1/2); 8 (n + 2) u
      // covers it and this product's rounding; the root's rounding is below one step up.
      s *= 1.0 + std::ldexp(static_cast<double>(hi - lo + 2), -50);
      out[r * blocks + q] = std::nextafter(std::sqrt(s), HUGE_VAL);
    }
}

bool block_gemm_f32_certified(const double* a, const double* sa, const double* ta, const double* na, int64_t m,
                              const BlockPanel& p, float* y, bool& inexact, const ExactBlock& exact) {
  if (p.norm.size() != p.s.size() || p.t.size() != p.s.size() || !exact.fn) return false;
  switch (block_gemm_level()) {
    case 2: return k512::run_cert(a, sa, ta, na, m, p, y, inexact, exact);
    case 1: return k256::run_cert(a, sa, ta, na, m, p, y, inexact, exact);
    default: return kbase::run_cert(a, sa, ta, na, m, p, y, inexact, exact);
  }
}

int block_gemm_level() { return have_avx512f() ? 2 : have_avx2_fma() ? 1 : 0; }

bool block_gemm_f32(const double* a, const double* sa, int64_t m, const BlockPanel& p, float* y, bool& inexact) {
  switch (block_gemm_level()) {
    case 2: return k512::run(a, sa, m, p, y, inexact);
    case 1: return k256::run(a, sa, m, p, y, inexact);
    default: return kbase::run(a, sa, m, p, y, inexact);
  }
}

}  // namespace denote::kernels
