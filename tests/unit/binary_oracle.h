// Test-only MPFR oracle for binary-format arithmetic, written independently of src/scalar: it decodes
// words itself, lets MPFR compute the correctly rounded result with the format's exponent range
// (mpfr_set_emin/emax + mpfr_subnormalize), derives the IEEE flags from MPFR's flags and ternary
// values, applies the documented encoding rules (fn/fnuz overflow -> NaN, finite -> saturate, NaN
// rule) and encodes the word itself. Not for e8m0 (checked by hand facts instead).
//
//   OracleOut o = oracle_binary(e4m3fn, Rounding::NearestEven, OracleOp::Add, 0x38, 0x38);
//   // o.word == 0x40 (1 + 1 = 2), o.flags == 0
#pragma once

#include <cstdint>
#include <string>

#include "denote/scalar/binary_format.h"

namespace denote::testing {

enum class OracleOp { Add, Sub, Mul, Div, Sqrt, Fma };

struct OracleOut {
  uint64_t word = 0;
  uint32_t flags = 0;
  bool error = false;  // the operation has no value in the format (finite formats: invalid)
};

// The correctly rounded a op b (sqrt uses a; fma computes a*b+c).
OracleOut oracle_binary(const BinaryFormat& f, Rounding r, OracleOp op, uint64_t a, uint64_t b = 0,
                        uint64_t c = 0);
// A float (any value, NaN/inf included) converted to f, optionally saturating.
OracleOut oracle_from_float(const BinaryFormat& f, Rounding r, float x, bool saturate);
// The exact value of a finite word as a double (formats inside binary64's range).
double oracle_value(const BinaryFormat& f, uint64_t w);
bool oracle_is_nan(const BinaryFormat& f, uint64_t w);

std::string oracle_op_name(OracleOp op);

}  // namespace denote::testing
