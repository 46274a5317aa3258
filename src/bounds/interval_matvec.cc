// The dense midpoint-radius product (src/bounds/interval_matvec.h): four rows at a time so that
// each load of the box serves four rows, in three copies (AVX-512, AVX2+FMA, the baseline).
#include "bounds/interval_matvec.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>

// GCC 12 warns inside avx512fintrin.h (_mm512_undefined_pd in cvtps_pd / reduce_add_pd).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace denote::bounds {

namespace {

int cpu_level() {
  static const int level = __builtin_cpu_supports("avx512f")                                     ? 2
                           : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1
                                                                                             : 0;
  return level;
}
int g_level = -1;  // -1: the CPU's

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

__attribute__((target("avx512f"))) inline __m512d load8(const double* p) { return _mm512_loadu_pd(p); }
__attribute__((target("avx512f"))) inline __m512d load8(const float* p) {
  return _mm512_cvtps_pd(_mm256_loadu_ps(p));
}
__attribute__((target("avx512f"))) inline double hsum8(__m512d v) { return _mm512_reduce_add_pd(v); }

template <int R, class W>
__attribute__((target("avx512f"))) inline void rows512(const W* w, int64_t n, const double* mid, const double* rad,
                                                        const double* mag, double* c, double* r, double* m) {
  __m512d vc[R], vr[R], vm[R];
  for (int k = 0; k < R; ++k) vc[k] = vr[k] = vm[k] = _mm512_setzero_pd();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m512d xm = _mm512_loadu_pd(mid + i), xr = _mm512_loadu_pd(rad + i), xa = _mm512_loadu_pd(mag + i);
    for (int k = 0; k < R; ++k) {
      const __m512d x = load8(w + k * n + i), a = _mm512_abs_pd(x);
      vc[k] = _mm512_fmadd_pd(x, xm, vc[k]);
      vr[k] = _mm512_fmadd_pd(a, xr, vr[k]);
      vm[k] = _mm512_fmadd_pd(a, xa, vm[k]);
    }
  }
  for (int k = 0; k < R; ++k) c[k] = hsum8(vc[k]), r[k] = hsum8(vr[k]), m[k] = hsum8(vm[k]);
  tail(w, n, i, R, mid, rad, mag, c, r, m);
}

template <class W>
__attribute__((target("avx512f"))) void mv512(const W* w, int64_t rows, int64_t n, const double* mid,
                                              const double* rad, const double* mag, double* c, double* r, double* m) {
  int64_t o = 0;
  for (; o + 4 <= rows; o += 4) rows512<4>(w + o * n, n, mid, rad, mag, c + o, r + o, m + o);
  for (; o < rows; ++o) rows512<1>(w + o * n, n, mid, rad, mag, c + o, r + o, m + o);
}

__attribute__((target("avx2,fma"))) inline __m256d load4(const double* p) { return _mm256_loadu_pd(p); }
__attribute__((target("avx2,fma"))) inline __m256d load4(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
__attribute__((target("avx2,fma"))) inline double hsum4(__m256d v) {
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

template <int R, class W>
__attribute__((target("avx2,fma"))) inline void rows256(const W* w, int64_t n, const double* mid, const double* rad,
                                                         const double* mag, double* c, double* r, double* m) {
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256d vc[R], vr[R], vm[R];
  for (int k = 0; k < R; ++k) vc[k] = vr[k] = vm[k] = _mm256_setzero_pd();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const __m256d xm = _mm256_loadu_pd(mid + i), xr = _mm256_loadu_pd(rad + i), xa = _mm256_loadu_pd(mag + i);
    for (int k = 0; k < R; ++k) {
      const __m256d x = load4(w + k * n + i), a = _mm256_andnot_pd(sign, x);
      vc[k] = _mm256_fmadd_pd(x, xm, vc[k]);
      vr[k] = _mm256_fmadd_pd(a, xr, vr[k]);
      vm[k] = _mm256_fmadd_pd(a, xa, vm[k]);
    }
  }
  for (int k = 0; k < R; ++k) c[k] = hsum4(vc[k]), r[k] = hsum4(vr[k]), m[k] = hsum4(vm[k]);
  tail(w, n, i, R, mid, rad, mag, c, r, m);
}

template <class W>
__attribute__((target("avx2,fma"))) void mv256(const W* w, int64_t rows, int64_t n, const double* mid,
                                               const double* rad, const double* mag, double* c, double* r, double* m) {
  int64_t o = 0;
  for (; o + 4 <= rows; o += 4) rows256<4>(w + o * n, n, mid, rad, mag, c + o, r + o, m + o);
  for (; o < rows; ++o) rows256<1>(w + o * n, n, mid, rad, mag, c + o, r + o, m + o);
}

template <class W>
void mv_base(const W* w, int64_t rows, int64_t n, const double* mid, const double* rad, const double* mag, double* c,
             double* r, double* m) {
  for (int64_t o = 0; o < rows; ++o) {
    c[o] = r[o] = m[o] = 0;
    tail(w + o * n, n, 0, 1, mid, rad, mag, c + o, r + o, m + o);
  }
}

template <class W>
void dispatch(const W* w, int64_t rows, int64_t n, const double* mid, const double* rad, const double* mag,
              double* c, double* r, double* m) {
  switch (interval_matvec_level()) {
    case 2: return mv512(w, rows, n, mid, rad, mag, c, r, m);
    case 1: return mv256(w, rows, n, mid, rad, mag, c, r, m);
    default: return mv_base(w, rows, n, mid, rad, mag, c, r, m);
  }
}

}  // namespace

int interval_matvec_level() { return g_level < 0 ? cpu_level() : std::min(g_level, cpu_level()); }
void set_interval_matvec_level(int level) { g_level = level; }

void interval_matvec(const double* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch(W, rows, n, mid, rad, mag, c, r, m);
}
void interval_matvec(const float* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m) {
  dispatch(W, rows, n, mid, rad, mag, c, r, m);
}

}  // namespace denote::bounds
