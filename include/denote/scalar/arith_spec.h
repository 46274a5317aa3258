// The arithmetic a run uses, as one value (ArithSpec): parsed once from the command-line strings
// (--arith, --rounding, --precision) and passed on as data. Light (no context types): option structs
// hold it (CrownOptions, VerifyOptions); denote/scalar/arith.h dispatches it to a scalar context.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/scalar/binary_format.h"

namespace denote {

// f64 / f32: hardware doubles / floats; binary: a software binary format (exact rounding in any
// mode); real: MPFR at `precision` bits.
enum class ArithKind : uint8_t { F64, F32, Binary, Real };

struct ArithSpec {
  ArithKind kind = ArithKind::F64;
  std::string name = "f64";                   // the --arith text, e.g. "bfloat16", "binary(5,2)"
  BinaryFormat format = binary64_format();    // kind == Binary
  Rounding rounding = Rounding::NearestEven;  // any mode for Binary; nearest-even otherwise
  long precision = 256;                       // kind == Real: bits
  bool native() const { return kind == ArithKind::F64 || kind == ArithKind::F32; }
  // Hardware floats / doubles, or the same format by its binary name ("binary32", "binary64") in
  // nearest-even: the arithmetics whose evaluation error the bound engine models (CrownOptions,
  // VerifyOptions).
  bool is_f32() const { return kind == ArithKind::F32 || binary_nearest(binary32_format()); }
  bool is_f64() const { return kind == ArithKind::F64 || binary_nearest(binary64_format()); }
  static ArithSpec f64() { return ArithSpec{}; }
  static ArithSpec f32() {
    ArithSpec s;
    s.kind = ArithKind::F32;
    s.name = "f32";
    s.format = binary32_format();
    return s;
  }

 private:
  bool binary_nearest(const BinaryFormat& f) const {
    return kind == ArithKind::Binary && format == f && rounding == Rounding::NearestEven;
  }
};

inline constexpr long kMinRealPrecision = 2;
inline constexpr long kMaxRealPrecision = 1'000'000;

// The arithmetic named `arith` ("f64", "f32", "real", a binary format name or "binary(E,F)") in
// nearest-even at 256 bits. An unknown name is parse_format's own error (kInvalidInput, field
// "arith"); callers word it for their surface (the CLI, "IR bounds: arith ..."). Without
// `allow_real`, "real" is just another name parse_format does not know (passes without an MPFR
// form: bounds, sampling).
Result<ArithSpec> parse_arith_name(std::string_view arith, bool allow_real = true);

// The full command-line check, in this order, each error kInvalidInput with its field:
//   --rounding R: expected nearest-even, toward-zero, upward, downward (or nearest-away)
//   --rounding R: the f64 context rounds to nearest-even only (binary formats take any mode)
//   --precision N: expected 2..1000000 bits                          (real only)
//   --arith A: expected f64, f32, real or a binary format (<parse_format's error>)
Result<ArithSpec> parse_arith(std::string_view arith, std::string_view rounding, long precision);

}  // namespace denote
