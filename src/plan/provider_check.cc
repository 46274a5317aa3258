// include/denote/plan/provider_check.h
#include "denote/plan/provider_check.h"

#include <algorithm>

namespace denote {

Status check_provider_present(const PlanPolicy& policy, const Environment& env) {
  if (policy.mode != ProviderMode::Prefer) return ok_status();
  const auto& have = env.providers;
  if (std::find(have.begin(), have.end(), policy.provider) != have.end()) return ok_status();
  std::string list;
  for (const std::string& p : have) list += (list.empty() ? "" : ", ") + p;
  return Status::error(ErrorCode::kInvalidInput,
                       "provider prefer:" + policy.provider + ": " + policy.provider +
                           " is not available in this build on this machine (available: " + list +
                           "); `auto` picks among those")
      .with_field("provider");
}

}  // namespace denote
