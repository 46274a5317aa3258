// The OpenBLAS path of vjp's linear nodes (src/autodiff/blas_linear.h), on the kernels layer's gemm.
#include "blas_linear.h"

#include <climits>

#include "kernels/gemm.h"

namespace denote::ad {

namespace {

bool usable(int64_t rows, int64_t out, int64_t in) {
  return kernels::blas_in_use() && rows > 0 && out > 0 && in > 0 && rows <= INT_MAX && out <= INT_MAX &&
         in <= INT_MAX;
}

}  // namespace

bool blas_linear_available() { return kernels::blas_built(); }

template <class S>
bool blas_linear_forward(const LinearRecord<S>& rec, int64_t rows, const S* x, S* y) {
  // y holds the bias rows (blas_linear.h): beta = 1 adds the product to them in one pass over y.
  if (!usable(rows, rec.out_dim, rec.in_dim)) return false;
  kernels::gemm<S>(false, true, rows, rec.out_dim, rec.in_dim, x, rec.weight.data(), S(1), y, rec.out_dim);
  return true;
}

template <class S>
bool blas_linear_backward(const LinearRecord<S>& rec, int64_t rows, const S* x, const S* g, S* gx, S* gw, S* gb) {
  if (!usable(rows, rec.out_dim, rec.in_dim)) return false;
  // beta = 1 on the caller's zeros: OpenBLAS skips its own pass that scales (zeroes) C.
  if (gx) kernels::gemm<S>(false, false, rows, rec.in_dim, rec.out_dim, g, rec.weight.data(), S(1), gx, rec.in_dim);
  if (gw) {
    kernels::gemm<S>(true, false, rec.out_dim, rec.in_dim, rows, g, x, S(1), gw, rec.in_dim);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < rec.out_dim; ++o) gb[o] += g[r * rec.out_dim + o];
  }
  return true;
}

template bool blas_linear_forward<float>(const LinearRecord<float>&, int64_t, const float*, float*);
template bool blas_linear_forward<double>(const LinearRecord<double>&, int64_t, const double*, double*);
template bool blas_linear_backward<float>(const LinearRecord<float>&, int64_t, const float*, const float*, float*,
                                          float*, float*);
template bool blas_linear_backward<double>(const LinearRecord<double>&, int64_t, const double*, const double*,
                                           double*, double*, double*);

}  // namespace denote::ad
