// Element types of typed reference execution (docs/TYPED.md): DType = binary(format) | bool |
// int(width >= 1, signed or unsigned), and Word, the unsigned element word every dtype is stored as
// (a signed integer as its two's-complement bits, a bool as 0 or 1, a binary value as its encoding).
// A Word is a natural number of any size: little-endian 64-bit limbs without high zero limbs, so
// int(300) words need no special case. Integers wider than 64 bits are computed with GMP.
//
//   Result<DType> t = typed::parse_dtype("int(65)");   // signed, width 65
//   typed::dtype_name(*t) == "int(65)";  typed::limb_count(*t) == 2
//   Result<Word> w = parse_word("0x1ff");             // Word{{0x1ff}}
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/scalar/binary_format.h"

namespace denote {

// A natural number as little-endian 64-bit limbs with no high zero limb (zero: no limbs).
struct Word {
  std::vector<uint64_t> limbs;
  static Word of(uint64_t v) { return v == 0 ? Word{} : Word{{v}}; }
  // Drops high zero limbs (the invariant above).
  static Word from_limbs(std::vector<uint64_t> limbs);
  int64_t bit_length() const;
  uint64_t low() const { return limbs.empty() ? 0 : limbs[0]; }
  bool operator==(const Word&) const = default;
};

// "0x" + hex digits (any length, case-insensitive) or plain decimal digits; at most
// kMaxWordTextChars characters. An error names the text and what was expected.
inline constexpr size_t kMaxWordTextChars = 40000;
Result<Word> parse_word(std::string_view text);
// Lower-case hex with "0x"; zero is "0x0".
std::string to_hex(const Word& w);

namespace typed {

enum class DKind : uint8_t { Binary, Bool, Int };

// Widths above this are unsupported (a bound on memory, not a semantic limit).
inline constexpr int64_t kMaxIntWidth = int64_t{1} << 16;

struct DType {
  DKind kind = DKind::Bool;
  BinaryFormat format;   // Binary only
  int64_t width = 0;     // Int only
  bool is_signed = false;  // Int only

  static DType binary(BinaryFormat f) { return DType{DKind::Binary, std::move(f), 0, false}; }
  static DType boolean() { return DType{}; }
  static DType integer(int64_t width, bool is_signed) { return DType{DKind::Int, {}, width, is_signed}; }
  bool is_int() const { return kind == DKind::Int; }
  bool is_bool() const { return kind == DKind::Bool; }
  bool is_binary() const { return kind == DKind::Binary; }
  bool operator==(const DType& o) const {
    if (kind != o.kind) return false;
    if (kind == DKind::Binary) return format == o.format;
    return kind == DKind::Bool || (width == o.width && is_signed == o.is_signed);
  }
};

// ok, or an error saying why (int(0), a width above kMaxIntWidth, a malformed format).
Status supported(const DType& t);
bool is_supported(const DType& t);

// Format names and binary(E,F), f32/f64 (binary32/binary64), bool, int8/16/32/64, uint8/16/32/64,
// int(W), uint(W); an unsupported dtype is an error.
Result<DType> parse_dtype(std::string_view text);
// "bfloat16", "bool", "int8", "uint64", "int(65)", "uint(7)" (parse_dtype reads it back).
std::string dtype_name(const DType& t);

// Bits of an element word: the format's storage bits, 1 for bool, the width for ints.
int64_t bit_width(const DType& t);
// 64-bit limbs per element in a TypedTensor: ceil(bit_width / 64).
size_t limb_count(const DType& t);

}  // namespace typed
}  // namespace denote
