// The arithmetic a run uses, as one value: parsed once from the command-line strings (--arith,
// --rounding, --precision), then dispatched to the scalar context in exactly one place
// (visit_arith). Every tool and pass that takes an `arith` name goes through here.
//
//   DENOTE_ASSIGN_OR_RETURN(ArithSpec spec, parse_arith("bfloat16", "upward", 256));
//   Result<double> y = visit_arith(spec, [&](auto& ctx) -> Result<double> {
//     return ctx.to_double(ctx.tanh(ctx.from_double(0.5)));   // BinaryContext(bfloat16, upward)
//   });
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"

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

// Calls f(ctx) with the point context of `spec` (F64Context, F32Context, BinaryContext(format,
// rounding) or RealContext(precision)) and returns what f returns (the same type for every
// context). The one place the runtime arithmetic becomes a context type.
template <class F>
decltype(auto) visit_arith(const ArithSpec& spec, F&& f) {
  switch (spec.kind) {
    case ArithKind::F32: {
      F32Context ctx;
      return f(ctx);
    }
    case ArithKind::Binary: {
      BinaryContext ctx(spec.format, spec.rounding);
      return f(ctx);
    }
    case ArithKind::Real: {
      RealContext ctx(static_cast<mpfr_prec_t>(spec.precision));
      return f(ctx);
    }
    case ArithKind::F64: break;
  }
  F64Context ctx;
  return f(ctx);
}

}  // namespace denote
