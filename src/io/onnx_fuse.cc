// Recognizes the erf form of GELU that exporters write out before opset 20 and maps it onto one
// IR `gelu` node:
//   e = Erf(x / sqrt(2))  (Div by ~1.4142135, or Mul by ~0.70710678)
//   y = (x * (e + 1)) * 0.5      or      y = (x * 0.5) * (e + 1)
// Every intermediate value must have no other use. Other spellings are imported op by op.
#include <cmath>

#include "onnx_import.h"

namespace denote::onnxio {
namespace {

// Whether the tensor's dims say it holds more than one element.
bool many_elements(const onnx::TensorProto& t) {
  for (int64_t d : t.dims())
    if (d > 1) return true;
  return false;
}

class GeluFinder {
 public:
  explicit GeluFinder(const onnx::GraphProto& g) : g_(g) {
    for (int i = 0; i < g.node_size(); ++i)
      for (const auto& out : g.node(i).output()) producer_[out] = i;
    for (const auto& n : g.node())
      for (const auto& in : n.input()) ++uses_[in];
    for (const auto& out : g.output()) ++uses_[out.name()];
    // Only one-element tensors are read (converting every weight here took 12% of a 41-million-weight load).
    for (const auto& t : g.initializer())
      if (!many_elements(t))
        if (auto h = tensor_from_proto(t); h.ok() && h->values.size() == 1) scalars_[t.name()] = h->values[0];
    for (const auto& n : g.node())
      if (n.op_type() == "Constant" && n.output_size() == 1 && n.attribute_size() == 1 && n.attribute(0).has_t() &&
          !many_elements(n.attribute(0).t()))
        if (auto h = tensor_from_proto(n.attribute(0).t()); h.ok() && h->values.size() == 1)
          scalars_[n.output(0)] = h->values[0];
  }

  std::vector<GeluMatch> run() const {
    std::vector<GeluMatch> out;
    for (int i = 0; i < g_.node_size(); ++i)
      if (auto m = match_final(i)) out.push_back(*m);
    return out;
  }

 private:
  // The index of the binary `op` node producing `name` when `name` has exactly one use, else -1.
  int single_use_producer(const std::string& name, std::string_view op) const {
    auto it = producer_.find(name);
    if (it == producer_.end() || uses(name) != 1) return -1;
    const auto& n = g_.node(it->second);
    return n.op_type() == op && n.domain().empty() && n.input_size() == 2 ? it->second : -1;
  }
  const onnx::NodeProto* node_at(int i) const { return i < 0 ? nullptr : &g_.node(i); }
  int64_t uses(const std::string& name) const {
    auto it = uses_.find(name);
    return it == uses_.end() ? 0 : it->second;
  }
  bool scalar_is(const std::string& name, double v, double tol) const {
    auto it = scalars_.find(name);
    return it != scalars_.end() && std::fabs(it->second - v) <= tol;
  }

  // `name` = Add(Erf(x / sqrt 2), 1): returns x and the three nodes.
  std::optional<GeluMatch> one_plus_erf(const std::string& name) const {
    const int add_index = single_use_producer(name, onnx_name(Op::Add));
    const auto* add = node_at(add_index);
    if (!add) return std::nullopt;
    for (int k = 0; k < 2; ++k) {
      if (!scalar_is(add->input(1 - k), 1.0, 0.0)) continue;
      auto it = producer_.find(add->input(k));
      if (it == producer_.end() || uses(add->input(k)) != 1) continue;
      const auto& erf = g_.node(it->second);
      if (erf.op_type() != onnx_name(Op::Erf) || erf.input_size() != 1) continue;
      const int div = single_use_producer(erf.input(0), onnx_name(Op::Div));
      const int mul = single_use_producer(erf.input(0), onnx_name(Op::MulElem));
      std::string x;
      int scale = -1;
      if (div >= 0 && scalar_is(g_.node(div).input(1), std::sqrt(2.0), 1e-6)) {
        x = g_.node(div).input(0);
        scale = div;
      }
      for (int j = 0; mul >= 0 && j < 2 && scale < 0; ++j)
        if (scalar_is(g_.node(mul).input(1 - j), std::sqrt(0.5), 1e-6)) {
          x = g_.node(mul).input(j);
          scale = mul;
        }
      if (scale < 0) continue;
      return GeluMatch{-1, x, {scale, it->second, add_index}};
    }
    return std::nullopt;
  }

  // Node i = (x * (1 + erf)) * 0.5 or (x * 0.5) * (1 + erf).
  std::optional<GeluMatch> match_final(int i) const {
    const auto& n = g_.node(i);
    if (n.op_type() != onnx_name(Op::MulElem) || !n.domain().empty() || n.input_size() != 2) return std::nullopt;
    for (int k = 0; k < 2; ++k) {
      const std::string& a = n.input(k);
      const std::string& b = n.input(1 - k);
      if (scalar_is(b, 0.5, 0.0)) {  // (x * (1 + erf)) * 0.5
        const int inner = single_use_producer(a, onnx_name(Op::MulElem));
        for (int j = 0; inner >= 0 && j < 2; ++j) {
          const auto& in = g_.node(inner);
          if (auto m = one_plus_erf(in.input(j)); m && m->x == in.input(1 - j)) return finish(*m, i, inner);
        }
      }
      if (auto m = one_plus_erf(b)) {  // (x * 0.5) * (1 + erf)
        const int half = single_use_producer(a, onnx_name(Op::MulElem));
        for (int j = 0; half >= 0 && j < 2; ++j) {
          const auto& h = g_.node(half);
          if (h.input(j) == m->x && scalar_is(h.input(1 - j), 0.5, 0.0)) return finish(*m, i, half);
        }
      }
    }
    return std::nullopt;
  }

  static GeluMatch finish(GeluMatch m, int final_node, int other) {
    m.final_node = final_node;
    m.members.push_back(other);
    return m;
  }

  const onnx::GraphProto& g_;
  std::map<std::string, int> producer_;
  std::map<std::string, int64_t> uses_;
  std::map<std::string, double> scalars_;
};

}  // namespace

std::vector<GeluMatch> find_gelu_patterns(const onnx::GraphProto& g) { return GeluFinder(g).run(); }

}  // namespace denote::onnxio
