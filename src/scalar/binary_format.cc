// Binary-format descriptors: named formats, parsing, word classification and special words.
#include "denote/scalar/binary_format.h"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>

#include "scalar/binary_round.h"

namespace denote {
namespace {

constexpr int kMaxCustomExpBits = 30;  // keeps bias and exponent arithmetic inside int
constexpr int kMaxStorageBits = 64;

BinaryFormat make_format(int e, int f, int bias, Encoding enc, const char* name) {
  BinaryFormat out;
  out.exp_bits = e;
  out.frac_bits = f;
  out.bias = bias;
  out.encoding = enc;
  out.name = name;
  return out;
}

struct NamedFormat {
  const char* name;
  int e, f, bias;
  Encoding enc;
};

// Parameters from IEEE 754-2019 (binary16/32/64), bfloat16, and the OCP 8-bit / MX specifications
// (ml_dtypes names): e4m3fn bias 7, e4m3fnuz bias 8, e5m2 bias 15, e5m2fnuz bias 16, e3m2fn bias 3,
// e2m3fn bias 1, e2m1fn bias 1, e8m0fnu bias 127.
constexpr std::array<NamedFormat, 12> kNamed = {{
    {"binary16", 5, 10, 15, Encoding::Ieee},
    {"bfloat16", 8, 7, 127, Encoding::Ieee},
    {"binary32", 8, 23, 127, Encoding::Ieee},
    {"binary64", 11, 52, 1023, Encoding::Ieee},
    {"e4m3fn", 4, 3, 7, Encoding::Fn},
    {"e4m3fnuz", 4, 3, 8, Encoding::Fnuz},
    {"e5m2", 5, 2, 15, Encoding::Ieee},
    {"e5m2fnuz", 5, 2, 16, Encoding::Fnuz},
    {"e3m2fn", 3, 2, 3, Encoding::Finite},
    {"e2m3fn", 2, 3, 1, Encoding::Finite},
    {"e2m1fn", 2, 1, 1, Encoding::Finite},
    {"e8m0fnu", 8, 0, 127, Encoding::E8m0},
}};

std::string named_list() {
  std::string s;
  for (const NamedFormat& n : kNamed) {
    s += n.name;
    s += ", ";
  }
  return s + "or binary(E,F)";
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

bool parse_small_int(std::string_view s, int& out) {
  s = trim(s);
  if (s.empty() || s.size() > 6) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

Result<BinaryFormat> parse_custom(std::string_view full, std::string_view inner) {
  size_t comma = inner.find(',');
  int e = 0;
  int f = 0;
  if (comma == std::string_view::npos || !parse_small_int(inner.substr(0, comma), e) ||
      !parse_small_int(inner.substr(comma + 1), f)) {
    return error_status(fmt::format("format: binary(E,F) needs two integers E and F, got '{}'", full));
  }
  if (e < 2 || e > kMaxCustomExpBits) {
    return error_status(fmt::format("format: exponent bits E={} out of range 2..{} in '{}'", e,
                                    kMaxCustomExpBits, full));
  }
  if (f < 1 || f > kMaxStorageBits - 3) {
    return error_status(fmt::format("format: fraction bits F={} out of range 1..{} in '{}'", f,
                                    kMaxStorageBits - 3, full));
  }
  if (1 + e + f > kMaxStorageBits) {
    return error_status(fmt::format("format: 1 + E + F = {} storage bits exceeds {} in '{}'", 1 + e + f,
                                    kMaxStorageBits, full));
  }
  std::string name = fmt::format("binary({},{})", e, f);
  return make_format(e, f, (1 << (e - 1)) - 1, Encoding::Ieee, name.c_str());
}

uint64_t exp_field_ones(const BinaryFormat& f) { return (uint64_t{1} << f.exp_bits) - 1; }
uint64_t frac_ones(const BinaryFormat& f) { return (uint64_t{1} << f.frac_bits) - 1; }
uint64_t sign_mask(const BinaryFormat& f) {
  return f.has_sign() ? uint64_t{1} << (f.exp_bits + f.frac_bits) : 0;
}

}  // namespace

std::string_view rounding_name(Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return "nearest-even";
    case Rounding::TowardZero: return "toward-zero";
    case Rounding::Upward: return "upward";
    case Rounding::Downward: return "downward";
    case Rounding::NearestAway: return "nearest-away";
  }
  return "nearest-even";
}

std::optional<Rounding> parse_rounding(std::string_view name) {
  for (Rounding r : {Rounding::NearestEven, Rounding::TowardZero, Rounding::Upward, Rounding::Downward,
                     Rounding::NearestAway}) {
    if (rounding_name(r) == name) return r;
  }
  return std::nullopt;
}

std::string flags_to_string(uint32_t flags) {
  static constexpr std::array<const char*, 7> kNames = {
      "invalid", "divide-by-zero", "overflow", "underflow", "inexact", "saturated", "mapped-special"};
  std::string s;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if ((flags >> i) & 1u) {
      if (!s.empty()) s += ',';
      s += kNames[i];
    }
  }
  return s.empty() ? "-" : s;
}

int BinaryFormat::emax() const { return static_cast<int>(format_emax(*this)); }

Result<BinaryFormat> parse_format(std::string_view name) {
  std::string_view s = trim(name);
  for (const NamedFormat& n : kNamed) {
    if (s == n.name) return make_format(n.e, n.f, n.bias, n.enc, n.name);
  }
  constexpr std::string_view kPrefix = "binary(";
  if (s.size() > kPrefix.size() && s.substr(0, kPrefix.size()) == kPrefix && s.back() == ')') {
    return parse_custom(s, s.substr(kPrefix.size(), s.size() - kPrefix.size() - 1));
  }
  return error_status(fmt::format("format: unknown format '{}' (expected {})", name, named_list()));
}

BinaryFormat binary32_format() { return make_format(8, 23, 127, Encoding::Ieee, "binary32"); }
BinaryFormat binary64_format() { return make_format(11, 52, 1023, Encoding::Ieee, "binary64"); }

Status check_word(const BinaryFormat& f, uint64_t word) {
  if ((word & ~f.word_mask()) == 0) return ok_status();
  return error_status(fmt::format("{}: word {:#x} has bits above the format's {} bits", f.name, word,
                                  f.storage_bits()));
}

FloatClass classify(const BinaryFormat& f, uint64_t word) { return decode_word(f, word).cls; }

bool is_nan(const BinaryFormat& f, uint64_t word) {
  FloatClass c = classify(f, word);
  return c == FloatClass::QuietNaN || c == FloatClass::SignalingNaN;
}

bool sign_bit(const BinaryFormat& f, uint64_t word) { return (word & sign_mask(f)) != 0; }

uint64_t canonical_nan(const BinaryFormat& f) {
  switch (f.encoding) {
    case Encoding::Ieee:
      return (exp_field_ones(f) << f.frac_bits) | (uint64_t{1} << (f.frac_bits - 1));
    case Encoding::Fn:
      return (exp_field_ones(f) << f.frac_bits) | frac_ones(f);
    case Encoding::Fnuz:
      return sign_mask(f);
    case Encoding::E8m0:
      return exp_field_ones(f);
    case Encoding::Finite:
      return 0;  // no NaN: callers report an error instead
  }
  return 0;
}

uint64_t max_finite(const BinaryFormat& f, bool negative) {
  uint64_t w = 0;
  switch (f.encoding) {
    case Encoding::Ieee:
    case Encoding::E8m0:
      w = ((exp_field_ones(f) - 1) << f.frac_bits) | frac_ones(f);
      break;
    case Encoding::Fn:
      w = f.frac_bits == 0 ? (exp_field_ones(f) - 1) << f.frac_bits
                           : (exp_field_ones(f) << f.frac_bits) | (frac_ones(f) - 1);
      break;
    case Encoding::Fnuz:
    case Encoding::Finite:
      w = (exp_field_ones(f) << f.frac_bits) | frac_ones(f);
      break;
  }
  return negative ? w | sign_mask(f) : w;
}

uint64_t infinity_word(const BinaryFormat& f, bool negative) {
  if (!f.has_inf()) return canonical_nan(f);
  return (exp_field_ones(f) << f.frac_bits) | (negative ? sign_mask(f) : 0);
}

uint64_t zero_word(const BinaryFormat& f, bool negative) {
  if (f.encoding == Encoding::E8m0) return canonical_nan(f);  // e8m0 has no zero
  return negative && f.has_negative_zero() ? sign_mask(f) : 0;
}

double word_to_double(const BinaryFormat& f, uint64_t word) {
  FloatClass c = classify(f, word);
  bool neg = sign_bit(f, word);
  if (c == FloatClass::QuietNaN || c == FloatClass::SignalingNaN) return std::nan("");
  if (c == FloatClass::Infinite) return neg ? -HUGE_VAL : HUGE_VAL;
  Unpacked u = unpack_finite(f, word);
  double v = std::ldexp(static_cast<double>(u.sig), static_cast<int>(u.exp));
  return neg ? -v : v;
}

}  // namespace denote
