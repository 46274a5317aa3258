// Model.run(..., arith=STORAGE, accumulate=FORMAT): a precision policy (include/denote/typed/policy.h)
// lowered once per (storage, accumulate, rounding) and run by the typed interpreter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common.h"

namespace denote::python {

struct PolicyRun {
  std::vector<int64_t> ids;        // the model's node ids the arrays belong to
  std::vector<py::object> arrays;  // float64 values of the storage (or accumulation) format
  uint32_t flags = 0;
};

// policy_json non-empty: a policy file's text (docs/NUMERICS.md), which names storage and accumulate.
PolicyRun run_policy(PyModel& self, const py::args& inputs, const std::string& storage, const std::string& accumulate,
                     const std::string& rounding, bool all_nodes, int64_t max_bytes,
                     const std::string& policy_json = {});

}  // namespace denote::python
