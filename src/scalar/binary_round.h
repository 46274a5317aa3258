// Internal: the one rounding routine of the binary-format layer, plus word unpacking. Every
// arithmetic result is described exactly as (sign, integer significand, exponent, sticky) and turned
// into a word of the format here, in one rounding step.
//
//   // 3 * 2^-1 = 1.5 rounded to e2m1fn, exact:
//   uint64_t w = round_pack(e2m1, env, false, 3, -1, false, false);   // 0x3
#pragma once

#include <cstdint>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_ops.h"

namespace denote {

using u128 = unsigned __int128;

// A finite nonzero-or-zero word as sig * 2^exp (sig == 0 for zeros); neg is the sign bit.
struct Unpacked {
  bool neg = false;
  uint64_t sig = 0;
  int64_t exp = 0;
};

// Exponent of the smallest normal number (e8m0: of the smallest number, 2^-127).
inline int64_t min_normal_exp(const BinaryFormat& f) {
  return f.encoding == Encoding::E8m0 ? -static_cast<int64_t>(f.bias) : 1 - static_cast<int64_t>(f.bias);
}
// Exponent of the unit in the last place of subnormals (the smallest positive number).
inline int64_t min_quantum_exp(const BinaryFormat& f) { return min_normal_exp(f) - f.frac_bits; }

inline uint64_t sign_mask_of(const BinaryFormat& f) {
  return f.has_sign() ? uint64_t{1} << (f.exp_bits + f.frac_bits) : 0;
}

// A word taken apart: its class, sign and, for finite words, |x| = sig * 2^exp (sig == 0 for zeros).
struct Decoded {
  FloatClass cls = FloatClass::Zero;
  bool neg = false;
  uint64_t sig = 0;
  int64_t exp = 0;
  bool is_nan() const { return cls == FloatClass::QuietNaN || cls == FloatClass::SignalingNaN; }
};

inline Decoded decode_word(const BinaryFormat& f, uint64_t w) {
  const uint64_t frac_mask = (uint64_t{1} << f.frac_bits) - 1;
  const uint64_t ones = (uint64_t{1} << f.exp_bits) - 1;
  const uint64_t frac = w & frac_mask;
  const uint64_t field = (w >> f.frac_bits) & ones;
  Decoded d;
  d.neg = (w & sign_mask_of(f)) != 0;
  d.sig = field == 0 ? frac : frac | (uint64_t{1} << f.frac_bits);
  d.exp = static_cast<int64_t>(field == 0 ? 1 : field) - f.bias - f.frac_bits;
  switch (f.encoding) {
    case Encoding::Ieee:
      if (field == ones) {
        d.cls = frac == 0 ? FloatClass::Infinite
                          : (((frac >> (f.frac_bits - 1)) & 1) ? FloatClass::QuietNaN : FloatClass::SignalingNaN);
        return d;
      }
      break;
    case Encoding::Fn:
      if (field == ones && frac == frac_mask) {
        d.cls = FloatClass::QuietNaN;
        return d;
      }
      break;
    case Encoding::Fnuz:
      if ((w & f.word_mask()) == sign_mask_of(f)) {
        d.cls = FloatClass::QuietNaN;
        return d;
      }
      break;
    case Encoding::Finite:
      break;
    case Encoding::E8m0:
      d.cls = field == ones ? FloatClass::QuietNaN : FloatClass::Normal;
      d.sig = 1;
      d.exp = static_cast<int64_t>(field) - f.bias;
      return d;
  }
  d.cls = field == 0 ? (frac == 0 ? FloatClass::Zero : FloatClass::Subnormal) : FloatClass::Normal;
  return d;
}

// The value of a finite word (zero, subnormal or normal; not NaN/inf).
inline Unpacked unpack_finite(const BinaryFormat& f, uint64_t word) {
  Decoded d = decode_word(f, word);
  return Unpacked{d.neg, d.sig, d.exp};
}

// BinaryFormat::emax, inline for the hot paths.
inline int64_t format_emax(const BinaryFormat& f) {
  int64_t top = (int64_t{1} << f.exp_bits) - 1;
  bool top_is_special = f.encoding == Encoding::Ieee || f.encoding == Encoding::E8m0 ||
                        (f.encoding == Encoding::Fn && f.frac_bits == 0);
  return top - (top_is_special ? 1 : 0) - f.bias;
}

// Rounds sig * 2^-shift to an integer in `mode` (shift >= 0); sets inexact when bits were dropped.
uint64_t round_to_integer(uint64_t sig, int64_t shift, Rounding mode, bool neg, bool& inexact);

// Rounds (-1)^neg * (sig + s) * 2^exp, where s is 0 when !sticky and strictly between 0 and 1
// otherwise, to the format in env.rounding, raising inexact/underflow/overflow (and saturated).
// Precondition: when sticky, sig has at least precision + 1 bits. sig == 0 && !sticky is an exact
// zero with sign neg. Overflow follows IEEE 754-2019 7.4 and the encoding: inf where the format has
// it, else max finite (finite formats, or any format with `saturate`: flag saturated) or NaN (fn,
// fnuz, e8m0).
// Negative or zero values in e8m0 have no value there: NaN with invalid.
uint64_t round_pack(const BinaryFormat& f, FpEnv& env, bool neg, uint64_t sig, int64_t exp, bool sticky,
                    bool saturate);
// The same for a 128-bit significand.
uint64_t round_pack_wide(const BinaryFormat& f, FpEnv& env, bool neg, u128 sig, int64_t exp, bool sticky,
                         bool saturate);
// Rounds the exact (finite, normal-range) double x; used by the double fast path where x is exact or
// the caller adds sticky via round_pack directly.
uint64_t round_double(const BinaryFormat& f, FpEnv& env, double x, bool saturate);

// The sign, 53-bit significand and exponent of a finite double: |x| = sig * 2^exp.
inline void decode_double(double x, bool& neg, uint64_t& sig, int64_t& exp) {
  uint64_t bits = __builtin_bit_cast(uint64_t, x);
  neg = (bits >> 63) != 0;
  uint64_t be = (bits >> 52) & 0x7ff;
  uint64_t mant = bits & ((uint64_t{1} << 52) - 1);
  sig = be == 0 ? mant : mant | (uint64_t{1} << 52);
  exp = be == 0 ? -1074 : static_cast<int64_t>(be) - 1075;
}

// Formats whose every value is exact in a double and whose products are exact too: p <= 24 and an
// exponent range inside binary32's.
inline bool fast_format(const BinaryFormat& f) {
  return f.frac_bits <= 23 && format_emax(f) <= 127 && min_quantum_exp(f) >= -149;
}

// Bit helpers.
inline int bit_length(uint64_t x) { return x == 0 ? 0 : 64 - __builtin_clzll(x); }
inline int bit_length_wide(u128 x) {
  uint64_t hi = static_cast<uint64_t>(x >> 64);
  return hi != 0 ? 64 + bit_length(hi) : bit_length(static_cast<uint64_t>(x));
}
// The word for an exact infinite result (x/0): inf where the format has it, NaN in fn/fnuz/e8m0
// (the sign kept where the NaN has one), +-max with saturated in finite formats.
uint64_t infinite_result(const BinaryFormat& f, FpEnv& env, bool neg);

// Records an error (first one kept) and raises invalid.
void set_error(FpEnv& env, std::string message);

}  // namespace denote
