// Limits and options every evaluating pass reads (evaluation, plan execution, IBP, typed
// execution). Kept in base/ so the op rules (src/ops) and the passes above them share it without
// an include cycle.
//
//   EvalOptions o;
//   o.max_elements = 1 << 20;   // a larger value is an error naming the node, not an allocation
#pragma once

#include <cstdint>

namespace denote {

struct EvalOptions {
  // Largest element count a single value may have; larger ones are an error, not an allocation.
  int64_t max_elements = int64_t{1} << 31;
};

}  // namespace denote
