// Internal: the dense product behind the midpoint-radius rules of IBP's linear node and CROWN's
// one-step linear box. For a point matrix W (rows x n, row-major) and a box given per element by
// its midpoint, radius and magnitude bound, three sums per row o:
//   c[o] = sum_i W[o,i] mid[i],   r[o] = sum_i |W[o,i]| rad[i],   m[o] = sum_i |W[o,i]| mag[i].
// They are computed in double, round to nearest, in an unspecified order, with or without fma
// (AVX-512, AVX2+FMA or the baseline, as the level allows, base/cpu.h): the callers' a-priori bounds hold for
// any order (each sum is within gamma_n of the exact one times the sum of its terms' magnitudes,
// which m bounds when mag >= |mid|). Non-finite inputs give non-finite or NaN sums; the callers check.
#pragma once

#include <cstdint>

namespace denote::kernels {

void interval_matvec(const double* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m);
// W in float (exact in double): half the memory traffic for an f32 model's weights.
void interval_matvec(const float* W, int64_t rows, int64_t n, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m);

// The same sums for `count` boxes (box s: mid + s * n, rad + s * n, mag + s * n; its sums at c + s * rows,
// r + s * rows, m + s * rows), each load of W serving two boxes: every box's sums are interval_matvec's
// on that box alone, bit for bit (the same lanes in the same order).
void interval_matmat(const double* W, int64_t rows, int64_t n, int64_t count, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m);
void interval_matmat(const float* W, int64_t rows, int64_t n, int64_t count, const double* mid, const double* rad,
                     const double* mag, double* c, double* r, double* m);

// The copy in use at the current level: 2 AVX-512, 1 AVX2+FMA, 0 the baseline.
int interval_matvec_level();

}  // namespace denote::kernels
