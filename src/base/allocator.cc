// Process-wide malloc settings (include/denote/base/allocator.h).
#include "denote/base/allocator.h"

#include <atomic>
#include <cstdlib>  // defines __GLIBC__ on glibc
#if defined(__GLIBC__) && __has_include(<malloc.h>)
#include <malloc.h>
#define DENOTE_HAVE_MALLOPT 1
#endif

namespace denote {

namespace {
std::atomic<bool> g_tuned{false};
}  // namespace

bool allocator_tuned() { return g_tuned.load(std::memory_order_relaxed); }

bool tune_allocator_for_throughput() {
#ifdef DENOTE_HAVE_MALLOPT
  constexpr int kMmapThreshold = 32 << 20, kTrimThreshold = 128 << 20;
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
  if (mmap_ok && trim_ok) g_tuned.store(true, std::memory_order_relaxed);
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace denote
