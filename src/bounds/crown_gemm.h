// Internal: the two dense products CROWN needs, on OpenBLAS when the build has it (one thread),
// else plain loops. Any summation order is fine: the callers bound the rounding a priori
// (|fl(AB) - AB| <= gamma_k |A||B| holds for every order, with or without fma).
#pragma once

#include <cstdint>

namespace denote::crown {

// C[m, n] = A[m, k] B[k, n] (row-major, C overwritten). An A with at most one nonzero in 16 (a pass's
// start rows) is accumulated over its nonzeros only.
void gemm_nn(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);
// C[m, n] = A[m, k] B[n, k]^T.
void gemm_nt(int64_t m, int64_t n, int64_t k, const double* a, const double* b, double* c);

}  // namespace denote::crown
