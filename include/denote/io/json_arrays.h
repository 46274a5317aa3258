// torchlean.ir.v1 JSON with its large tensors apart: a tensor field (a weight, a bias, a constant's
// values, ...) may be {"array": k}, the k-th of `arrays` (row-major doubles, exactly the field's element
// count), instead of its list of numbers. Python's from_torch hands over the parameters this way: 4.2M
// parameters through JSON text took 10.7 s. Everything else is parse_model_json's (denote/io/json.h).
//
//   Result<Model> m = parse_model_json_with_arrays(R"({..., "weight": {"array": 0}, ...})", {w});
#pragma once

#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"

namespace denote {

Result<Model> parse_model_json_with_arrays(std::string_view text, const std::vector<std::vector<double>>& arrays);

}  // namespace denote
