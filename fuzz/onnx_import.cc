// libFuzzer target: ONNX import. Every input must give a model or an error, never a crash (ASan +
// UBSan watch). An imported model is diagnosed, listed and evaluated over F64 with zero inputs
// of the declared shapes (at most 2^14 elements); when it exports back to ONNX, the
// export must re-import and export again to the same bytes. The typed import (integer and bool
// tensors) runs on every input too, and an imported typed model is evaluated on zero words. Models
// whose pooling and convolution windows add up to more than 2^20 taps are not evaluated.
// Synthesized constants are capped at 2^16 elements in all (OnnxImportOptions).
//
//   TARGET=onnx_import scripts/fuzz.sh 60
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/io/text.h"
#include "denote/typed/interp.h"

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 14;  // per value and for all inputs together
constexpr int64_t kMaxTaps = int64_t{1} << 20;      // window taps of every pool and conv together

// Pooling and convolution windows: outputs x window (x input channels per group) summed over the
// graph. A 253-byte AveragePool with a 96 x 3 kernel took 3 s per run under ASan (67 s for the slowest
// unit), evaluated in soft-float binary64 words by the typed path: legitimate work, not a finding,
// and it starved the search.
bool too_much_work(const denote::Graph& g) {
  double taps = 0;
  for (const denote::Node& n : g.nodes) {
    const denote::WindowConfig* w = std::get_if<denote::WindowConfig>(&n.attrs);
    double per = 1;
    if (const auto* c = std::get_if<denote::ConvConfig>(&n.attrs)) {
      w = &c->window;
      per = static_cast<double>(std::max<int64_t>(1, c->in_channels / std::max<int64_t>(1, c->groups)));
    }
    if (!w) continue;
    for (int64_t k : w->kernel) per *= static_cast<double>(std::max<int64_t>(1, k));
    double outs = 1;
    for (int64_t d : n.out_shape) outs *= static_cast<double>(std::max<int64_t>(0, d));
    taps += per * outs;
  }
  return taps > static_cast<double>(kMaxTaps);
}

void evaluate(const denote::Model& m) {
  if (too_much_work(m.graph)) return;
  std::vector<denote::Tensor<double>> inputs;
  int64_t total = 0;
  for (int64_t id : m.graph.input_ids()) {
    const denote::Shape& shape = m.graph.nodes[static_cast<size_t>(id)].out_shape;
    auto n = denote::checked_numel(shape);
    if (!n.ok() || *n > kMaxElements - total) return;
    total += *n;
    inputs.push_back(denote::Tensor<double>::filled(shape, 0.0));
  }
  denote::F64Context ctx;
  denote::EvalOptions options;
  options.max_elements = kMaxElements;
  auto table = denote::denote_all(m.graph, m.payload, std::span<const denote::Tensor<double>>(inputs), ctx, options);
  if (table.ok() && denote::check_shapes(m.graph).ok())
    for (size_t i = 0; i < table->size(); ++i)  // soundness: values have the declared shapes
      if ((*table)[i].shape != m.graph.nodes[i].out_shape) __builtin_trap();
}

// The typed import and interpreter: inputs are all-zero words of each input's dtype.
void typed_path(std::string_view bytes, const denote::OnnxImportOptions& options) {
  auto tm = denote::read_typed_model_onnx(bytes, options);
  if (!tm.ok() || too_much_work(tm->model.graph)) return;
  std::vector<denote::typed::TypedTensor> inputs;
  int64_t total = 0;
  for (int64_t id : tm->model.graph.input_ids()) {
    const denote::Shape& shape = tm->model.graph.nodes[static_cast<size_t>(id)].out_shape;
    auto n = denote::checked_numel(shape);
    const auto dt = tm->input_dtypes.find(id);
    if (!n.ok() || *n > kMaxElements - total || dt == tm->input_dtypes.end()) return;
    total += *n;
    auto t = denote::typed::load(dt->second, shape,
                                 std::vector<denote::Word>(static_cast<size_t>(*n), denote::Word::of(0)));
    if (!t.ok()) return;
    inputs.push_back(std::move(*t));
  }
  denote::typed::TypedOptions o;
  o.max_elements = kMaxElements;
  (void)denote::typed::eval_typed(*tm, inputs, o);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  denote::OnnxImportOptions options;
  options.unknown_dims_as_one = size % 2 == 0;
  // Lowered from 2^26: a 200-byte model can ask for padding blocks of millions of elements, which
  // are within the default budget but take seconds each under ASan (import, export, re-import).
  options.max_synthesized_elements = int64_t{1} << 16;
  typed_path(bytes, options);
  auto model = denote::read_model_onnx(bytes, options);
  if (!model.ok()) return 0;
  // The importer checks every node as it appends it: an imported graph is always shape-checked.
  if (!denote::check_shapes(model->graph).ok()) __builtin_trap();
  (void)denote::diagnose(model->graph);
  (void)denote::format_listing(model->graph);
  auto once = denote::write_model_onnx(*model);
  if (once.ok()) {
    auto again = denote::read_model_onnx(*once);
    if (!again.ok()) __builtin_trap();
    auto twice = denote::write_model_onnx(*again);
    if (!twice.ok()) __builtin_trap();
  }
  evaluate(*model);
  return 0;
}
