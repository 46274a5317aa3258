// Conversions between dtypes with IEEE-style status flags (FpFlag bits, binary_format.h):
//   binary -> binary   fp_convert (format conversion, one rounding; also for equal formats, so a
//                      signaling NaN is quieted with invalid)
//   int/bool -> binary the exact value rounded once in `rounding` (inexact, overflow)
//   binary -> int      rounded to an integer in `rounding` (inexact); NaN, infinities and values
//                      outside the int's range are errors, never wraps
//   int -> int, bool -> bool   only between identical types (the word is kept, no flags)
//   anything else (int <-> bool, binary -> bool, ints of different widths or signedness): an error
//
//   CastResult r = *typed::cast_word(DType::integer(32, true), DType::binary(*parse_format("bfloat16")),
//                                    Rounding::NearestEven, Word::of(257));   // 0x4380 (256), inexact
#pragma once

#include <cstdint>

#include "denote/base/status.h"
#include "denote/scalar/binary_format.h"
#include "denote/typed/dtype.h"
#include "denote/typed/value.h"

namespace denote::typed {

struct CastResult {
  Word word;
  uint32_t flags = 0;
};

// ok when source -> target is one of the conversions above.
Status check_cast(const DType& source, const DType& target);
// One element word of `source` converted to `target`.
Result<CastResult> cast_word(const DType& source, const DType& target, Rounding rounding, const Word& w);
// Elementwise; the flags of all elements or-ed; errors name the element index.
Result<TypedTensor> cast_tensor(const TypedTensor& x, const DType& target, Rounding rounding, uint32_t& flags);

}  // namespace denote::typed
