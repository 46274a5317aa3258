// Shared pieces of the pybind11 module (python/src/*.cc): the Model handle, Status -> Python
// exception conversion, numpy <-> Tensor conversion. The module holds no logic of its own: every
// capability is a call into the public C++ API (include/denote/), as the CLI does.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/bounds/ibp.h"
#include "denote/ir/model.h"
#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/tensor/tensor.h"
#include "denote/typed/interp.h"
#include "denote/typed/policy.h"

namespace py = pybind11;

namespace denote::python {

// A model as Python sees it: the model (graph, f64 payload, outputs) with its typed information
// (input dtypes and typed constants; empty for an untyped model), and per-model caches that are
// filled under the GIL before a call releases it.
// A compiled plan (denote/plan/compiled.h) and the lock its calls take: a plan owns its buffers, so
// two Python threads that run one model (the GIL released) take turns on it.
template <class S>
struct CompiledHolder {
  std::mutex run_mutex;
  CompiledPlan<S> plan;
};

struct PyModel {
  TypedModel tm;
  std::shared_ptr<const TypedModel> typed_onnx;                  // an ONNX file's typed import, if any
  std::shared_ptr<const Payload<float>> f32_payload;            // convert_payload<float>, once
  std::map<std::string, std::shared_ptr<const BoundPlan>> plans;  // bound plans by provider policy
  bool no_auto_plan = false;  // `auto` cannot plan this model: run() without a provider takes the evaluator
  // Compiled plans by provider policy and memory budget, for f64 and f32 runs (outputs only).
  std::map<std::string, std::shared_ptr<CompiledHolder<double>>> compiled64;
  std::map<std::string, std::shared_ptr<CompiledHolder<float>>> compiled32;
  // A bfloat16/float16 or autocast capture's precision (from_torch): each node's format, whether it is a
  // torch value (not an interior piece of one call), and the accumulation format; empty otherwise.
  std::vector<std::string> capture_formats;
  std::vector<bool> capture_materialized;
  std::string capture_accumulate;
  // Model.run(accumulate= / policy= / arith="mx..."): the prepared runners by request
  std::map<std::string, std::shared_ptr<const PolicyRunner>> policies;
  // bounds(): the model prepared for IBP (and CROWN's batches) by arith, once (auto_LiRPA's BoundedModule)
  mutable std::map<std::string, IbpPrepared> ibp_prepared;
  mutable std::mutex cache_mutex;
  // The arithmetic the model's own float inputs are in: "f32" (ONNX FLOAT inputs; a float32 torch
  // capture), "f64" (DOUBLE; float64), empty where no file or capture says (JSON, GraphBuilder). bounds()
  // and verify() default to it (else f64 and f32), so a float32 model's bounds hold for its float32 outputs.
  std::string native_arith;

  const Model& model() const { return tm.model; }
  bool typed() const { return !tm.input_dtypes.empty() || !tm.consts.empty(); }
};
using ModelPtr = std::shared_ptr<PyModel>;
ModelPtr make_model(TypedModel tm);
ModelPtr make_model(Model m);

// --- errors (errors.cc) ---
// Raises the denote.Error subclass for s.code() (ParseError for kInvalidInput when `parsing`),
// with .code, .node (None when the error names no node), .field (None when empty) and .detail.
[[noreturn]] void raise_status(const Status& s, bool parsing = false);
// An InvalidInputError for the binding's own argument checks (dtype, shape, options).
[[noreturn]] void raise_invalid(const std::string& message, const std::string& field = "");
// EvalOptions with max_bytes = max_memory, or the library's default budget (half the RAM,
// default_max_bytes(), read once: it costs a system call).
EvalOptions eval_options(const std::optional<int64_t>& max_memory);
inline void check(const Status& s) {
  if (!s.ok()) raise_status(s);
}
template <class T>
T unwrap(Result<T> r, bool parsing = false) {
  if (!r.ok()) raise_status(r.status(), parsing);
  return std::move(r).value();
}

// IEEE flags as {name: bool} (inexact, underflow, overflow, ..., names with '_' for '-'; run.cc).
py::dict flags_dict(uint32_t flags);

// --- arrays (arrays.cc) ---
// A float numpy array (float16/32/64, any layout; ints and bools too where `allow_int`) as a
// Tensor<double>. A C-contiguous float64 array is copied once with memcpy; other layouts and
// dtypes go through numpy's conversion. Anything else (complex, object, strings) raises.
// `what` names the argument in errors ("input 0": what = "input", index = 0; index -1: none); the
// text is only formatted on error (the per-call cost of a run stays low).
struct Label {
  const char* what;
  int64_t index = -1;
  std::string str() const;
};
Tensor<double> to_tensor(const py::handle& obj, const Label& what, bool allow_int = false);
// The same in S = double or float: a C-contiguous array of dtype S is copied once with memcpy.
template <class S>
Tensor<S> to_tensor_as(const py::handle& obj, const Label& what, bool allow_int = false);
// The array itself where it is C-contiguous float64 (no copy), else numpy's float64 conversion of it;
// the same dtype checks and errors as to_tensor.
template <class S>
py::array_t<S, py::array::c_style | py::array::forcecast> float_array(const py::handle& obj, const Label& what,
                                                                     bool allow_int = false);
// Owning numpy arrays that take the vector's storage (no copy).
py::array to_numpy(Tensor<double>&& t);
py::array to_numpy(Tensor<float>&& t);
py::array to_numpy(Shape shape, std::vector<double>&& data);
// Whether obj is a numpy array (or scalar) of integer or bool dtype.
bool is_integral_array(const py::handle& obj);
// A numpy array as a typed tensor: bool, int8..64, uint8..64, float16/32/64 map to their dtype;
// `declared` (an input's dtype) must agree, except that a dtype without a numpy counterpart
// (bfloat16, e4m3fn, int(12) ...) takes an unsigned integer array of its element words.
typed::TypedTensor to_typed(const py::handle& obj, const std::optional<typed::DType>& declared, const Shape& shape,
                            const std::string& what);
// A typed tensor as numpy: the matching dtype where numpy has one, else the words as uint64
// (<= 64 bits) or an object array of Python ints (wider integers, exact values).
py::object typed_to_numpy(const typed::TypedTensor& t);

// --- registration (one per file) ---
void register_errors(py::module_& m);
void register_model(py::module_& m);
void register_builder(py::module_& m);
void register_run(py::module_& m, py::class_<PyModel, ModelPtr>& cls);
void register_analysis(py::module_& m, py::class_<PyModel, ModelPtr>& cls);
void register_formats(py::module_& m);
void register_mx(py::module_& m);
void register_certify(py::module_& m);
py::class_<PyModel, ModelPtr>& model_class();

// Python dicts of attrs records and back (attrs.cc).
py::dict attrs_to_dict(const Attrs& a);
Attrs attrs_from_dict(Op op, const py::dict& d);

}  // namespace denote::python
