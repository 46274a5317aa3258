// diagnose_typed_model (denote/typed/check.h).
#include "denote/typed/check.h"

#include <set>

namespace denote {

// The model check with the typed consts taking their words instead of a const record. Cast
// targets need no pass of their own: diagnose_model's cast rule already parses int / uint / bool
// targets with typed::parse_dtype and binary ones as cast_target does (payload_check.cc).
std::vector<Diagnostic> diagnose_typed_model(const TypedModel& tm) {
  std::set<int64_t> typed_consts;
  for (const auto& [id, v] : tm.consts) typed_consts.insert(id);
  return diagnose_model(tm.model, typed_consts);
}

}  // namespace denote
