#include "denote/base/eval_options.h"

#include <unistd.h>

namespace denote {

int64_t default_max_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return int64_t{4} << 30;
  return static_cast<int64_t>(pages) / 2 * static_cast<int64_t>(page);
}

}  // namespace denote
