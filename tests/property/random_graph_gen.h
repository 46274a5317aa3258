// Shared by the property tests (tests/property/): a seeded generator of random well-formed graphs
// over every op, each node's declared shape worked out here (from SPEC-IR.md's rules, written
// independently of src/ops/), with random inputs and payload records.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/ir/model.h"

namespace denote::random_graphs {

// splitmix64: a small, fully specified generator (the same sequence on every platform).
class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t next() { return gen_.next(); }
  // Uniform in [lo, hi] (inclusive).
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  bool chance(int percent) { return range(0, 99) < percent; }
  double real(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1p-53; }
  template <class T>
  const T& pick(const std::vector<T>& v) { return v[static_cast<size_t>(range(0, static_cast<int64_t>(v.size()) - 1))]; }

 private:
  SplitMix64 gen_;
};

constexpr int64_t kMaxNumel = 48;  // keeps values small so that 10,000 graphs evaluate quickly

inline int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// Builds one random model node by node. Every node's shape is computed here, not by the rules.
class Generator {
 public:
  Generator(Rng& rng, std::vector<Op> ops, bool evaluable) : rng_(rng), ops_(std::move(ops)), evaluable_(evaluable) {}

  Model& model() { return m_; }
  std::vector<Tensor<double>>& inputs() { return inputs_; }

  void build(int extra_nodes) {
    add_input(random_shape());
    if (rng_.chance(40)) add_input(random_shape());
    for (int k = 0; k < extra_nodes; ++k) {
      bool added = false;
      for (int attempt = 0; attempt < 4 && !added; ++attempt) added = add_op(rng_.pick(ops_));
      if (!added) {
        const int64_t x = pick_node();
        push(Op::Relu, {x}, NoAttrs{}, shape_of(x));
      }
    }
    m_.output_ids = {static_cast<int64_t>(m_.graph.nodes.size()) - 1};
    if (rng_.chance(30)) m_.output_ids.push_back(pick_node());
  }

  // Appends one node of `op` with random attrs and parents; false when the op does not fit.
  bool add_op(Op op);

 private:
  Shape shape_of(int64_t id) const { return m_.graph.nodes[static_cast<size_t>(id)].out_shape; }
  int64_t pick_node() { return rng_.range(0, static_cast<int64_t>(m_.graph.nodes.size()) - 1); }
  int64_t push(Op op, std::vector<int64_t> parents, Attrs attrs, Shape shape) {
    const int64_t id = static_cast<int64_t>(m_.graph.nodes.size());
    m_.graph.nodes.push_back(Node{id, std::move(parents), op, std::move(attrs), std::move(shape)});
    return id;
  }
  std::vector<double> values(int64_t n, double lo, double hi) {
    std::vector<double> v;
    for (int64_t i = 0; i < n; ++i) v.push_back(rng_.real(lo, hi));
    return v;
  }
  Shape random_shape(int max_rank = 3) {
    for (;;) {
      Shape s;
      const int64_t rank = rng_.range(0, max_rank);
      for (int64_t i = 0; i < rank; ++i) s.push_back(rng_.chance(8) ? 0 : rng_.range(1, 4));
      if (count(s) <= kMaxNumel) return s;
    }
  }
  int64_t add_input(Shape s) {
    inputs_.push_back(Tensor<double>(s, values(count(s), -2, 2)));
    return push(Op::Input, {}, NoAttrs{}, std::move(s));
  }
  int64_t add_const(Shape s, double lo, double hi) {
    const int64_t id = push(Op::Const, {}, ValueShapeAttrs{s}, s);
    m_.payload.consts[id] = {values(count(s), lo, hi)};
    return id;
  }
  // A node of shape s: an existing one when there is one (sometimes), else a new const.
  int64_t node_with_shape(const Shape& s, double lo = -2, double hi = 2) {
    std::vector<int64_t> same;
    for (const Node& n : m_.graph.nodes)
      if (n.out_shape == s) same.push_back(n.id);
    if (!same.empty() && rng_.chance(70)) return rng_.pick(same);
    return add_const(s, lo, hi);
  }
  int64_t random_axis(const Shape& s) { return rng_.range(0, static_cast<int64_t>(s.size()) - 1); }

  bool add_source(Op op);
  bool add_layout(Op op, int64_t x, const Shape& s);
  bool add_concat(int64_t x, const Shape& s);
  bool add_matmul(int64_t x, const Shape& s);
  bool add_conv(int64_t x, const Shape& s);
  bool add_pool(Op op, int64_t x, const Shape& s);
  bool add_normalization(Op op, int64_t x, const Shape& s);
  Shape reshape_target(int64_t n);

  Rng& rng_;
  std::vector<Op> ops_;
  bool evaluable_;  // only attrs the native contexts can evaluate (cast targets)
  Model m_;
  std::vector<Tensor<double>> inputs_;
};

inline bool Generator::add_source(Op op) {
  switch (op) {
    case Op::Input: add_input(random_shape()); return true;
    case Op::Const: add_const(random_shape(), -2, 2); return true;
    case Op::RandUniform: push(op, {}, SeedAttrs{rng_.next()}, random_shape()); return true;
    case Op::BernoulliMask: {
      const int64_t p = node_with_shape({}, -0.2, 1.2);
      push(op, {p}, SeedAttrs{rng_.next()}, random_shape());
      return true;
    }
    case Op::Custom: {
      CustomAttrs a{"mix", {}};
      std::vector<int64_t> parents;
      for (int64_t k = rng_.range(0, 2); k > 0; --k) {
        parents.push_back(pick_node());
        a.input_shapes.push_back(shape_of(parents.back()));
      }
      const int64_t id = push(op, parents, a, random_shape());
      // Output element j: 0.5 + the sum over inputs of input[j mod size].
      m_.payload.custom[id] = [](std::span<const Tensor<double>* const> in, int64_t j) -> Result<double> {
        double acc = 0.5;
        for (const Tensor<double>* t : in)
          if (!t->data.empty()) acc += t->data[static_cast<size_t>(j) % t->data.size()];
        return acc;
      };
      return true;
    }
    default: return false;
  }
}

// A random shape with n elements (for reshape).
inline Shape Generator::reshape_target(int64_t n) {
  Shape out;
  if (n == 0) {
    out = random_shape();
    if (count(out) != 0) out.push_back(0);
    return out;
  }
  int64_t rest = n;
  while (rest > 1 && out.size() < 4) {
    std::vector<int64_t> divisors;
    for (int64_t d = 2; d <= rest; ++d)
      if (rest % d == 0) divisors.push_back(d);
    const int64_t d = rng_.pick(divisors);
    out.push_back(d);
    rest /= d;
    if (rng_.chance(20)) out.push_back(1);
  }
  if (rest > 1) out.push_back(rest);
  if (rng_.chance(20)) out.insert(out.begin(), 1);
  std::reverse(out.begin(), out.end());
  return out;
}

inline bool Generator::add_layout(Op op, int64_t x, const Shape& s) {
  const size_t rank = s.size();
  switch (op) {
    case Op::Permute: {
      std::vector<int64_t> perm(rank);
      std::iota(perm.begin(), perm.end(), 0);
      for (size_t i = rank; i > 1; --i) std::swap(perm[i - 1], perm[static_cast<size_t>(rng_.range(0, i - 1))]);
      Shape out;
      for (int64_t p : perm) out.push_back(s[p]);
      push(op, {x}, PermAttrs{perm}, out);
      return true;
    }
    case Op::Transpose: {
      if (rank == 0) return false;
      const int64_t a = random_axis(s), b = random_axis(s);
      Shape out = s;
      std::swap(out[a], out[b]);
      push(op, {x}, TransposeAttrs{a, b}, out);
      return true;
    }
    case Op::BroadcastTo: {
      Shape to;
      if (rng_.chance(50)) to.push_back(rng_.range(0, 3));
      for (int64_t d : s) to.push_back(d == 1 ? rng_.range(0, 3) : d);
      if (count(to) > kMaxNumel) return false;
      push(op, {x}, BroadcastAttrs{s, to}, to);
      return true;
    }
    case Op::Reshape: {
      Shape to = reshape_target(count(s));
      if (count(to) != count(s)) return false;
      push(op, {x}, ReshapeAttrs{s, to}, to);
      return true;
    }
    case Op::Flatten: push(op, {x}, ValueShapeAttrs{s}, Shape{count(s)}); return true;
    case Op::Concat: return add_concat(x, s);
    case Op::Gather: {
      if (rank == 0) return false;
      const int64_t axis = random_axis(s);
      std::vector<int64_t> indices;
      if (s[axis] > 0)
        for (int64_t k = rng_.range(0, 4); k > 0; --k) indices.push_back(rng_.range(0, s[axis] - 1));
      Shape out = s;
      out[axis] = static_cast<int64_t>(indices.size());
      if (count(out) > kMaxNumel) return false;
      push(op, {x}, GatherAttrs{axis, indices}, out);
      return true;
    }
    default: return false;
  }
}

inline bool Generator::add_concat(int64_t x, const Shape& s) {
  if (s.empty()) return false;
  const int64_t axis = random_axis(s);
  std::vector<int64_t> parents = {x};
  Shape out = s;
  for (int64_t k = rng_.range(1, 2); k > 0; --k) {
    Shape other = s;
    other[axis] = rng_.range(0, 3);
    out[axis] += other[axis];
    parents.push_back(node_with_shape(other));
  }
  if (count(out) > kMaxNumel) return false;
  push(Op::Concat, parents, AxisAttrs{axis}, out);
  return true;
}

// torch.matmul with x on the left: y is built to fit, and the result is assembled from the
// choices made (batch dims: right-aligned, each the non-1 of the pair).
inline bool Generator::add_matmul(int64_t x, const Shape& s) {
  if (s.empty()) return false;
  const int64_t n = s.back();
  const bool y_vec = rng_.chance(30);
  const int64_t m = rng_.range(0, 3);
  Shape y_batch, out_batch;
  const Shape x_batch = s.size() > 2 ? Shape(s.begin(), s.end() - 2) : Shape{};
  const size_t y_batch_rank = y_vec ? 0 : static_cast<size_t>(rng_.range(0, 2));
  const size_t batch = std::max(x_batch.size(), y_batch_rank);
  for (size_t i = 0; i < batch; ++i) {  // from the right
    const bool has_x = i < x_batch.size(), has_y = i < y_batch_rank;
    const int64_t dx = has_x ? x_batch[x_batch.size() - 1 - i] : 1;
    int64_t dy = 1;
    if (has_y) dy = (dx == 1 || !has_x) ? rng_.range(1, 3) : (rng_.chance(70) ? dx : 1);
    if (has_y) y_batch.insert(y_batch.begin(), dy);
    out_batch.insert(out_batch.begin(), dx == 1 ? dy : dx);
  }
  Shape y = y_batch;
  y.push_back(n);
  if (!y_vec) y.push_back(m);
  Shape out = out_batch;
  if (s.size() >= 2) out.push_back(s[s.size() - 2]);
  if (!y_vec) out.push_back(m);
  if (count(out) > kMaxNumel || count(y) > kMaxNumel) return false;
  push(Op::Matmul, {x, node_with_shape(y)}, NoAttrs{}, out);
  return true;
}

inline bool Generator::add_conv(int64_t x, const Shape& s) {
  if (s.size() < 2) return false;
  const int64_t r = rng_.range(1, std::min<int64_t>(2, static_cast<int64_t>(s.size()) - 1));
  ConvConfig c;
  c.channel_axis = static_cast<int64_t>(s.size()) - 1 - r;
  c.in_channels = s[c.channel_axis];
  if (c.in_channels < 1) return false;
  c.groups = rng_.chance(30) && c.in_channels % 2 == 0 ? 2 : 1;
  c.out_channels = c.groups * rng_.range(1, 2);
  c.window.spatial_rank = r;
  const bool explicit_dilation = rng_.chance(50), explicit_after = rng_.chance(50);
  Shape out = s, spatial;
  out[c.channel_axis] = c.out_channels;
  for (int64_t i = 0; i < r; ++i) {
    const int64_t in = s[c.channel_axis + 1 + i];
    spatial.push_back(in);
    int64_t k = rng_.range(1, 3), d = explicit_dilation ? rng_.range(1, 2) : 1;
    const int64_t before = rng_.range(0, 1), after = explicit_after ? rng_.range(0, 2) : before;
    const int64_t stride = rng_.range(1, 2);
    if (d * (k - 1) + 1 > in + before + after) k = 1, d = 1;  // shrink the window to fit
    if (in + before + after < 1) return false;
    c.window.kernel.push_back(k);
    c.window.stride.push_back(stride);
    c.window.padding.push_back(before);
    if (explicit_dilation) c.dilation.push_back(d);
    if (explicit_after) c.padding_after.push_back(after);
    out[c.channel_axis + 1 + i] = (in + before + after - (d * (k - 1) + 1)) / stride + 1;
  }
  if (count(out) > kMaxNumel) return false;
  const int64_t id = push(Op::Conv, {x}, c, out);
  int64_t weights = c.out_channels * (c.in_channels / c.groups);
  for (int64_t k : c.window.kernel) weights *= k;
  m_.payload.conv[id] = {c, spatial, values(weights, -1, 1), values(c.out_channels, -1, 1)};
  return true;
}

// Pool extent per SPEC-IR.md: 0 if in = 0, k = 0 or p > floor(k/2); 0 if in + 2p < k; else
// floor((in + 2p - k) / s) + 1.
inline bool Generator::add_pool(Op op, int64_t x, const Shape& s) {
  const int64_t r = rng_.range(0, std::min<int64_t>(2, static_cast<int64_t>(s.size())));
  WindowConfig w{r, {}, {}, {}};
  Shape out = s;
  for (int64_t i = 0; i < r; ++i) {
    const size_t axis = s.size() - static_cast<size_t>(r) + static_cast<size_t>(i);
    const int64_t in = s[axis], k = rng_.chance(10) ? 0 : rng_.range(1, 4), st = rng_.range(1, 2);
    const int64_t p = rng_.range(0, 2);
    w.kernel.push_back(k);
    w.stride.push_back(st);
    w.padding.push_back(p);
    const bool empty = in == 0 || k == 0 || p > k / 2 || in + 2 * p < k;
    out[axis] = empty ? 0 : (in + 2 * p - k) / st + 1;
  }
  if (count(out) > kMaxNumel) return false;
  push(op, {x}, w, out);
  return true;
}

inline bool Generator::add_normalization(Op op, int64_t x, const Shape& s) {
  if (s.empty()) return false;
  const int64_t axis = random_axis(s);
  switch (op) {
    case Op::Softmax:
    case Op::LogSoftmax: push(op, {x}, AxisAttrs{axis}, s); return true;
    case Op::BatchNormEval: {
      const int64_t c = s[axis], id = push(op, {x}, BatchNormAttrs{axis, c}, s);
      m_.payload.batch_norm[id] = {values(c, 0.5, 2), values(c, -1, 1), values(c, -1, 1), values(c, 0.1, 2),
                                   rng_.real(1e-6, 1e-2)};
      return true;
    }
    case Op::HardMaskedSoftmax: {
      HardMask mask{s, {}};
      for (int64_t i = 0; i < count(s); ++i) mask.allowed.push_back(rng_.chance(70) ? 1 : 0);
      push(op, {x}, mask, s);
      return true;
    }
    case Op::Layernorm: {
      const Shape tail(s.begin() + axis, s.end());
      if (count(tail) == 0) return false;
      const int64_t id = push(op, {x}, AxisAttrs{axis}, s);
      if (rng_.chance(60)) m_.payload.layernorm[id] = {tail, values(count(tail), 0.5, 2), values(count(tail), -1, 1), 1e-5};
      return true;
    }
    default: return false;
  }
}

inline bool Generator::add_op(Op op) {
  if (op_info(op).min_parents == 0 || op == Op::BernoulliMask) return add_source(op);
  const int64_t x = pick_node();
  const Shape s = shape_of(x);
  switch (op_info(op).family) {
    case OpFamily::Layout:
      if (op == Op::Detach) break;
      return add_layout(op, x, s);
    case OpFamily::Window:
      return op == Op::Conv ? add_conv(x, s) : add_pool(op, x, s);
    case OpFamily::Normalization: return add_normalization(op, x, s);
    default: break;
  }
  switch (op) {
    case Op::SafeLog: push(op, {x, node_with_shape({}, 1e-6, 0.5)}, NoAttrs{}, s); return true;
    case Op::MseLoss: push(op, {x, node_with_shape(s)}, NoAttrs{}, Shape{}); return true;
    case Op::Sum: push(op, {x}, NoAttrs{}, Shape{}); return true;
    case Op::ReduceSum:
    case Op::ReduceMean: {
      std::vector<int64_t> axes;
      for (size_t a = 0; a < s.size(); ++a)
        if (s[a] > 0) axes.push_back(static_cast<int64_t>(a));
      if (axes.empty()) return false;
      const int64_t a = rng_.pick(axes);
      Shape out = s;
      out.erase(out.begin() + a);
      push(op, {x}, AxisAttrs{a}, out);
      return true;
    }
    case Op::Matmul: return add_matmul(x, s);
    case Op::Linear: {
      if (s.empty()) return false;
      const int64_t in = s.back(), out_dim = rng_.range(0, 3);
      Shape out = s;
      out.back() = out_dim;
      const int64_t id = push(op, {x}, NoAttrs{}, out);
      m_.payload.linear[id] = {out_dim, in, values(out_dim * in, -1, 1), values(out_dim, -1, 1)};
      return true;
    }
    case Op::ClampMin: push(op, {x}, ClampAttrs{rng_.real(-1, 1)}, s); return true;
    case Op::Cast: {
      static const std::vector<std::string> kNative = {"binary32", "binary64"};
      static const std::vector<std::string> kAny = {"binary16", "bfloat16", "binary32", "int(8)", "bool"};
      static const std::vector<std::string> kModes = {"nearest-even", "toward-zero", "upward", "downward", "nearest-away"};
      CastAttrs c{rng_.pick(evaluable_ ? kNative : kAny), evaluable_ ? "nearest-even" : rng_.pick(kModes)};
      push(op, {x}, c, s);
      return true;
    }
    case Op::MxCast: {
      static const std::vector<std::string> kFormats = {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3",
                                                        "mxfp4_e2m1", "mxint8"};
      const auto rank = static_cast<int64_t>(s.size());
      push(op, {x}, MxCastAttrs{rng_.pick(kFormats), rng_.range(1, 4), rank == 0 ? 0 : rng_.range(-rank, rank - 1)}, s);
      return true;
    }
    default: break;
  }
  if (op_info(op).min_parents == 2) {  // binary elementwise: equal shapes
    push(op, {x, node_with_shape(s)}, NoAttrs{}, s);
    return true;
  }
  push(op, {x}, NoAttrs{}, s);  // unary elementwise and detach
  return true;
}

// ---- helpers of the properties

}  // namespace denote::random_graphs
