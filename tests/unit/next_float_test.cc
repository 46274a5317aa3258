// next_up / next_down (include/denote/base/next_float.h) against std::nextafter toward +-inf, bit for
// bit, for float and double: signed zeros, the least and largest subnormals, the least normal, one,
// the largest finite values, infinities, NaN, and a million random bit patterns of each type.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "denote/base/next_float.h"

namespace denote {
namespace {

template <class T, class U>
void check_all() {
  using L = std::numeric_limits<T>;
  std::vector<T> xs = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(),
                       std::bit_cast<T>(std::bit_cast<U>(L::min()) - 1), T(1), T(-1), L::max(), -L::max(),
                       L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN()};
  std::mt19937_64 rng(3);
  for (int i = 0; i < 1'000'000; ++i) xs.push_back(std::bit_cast<T>(static_cast<U>(rng())));
  int bad = 0;
  for (T x : xs) {
    const U up = std::bit_cast<U>(next_up(x)), want_up = std::bit_cast<U>(std::nextafter(x, L::infinity()));
    const U dn = std::bit_cast<U>(next_down(x)), want_dn = std::bit_cast<U>(std::nextafter(x, -L::infinity()));
    const bool nan = std::isnan(x);  // NaN in, NaN out (nextafter may return either operand's payload)
    if (nan ? !(std::isnan(next_up(x)) && std::isnan(next_down(x))) : (up != want_up || dn != want_dn))
      if (++bad <= 4) ADD_FAILURE() << std::hexfloat << x << ": up " << next_up(x) << " down " << next_down(x);
  }
  EXPECT_EQ(bad, 0);
}

TEST(NextFloat, DoubleEqualsNextafter) { check_all<double, uint64_t>(); }
TEST(NextFloat, FloatEqualsNextafter) { check_all<float, uint32_t>(); }

}  // namespace
}  // namespace denote
