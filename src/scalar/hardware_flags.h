// Internal: the IEEE flags that hardware binary32/binary64 operations raise, read from the C
// floating-point environment around a piece of work (the caller's own flags are restored), as FpFlag
// bits. Used where exact-format results come from the hardware's own operations in nearest-even with
// the MXCSR in its default state (binary32 folds, src/scalar/binary_fast_fold.cc; scaled FP8,
// src/typed/fp8_scaled.cc).
#pragma once

#include <cfenv>
#include <cstdint>

#include "denote/scalar/binary_format.h"

namespace denote {

template <class Fn>
uint32_t hardware_flags(Fn&& fn) {
  fexcept_t saved;
  fegetexceptflag(&saved, FE_ALL_EXCEPT);
  feclearexcept(FE_ALL_EXCEPT);
  fn();
  const int raised = fetestexcept(FE_ALL_EXCEPT);
  fesetexceptflag(&saved, FE_ALL_EXCEPT);
  return ((raised & FE_INVALID) ? kFpInvalid : 0u) | ((raised & FE_DIVBYZERO) ? kFpDivByZero : 0u) |
         ((raised & FE_OVERFLOW) ? kFpOverflow : 0u) | ((raised & FE_UNDERFLOW) ? kFpUnderflow : 0u) |
         ((raised & FE_INEXACT) ? kFpInexact : 0u);
}

}  // namespace denote
