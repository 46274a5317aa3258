// Internal: the BLAS calls of the openblas provider (src/providers/openblas*.cc), row-major, with
// OpenBLAS's own threading pinned to 1 (DENOTE_OPENBLAS_THREADS=N overrides): parallelism comes from
// the compiled plan's chunks, whose results do not depend on the thread count.
#pragma once

#ifdef DENOTE_HAVE_OPENBLAS

#include <cblas.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <type_traits>

namespace denote::blas {

inline void ensure_threads() {
  static const bool once = [] {
    const char* env = std::getenv("DENOTE_OPENBLAS_THREADS");
    const int n = env ? std::atoi(env) : 1;
    openblas_set_num_threads(n > 0 ? n : 1);
    return true;
  }();
  (void)once;
}

inline bool fits(std::initializer_list<int64_t> dims) {
  for (int64_t d : dims)
    if (d <= 0 || d > INT_MAX) return false;
  return true;
}

// C[m, n] = A[m, k] B + beta C (B is [k, n], or [n, k] when trans_b), row-major, lda = k.
template <class S>
void gemm(bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S* c, int64_t ldc, S beta = 0) {
  const auto tb = trans_b ? CblasTrans : CblasNoTrans;
  const int ldb = static_cast<int>(trans_b ? k : n);
  if constexpr (std::is_same_v<S, double>)
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0,
                a, static_cast<int>(k), b, ldb, beta, c, static_cast<int>(ldc));
  else
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f,
                a, static_cast<int>(k), b, ldb, beta, c, static_cast<int>(ldc));
}

// y[rows] = A[rows, cols] x + beta y, row-major.
template <class S>
void gemv(int64_t rows, int64_t cols, const S* a, const S* x, S* y, S beta) {
  if constexpr (std::is_same_v<S, double>)
    cblas_dgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(cols), 1.0, a,
                static_cast<int>(cols), x, 1, beta, y, 1);
  else
    cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(rows), static_cast<int>(cols), 1.0f, a,
                static_cast<int>(cols), x, 1, beta, y, 1);
}

// y += alpha x over n values.
template <class S>
void axpy(int64_t n, S alpha, const S* x, S* y) {
  if constexpr (std::is_same_v<S, double>) cblas_daxpy(static_cast<int>(n), alpha, x, 1, y, 1);
  else cblas_saxpy(static_cast<int>(n), alpha, x, 1, y, 1);
}

}  // namespace denote::blas

#endif
