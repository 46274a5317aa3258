#include "denote/typed/dtype.h"

#include <gmp.h>

#include <fmt/format.h>

#include "denote/scalar/binary_context.h"
#include "typed/gmp_util.h"

namespace denote {

Word Word::from_limbs(std::vector<uint64_t> limbs) {
  while (!limbs.empty() && limbs.back() == 0) limbs.pop_back();
  return Word{std::move(limbs)};
}

int64_t Word::bit_length() const {
  if (limbs.empty()) return 0;
  return static_cast<int64_t>(limbs.size() - 1) * 64 + (64 - __builtin_clzll(limbs.back()));
}

namespace {

bool only(std::string_view s, std::string_view chars) {
  return !s.empty() && s.find_first_not_of(chars) == std::string_view::npos;
}

}  // namespace

Result<Word> parse_word(std::string_view text) {
  if (text.size() > kMaxWordTextChars)
    return error_status(
        fmt::format("word text of {} characters is too long (at most {})", text.size(), kMaxWordTextChars));
  const bool hex = text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  const std::string_view digits = hex ? text.substr(2) : text;
  if (!only(digits, hex ? "0123456789abcdefABCDEF" : "0123456789"))
    return error_status(fmt::format("malformed word '{}' (expected hex like 0x3f80 or decimal digits)", text));
  if (hex) {  // straight from the digits, 16 per limb
    std::vector<uint64_t> limbs((digits.size() + 15) / 16, 0);
    for (size_t k = 0; k < digits.size(); ++k) {
      const char c = digits[digits.size() - 1 - k];
      const uint64_t v = c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
      limbs[k / 16] |= v << (4 * (k % 16));
    }
    return Word::from_limbs(std::move(limbs));
  }
  gmp::Int z;
  mpz_set_str(z.z, std::string(digits).c_str(), 10);
  return gmp::to_word(z);
}

std::string to_hex(const Word& w) {
  if (w.limbs.empty()) return "0x0";
  std::string out = fmt::format("0x{:x}", w.limbs.back());
  for (size_t k = w.limbs.size() - 1; k-- > 0;) out += fmt::format("{:016x}", w.limbs[k]);
  return out;
}

namespace typed {

Status supported(const DType& t) {
  switch (t.kind) {
    case DKind::Bool: return ok_status();
    case DKind::Binary:
      return t.format.storage_bits() <= 64 ? ok_status() : error_status("binary formats hold at most 64 bits");
    case DKind::Int:
      if (t.width < 1) return error_status(fmt::format("int width {} is unsupported (expected >= 1)", t.width));
      if (t.width > kMaxIntWidth)
        return error_status(fmt::format("int width {} is unsupported (at most {})", t.width, kMaxIntWidth));
      return ok_status();
  }
  return error_status("unknown dtype kind");
}

bool is_supported(const DType& t) { return supported(t).ok(); }

namespace {

// "8" or "(8)" after the int/uint prefix; an error for anything else.
Result<int64_t> parse_width(std::string_view rest, std::string_view text) {
  if (rest.size() > 2 && rest.front() == '(' && rest.back() == ')') rest = rest.substr(1, rest.size() - 2);
  if (!only(rest, "0123456789") || rest.size() > 9)
    return error_status(fmt::format("malformed dtype '{}' (expected int8, uint16, int(W) or uint(W))", text));
  return static_cast<int64_t>(std::stoll(std::string(rest)));
}

}  // namespace

Result<DType> parse_dtype(std::string_view text) {
  if (text == "bool") return DType::boolean();
  const bool u = text.starts_with("uint");
  if (u || text.starts_with("int")) {
    DENOTE_ASSIGN_OR_RETURN(int64_t width, parse_width(text.substr(u ? 4 : 3), text));
    DType t = DType::integer(width, !u);
    DENOTE_RETURN_IF_ERROR(supported(t));
    return t;
  }
  auto f = parse_cast_target(text);
  if (!f.ok()) return error_status(fmt::format("unknown dtype '{}' ({})", text, f.message()));
  return DType::binary(*f);
}

std::string dtype_name(const DType& t) {
  switch (t.kind) {
    case DKind::Binary: return t.format.name;
    case DKind::Bool: return "bool";
    case DKind::Int: {
      const char* prefix = t.is_signed ? "int" : "uint";
      if (t.width == 8 || t.width == 16 || t.width == 32 || t.width == 64) return fmt::format("{}{}", prefix, t.width);
      return fmt::format("{}({})", prefix, t.width);
    }
  }
  return "?";
}

int64_t bit_width(const DType& t) {
  switch (t.kind) {
    case DKind::Binary: return t.format.storage_bits();
    case DKind::Bool: return 1;
    case DKind::Int: return t.width;
  }
  return 0;
}

size_t limb_count(const DType& t) {
  const int64_t bits = bit_width(t);
  return bits <= 0 ? 1 : static_cast<size_t>((bits + 63) / 64);
}

}  // namespace typed
}  // namespace denote
