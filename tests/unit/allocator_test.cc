// tune_allocator_for_throughput (include/denote/base/allocator.h): on glibc it must take effect
// (an earlier version tested __GLIBC__ before any libc header had defined it and silently did
// nothing), and calling it twice is harmless. Under ASan (its own allocator) it may do nothing.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "bounds/crown_state.h"
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

// The CROWN engines' large buffers outlive their Workspace in the thread's pool only where the
// allocator is tuned: the next Workspace then gets the same memory back, its contents kept (no zeroing).
TEST(Allocator, LargeCoefficientBuffersOutliveTheirWorkspaceWhenTuned) {
  (void)tune_allocator_for_throughput();
  const size_t n = crown::LargePool::kMinDoubles + 5;
  const double* first = nullptr;
  {
    crown::Workspace ws;
    std::vector<double> v = ws.take(n);
    v[n - 4] = 7.0;
    first = v.data();
    ws.give(std::move(v));
  }
  crown::Workspace again;
  std::vector<double> v = again.take(n - 3);
  ASSERT_EQ(v.size(), n - 3);
  if (allocator_tuned()) {
    EXPECT_EQ(v.data(), first);
    EXPECT_EQ(v[n - 4], 7.0);  // kept, not zeroed
  }
  std::vector<double> small = again.take(100);  // below the pool's size: plain
  EXPECT_EQ(small.size(), 100u);
}

}  // namespace
}  // namespace denote
