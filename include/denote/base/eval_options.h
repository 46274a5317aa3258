// Limits and options every evaluating pass reads (evaluation, plan execution, IBP, typed
// execution). Kept in base/ so the op rules (src/ops) and the passes above them share it without
// an include cycle.
//
//   EvalOptions o;
//   o.max_elements = 1 << 20;   // a larger value is an error naming the node, not an allocation
//   o.max_bytes = 512 << 20;    // the values alive at once may take at most 512 MiB
#pragma once

#include <cstdint>

namespace denote {

struct EvalOptions {
  // Largest element count a single value may have; larger ones are an error, not an allocation.
  int64_t max_elements = int64_t{1} << 31;
  // Memory budget in bytes for the values alive at once (the graph walk frees a value after its
  // last reader when the caller does not want the whole table). A node whose value would exceed
  // it is an error naming the node and the bytes needed, checked before allocating.
  // 0: the default, half of this machine's physical memory.
  int64_t max_bytes = 0;
};

// Half of the physical memory (sysconf), or 4 GiB when the system does not say.
int64_t default_max_bytes();

// options.max_bytes, or default_max_bytes() when it is 0.
inline int64_t effective_max_bytes(const EvalOptions& options) {
  return options.max_bytes > 0 ? options.max_bytes : default_max_bytes();
}

}  // namespace denote
