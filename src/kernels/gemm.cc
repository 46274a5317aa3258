// The kernels layer's matrix products (src/kernels/gemm.h).
#include "kernels/gemm.h"

#include <algorithm>

#include "base/cpu.h"
#include "kernels/blas.h"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace denote::kernels {

bool blas_built() {
#ifdef DENOTE_HAVE_OPENBLAS
  return true;
#else
  return false;
#endif
}

bool blas_in_use() { return blas_built() && simd_level() >= 1; }

namespace {

bool blas_fits(int64_t m, int64_t n, int64_t k) {
#ifdef DENOTE_HAVE_OPENBLAS
  if (!blas_in_use() || !blas::fits({m, n, k})) return false;
  blas::ensure_threads();
  return true;
#else
  (void)m, (void)n, (void)k;
  return false;
#endif
}

// The portable product: C = op(A) op(B) + beta C, one output row at a time, k outermost inside a row
// (B's rows read in order when not transposed).
template <class S>
void gemm_loops(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S beta, S* c,
                int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    S* ci = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) ci[j] = beta == S(0) ? S(0) : beta * ci[j];
    for (int64_t p = 0; p < k; ++p) {
      const S v = ta ? a[p * m + i] : a[i * k + p];
      if (tb)
        for (int64_t j = 0; j < n; ++j) ci[j] += v * b[j * k + p];
      else
        for (int64_t j = 0; j < n; ++j) ci[j] += v * b[p * n + j];
    }
  }
}

// C = A B over A's nonzeros only, row by row: each row is written by its first nonzero's product and
// accumulated over the others (no separate zeroing pass); products rounded as written (no fma).
[[gnu::always_inline]] inline void sparse_rows_in(int64_t m, int64_t n, int64_t k, const double* __restrict a,
                                                  const double* __restrict b, double* __restrict c) {
  for (int64_t i = 0; i < m; ++i) {
    double* ci = c + i * n;
    bool written = false;
    for (int64_t p = 0; p < k; ++p) {
      const double v = a[i * k + p];
      if (v == 0) continue;
      const double* bp = b + p * n;
      if (written) {
        for (int64_t j = 0; j < n; ++j) ci[j] += v * bp[j];
      } else {
        for (int64_t j = 0; j < n; ++j) ci[j] = v * bp[j];
        written = true;
      }
    }
    if (!written)
      for (int64_t j = 0; j < n; ++j) ci[j] = 0;
  }
}
#if defined(__x86_64__)
__attribute__((target("avx2"))) void sparse_rows_avx2(int64_t m, int64_t n, int64_t k, const double* a,
                                                      const double* b, double* c) {
  sparse_rows_in(m, n, k, a, b, c);
}
#endif
void sparse_rows_nn(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
#if defined(__x86_64__)
  if (have_avx2()) return sparse_rows_avx2(m, n, k, a, b, c);
#endif
  sparse_rows_in(m, n, k, a, b, c);
}

// At most one entry in 16 nonzero: CROWN's start rows (signed unit vectors, a spec's few terms).
bool sparse(int64_t m, int64_t k, const double* a) {
  const int64_t len = m * k;
  if (len < 4096) return false;  // small products: the BLAS call is cheap enough
  int64_t nnz = 0;
  for (int64_t i = 0; i < len; ++i) nnz += a[i] != 0;
  return nnz * 16 <= len;
}

// A row or two against a large B (mnistfc's 256 x 784): C = A B (B [k, n]) or A B^T (B [n, k]) a row at a
// time by gemv, which reads B once, without dgemm's packing; false (nothing done) otherwise.
bool rows_by_gemv(bool trans_b, int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
#ifdef DENOTE_HAVE_OPENBLAS
  if (m > 2 || n * k < 16384 || !blas_fits(m, n, k)) return false;
  for (int64_t i = 0; i < m; ++i)
    if (trans_b)
      blas::gemv(n, k, b, a + i * k, c + i * n, 0.0);
    else
      blas::gemv(k, n, b, a + i * k, c + i * n, 0.0, /*trans=*/true);
  return true;
#else
  (void)trans_b, (void)m, (void)n, (void)k, (void)a, (void)b, (void)c;
  return false;
#endif
}

}  // namespace

template <class S>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S beta, S* c,
          int64_t ldc) {
  if (m <= 0 || n <= 0) return;
#ifdef DENOTE_HAVE_OPENBLAS
  if (k > 0 && blas_fits(m, n, k) && blas::fits({ldc}))
    return blas::gemm(trans_a, trans_b, m, n, k, a, b, c, ldc, beta);
#endif
  gemm_loops(trans_a, trans_b, m, n, k, a, b, beta, c, ldc);
}
template void gemm<float>(bool, bool, int64_t, int64_t, int64_t, const float*, const float*, float, float*, int64_t);
template void gemm<double>(bool, bool, int64_t, int64_t, int64_t, const double*, const double*, double, double*,
                           int64_t);

void gemm_nn(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  if (sparse(m, k, a)) return sparse_rows_nn(m, n, k, a, b, c);
  if (!rows_by_gemv(false, m, n, k, a, b, c)) gemm<double>(false, false, m, n, k, a, b, 0.0, c, n);
}

void gemm_nt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  if (!rows_by_gemv(true, m, n, k, a, b, c)) gemm<double>(false, true, m, n, k, a, b, 0.0, c, n);
}

namespace {

// The sign-picked source row: S's when w < 0, else R's (also for NaN), without a branch (signs are
// unpredictable).
inline const double* by_sign(double w, const double* r, const double* s) {
  const auto ri = reinterpret_cast<uintptr_t>(r), si = reinterpret_cast<uintptr_t>(s);
  const uintptr_t neg = static_cast<uintptr_t>(0) - static_cast<uintptr_t>(w < 0);
  return reinterpret_cast<const double*>(ri ^ ((ri ^ si) & neg));
}

void sign_rows_plain(const double* W, size_t out, size_t in, const double* R, const double* S, size_t k,
                     double* acc) {
  for (size_t o = 0; o < out; ++o) {
    double* a = acc + o * k;
    std::fill(a, a + k, 0.0);
    for (size_t i = 0; i < in; ++i) {
      const double w = W[o * in + i];
      const double* src = by_sign(w, R + i * k, S + i * k);
      for (size_t j = 0; j < k; ++j) a[j] += w * src[j];
    }
  }
}

#if defined(__x86_64__)
// k = 4 Q (Q <= 4) in AVX2 lanes: two output rows at a time, their sums in 2 Q registers (two
// independent chains of adds); products rounded as written (no fma).
template <int Q>
__attribute__((target("avx2"))) void sign_rows_avx2(const double* W, size_t out, size_t in, const double* R,
                                                    const double* S, double* acc) {
  constexpr size_t K = 4 * Q;
  size_t o = 0;
  for (; o + 2 <= out; o += 2) {
    __m256d t0[Q], t1[Q];
    for (int q = 0; q < Q; ++q) t0[q] = _mm256_setzero_pd(), t1[q] = _mm256_setzero_pd();
    for (size_t i = 0; i < in; ++i) {
      const double w0 = W[o * in + i], w1 = W[(o + 1) * in + i];
      const double* s0 = by_sign(w0, R + i * K, S + i * K);
      const double* s1 = by_sign(w1, R + i * K, S + i * K);
      const __m256d v0 = _mm256_set1_pd(w0), v1 = _mm256_set1_pd(w1);
      for (int q = 0; q < Q; ++q) {
        t0[q] = _mm256_add_pd(t0[q], _mm256_mul_pd(v0, _mm256_loadu_pd(s0 + 4 * q)));
        t1[q] = _mm256_add_pd(t1[q], _mm256_mul_pd(v1, _mm256_loadu_pd(s1 + 4 * q)));
      }
    }
    for (int q = 0; q < Q; ++q) {
      _mm256_storeu_pd(acc + o * K + 4 * q, t0[q]);
      _mm256_storeu_pd(acc + (o + 1) * K + 4 * q, t1[q]);
    }
  }
  if (o < out) sign_rows_plain(W + o * in, out - o, in, R, S, K, acc + o * K);
}
#endif

}  // namespace

void sign_rows(const double* W, size_t out, size_t in, const double* R, const double* S, size_t k, double* acc) {
#if defined(__x86_64__)
  if (have_avx2()) switch (k) {
      case 4:
        return sign_rows_avx2<1>(W, out, in, R, S, acc);
      case 8:
        return sign_rows_avx2<2>(W, out, in, R, S, acc);
      case 12:
        return sign_rows_avx2<3>(W, out, in, R, S, acc);
      case 16:
        return sign_rows_avx2<4>(W, out, in, R, S, acc);
      default:
        break;
    }
#endif
  sign_rows_plain(W, out, in, R, S, k, acc);
}

}  // namespace denote::kernels
