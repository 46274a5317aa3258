// Test helpers for the MPFR-based oracles: an owned mpfr_t, an exponent-range guard, and the
// reference meanings of the elementary functions at high precision. Written from the definitions
// (naive formulas at 600 bits where the library uses other, cancellation-free ones), independent of
// src/scalar/mpfr_support.
//
//   Mp z(600);
//   int side = reference_value(FpFunction::Gelu, x, z);   // z ~ gelu(x); side = sign(gelu(x) - z)
#pragma once

#include <mpfr.h>

#include <cstdint>

#include "denote/scalar/binary_functions.h"

namespace denote::mpfr_test {

struct Mp {
  explicit Mp(mpfr_prec_t p = 64) { mpfr_init2(v, p); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  operator mpfr_ptr() { return v; }            // NOLINT
  operator mpfr_srcptr() const { return v; }   // NOLINT
  mpfr_t v;
};

// Sets MPFR's exponent range for the guard's lifetime.
struct ExpRange {
  ExpRange(mpfr_exp_t emin, mpfr_exp_t emax) : old_min(mpfr_get_emin()), old_max(mpfr_get_emax()) {
    mpfr_set_emin(emin);
    mpfr_set_emax(emax);
  }
  ~ExpRange() {
    mpfr_set_emin(old_min);
    mpfr_set_emax(old_max);
  }
  mpfr_exp_t old_min, old_max;
};

inline bool is_builtin(FpFunction fn) {
  return fn != FpFunction::Sigmoid && fn != FpFunction::Softplus && fn != FpFunction::Gelu;
}

// A builtin MPFR function rounded to nearest into y (returns the ternary value).
inline int builtin(FpFunction fn, mpfr_ptr y, mpfr_srcptr x) {
  switch (fn) {
    case FpFunction::Exp: return mpfr_exp(y, x, MPFR_RNDN);
    case FpFunction::Log: return mpfr_log(y, x, MPFR_RNDN);
    case FpFunction::Log1p: return mpfr_log1p(y, x, MPFR_RNDN);
    case FpFunction::Tanh: return mpfr_tanh(y, x, MPFR_RNDN);
    case FpFunction::Erf: return mpfr_erf(y, x, MPFR_RNDN);
    case FpFunction::Sin: return mpfr_sin(y, x, MPFR_RNDN);
    case FpFunction::Cos: return mpfr_cos(y, x, MPFR_RNDN);
    case FpFunction::Rsqrt: return mpfr_rec_sqrt(y, x, MPFR_RNDN);
    default: return 0;
  }
}

// z ~ fn(x) for a finite x inside fn's domain (not a pole), at z's precision (>= 600 bits).
// Returns the sign of fn(x) - z: the ternary for a builtin; for the composites (never exactly
// representable except sigmoid(0) = 1/2 and gelu(0) = 0) the side known from the function when z
// collapsed onto a simple value (0, 1, x); 2 when the side is unknown (z not special).
inline int reference_value(FpFunction fn, mpfr_srcptr x, mpfr_ptr z) {
  if (is_builtin(fn)) return -builtin(fn, z, x);
  const mpfr_prec_t w = mpfr_get_prec(z);
  Mp t(w), u(w);
  switch (fn) {
    case FpFunction::Sigmoid:  // e^x / (1 + e^x)
      if (mpfr_zero_p(x)) return mpfr_set_d(z, 0.5, MPFR_RNDN), 0;
      mpfr_exp(t, x, MPFR_RNDN);
      mpfr_add_ui(u, t, 1, MPFR_RNDN);
      mpfr_div(z, t, u, MPFR_RNDN);
      if (mpfr_inf_p(t)) mpfr_set_ui(z, 1, MPFR_RNDN);
      if (mpfr_cmp_ui(z, 1) == 0) return -1;
      return mpfr_zero_p(z) ? 1 : 2;
    case FpFunction::Softplus:  // log1p(e^x)
      mpfr_exp(t, x, MPFR_RNDN);
      mpfr_log1p(z, t, MPFR_RNDN);
      if (mpfr_inf_p(t)) mpfr_set(z, x, MPFR_RNDN);
      return (mpfr_zero_p(z) || mpfr_equal_p(z, x)) ? 1 : 2;
    case FpFunction::Gelu:  // x * (1 + erf(x / sqrt 2)) / 2
      if (mpfr_zero_p(x)) return mpfr_set(z, x, MPFR_RNDN), 0;
      mpfr_sqrt_ui(t, 2, MPFR_RNDN);
      mpfr_div(t, x, t, MPFR_RNDN);
      mpfr_erf(t, t, MPFR_RNDN);
      mpfr_add_ui(t, t, 1, MPFR_RNDN);
      mpfr_mul(z, x, t, MPFR_RNDN);
      mpfr_div_2ui(z, z, 1, MPFR_RNDN);
      if (mpfr_zero_p(z)) {
        mpfr_set_zero(z, mpfr_signbit(x) ? -1 : 1);
        return mpfr_signbit(x) ? -1 : 1;
      }
      return mpfr_equal_p(z, x) ? -1 : 2;
    default: return 2;
  }
}

}  // namespace denote::mpfr_test
