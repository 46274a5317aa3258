// The precision options of `denote run` and `denote bench` (docs/CLI.md): --arith STORAGE --accumulate
// FORMAT, --policy FILE.json, --arith mxFORMAT[,weights=F][,block=N|,scale=tensor], read into the
// library's one PolicyRequest (include/denote/typed/policy.h) so both commands and Python agree.
#pragma once

#include <string>

#include "denote/ir/model.h"
#include "denote/typed/policy.h"

namespace denote::cli {

struct PolicyArgs {
  std::string arith, accumulate, policy_path, rounding = "nearest-even";
  bool provider_given = false;
};

// Whether the options ask for a policy or an MX arithmetic at all.
bool wants_policy(const PolicyArgs& a);

// The usage problem of the options (exit 2: a bad rounding, spec, format pair, --provider), or "".
std::string policy_usage_problem(const PolicyArgs& a);
// Reads the policy file (if any) and prepares the runner for m (which must outlive it); errors are
// the file's or the model's (exit 1).
Result<PolicyRunner> prepare_policy(const Model& m, const PolicyArgs& a);

}  // namespace denote::cli
