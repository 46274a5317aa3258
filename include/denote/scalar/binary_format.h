// Binary floating-point formats as data: exponent bits E, fraction bits F, bias and encoding, for any
// format of at most 64 storage bits (sign + E + F). Words are the format's bit patterns in the low
// bits of a uint64_t. Named formats: binary16, bfloat16, binary32, binary64, e4m3fn, e4m3fnuz, e5m2,
// e5m2fnuz, e3m2fn, e2m3fn, e2m1fn, e8m0fnu; custom "binary(E,F)" is IEEE-encoded.
//
//   Result<BinaryFormat> f = parse_format("bfloat16");
//   classify(*f, 0x7fc0) == FloatClass::QuietNaN;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "denote/base/status.h"

namespace denote {

// ieee: all-ones exponent is inf (fraction 0) or NaN (quiet bit = fraction MSB).
// fn: no infinities; only all-ones exponent-and-fraction is NaN (e4m3fn).
// fnuz: no infinities, no negative zero; the single NaN is the negative-zero pattern; bias one larger.
// finite: no NaN, no infinities (fp6, fp4). e8m0: exponent only, unsigned, 0xFF is NaN, no zero.
enum class Encoding : uint8_t { Ieee, Fn, Fnuz, Finite, E8m0 };

enum class Rounding : uint8_t { NearestEven, TowardZero, Upward, Downward, NearestAway };

// Names as on the command line: nearest-even, toward-zero, upward, downward, nearest-away.
std::string_view rounding_name(Rounding r);
std::optional<Rounding> parse_rounding(std::string_view name);

// IEEE flags plus the conversion outcomes; accumulated (or-ed) by every operation.
enum FpFlag : uint32_t {
  kFpInvalid = 1u << 0,
  kFpDivByZero = 1u << 1,
  kFpOverflow = 1u << 2,
  kFpUnderflow = 1u << 3,  // tiny after rounding and inexact
  kFpInexact = 1u << 4,
  kFpSaturated = 1u << 5,
  kFpMappedSpecial = 1u << 6,
};
// "invalid,inexact" in the order above, or "-" for none.
std::string flags_to_string(uint32_t flags);

struct BinaryFormat {
  int exp_bits = 8;   // E >= 1 (E >= 2 for ieee)
  int frac_bits = 23; // F >= 0
  int bias = 127;
  Encoding encoding = Encoding::Ieee;
  std::string name = "binary32";

  bool has_sign() const { return encoding != Encoding::E8m0; }
  int storage_bits() const { return (has_sign() ? 1 : 0) + exp_bits + frac_bits; }
  uint64_t word_mask() const { return storage_bits() == 64 ? ~uint64_t{0} : (uint64_t{1} << storage_bits()) - 1; }
  int precision() const { return frac_bits + 1; }
  bool has_inf() const { return encoding == Encoding::Ieee; }
  bool has_nan() const { return encoding != Encoding::Finite; }
  bool has_negative_zero() const { return encoding == Encoding::Ieee || encoding == Encoding::Fn || encoding == Encoding::Finite; }
  // Unbiased exponent of the smallest normal number (e8m0: of its smallest value, 2^-bias) and of
  // the largest finite number.
  int emin() const { return encoding == Encoding::E8m0 ? -bias : 1 - bias; }
  int emax() const;
  bool operator==(const BinaryFormat& o) const {
    return exp_bits == o.exp_bits && frac_bits == o.frac_bits && bias == o.bias && encoding == o.encoding;
  }
};

// A named format or "binary(E,F)" (IEEE encoding, bias 2^(E-1)-1); an error names what is wrong
// (unknown name, E or F out of range, more than 64 storage bits).
Result<BinaryFormat> parse_format(std::string_view name);
BinaryFormat binary32_format();
BinaryFormat binary64_format();

enum class FloatClass : uint8_t { Zero, Subnormal, Normal, Infinite, QuietNaN, SignalingNaN };

// An error if the word has bits above the format's width.
Status check_word(const BinaryFormat& f, uint64_t word);
FloatClass classify(const BinaryFormat& f, uint64_t word);
bool is_nan(const BinaryFormat& f, uint64_t word);
bool sign_bit(const BinaryFormat& f, uint64_t word);

// Special words of a format.
uint64_t canonical_nan(const BinaryFormat& f);  // quiet NaN, positive, payload 0 (fn/fnuz: the NaN pattern)
uint64_t max_finite(const BinaryFormat& f, bool negative);
uint64_t infinity_word(const BinaryFormat& f, bool negative);  // only when has_inf()
uint64_t zero_word(const BinaryFormat& f, bool negative);     // +0 where -0 does not exist

// The exact value of a finite word as a double when it fits (every format with p <= 53 and an
// exponent range inside binary64's); NaN/inf map to NaN/inf.
double word_to_double(const BinaryFormat& f, uint64_t word);

}  // namespace denote
