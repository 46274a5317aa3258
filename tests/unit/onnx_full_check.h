// libonnx's checker plus strict shape inference (what Python's full_check=True adds), for the ONNX
// export tests; the test (not the library) catches libonnx's exceptions. Empty string: passed.
#pragma once

#include <exception>
#include <string>

#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>

namespace denote {

inline std::string onnx_full_check(const std::string& bytes) {
  onnx::ModelProto mp;
  if (!mp.ParseFromString(bytes)) return "does not parse";
  try {
    onnx::checker::check_model(mp);
    onnx::ShapeInferenceOptions options{true, 1, false};
    onnx::shape_inference::InferShapes(mp, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace denote
