// One step up / down in a binary floating-point type, inline: the values of std::nextafter(x, +inf)
// and std::nextafter(x, -inf) for every x (zeros, subnormals, the largest finite values, infinities
// and NaN included), without the libm call, which was 14% of a prepared IBP pass over mnistfc and 6%
// of a branch-and-bound run. Outward rounding in bounds/ is built on these.
//
//   next_up(1.0) == 1.0 + 0x1p-52;  next_down(0.0) == -0x1p-1074;  next_up(INFINITY) == INFINITY
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace denote {

template <class T>
inline T next_up(T x) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>);
  using U = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;
  if (!(x < std::numeric_limits<T>::infinity())) return x;  // +inf, NaN
  if (x == T(0)) return std::numeric_limits<T>::denorm_min();
  const U b = std::bit_cast<U>(x);
  return std::bit_cast<T>(x > T(0) ? U(b + 1) : U(b - 1));
}

template <class T>
inline T next_down(T x) {
  static_assert(std::is_same_v<T, double> || std::is_same_v<T, float>);
  using U = std::conditional_t<std::is_same_v<T, double>, uint64_t, uint32_t>;
  if (!(x > -std::numeric_limits<T>::infinity())) return x;  // -inf, NaN
  if (x == T(0)) return -std::numeric_limits<T>::denorm_min();
  const U b = std::bit_cast<U>(x);
  return std::bit_cast<T>(x > T(0) ? U(b - 1) : U(b + 1));
}

}  // namespace denote
