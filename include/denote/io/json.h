// torchlean.ir.v1 JSON interchange: read and write a Model (graph + payload + output ids).
// parse_model_json checks syntax and fields only (so `denote check` can diagnose a broken graph);
// read_model_json also runs check_shapes. Errors name the byte offset or node and field.
//
//   Result<Model> m = read_model_json(text);
//   std::string doc = write_model_json(*m);   // parse_model_json(doc) gives *m back
#pragma once

#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/ir/model.h"

namespace denote {

inline constexpr std::string_view kIrFormat = "torchlean.ir.v1";

Result<Model> parse_model_json(std::string_view text);
Result<Model> read_model_json(std::string_view text);
std::string write_model_json(const Model& model);

// Reads a model file by extension (.json, .onnx: see denote/io/onnx.h). Structure and fields
// only: callers run check_shapes/diagnose.
Result<Model> load_model_file(const std::string& path);

// Whole file as a string, or an error naming the path.
Result<std::string> read_text_file(const std::string& path);

}  // namespace denote
