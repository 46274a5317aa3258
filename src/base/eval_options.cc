#include "denote/base/eval_options.h"

#include <unistd.h>

namespace denote {

namespace {

int64_t half_of_physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) / 2 * static_cast<int64_t>(page);
}

}  // namespace

// Read once: sysconf(_SC_PHYS_PAGES) is a sysinfo system call, which cost about a tenth of a
// batch-1 gradient of the ACAS Xu network when every evaluation asked again.
int64_t default_max_bytes() {
  static const int64_t bytes = half_of_physical_memory();
  return bytes;
}

}  // namespace denote
