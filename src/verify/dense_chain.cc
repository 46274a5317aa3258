// A dense-layer chain evaluated in batches (src/verify/dense_chain.h).
#include "verify/dense_chain.h"

#include <algorithm>
#include <iterator>
#include <span>

#include "bounds/kernel_ops.h"
#include "eval/walk.h"
#ifdef DENOTE_HAVE_OPENBLAS
#include "providers/openblas_util.h"
#endif

namespace denote::verify_detail {

// One graph walk that accepts the chain's ops in order and builds its layers; any other op, or an
// op out of place, stops the walk (not a chain). The per-op steps come from a table built from
// ops.def (chain_step).
struct ChainPass;
using ChainStep = bool (*)(ChainPass&, const Node&, const Shape&);

struct ChainPass {
  using Value = Shape;
  const Model& m;
  DenseChain& c;
  int64_t last = -1;           // the node whose value is the chain's current value
  // The input's normalisation before the first layer, x' = scale x + offset per element (empty: none).
  std::vector<double> scale, offset;
  static const Shape& shape_of(const Shape& s) { return s; }
  static bool well_sized(const Shape&) { return true; }
  Result<Shape> visit(const Node& n, std::span<const Shape* const>, const Shape& out, const Shape*);

  bool input(const Node& n, const Shape& out) {
    if (last >= 0) return false;
    c.inputs_ = numel(out), last = n.id;
    return true;
  }
  const ConstRecord<double>* constant(int64_t id) const { return const_behind(m.graph, m.payload, id); }
  // x + c, x - c, x * c or x / c, c a constant of the input's size or of one element, before any layer:
  // composed into scale and offset (kind 0: +, 1: -, 2: *, 3: /).
  bool normalise(const Node& n, const Shape& out, int kind) {
    const auto* rec = constant(n.parents.size() == 2 ? n.parents[1] : -1);
    if (!c.layers_.empty() || n.parents[0] != last || !rec || numel(out) != c.inputs_) return false;
    const size_t len = rec->values.size();
    if (len != 1 && static_cast<int64_t>(len) != c.inputs_) return false;
    if (scale.empty()) scale.assign(static_cast<size_t>(c.inputs_), 1.0), offset.assign(scale.size(), 0.0);
    for (size_t i = 0; i < scale.size(); ++i) {
      const double v = rec->values[len == 1 ? 0 : i];
      if (kind == 3 && v == 0) return false;
      if (kind < 2) offset[i] += kind == 0 ? v : -v;
      if (kind == 2) scale[i] *= v, offset[i] *= v;
      if (kind == 3) scale[i] /= v, offset[i] /= v;
    }
    last = n.id;
    return true;
  }
  bool same(const Node& n) {
    if (n.parents[0] != last) return false;
    last = n.id;
    return true;
  }
  bool linear(const Node& n, const Shape& out) {
    const auto* rec = find_record(m.payload.linear, n.id);
    const int64_t width = c.layers_.empty() ? c.inputs_ : c.layers_.back().out;
    if (n.parents[0] != last || !rec || rec->in_dim != width || numel(out) != rec->out_dim ||
        static_cast<int64_t>(rec->weight.size()) != rec->in_dim * rec->out_dim)
      return false;
    DenseChain::Layer l{rec->in_dim, rec->out_dim, {}, {}, false};
    l.b.assign(static_cast<size_t>(rec->out_dim), 0.0f);
    // The input's normalisation is folded into the first layer: W (s x + t) + b = (W diag(s)) x + (W t + b).
    const bool fold = c.layers_.empty() && !scale.empty();
    const size_t in = static_cast<size_t>(rec->in_dim);
    l.w.resize(rec->weight.size());
    for (size_t k = 0; k < rec->weight.size(); ++k)
      l.w[k] = static_cast<float>(fold ? rec->weight[k] * scale[k % in] : rec->weight[k]);
    for (size_t o = 0; o < l.b.size(); ++o) {
      double b = o < rec->bias.size() ? rec->bias[o] : 0.0;
      for (size_t i = 0; fold && i < in; ++i) b += rec->weight[o * in + i] * offset[i];
      l.b[o] = static_cast<float>(b);
    }
    c.layers_.push_back(std::move(l));
    last = n.id;
    return true;
  }
  bool relu(const Node& n) {
    if (n.parents[0] != last || c.layers_.empty() || c.layers_.back().relu) return false;
    c.layers_.back().relu = true;
    last = n.id;
    return true;
  }
};

namespace {

bool step_input(ChainPass& p, const Node& n, const Shape& out) { return p.input(n, out); }
bool step_const(ChainPass&, const Node&, const Shape&) { return true; }  // read by the sub/add using it
// broadcast_to of a one-element const (const_behind): read by the op using it.
bool step_spread(ChainPass& p, const Node& n, const Shape&) { return const_behind(p.m.graph, p.m.payload, n.id) != nullptr; }
bool step_add(ChainPass& p, const Node& n, const Shape& out) { return p.normalise(n, out, 0); }
bool step_sub(ChainPass& p, const Node& n, const Shape& out) { return p.normalise(n, out, 1); }
bool step_mul(ChainPass& p, const Node& n, const Shape& out) { return p.normalise(n, out, 2); }
bool step_div(ChainPass& p, const Node& n, const Shape& out) { return p.normalise(n, out, 3); }
bool step_same(ChainPass& p, const Node& n, const Shape&) { return p.same(n); }
bool step_linear(ChainPass& p, const Node& n, const Shape& out) { return p.linear(n, out); }
bool step_relu(ChainPass& p, const Node& n, const Shape&) { return p.relu(n); }

// The step of each op in a dense chain: same-order views pass through; the rows below have their own; any
// other op is not part of a dense chain (nullptr).
template <Op O>
constexpr ChainStep kChainStep = keeps_order(O) ? &step_same : nullptr;
template <>
constexpr ChainStep kChainStep<Op::Input> = &step_input;
template <>
constexpr ChainStep kChainStep<Op::Const> = &step_const;
template <>
constexpr ChainStep kChainStep<Op::BroadcastTo> = &step_spread;
template <>
constexpr ChainStep kChainStep<Op::Sub> = &step_sub;
template <>
constexpr ChainStep kChainStep<Op::Add> = &step_add;
template <>
constexpr ChainStep kChainStep<Op::MulElem> = &step_mul;
template <>
constexpr ChainStep kChainStep<Op::Div> = &step_div;
template <>
constexpr ChainStep kChainStep<Op::Linear> = &step_linear;
template <>
constexpr ChainStep kChainStep<Op::Relu> = &step_relu;

ChainStep chain_step(Op op) {
  static constexpr ChainStep kSteps[] = {
#define DENOTE_OP(name, ...) kChainStep<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kSteps) == kNumOps);
  return kSteps[static_cast<size_t>(op)];
}

}  // namespace

Result<Shape> ChainPass::visit(const Node& n, std::span<const Shape* const>, const Shape& out, const Shape*) {
  const ChainStep step = chain_step(n.op);
  if (!step || !step(*this, n, out)) return error_status("not a dense chain");
  return out;
}

std::optional<DenseChain> DenseChain::of(const Model& m) {
  if (m.output_ids.size() != 1 || m.graph.input_ids().size() != 1) return std::nullopt;
  DenseChain c;
  ChainPass pass{m, c, -1, {}, {}};
  walk::Config cfg;
  cfg.layer = "dense chain";
  std::vector<Shape> table;
  std::vector<bool> present;
  const Shape in = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  if (!walk::forward(m.graph, pass, std::span<const Shape>(&in, 1), cfg, table, present).ok()) return std::nullopt;
  if (c.layers_.empty() || pass.last != m.output_ids[0] || c.inputs_ <= 0) return std::nullopt;
  return c;
}

void DenseChain::eval(const std::vector<float>& X, int64_t rows, std::vector<float>& Y,
                      std::vector<float>& scratch) const {
  const std::vector<float>* cur = &X;
  for (size_t li = 0; li < layers_.size(); ++li) {
    const Layer& l = layers_[li];
    std::vector<float>& out = li % 2 == 0 ? scratch : Y;
    out.resize(static_cast<size_t>(rows * l.out));
    for (int64_t r = 0; r < rows; ++r) std::copy(l.b.begin(), l.b.end(), out.begin() + r * l.out);
#ifdef DENOTE_HAVE_OPENBLAS
    blas::ensure_threads();
    blas::gemm<float>(true, rows, l.out, l.in, cur->data(), l.w.data(), out.data(), l.out, 1.0f);
#else
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < l.out; ++o) {
        float s = 0;
        for (int64_t i = 0; i < l.in; ++i)
          s += (*cur)[static_cast<size_t>(r * l.in + i)] * l.w[static_cast<size_t>(o * l.in + i)];
        out[static_cast<size_t>(r * l.out + o)] += s;
      }
#endif
    if (l.relu)
      for (float& v : out) v = std::max(v, 0.0f);
    cur = &out;
  }
  if (cur != &Y) Y = *cur;
}

}  // namespace denote::verify_detail
