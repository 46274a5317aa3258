// OCP Microscaling (MX) formats, v1.0: blocks of `block` elements (32 in the spec) along one axis
// share one E8M0 power-of-two scale X (§5.4); each element P_i is an FP8 (E4M3, E5M2), FP6 (E3M2,
// E2M3), FP4 (E2M1) or INT8 code (§5.3), and the block's values are X * P_i. Conversion (§6.3),
// exact dequantization, and dot products with exact block sums (§6.1, §6.2). The rules where the
// spec leaves a choice are listed in docs/NUMERICS.md ("MX block formats").
//
//   MxFormat f = *parse_mx_format("mxfp8_e4m3");
//   Result<MxQuantized> q = mx_quantize(f, x, /*axis=*/-1, /*block=*/32);   // codes + flags
//   Result<Tensor<double>> v = mx_dequantize(q->q);                        // exact X * P_i
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/scalar/binary_format.h"
#include "denote/tensor/tensor.h"

namespace denote {

enum class MxKind : uint8_t { Float, Int8 };

struct MxFormat {
  std::string name = "mxfp8_e4m3";  // mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4_e2m1, mxint8
  MxKind kind = MxKind::Float;
  BinaryFormat element;  // Float: e4m3fn, e5m2, e3m2fn, e2m3fn, e2m1fn (unused for Int8)
  int bits = 8;          // element code width
  int emax = 8;          // exponent of the element format's largest normal (INT8: 0, its max is 127/64)
};

inline constexpr int kMxScaleBias = 127;      // E8M0: value 2^(code - 127)
inline constexpr uint8_t kMxScaleNan = 0xFF;  // E8M0's NaN code
inline constexpr int64_t kMxMaxBlock = int64_t{1} << 24;

// One of the six names above; an error lists them.
Result<MxFormat> parse_mx_format(std::string_view name);
std::string mx_format_names();  // "mxfp8_e4m3, mxfp8_e5m2, ..."

// The codes of an MX tensor: elements row-major in `shape`, scales row-major in mx_scale_shape.
struct MxTensor {
  MxFormat format;
  int64_t block = 32;
  int64_t axis = 0;  // 0 <= axis < rank
  Shape shape;
  std::vector<uint8_t> elements;
  std::vector<uint8_t> scales;
};

// `shape` with the axis' extent n replaced by ceil(n / block).
Shape mx_scale_shape(const Shape& shape, int64_t axis, int64_t block);
// A negative axis counts from the end; errors name the field (axis, block).
Result<int64_t> mx_normalise_axis(const Shape& shape, int64_t axis);
// Sizes, block, axis and every code's width checked; errors name the field and index.
Status check_mx(const MxTensor& q);

// The element value of a code without its scale (NaN and inf where the encoding has them); a scale
// code's value 2^(code - 127) (NaN for 0xFF).
double mx_element_value(const MxFormat& f, uint8_t code);
double mx_scale_value(uint8_t code);
// A block size in [1, kMxMaxBlock]; the error names the field block.
Status mx_check_block(int64_t block);

struct MxQuantized {
  MxTensor q;
  uint32_t flags = 0;  // FpFlag bits: inexact, underflow, overflow + saturated, mapped-special (NaN/inf inputs)
};
// §6.3's shared exponent of a block whose largest magnitude is amax (finite, >= 0): floor(log2 amax) - emax
// clamped to [-127, 127]; -127 for an all-zero block. Nondecreasing in amax.
int64_t mx_shared_exponent(const MxFormat& f, double amax);
// One element converted at the shared exponent e and dequantized: 2^e P, P = v / 2^e rounded to nearest
// even into the element format and saturated (v finite). Nondecreasing in v for a fixed e.
double mx_round_at_scale(const MxFormat& f, double v, int64_t e);
// §6.3: per block X = 2^(floor(log2 amax) - emax), clamped to [2^-127, 2^127]; P_i = V_i / X
// rounded to nearest even and saturated at the element's largest magnitude.
Result<MxQuantized> mx_quantize(const MxFormat& f, const Tensor<double>& x, int64_t axis, int64_t block);
// X * P_i exactly (every such value is a double); NaN for a NaN scale.
Result<Tensor<double>> mx_dequantize(const MxTensor& q);

struct MxMatmulResult {
  Tensor<double> y;  // [M, N], each a value of the accumulation format
  uint32_t flags = 0;
};
// a [M, K] blocked along axis 1, b [K, N] blocked along axis 0, one block size. Each block's dot
// product X_a X_b sum_i P_a,i P_b,i is exact and rounded once to `accumulate` (binary32 or wider,
// nearest even); the blocks are then summed in `accumulate` in increasing block order.
Result<MxMatmulResult> mx_matmul(const MxTensor& a, const MxTensor& b, const BinaryFormat& accumulate);

}  // namespace denote
