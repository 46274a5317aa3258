// tune_allocator_for_throughput (include/denote/base/allocator.h): on glibc it must take effect
// (an earlier version tested __GLIBC__ before any libc header had defined it and silently did
// nothing), and calling it twice is harmless. Under ASan (its own allocator) it may do nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "denote/base/allocator.h"
#include "sanitized.h"

namespace denote {
namespace {

TEST(Allocator, TuningTakesEffectOnGlibc) {
  if (denote::testing::sanitized_build()) {
    (void)tune_allocator_for_throughput();  // ASan's own allocator refuses mallopt: nothing to check
  } else {
#if defined(__GLIBC__)
    EXPECT_TRUE(tune_allocator_for_throughput());
    EXPECT_TRUE(tune_allocator_for_throughput());
#else
    EXPECT_FALSE(tune_allocator_for_throughput());
#endif
  }
  // Large blocks still allocate, fill and free as before.
  for (int k = 0; k < 4; ++k) {
    std::vector<double> big(size_t{1} << 20, 1.5);
    EXPECT_EQ(big[big.size() - 1], 1.5);
  }
}

}  // namespace
}  // namespace denote
