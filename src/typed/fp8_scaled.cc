// Per-tensor scaled FP8 linear layers (src/typed/fp8_scaled.h): every binary32 operation runs in
// hardware and its IEEE flags are read from the floating-point environment; the casts to fp8 go
// through the binary layer (saturating, nearest even).
#include "typed/fp8_scaled.h"

#include <cfloat>
#include <cmath>

#include "denote/scalar/binary_ops.h"
#include "kernels/exact_linear.h"
#include "scalar/hardware_flags.h"

namespace denote::mx_detail {

float to_float(double v) {
  // Beyond the midpoint above the largest binary32 (FLT_MAX + 2^103) nearest-even gives infinity; the
  // conversion itself is only defined inside the range.
  if (std::fabs(v) >= 0x1.ffffffp127) return v > 0 ? INFINITY : -INFINITY;
  return static_cast<float>(v);
}

ScaledTensor scale_to_fp8(const BinaryFormat& fp8, const float* x, int64_t n, uint32_t& flags) {
  float amax = 0.0f;
  for (int64_t i = 0; i < n; ++i)  // the recipe's amax(|x|): an infinity or a NaN makes it so
    amax = std::isnan(x[i]) || std::isnan(amax) ? NAN : std::fmax(amax, std::fabs(x[i]));
  const auto fmax = static_cast<float>(word_to_double(fp8, max_finite(fp8, false)));
  ScaledTensor t;
  t.q.resize(static_cast<size_t>(n));
  std::vector<float> scaled(static_cast<size_t>(n));
  float scale = 1.0f;
  flags |= hardware_flags([&] {
    if (amax > 0.0f || std::isnan(amax)) scale = fmax / amax;  // amax infinite: scale 0; NaN: NaN
    if (std::isinf(scale)) scale = FLT_MAX;                     // amax tiny: the largest binary32 scale
    for (int64_t i = 0; i < n; ++i) scaled[static_cast<size_t>(i)] = x[i] * scale;
    t.descale = 1.0f / scale;
  });
  FpEnv env;
  for (int64_t i = 0; i < n; ++i)
    t.q[static_cast<size_t>(i)] = static_cast<float>(word_to_double(fp8, fp_from_double(fp8, env, scaled[i], true)));
  flags |= env.flags;
  return t;
}

void scaled_linear(const ScaledTensor& x, const ScaledTensor& w, const float* bias, int64_t rows, int64_t in,
                   int64_t out, float* y, uint32_t& flags) {
  flags |= hardware_flags([&] {
    // Each output the left fold from zero of x_q[r, i] w_q[o, i], mul then add, each rounded: the
    // products of two fp8 values are exact in binary32.
    if (!kernels::linear_simd(x.q.data(), w.q.data(), nullptr, rows, in, out, y))
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t o = 0; o < out; ++o) {
          float acc = 0.0f;
          for (int64_t i = 0; i < in; ++i) {
            const float p = x.q[static_cast<size_t>(r * in + i)] * w.q[static_cast<size_t>(o * in + i)];
            acc = acc + p;
          }
          y[r * out + o] = acc;
        }
    const float alpha = x.descale * w.descale;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) {
        float v = y[r * out + o] * alpha;
        if (bias != nullptr) v = v + bias[o];
        y[r * out + o] = v;
      }
  });
}

}  // namespace denote::mx_detail
