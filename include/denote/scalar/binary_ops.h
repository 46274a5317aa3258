// Correctly rounded arithmetic on binary-format words: each operation returns the exact real result
// rounded once to the format in the environment's rounding mode, and or-s the raised flags into
// env.flags. NaN rule: an invalid operation without NaN operands gives canonical_nan; with NaN
// operands, a signaling operand wins, else the left one, with the quiet bit set and payload kept.
// Formats without infinity give NaN + overflow where IEEE gives inf (OCP non-saturating); formats
// without NaN (finite) saturate to +-max (overflow, saturated) and an invalid operation there is an
// error reported through env.error (the result word is then meaningless).
//
//   FpEnv env;  // nearest-even, no flags
//   uint64_t two = fp_add(bf16, env, 0x3f80, 0x3f80);   // 0x4000, env.flags == 0
#pragma once

#include <cstdint>
#include <string>

#include "denote/scalar/binary_format.h"

namespace denote {

struct FpEnv {
  Rounding rounding = Rounding::NearestEven;
  uint32_t flags = 0;
  std::string error;  // set (first one kept) when an operation has no value in the format
};

uint64_t fp_add(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_sub(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_mul(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_div(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_sqrt(const BinaryFormat& f, FpEnv& env, uint64_t a);
uint64_t fp_fma(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b, uint64_t c);  // a*b+c, one rounding
uint64_t fp_neg(const BinaryFormat& f, FpEnv& env, uint64_t a);
uint64_t fp_abs(const BinaryFormat& f, FpEnv& env, uint64_t a);
// IEEE 754-2019 minimum/maximum: NaN if either is NaN (invalid for a signaling one); -0 < +0.
uint64_t fp_min(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_max(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);

enum class FpOrder : uint8_t { Less, Equal, Greater, Unordered };
// Quiet comparison (invalid only for signaling NaN operands); -0 == +0.
FpOrder fp_compare(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);

// Conversions. format->format rounds once; `saturate` maps overflow to +-max (flag saturated) and
// inf to +-max in formats without inf; a NaN or inf that the target cannot hold is mapped (NaN,
// flag mapped-special) or is an error for a target without NaN.
uint64_t fp_convert(const BinaryFormat& from, const BinaryFormat& to, FpEnv& env, uint64_t a, bool saturate = false);
// The exact double rounded once to the format.
uint64_t fp_from_double(const BinaryFormat& f, FpEnv& env, double x, bool saturate = false);
// An exact integer (|v| < 2^63) rounded once.
uint64_t fp_from_int(const BinaryFormat& f, FpEnv& env, int64_t v);
// Format -> integer rounded in env.rounding; NaN, inf and out-of-range are errors (returns false,
// sets env.error), never wraps.
bool fp_to_int(const BinaryFormat& f, FpEnv& env, uint64_t a, int64_t& out);

}  // namespace denote
