// Internal: one MX element's conversion (src/tensor/mx.cc): V / 2^e to an element code, rounded to
// nearest even and saturated, with the flags of the binary layer's one rounding routine. `exact`
// goes through that routine; `fast` rounds in double arithmetic (nearbyint in the default rounding
// mode; callers check the MXCSR) and gives the same codes and flags (tests/unit/mx_test.cc).
#pragma once

#include <cstdint>

#include "denote/tensor/mx.h"

namespace denote::mx_detail {

// The element format's constants for the fast conversion.
struct ElementParams {
  bool int8 = false;
  int frac = 0, bias = 0, emin = 0, qmin = 0, sign_shift = 7;
  double max_value = 0, tiny = 0;  // the largest finite value; below `tiny`, an inexact result underflows
  uint8_t max_code = 0;            // the positive largest finite value's code
};
ElementParams element_params(const MxFormat& f);

uint8_t element_code_exact(const MxFormat& f, double v, int64_t e, uint32_t& flags);
uint8_t element_code_fast(const ElementParams& p, double v, int64_t e, uint32_t& flags);

}  // namespace denote::mx_detail
