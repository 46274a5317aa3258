// Internal: per-tensor scaled FP8 linear layers (MxPolicy::per_tensor; src/typed/mx_run.cc), torch's
// float8 recipe in binary32: scale = max_fp8 / amax(|x|) over the whole tensor, x_fp8 = the
// saturating nearest-even cast of x * scale, y = (the left fold from zero of the exact fp8 products,
// in binary32) * (descale_x * descale_w), then + bias; descale = 1 / scale (docs/NUMERICS.md).
#pragma once

#include <cstdint>
#include <vector>

#include "denote/scalar/binary_format.h"

namespace denote::mx_detail {

// A double as binary32, nearest even, infinity beyond the range (without the undefined conversion).
float to_float(double v);

// A tensor's fp8 values (as binary32) and its descale.
struct ScaledTensor {
  std::vector<float> q;
  float descale = 1.0f;
};

// x (binary32 values) scaled and cast to `fp8` (e4m3fn or e5m2); the IEEE flags of the binary32
// operations and of the casts are or-ed into `flags` (the caller's floating-point environment is
// restored). The hardware binary32 operations need the MXCSR in its default state.
ScaledTensor scale_to_fp8(const BinaryFormat& fp8, const float* x, int64_t n, uint32_t& flags);

// y[rows, out] = (x_q w_q^T) * (dx * dw) + bias in binary32, x_q [rows, in], w_q [out, in]; bias may be
// null.
void scaled_linear(const ScaledTensor& x, const ScaledTensor& w, const float* bias, int64_t rows, int64_t in,
                   int64_t out, float* y, uint32_t& flags);

}  // namespace denote::mx_detail
