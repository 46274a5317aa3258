// Internal: the input's concretisation of a linear node's coefficients, fused with their product
// (src/bounds/crown_linear.cc): for each row r, a = as[r, :] w (k terms, w is k x m) is made a few
// elements at a time in registers and concretised on the box [lo, hi] at once, into sum[r], mag[r]
// and terms[r] exactly as concretize_row (row_sums.h) would on the stored a. The
// coefficients may be computed in any order and with fused multiply-adds (the linear rule's slack
// bounds their error); the concretisation's products are rounded as written.
#pragma once

#include <cstdint>
#include <vector>

namespace denote::kernels {

// At most this many terms per coefficient, and w at most 512 KiB: w (k x m) is read once per row,
// so it must stay in cache (larger products go through blocks of the dense product).
inline constexpr int64_t kMaxFusedTerms = 32;
bool fused_fits(int64_t k, int64_t m);

// vertex (rows x m, or null): also the box vertex each row attains, a >= 0 ? lo : hi per element
// (alpha-CROWN's forward values, src/bounds/crown_linear.cc).
void product_concretize_rows(const double* as, int64_t rows, int64_t k, const double* w, int64_t m, const double* lo,
                             const double* hi, double* sum, double* mag, double* terms, double* vertex = nullptr);

}  // namespace denote::kernels
