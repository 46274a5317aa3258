// Parsing the arithmetic of a run (see denote/scalar/arith.h).
#include "denote/scalar/arith.h"

#include <fmt/format.h>

namespace denote {

Result<ArithSpec> parse_arith_name(std::string_view arith, bool allow_real) {
  ArithSpec spec;
  spec.name = std::string(arith);
  if (arith == "f64") return spec;
  if (arith == "f32") {
    spec.kind = ArithKind::F32;
    return spec;
  }
  if (arith == "real" && allow_real) {
    spec.kind = ArithKind::Real;
    return spec;
  }
  Result<BinaryFormat> f = parse_format(arith);
  if (!f.ok()) return f.status().with_code(ErrorCode::kInvalidInput).with_field("arith");
  spec.kind = ArithKind::Binary;
  spec.format = *f;
  return spec;
}

Result<ArithSpec> parse_arith(std::string_view arith, std::string_view rounding, long precision) {
  auto invalid = [](std::string message, const char* field) {
    return Status::error(ErrorCode::kInvalidInput, std::move(message)).with_field(field);
  };
  const std::optional<Rounding> r = parse_rounding(rounding);
  if (!r)
    return invalid(fmt::format("--rounding {}: expected nearest-even, toward-zero, upward, downward (or nearest-away)",
                               rounding),
                   "rounding");
  const bool native_or_real = arith == "f64" || arith == "f32" || arith == "real";
  if (native_or_real && *r != Rounding::NearestEven)
    return invalid(fmt::format("--rounding {}: the {} context rounds to nearest-even only (binary formats take any mode)",
                               rounding, arith),
                   "rounding");
  if (arith == "real" && (precision < kMinRealPrecision || precision > kMaxRealPrecision))
    return invalid(fmt::format("--precision {}: expected {}..{} bits", precision, kMinRealPrecision, kMaxRealPrecision),
                   "precision");
  Result<ArithSpec> spec = parse_arith_name(arith);
  if (!spec.ok())
    return invalid(fmt::format("--arith {}: expected f64, f32, real or a binary format ({})", arith, spec.message()),
                   "arith");
  spec->rounding = *r;
  spec->precision = precision;
  return spec;
}

}  // namespace denote
