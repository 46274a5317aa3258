// libFuzzer target: torchlean.ir.v1 import. Every input must give a model or an error, never a
// crash (ASan + UBSan watch). A parsed model is then diagnosed, listed, written back (the written
// document must re-read to a model that writes the same text), and evaluated over F64 and F32
// with zero inputs of the declared input shapes, within an element-count limit.
//
//   scripts/fuzz.sh 60      # configure (cmake --preset fuzz), build, run 60 s
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/text.h"

namespace {

constexpr int64_t kMaxElements = int64_t{1} << 16;  // per value and for all inputs together

// Zero tensors of the declared input shapes, or nothing when they are too large (or malformed).
template <class S>
bool zero_inputs(const denote::Graph& g, std::vector<denote::Tensor<S>>& out) {
  int64_t total = 0;
  for (int64_t id : g.input_ids()) {
    const denote::Shape& shape = g.nodes[static_cast<size_t>(id)].out_shape;
    auto n = denote::checked_numel(shape);
    if (!n.ok() || *n > kMaxElements - total) return false;
    total += *n;
    out.push_back(denote::Tensor<S>::filled(shape, S(0)));
  }
  return true;
}

template <class Ctx>
void evaluate(const denote::Graph& g, const denote::Payload<typename Ctx::Scalar>& payload) {
  using S = typename Ctx::Scalar;
  std::vector<denote::Tensor<S>> inputs;
  if (!zero_inputs<S>(g, inputs)) return;
  Ctx ctx;
  denote::EvalOptions options;
  options.max_elements = kMaxElements;
  auto table = denote::denote_all(g, payload, std::span<const denote::Tensor<S>>(inputs), ctx, options);
  if (table.ok() && denote::check_shapes(g).ok()) {
    // Soundness: a checked graph's values have the declared shapes.
    for (size_t i = 0; i < table->size(); ++i)
      if ((*table)[i].shape != g.nodes[i].out_shape) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto model = denote::parse_model_json(text);
  if (!model.ok()) return 0;
  const denote::Graph& g = model->graph;
  const std::vector<denote::Diagnostic> diagnostics = denote::diagnose(g);
  if (diagnostics.empty() != denote::check_shapes(g).ok()) __builtin_trap();
  // The model check adds payload diagnostics to the graph's, never fewer.
  if (denote::diagnose_model(*model).size() < diagnostics.size()) __builtin_trap();
  (void)denote::format_listing(g);
  (void)denote::format_dot(g);

  // Write, re-read, write again: the same text.
  const std::string once = denote::write_model_json(*model);
  auto again = denote::parse_model_json(once);
  if (!again.ok() || denote::write_model_json(*again) != once) __builtin_trap();

  if (!denote::check_well_formed(g).ok()) return 0;
  evaluate<denote::F64Context>(g, model->payload);
  auto to_float = [](double v) { return static_cast<float>(v); };
  evaluate<denote::F32Context>(g, denote::convert_payload<float>(model->payload, to_float));
  return 0;
}
