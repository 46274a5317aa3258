// torchlean.ir.v1 with dtypes (docs/TYPED.md): input and const nodes may carry a "dtype" field
// ("int8", "uint(65)", "bool", "bfloat16" ...) and a typed const gives its elements as "words"
// (hex strings like "0xff", decimal strings, or nonnegative JSON integers) instead of "values".
// The graph itself is read by parse_model_json; this reader only adds the dtype/words fields.
//
//   Result<TypedModel> tm = parse_typed_model_json(text);
//   tm->input_dtypes.at(0);   // the dtype of input node 0
//   write_typed_model_json(*tm);  // the same document back (words as hex)
#pragma once

#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/typed/interp.h"

namespace denote {

// Structure and fields only (like parse_model_json). Input nodes without a dtype are left out of
// input_dtypes (a caller may supply them); a const node with a dtype must have words.
Result<TypedModel> parse_typed_model_json(std::string_view text);
// Also runs check_shapes.
Result<TypedModel> read_typed_model_json(std::string_view text);
// The document parse_typed_model_json reads back: write_model_json plus "dtype" on typed inputs
// and "dtype" + "words" (hex) on typed consts.
std::string write_typed_model_json(const TypedModel& tm);
// Whether any input or const node of the document has a "dtype" field (false for malformed JSON).
bool has_typed_nodes(std::string_view text);
// A JSON array of words (strings or nonnegative integers) as Words; errors name the index.
Result<std::vector<Word>> parse_word_list(std::string_view json_text);

}  // namespace denote
