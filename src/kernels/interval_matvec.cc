// The dense midpoint-radius product (src/kernels/interval_matvec.h): four rows at a time so that
// each load of the box serves four rows, in three copies (AVX-512, AVX2+FMA, the baseline).
#include "kernels/interval_matvec.h"

#include "base/cpu.h"

#include "kernels/isa_targets.h"

#include <algorithm>
#include <cmath>

namespace denote::kernels {

namespace {

// The scalar tail of rows [o, o + R) from column i on, added to the row sums.
template <class W>
inline void tail(const W* w, int64_t n, int64_t i, int R, const double* mid, const double* rad, const double* mag,
                 double* c, double* r, double* m) {
  for (int k = 0; k < R; ++k)
    for (int64_t j = i; j < n; ++j) {
      const double x = static_cast<double>(w[k * n + j]), a = std::fabs(x);
      c[k] += x * mid[j];
      r[k] += a * rad[j];
      m[k] += a * mag[j];
    }
}

// Each ISA's operations, compiled for its target; the kernel body below is compiled once per ISA.

struct Avx512 {
  using V = __m512d;
  static constexpr int kLanes = 8;
  DENOTE_T512 static inline V zero() { return _mm512_setzero_pd(); }
  DENOTE_T512 static inline V load(const double* p) { return _mm512_loadu_pd(p); }
  DENOTE_T512 static inline V load(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  DENOTE_T512 static inline V abs(V x) { return _mm512_abs_pd(x); }
  DENOTE_T512 static inline V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  DENOTE_T512 static inline double sum(V v) { return _mm512_reduce_add_pd(v); }
};

struct Avx2 {
  using V = __m256d;
  static constexpr int kLanes = 4;
  DENOTE_T256 static inline V zero() { return _mm256_setzero_pd(); }
  DENOTE_T256 static inline V load(const double* p) { return _mm256_loadu_pd(p); }
  DENOTE_T256 static inline V load(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  DENOTE_T256 static inline V abs(V x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }
  DENOTE_T256 static inline V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  DENOTE_T256 static inline double sum(V v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
};

// The baseline's lanes: two doubles in GCC/Clang vector extensions (SSE2 on any x86-64, NEON or scalar
// elsewhere), products and sums rounded apart (no fma). Level 0 runs the same blocked kernel with them:
// a row at a time with one chain per sum is latency-bound (0.88 G multiply-adds/s on the Zen 5 VM,
// 46x slower than AVX-512; docs/PERF.md "Kernels at every level").
struct Base {
  typedef double V __attribute__((vector_size(16)));
  typedef int64_t Bits __attribute__((vector_size(16)));
  static constexpr int kLanes = 2;
  static inline V zero() { return V{0.0, 0.0}; }
  static inline V load(const double* p) { return V{p[0], p[1]}; }
  static inline V load(const float* p) { return V{static_cast<double>(p[0]), static_cast<double>(p[1])}; }
  static inline V abs(V x) {
    const Bits mask = {INT64_MAX, INT64_MAX};
    return reinterpret_cast<V>(reinterpret_cast<Bits>(x) & mask);
  }
  static inline V fma(V a, V b, V c) { return a * b + c; }
  static inline double sum(V v) { return v[0] + v[1]; }
};

// The kernel body (interval_matvec_kernel.inc), compiled once per target (isa_copies.inc).
#define DENOTE_KERNEL_BODY "kernels/interval_matvec_kernel.inc"
#include "kernels/isa_copies.inc"

template <class W>
void dispatch(const W* w, int64_t rows, int64_t n, const double* mid, const double* rad, const double* mag,
              double* c, double* r, double* m) {
  switch (interval_matvec_level()) {
    case 2: return k512::mv(w, rows, n, mid, rad, mag, c, r, m);
    case 1: return k256::mv(w, rows, n, mid, rad, mag, c, r, m);
    default: return kbase::mv(w, rows, n, mid, rad, mag, c, r, m);
  }
}

template <class W>
void dispatch_mm(const W* w, int64_t rows, int64_t n, int64_t count, const double* mid, const double* rad,
                 const double* mag, double* c, double* r, double* m) {
  switch (interval_matvec_level()) {
    case 2: return k512::mm(w, rows, n, count, mid, rad, mag, c, r, m);
    case 1: return k256::mm(w, rows, n, count, mid, rad, mag, c, r, m);
    default: return kbase::mm(w, rows, n, count, mid, rad, mag, c, r, m);
  }
}

}  // namespace

int interval_matvec_level() { return have_avx512f() ? 2 : have_avx2_fma() ? 1 : 0; }

void interval_matvec(const double* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch(W, rows, n, mid, rad, mag, c, r, m);
}
void interval_matvec(const float* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch(W, rows, n, mid, rad, mag, c, r, m);
}

void interval_matmat(const double* W, int64_t rows, int64_t n, int64_t count, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch_mm(W, rows, n, count, mid, rad, mag, c, r, m);
}
void interval_matmat(const float* W, int64_t rows, int64_t n, int64_t count, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch_mm(W, rows, n, count, mid, rad, mag, c, r, m);
}

}  // namespace denote::kernels
