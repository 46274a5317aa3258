// Overflow-checked integer arithmetic for dimensions and element counts. Every product of dims in
// denote goes through these, so absurd shapes become errors instead of wraparound.
//
//   std::optional<int64_t> n = checked_mul(a, b);   // nullopt on overflow or negative operand
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

namespace denote {

// Largest element count any tensor may have (2^62): keeps every derived offset in int64 range.
inline constexpr int64_t kMaxElements = int64_t{1} << 62;

inline std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  if (a < 0 || b < 0) return std::nullopt;
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r) || r > kMaxElements) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

}  // namespace denote
