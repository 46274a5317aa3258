// A dense-layer chain evaluated in batches (src/verify/dense_chain.h).
#include "verify/dense_chain.h"

#include <algorithm>
#include <iterator>
#include <span>

#include "bounds/kernel_ops.h"
#include "eval/walk.h"
#include "kernels/gemm.h"

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
    if (!c.layers_.empty()) return kind < 2 && bias(n, out, rec, kind == 0 ? 1.0 : -1.0);
    if (n.parents[0] != last || !rec || numel(out) != c.inputs_) return false;
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
  int64_t width() const { return c.layers_.empty() ? c.inputs_ : c.layers_.back().out; }
  // A layer y = W x + b (W out x in, row-major, read through w(o, i); b may be empty: zero). The
  // input's normalisation is folded into the first layer: W (s x + t) + b = (W diag(s)) x + (W t + b).
  template <class Weight>
  void push_layer(int64_t in_dim, int64_t out_dim, Weight w, const std::vector<double>& b, int64_t id) {
    DenseChain::Layer l;
    l.in = in_dim, l.out = out_dim;
    const bool fold = c.layers_.empty() && !scale.empty();
    l.w.resize(static_cast<size_t>(in_dim * out_dim));
    l.b.assign(static_cast<size_t>(out_dim), 0.0f);
    for (int64_t o = 0; o < out_dim; ++o) {
      double bo = static_cast<size_t>(o) < b.size() ? b[static_cast<size_t>(o)] : 0.0;
      for (int64_t i = 0; i < in_dim; ++i) {
        const double v = w(o, i);
        l.w[static_cast<size_t>(o * in_dim + i)] = static_cast<float>(fold ? v * scale[static_cast<size_t>(i)] : v);
        if (fold) bo += v * offset[static_cast<size_t>(i)];
      }
      l.b[static_cast<size_t>(o)] = static_cast<float>(bo);
    }
    l.rows = bounds::sparse_rows_of(l.w, out_dim, in_dim);
    if (!l.rows.empty()) std::vector<float>().swap(l.w);
    c.layers_.push_back(std::move(l));
    last = id;
  }
  bool linear(const Node& n, const Shape& out) {
    const auto* rec = find_record(m.payload.linear, n.id);
    if (n.parents[0] != last || !rec || rec->in_dim != width() || numel(out) != rec->out_dim ||
        static_cast<int64_t>(rec->weight.size()) != rec->in_dim * rec->out_dim)
      return false;
    const int64_t in = rec->in_dim;
    push_layer(in, rec->out_dim, [&](int64_t o, int64_t i) { return rec->weight[static_cast<size_t>(o * in + i)]; },
               rec->bias, n.id);
    return true;
  }
  // matmul with a constant: W x (W [out, in], x the chain's vector: nn4sys's learned indices) or
  // x W (x [in] or [1, in], W [in, out]: marabou-cifar10's MatMul layers); a layer without bias.
  bool matmul(const Node& n, const Shape& out) {
    if (n.parents.size() != 2) return false;
    const bool w_first = n.parents[1] == last;
    if (!w_first && n.parents[0] != last) return false;
    const int64_t wid = n.parents[w_first ? 0 : 1];
    const auto* rec = constant(wid);
    const Shape& ws = m.graph.nodes[static_cast<size_t>(wid)].out_shape;
    const int64_t in = width(), count = numel(out);
    if (!rec || ws.size() != 2 || ws[w_first ? 1 : 0] != in || ws[w_first ? 0 : 1] != count ||
        static_cast<int64_t>(rec->values.size()) != in * count)
      return false;
    const std::vector<double>& v = rec->values;
    if (w_first) push_layer(in, count, [&](int64_t o, int64_t i) { return v[static_cast<size_t>(o * in + i)]; }, {}, n.id);
    else push_layer(in, count, [&](int64_t o, int64_t i) { return v[static_cast<size_t>(i * count + o)]; }, {}, n.id);
    return true;
  }
  // x + c or x - c after a layer and before its relu (c of the layer's size or of one element): its bias.
  bool bias(const Node& n, const Shape& out, const ConstRecord<double>* rec, double sign) {
    DenseChain::Layer& l = c.layers_.back();
    if (n.parents[0] != last || !rec || l.relu || numel(out) != l.out) return false;
    const size_t len = rec->values.size();
    if (len != 1 && static_cast<int64_t>(len) != l.out) return false;
    for (size_t o = 0; o < l.b.size(); ++o)
      l.b[o] = static_cast<float>(static_cast<double>(l.b[o]) + sign * rec->values[len == 1 ? 0 : o]);
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
bool step_matmul(ChainPass& p, const Node& n, const Shape& out) { return p.matmul(n, out); }
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
constexpr ChainStep kChainStep<Op::Matmul> = &step_matmul;
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

namespace {

// out[r, o] += the row o of a sparse layer times input row r.
void sparse_rows(const DenseChain::Layer& l, const float* x, int64_t rows, float* out) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < l.out; ++o) {
      float s = 0;
      for (int64_t k = l.rows.row_start[static_cast<size_t>(o)]; k < l.rows.row_start[static_cast<size_t>(o + 1)]; ++k)
        s += l.rows.val[static_cast<size_t>(k)] * x[r * l.in + l.rows.col[static_cast<size_t>(k)]];
      out[r * l.out + o] += s;
    }
}

}  // namespace

void DenseChain::eval(const std::vector<float>& X, int64_t rows, std::vector<float>& Y,
                      std::vector<float>& scratch) const {
  const std::vector<float>* cur = &X;
  for (size_t li = 0; li < layers_.size(); ++li) {
    const Layer& l = layers_[li];
    std::vector<float>& out = li % 2 == 0 ? scratch : Y;
    out.resize(static_cast<size_t>(rows * l.out));
    for (int64_t r = 0; r < rows; ++r) std::copy(l.b.begin(), l.b.end(), out.begin() + r * l.out);
    if (!l.rows.empty()) {
      sparse_rows(l, cur->data(), rows, out.data());
    } else {
      kernels::gemm<float>(false, true, rows, l.out, l.in, cur->data(), l.w.data(), 1.0f, out.data(), l.out);
    }
    if (l.relu)
      for (float& v : out) v = std::max(v, 0.0f);
    cur = &out;
  }
  if (cur != &Y) Y = *cur;
}

}  // namespace denote::verify_detail
