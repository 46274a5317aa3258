// ONNX interchange: import a `.onnx` ModelProto into a Model (graph + f64 payload + output ids)
// and export a Model back to ONNX. The protobuf classes come from libonnx (onnx_proto); parsing
// failures, unsupported ops and malformed graphs are Status errors that name the ONNX node
// (index, name, op_type) or field. See docs/ONNX.md for the op mapping and its limits.
//
//   Result<Model> m = read_model_onnx(bytes);            // bytes of a .onnx file
//   Result<std::string> out = write_model_onnx(*m);       // a ModelProto, opset 17
//   Result<Model> m2 = load_model_onnx_file("net.onnx");
//
// Graph inputs that are also initializers (as in the ACAS Xu files) are constants. The graph's
// real inputs become `input` nodes in the order of ModelProto.graph.input, so Graph::input_ids()
// lists them in that order; output_ids follow ModelProto.graph.output.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/scalar/arith_spec.h"
#include "denote/tensor/tensor.h"
#include "denote/typed/interp.h"

namespace denote {

struct OnnxImportOptions {
  // Symbolic dims of graph inputs fixed by name (`--onnx-dim unk__17=1`); they win over the rules below.
  std::map<std::string, int64_t> dims;
  // A symbolic or unknown dim 0 of a graph input (the batch dim: VNN-COMP models declare 'unk__17',
  // 'N', 'batch_size' ...) reads as 1, with a note, as verification tools do; false: an error.
  bool symbolic_batch_as_one = true;
  // Every other symbolic or unknown input dim is an error by default; with this set it reads as 1.
  bool unknown_dims_as_one = false;
  // When set, the import appends its notes here (a symbolic batch dim read as 1 ...).
  std::vector<std::string>* notes = nullptr;
  // When set, the import appends each graph input's ONNX element type here, in input order (1 FLOAT,
  // 11 DOUBLE ...): the arithmetic the file's own evaluation runs in (`denote verify --arith auto`).
  std::vector<int32_t>* input_elem_types = nullptr;
  // Graph inputs read as constants with these values (by input name), e.g. to freeze weights that
  // a model takes as inputs; the value must have the input's declared shape.
  std::map<std::string, Tensor<double>> constant_inputs;
  // Elements the import may create that the file does not hold, in all: folded values, filled
  // constants (ConstantOfShape, padding blocks, masks, Range), norm parameters; each one is also
  // at most 2^24. Bounds the memory a small file can ask for (2^26 doubles: 512 MiB).
  int64_t max_synthesized_elements = int64_t{1} << 26;
};

// The arithmetic a file's inputs name (OnnxImportOptions::input_elem_types): f32 when every input is FLOAT,
// f64 when every one is DOUBLE, nullopt otherwise (none, or mixed): each caller picks its own default there.
std::optional<ArithSpec> arith_of_onnx_inputs(const std::vector<int32_t>& input_elem_types);

Result<Model> read_model_onnx(std::string_view bytes, const OnnxImportOptions& options = {});
Result<Model> load_model_onnx_file(const std::string& path, const OnnxImportOptions& options = {});

// Serialized ModelProto (ir_version 8, opset 17, every tensor DOUBLE so values survive exactly);
// an error naming the node for IR ops without an ONNX counterpart. The model need not be checked:
// check_shapes runs first and its error is returned (never a crash on a malformed graph).
Result<std::string> write_model_onnx(const Model& model);
Status write_model_onnx_file(const std::string& path, const Model& model);

// A serialized TensorProto (as in the ONNX test suite's input_N.pb / output_N.pb files).
struct OnnxTensor {
  std::string name;
  int32_t data_type = 0;  // TensorProto.DataType (1 FLOAT, 11 DOUBLE, 7 INT64 ...)
  Tensor<double> tensor;  // values widened to double
};
Result<OnnxTensor> read_onnx_tensor(std::string_view bytes);

// ONNX op types (default domain) the importer maps, sorted.
std::vector<std::string> onnx_supported_ops();

// Typed import (docs/ONNX.md, "Typed import"): graph inputs and constants keep their ONNX element
// types as dtypes (INT8..UINT64, BOOL, FLOAT = binary32, DOUBLE = binary64, FLOAT16, BFLOAT16) and
// constants their exact words, for typed::eval_typed. Integer Div is div_trunc, Mod remainder
// (fmod=1: a - trunc(a/b)*b), Cast a typed cast (toward zero into integers); an op without an exact
// integer meaning is an error naming the ONNX node.
//   Result<TypedModel> tm = read_typed_model_onnx(bytes);
//   typed::eval_typed(*tm, inputs);   // inputs in Graph::input_ids() order
Result<TypedModel> read_typed_model_onnx(std::string_view bytes, const OnnxImportOptions& options = {});
// The dtype of an ONNX element type (an error for STRING, COMPLEX ... ).
Result<typed::DType> onnx_dtype(int32_t data_type);
// A serialized TensorProto with its exact element words (BFLOAT16 stored as UINT16 stays UINT16).
Result<typed::TypedTensor> read_onnx_typed_tensor(std::string_view bytes);
// ONNX op types the typed import maps (the float ones plus And, Mod, Or), sorted.
std::vector<std::string> onnx_typed_supported_ops();

// The highest default-domain opset the importer accepts.
inline constexpr int64_t kOnnxMaxOpset = 18;

}  // namespace denote
