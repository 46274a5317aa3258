// CROWN's dense products (src/bounds/crown_gemm.h).
#include "bounds/crown_gemm.h"

#include <climits>

#include "base/cpu.h"

#ifdef DENOTE_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace denote::crown {

namespace {

bool blas_fits(int64_t m, int64_t n, int64_t k) {
#ifdef DENOTE_HAVE_OPENBLAS
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
  return m > 0 && n > 0 && k > 0 && m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
#else
  (void)m, (void)n, (void)k;
  return false;
#endif
}

}  // namespace

namespace {

// C = A B over A's nonzeros only, row by row (a zero coefficient adds nothing, as in the plain loop):
// each row is written by its first nonzero's product and accumulated over the others (no separate
// zeroing pass), in AVX2 lanes where the CPU has them (no FMA: the products rounded as written).
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

}  // namespace

void gemm_nn(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
  if (sparse(m, k, a)) {
    sparse_rows_nn(m, n, k, a, b, c);
    return;
  }
#ifdef DENOTE_HAVE_OPENBLAS
  // A row or two against a large b (mnistfc's 256 x 784): gemv reads b once, without dgemm's packing.
  if (blas_fits(m, n, k) && m <= 2 && n * k >= 16384) {
    for (int64_t i = 0; i < m; ++i)
      cblas_dgemv(CblasRowMajor, CblasTrans, static_cast<int>(k), static_cast<int>(n), 1.0, b, static_cast<int>(n),
                  a + i * k, 1, 0.0, c + i * n, 1);
    return;
  }
  if (blas_fits(m, n, k)) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a, static_cast<int>(k), b, static_cast<int>(n), 0.0, c, static_cast<int>(n));
    return;
  }
#endif
  for (int64_t i = 0; i < m * n; ++i) c[i] = 0;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      const double v = a[i * k + p];
      if (v == 0) continue;
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += v * b[p * n + j];
    }
}

void gemm_nt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c) {
#ifdef DENOTE_HAVE_OPENBLAS
  if (blas_fits(m, n, k) && m <= 2 && n * k >= 16384) {  // as gemm_nn
    for (int64_t i = 0; i < m; ++i)
      cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(n), static_cast<int>(k), 1.0, b, static_cast<int>(k),
                  a + i * k, 1, 0.0, c + i * n, 1);
    return;
  }
  if (blas_fits(m, n, k)) {
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(m), static_cast<int>(n),
                static_cast<int>(k), 1.0, a, static_cast<int>(k), b, static_cast<int>(k), 0.0, c, static_cast<int>(n));
    return;
  }
#endif
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
      c[i * n + j] = s;
    }
}

}  // namespace denote::crown
