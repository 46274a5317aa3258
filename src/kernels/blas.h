// Internal: the one place that calls BLAS (the kernels layer's gemm, src/kernels/gemm.cc, and the
// openblas provider, src/providers/openblas*.cc), row-major, with OpenBLAS's own threading pinned to 1
// (DENOTE_OPENBLAS_THREADS=N overrides): parallelism comes from the compiled plan's chunks and verify's
// workers, whose results do not depend on the thread count. Only with DENOTE_HAVE_OPENBLAS (the build
// found libopenblas-dev); callers outside src/kernels/ ask kernels::have_blas() (gemm.h) instead.
#pragma once

#ifdef DENOTE_HAVE_OPENBLAS

#include <cblas.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <type_traits>

namespace denote::kernels::blas {

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

// C[m, n] = op(A) op(B) + beta C, row-major: op(A) is [m, k] (A stored [k, m] when trans_a), op(B) is
// [k, n] (B stored [n, k] when trans_b); A and B at their stored row lengths, C at ldc.
template <class S>
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S* c, int64_t ldc,
          S beta = 0) {
  const auto ta = trans_a ? CblasTrans : CblasNoTrans, tb = trans_b ? CblasTrans : CblasNoTrans;
  const int lda = static_cast<int>(trans_a ? m : k), ldb = static_cast<int>(trans_b ? k : n);
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k), C = static_cast<int>(ldc);
  if constexpr (std::is_same_v<S, double>)
    cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, a, lda, b, ldb, beta, c, C);
  else
    cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, a, lda, b, ldb, beta, c, C);
}

// y = op(A) x + beta y for A[rows, cols] row-major: y[rows] = A x, or (trans) y[cols] = A^T x.
template <class S>
void gemv(int64_t rows, int64_t cols, const S* a, const S* x, S* y, S beta, bool trans = false) {
  const auto t = trans ? CblasTrans : CblasNoTrans;
  if constexpr (std::is_same_v<S, double>)
    cblas_dgemv(CblasRowMajor, t, static_cast<int>(rows), static_cast<int>(cols), 1.0, a, static_cast<int>(cols), x,
                1, beta, y, 1);
  else
    cblas_sgemv(CblasRowMajor, t, static_cast<int>(rows), static_cast<int>(cols), 1.0f, a, static_cast<int>(cols), x,
                1, beta, y, 1);
}

// y += alpha x over n values.
template <class S>
void axpy(int64_t n, S alpha, const S* x, S* y) {
  if constexpr (std::is_same_v<S, double>) cblas_daxpy(static_cast<int>(n), alpha, x, 1, y, 1);
  else cblas_saxpy(static_cast<int>(n), alpha, x, 1, y, 1);
}

}  // namespace denote::kernels::blas

#endif
