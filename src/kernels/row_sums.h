// Internal: the row sums of the CROWN rules (src/bounds/crown_rules.cc, crown_state.cc) in four
// partial sums, compiled for AVX2 where the CPU has it (no FMA: every product is rounded as written).
// The a-priori bounds of a pass hold for any summation order: a sum of n nonnegative terms is
// enclosed by up_sum, a signed one by gamma(terms + 1) * mag.
#pragma once

#include <cstdint>

#include "base/cpu.h"

namespace denote::kernels {

// sum_j |a[j]| * s[j].
double abs_dot(const double* a, const double* s, int64_t m);
// sum_j (w[j] != 0 ? |w[j]| * x[j] : 0): a zero weight adds nothing, also against an infinite x.
double abs_dot_nonzero(const double* w, const double* x, int64_t m);
// sum_j a[j] * b[j] (no error bound: for alpha-CROWN's gradients).
double dot(const double* a, const double* b, int64_t m);
// sum += sum_j a[j] * b[j], mag += sum_j |a[j] * b[j]|.
void dot_mag(const double* a, const double* b, int64_t m, double& sum, double& mag);
// The minimum of a . x over the box [lo, hi]: sum += sum_j t_j with t_j = a[j] lo[j] (a[j] > 0),
// a[j] hi[j] (a[j] < 0 or NaN) or nothing (a[j] = 0, also against an infinite endpoint);
// mag += sum_j |t_j|, terms += the number of nonzero a[j].
void concretize_row(const double* a, const double* lo, const double* hi, int64_t m, double& sum, double& mag,
                    double& terms);

// v[r, j] = a[r, j] >= 0 ? lo[j] : hi[j] (NaN: hi) over rows x m coefficients: the box vertex each row
// attains its minimum at (alpha-CROWN's forward values).
void vertex_rows(const double* a, const double* lo, const double* hi, int64_t rows, int64_t m, double* v);

}  // namespace denote::kernels
