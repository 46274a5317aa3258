// The CROWN rules' row sums (src/kernels/row_sums.h): each function's body is an always-inline
// kernel, compiled twice (target("avx2") and the baseline) and picked by the level (base/cpu.h).
#include "kernels/row_sums.h"

#include <cmath>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace denote::kernels {

namespace {

// fn(j, k) adds term j to partial sum k; the tail goes into the first.
template <class Fn>
[[gnu::always_inline]] inline void by4(int64_t m, Fn&& fn) {
  int64_t j = 0;
  for (; j + 4 <= m; j += 4)
    for (int k = 0; k < 4; ++k) fn(j + k, k);
  for (; j < m; ++j) fn(j, 0);
}
[[gnu::always_inline]] inline double total(const double s[4]) { return (s[0] + s[1]) + (s[2] + s[3]); }

[[gnu::always_inline]] inline double abs_dot_k(const double* __restrict a, const double* __restrict s, int64_t m) {
  double p[4] = {0, 0, 0, 0};
  by4(m, [&](int64_t j, int k) { p[k] += std::fabs(a[j]) * s[j]; });
  return total(p);
}
[[gnu::always_inline]] inline double abs_dot_nonzero_k(const double* __restrict w, const double* __restrict x,
                                                       int64_t m) {
  double p[4] = {0, 0, 0, 0};
  by4(m, [&](int64_t j, int k) { p[k] += w[j] != 0 ? std::fabs(w[j]) * x[j] : 0.0; });
  return total(p);
}
[[gnu::always_inline]] inline double dot_k(const double* __restrict a, const double* __restrict b, int64_t m) {
  double p[4] = {0, 0, 0, 0};
  by4(m, [&](int64_t j, int k) { p[k] += a[j] * b[j]; });
  return total(p);
}
[[gnu::always_inline]] inline void dot_mag_k(const double* __restrict a, const double* __restrict b, int64_t m,
                                             double& sum, double& mag) {
  double p[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0};
  by4(m, [&](int64_t j, int k) {
    const double t = a[j] * b[j];
    p[k] += t;
    q[k] += std::fabs(t);
  });
  sum += total(p);
  mag += total(q);
}

[[gnu::always_inline]] inline void concretize_k(const double* __restrict a, const double* __restrict lo,
                                                const double* __restrict hi, int64_t m, double& sum, double& mag,
                                                double& terms) {
  double p[4] = {0, 0, 0, 0}, q[4] = {0, 0, 0, 0}, c[4] = {0, 0, 0, 0};
  by4(m, [&](int64_t j, int k) {
    const double v = a[j];
    const double t = v > 0 ? v * lo[j] : v == 0 ? 0.0 : v * hi[j];
    p[k] += t;
    q[k] += std::fabs(t);
    c[k] += v != 0 ? 1.0 : 0.0;
  });
  sum += total(p);
  mag += total(q);
  terms += total(c);
}

// The four lanes' total, in the order total() sums four partial sums.
__attribute__((target("avx2"))) inline double lanes_total(__m256d v) {
  alignas(32) double s[4];
  _mm256_store_pd(s, v);
  return total(s);
}
__attribute__((target("avx2"))) inline __m256d abs_lanes(__m256d v) {
  return _mm256_andnot_pd(_mm256_set1_pd(-0.0), v);
}

// Branch-free in four lanes (the signs of a are data: branches on them mispredict): t = a * (a > 0 ? lo : hi),
// forced to +0 where a == 0 (so 0 * inf adds nothing), NaN where a is NaN (as concretize_k).
__attribute__((target("avx2"))) void concretize_avx2(const double* a, const double* lo, const double* hi, int64_t m,
                                                     double& sum, double& mag, double& terms) {
  const __m256d zero = _mm256_setzero_pd(), one = _mm256_set1_pd(1.0);
  __m256d p = zero, q = zero, c = zero;
  int64_t j = 0;
  for (; j + 4 <= m; j += 4) {
    const __m256d v = _mm256_loadu_pd(a + j);
    const __m256d pos = _mm256_cmp_pd(v, zero, _CMP_GT_OQ), is_zero = _mm256_cmp_pd(v, zero, _CMP_EQ_OQ);
    const __m256d x = _mm256_blendv_pd(_mm256_loadu_pd(hi + j), _mm256_loadu_pd(lo + j), pos);
    const __m256d t = _mm256_andnot_pd(is_zero, _mm256_mul_pd(v, x));
    p = _mm256_add_pd(p, t);
    q = _mm256_add_pd(q, abs_lanes(t));
    c = _mm256_add_pd(c, _mm256_andnot_pd(is_zero, one));
  }
  double s = lanes_total(p), g = lanes_total(q), n = lanes_total(c);
  concretize_k(a + j, lo + j, hi + j, m - j, s, g, n);  // the tail
  sum += s;
  mag += g;
  terms += n;
}
void concretize_base(const double* a, const double* lo, const double* hi, int64_t m, double& sum, double& mag,
                     double& terms) {
  concretize_k(a, lo, hi, m, sum, mag, terms);
}

__attribute__((target("avx2"))) double abs_dot_avx2(const double* a, const double* s, int64_t m) {
  return abs_dot_k(a, s, m);
}
double abs_dot_base(const double* a, const double* s, int64_t m) { return abs_dot_k(a, s, m); }
// Branch-free in four lanes: |w| x, forced to +0 where w == 0 (so 0 * inf adds nothing).
__attribute__((target("avx2"))) double abs_dot_nonzero_avx2(const double* w, const double* x, int64_t m) {
  const __m256d zero = _mm256_setzero_pd();
  __m256d p = zero;
  int64_t j = 0;
  for (; j + 4 <= m; j += 4) {
    const __m256d v = _mm256_loadu_pd(w + j);
    const __m256d is_zero = _mm256_cmp_pd(v, zero, _CMP_EQ_OQ);
    const __m256d t = _mm256_mul_pd(abs_lanes(v), _mm256_loadu_pd(x + j));
    p = _mm256_add_pd(p, _mm256_andnot_pd(is_zero, t));
  }
  return lanes_total(p) + abs_dot_nonzero_k(w + j, x + j, m - j);
}
double abs_dot_nonzero_base(const double* w, const double* x, int64_t m) { return abs_dot_nonzero_k(w, x, m); }
__attribute__((target("avx2"))) double dot_avx2(const double* a, const double* b, int64_t m) { return dot_k(a, b, m); }
double dot_base(const double* a, const double* b, int64_t m) { return dot_k(a, b, m); }
__attribute__((target("avx2"))) void dot_mag_avx2(const double* a, const double* b, int64_t m, double& sum,
                                                  double& mag) {
  dot_mag_k(a, b, m, sum, mag);
}
void dot_mag_base(const double* a, const double* b, int64_t m, double& sum, double& mag) {
  dot_mag_k(a, b, m, sum, mag);
}

}  // namespace

void concretize_row(const double* a, const double* lo, const double* hi, int64_t m, double& sum, double& mag,
                    double& terms) {
  if (have_avx2())
    concretize_avx2(a, lo, hi, m, sum, mag, terms);
  else
    concretize_base(a, lo, hi, m, sum, mag, terms);
}

double abs_dot(const double* a, const double* s, int64_t m) {
  return have_avx2() ? abs_dot_avx2(a, s, m) : abs_dot_base(a, s, m);
}
double abs_dot_nonzero(const double* w, const double* x, int64_t m) {
  return have_avx2() ? abs_dot_nonzero_avx2(w, x, m) : abs_dot_nonzero_base(w, x, m);
}
double dot(const double* a, const double* b, int64_t m) {
  return have_avx2() ? dot_avx2(a, b, m) : dot_base(a, b, m);
}
void dot_mag(const double* a, const double* b, int64_t m, double& sum, double& mag) {
  if (have_avx2())
    dot_mag_avx2(a, b, m, sum, mag);
  else
    dot_mag_base(a, b, m, sum, mag);
}

namespace {

[[gnu::always_inline]] inline void vertex_rows_in(const double* __restrict a, const double* __restrict lo,
                                                  const double* __restrict hi, int64_t rows, int64_t m,
                                                  double* __restrict v) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < m; ++j) v[r * m + j] = a[r * m + j] >= 0 ? lo[j] : hi[j];
}
__attribute__((target("avx2"))) void vertex_rows_avx2(const double* a, const double* lo, const double* hi,
                                                      int64_t rows, int64_t m, double* v) {
  vertex_rows_in(a, lo, hi, rows, m, v);
}}  // namespace

void vertex_rows(const double* a, const double* lo, const double* hi, int64_t rows, int64_t m, double* v) {
  if (have_avx2()) return vertex_rows_avx2(a, lo, hi, rows, m, v);
  vertex_rows_in(a, lo, hi, rows, m, v);
}

}  // namespace denote::kernels
