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
#include "denote/scalar/arith_spec.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"

namespace denote {

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
