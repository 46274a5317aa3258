// Internal: IBP's rule of mx_cast (OCP MX quantize-dequantize, include/denote/tensor/mx.h) on double
// endpoints. A block's shared exponent is nondecreasing in its largest magnitude amax, which lies in
// [A_lo, A_hi] (A_lo the largest of the elements' smallest magnitudes, A_hi of their largest), so it is
// one of e_lo .. e_hi; at a fixed exponent the element conversion is nondecreasing in the value. Each
// element's box is then [min_e q_e(lo), max_e q_e(hi)] over those exponents: it holds the exact result
// for every value of the input boxes (the result is exact in binary32, so the evaluation's too).
#pragma once

#include <vector>

#include "denote/base/status.h"
#include "denote/ir/attrs.h"
#include "denote/tensor/shape.h"

namespace denote::ibp {

// More exponents than this in one block: no box (an error; IBP notes it).
inline constexpr int64_t kMxMaxExponents = 64;

// lo and hi (row-major in `shape`; a scalar is one block of one element) replaced by the output's
// boxes. Errors: a non-finite endpoint, a block whose exponent can take more than kMxMaxExponents
// values, the attrs' own errors.
Status mx_cast_boxes(const MxCastAttrs& a, const Shape& shape, std::vector<double>& lo, std::vector<double>& hi);

}  // namespace denote::ibp
