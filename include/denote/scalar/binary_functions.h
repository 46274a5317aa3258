// Correctly rounded elementary functions on binary-format words: each returns the exact real
// function value rounded ONCE to the format in env.rounding (every format, every mode, binary64
// included), or-ing IEEE flags into env.flags: inexact, underflow (tiny after rounding), overflow,
// invalid (log/log1p/rsqrt below their domain, sin/cos of an infinity; canonical NaN, or an error
// in formats without NaN), divide-by-zero (log(+-0) = -inf, log1p(-1) = -inf, rsqrt(+-0) = +-inf).
// NaN operands propagate (quieted; a signaling one raises invalid). Method: MPFR at a working
// precision well above the format's with a Ziv loop (the precision doubles until the rounding is
// decided, see src/scalar/mpfr_support.h), then the core's single rounding step.
//
// Special values: exp(-inf) = +0, tanh/erf(+-inf) = +-1, sigmoid(+inf) = 1, sigmoid(-inf) = +0,
// softplus(-inf) = +0, gelu(-inf) = -0 (the limit of x * Phi(x); x * 0.5 * (1 + erf(...)) in
// floating point gives NaN there), rsqrt(-0) = -inf (IEEE 754-2019 9.2.1).
//
//   FpEnv env{Rounding::NearestEven};
//   uint64_t y = fp_exp(bf16, env, 0x3f80);           // e rounded to bfloat16: 0x402e, inexact
//   uint64_t g = fp_function(FpFunction::Gelu, f, env, x);
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_ops.h"

namespace denote {

// gelu is the exact-erf form x * (1 + erf(x / sqrt 2)) / 2 as one function, rounded once.
enum class FpFunction : uint8_t { Exp, Log, Log1p, Tanh, Sigmoid, Softplus, Erf, Gelu, Sin, Cos, Rsqrt };

// Lower-case names as in the IR and `denote scalar`: exp, log, log1p, tanh, ... rsqrt.
std::string_view function_name(FpFunction fn);
std::optional<FpFunction> parse_function(std::string_view name);

uint64_t fp_function(FpFunction fn, const BinaryFormat& f, FpEnv& env, uint64_t a);

inline uint64_t fp_exp(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Exp, f, env, a); }
inline uint64_t fp_log(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Log, f, env, a); }
inline uint64_t fp_log1p(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  return fp_function(FpFunction::Log1p, f, env, a);
}
inline uint64_t fp_tanh(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Tanh, f, env, a); }
inline uint64_t fp_sigmoid(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  return fp_function(FpFunction::Sigmoid, f, env, a);
}
inline uint64_t fp_softplus(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  return fp_function(FpFunction::Softplus, f, env, a);
}
inline uint64_t fp_erf(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Erf, f, env, a); }
inline uint64_t fp_gelu(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Gelu, f, env, a); }
inline uint64_t fp_sin(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Sin, f, env, a); }
inline uint64_t fp_cos(const BinaryFormat& f, FpEnv& env, uint64_t a) { return fp_function(FpFunction::Cos, f, env, a); }
inline uint64_t fp_rsqrt(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  return fp_function(FpFunction::Rsqrt, f, env, a);
}

// a^b correctly rounded, with the special cases of IEEE 754 pow / C99 (pow(x, +-0) = 1 and
// pow(+1, y) = 1 even for a quiet NaN; pow(+-0, y < 0) = inf with divide-by-zero; a negative
// base with a non-integer exponent is invalid).
uint64_t fp_pow(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);

// PyTorch's meanings computed exactly and rounded once: trunc(a / b), floor(a / b) (Python's //:
// the floor of the exact quotient, 1 // 0.1 == 9) and a - b * floor(a / b) with the sign of b
// (Python's %, via fmod; an exact zero keeps fmod's sign, the sign of a). Division by zero follows
// fp_div (inf with divide-by-zero; 0/0 invalid); remainder by zero or of an infinity is invalid.
// x // +-inf is +-0, or -1 when x != 0 and the signs differ; x % +-inf is x, or the infinity when
// x != 0 and the signs differ.
uint64_t fp_div_trunc(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_div_floor(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fp_remainder(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);

}  // namespace denote
