// A requested provider is one this build and machine have. `prefer:P` falls back to other providers where P
// has no capsule for an op; a P that is not here at all (a typo, cuda on a machine without it) would make
// every op fall back and the run go silently elsewhere: that is an error naming what is here instead.
// (`only:P` fails at planning with the op that has no capsule; `auto` takes what is here.)
//
//   PlanPolicy p;  parse_provider_policy("prefer:cuda", p);
//   Status s = check_provider_present(p, detect_environment());  // kInvalidInput on a CPU-only machine
#pragma once

#include "denote/base/status.h"
#include "denote/plan/planner.h"
#include "denote/plan/registry.h"

namespace denote {

Status check_provider_present(const PlanPolicy& policy, const Environment& env);

}  // namespace denote
