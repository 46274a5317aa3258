// The model check of a typed model (check_model's counterpart for TypedModel): the graph and
// payload checks of denote/check/check.h, with typed consts taking their words instead of a const
// record, and every cast target a dtype typed::parse_dtype accepts (int(W) with 1 <= W <= 65536,
// bool, binary formats of at most 64 bits), as the typed interpreter needs. `denote check` and
// `denote convert` run it on typed JSON models.
//
//   TypedModel tm = *parse_typed_model_json(text);
//   for (const Diagnostic& d : diagnose_typed_model(tm)) std::cerr << d.message << "\n";
#pragma once

#include <vector>

#include "denote/check/check.h"
#include "denote/typed/interp.h"

namespace denote {

std::vector<Diagnostic> diagnose_typed_model(const TypedModel& tm);

}  // namespace denote
