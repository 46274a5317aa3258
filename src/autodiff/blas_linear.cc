// The OpenBLAS path of vjp's linear nodes (src/autodiff/blas_linear.h).
#include "blas_linear.h"

#include <climits>
#include <type_traits>

#ifdef DENOTE_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace denote::ad {

#ifdef DENOTE_HAVE_OPENBLAS

namespace {

bool fits(int64_t rows, int64_t out, int64_t in) {
  return rows > 0 && out > 0 && in > 0 && rows <= INT_MAX && out <= INT_MAX && in <= INT_MAX;
}

// C[m, n] = op(A) op(B) + beta C, row-major, leading dimensions the row lengths of the stored matrices.
template <class S>
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const S* a, const S* b, S beta, S* c) {
  const auto TA = ta ? CblasTrans : CblasNoTrans, TB = tb ? CblasTrans : CblasNoTrans;
  const int lda = static_cast<int>(ta ? m : k), ldb = static_cast<int>(tb ? k : n), ldc = static_cast<int>(n);
  const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
  if constexpr (std::is_same_v<S, double>)
    cblas_dgemm(CblasRowMajor, TA, TB, M, N, K, 1.0, a, lda, b, ldb, beta, c, ldc);
  else
    cblas_sgemm(CblasRowMajor, TA, TB, M, N, K, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

// One thread, as the openblas provider: results do not depend on the machine's core count.
void single_thread() {
  static const bool once = [] {
    openblas_set_num_threads(1);
    return true;
  }();
  (void)once;
}

}  // namespace

bool blas_linear_available() { return true; }

template <class S>
bool blas_linear_forward(const LinearRecord<S>& rec, int64_t rows, const S* x, S* y) {
  // y holds the bias rows (blas_linear.h): beta = 1 adds the product to them in one pass over y.
  if (!fits(rows, rec.out_dim, rec.in_dim)) return false;
  single_thread();
  gemm<S>(false, true, rows, rec.out_dim, rec.in_dim, x, rec.weight.data(), S(1), y);
  return true;
}

template <class S>
bool blas_linear_backward(const LinearRecord<S>& rec, int64_t rows, const S* x, const S* g, S* gx, S* gw, S* gb) {
  if (!fits(rows, rec.out_dim, rec.in_dim)) return false;
  single_thread();
  // beta = 1 on the caller's zeros: OpenBLAS skips its own pass that scales (zeroes) C.
  if (gx) gemm<S>(false, false, rows, rec.in_dim, rec.out_dim, g, rec.weight.data(), S(1), gx);
  if (gw) {
    gemm<S>(true, false, rec.out_dim, rec.in_dim, rows, g, x, S(1), gw);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < rec.out_dim; ++o) gb[o] += g[r * rec.out_dim + o];
  }
  return true;
}

#else

bool blas_linear_available() { return false; }

template <class S>
bool blas_linear_forward(const LinearRecord<S>&, int64_t, const S*, S*) {
  return false;
}

template <class S>
bool blas_linear_backward(const LinearRecord<S>&, int64_t, const S*, const S*, S*, S*, S*) {
  return false;
}

#endif

template bool blas_linear_forward<float>(const LinearRecord<float>&, int64_t, const float*, float*);
template bool blas_linear_forward<double>(const LinearRecord<double>&, int64_t, const double*, double*);
template bool blas_linear_backward<float>(const LinearRecord<float>&, int64_t, const float*, const float*, float*,
                                          float*, float*);
template bool blas_linear_backward<double>(const LinearRecord<double>&, int64_t, const double*, const double*,
                                           double*, double*, double*);

}  // namespace denote::ad
