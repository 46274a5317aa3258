// Property tests over seeded random graphs.
//  1. Shape rules: 10,000 random well-formed graphs over EVERY op, each node's declared shape worked
//     out by the generator itself (from SPEC-IR.md's rules, written independently of src/ops/), so
//     check_shapes must accept them all.
//  2. Soundness (the seed's theorem): 10,000 random graphs over the ops that have an evaluation rule;
//     when check_shapes and denote_all both succeed, every value has its node's declared shape. They
//     also survive a torchlean.ir.v1 round trip unchanged.
//  3. Robustness: random single-field mutations (a dim, an axis, a parent, an id, the op tag, attrs,
//     a payload record) still pass or are rejected with an error; nothing crashes or throws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "denote/check/check.h"
#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/text.h"

namespace denote {
namespace {

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

int64_t count(const Shape& s) {
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

bool Generator::add_source(Op op) {
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
Shape Generator::reshape_target(int64_t n) {
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

bool Generator::add_layout(Op op, int64_t x, const Shape& s) {
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
    default: return false;
  }
}

bool Generator::add_concat(int64_t x, const Shape& s) {
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
bool Generator::add_matmul(int64_t x, const Shape& s) {
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

bool Generator::add_conv(int64_t x, const Shape& s) {
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
bool Generator::add_pool(Op op, int64_t x, const Shape& s) {
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

bool Generator::add_normalization(Op op, int64_t x, const Shape& s) {
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

bool Generator::add_op(Op op) {
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

std::vector<Op> all_ops() {
  std::vector<Op> ops;
  for (const OpInfo& info : kOpTable) ops.push_back(info.op);
  return ops;
}

Result<ValueTable<double>> evaluate(const Model& m, const std::vector<Tensor<double>>& inputs, int64_t limit) {
  F64Context ctx;
  EvalOptions options;
  options.max_elements = limit;
  return denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx, options);
}

// The ops whose evaluation rule exists: a graph built around each op must not answer
// "no evaluation rule".
std::vector<Op> evaluable_ops() {
  std::vector<Op> out;
  for (const OpInfo& info : kOpTable) {
    bool pending = false, built = false;
    for (uint64_t seed = 1; seed < 40 && !built; ++seed) {
      Rng rng(seed);
      Generator gen(rng, {info.op}, true);
      gen.build(0);
      built = gen.add_op(info.op);
      if (!built) continue;
      auto r = evaluate(gen.model(), gen.inputs(), int64_t{1} << 20);
      pending = !r.ok() && r.message().find("no evaluation rule") != std::string::npos;
    }
    if (built && !pending) out.push_back(info.op);
  }
  return out;
}

// Soundness: with check_shapes and evaluation both successful, every value has the declared shape.
void expect_values_fit(const Graph& g, const ValueTable<double>& table) {
  ASSERT_EQ(table.size(), g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].shape, g.nodes[i].out_shape) << "node " << i;
    EXPECT_EQ(table[i].data.size(), static_cast<size_t>(count(g.nodes[i].out_shape))) << "node " << i;
  }
}

// Payload equality without the (not serialized) custom bodies.
Payload<double> without_custom(Payload<double> p) {
  p.custom.clear();
  return p;
}

// ---- mutations: one field of one node (or one payload record) changes

int64_t odd_value(Rng& rng, int64_t near) {
  static const std::vector<int64_t> kOdd = {-1, 0, 1, 2, 3, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62,
                                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  switch (rng.range(0, 3)) {
    case 0: return near + 1;
    case 1: return near - 1;
    default: return rng.pick(kOdd);
  }
}

void mutate_ints(Rng& rng, std::vector<int64_t>& v) {
  if (v.empty() || rng.chance(15)) v.push_back(odd_value(rng, 1));
  else if (rng.chance(15)) v.pop_back();
  else {
    int64_t& x = v[static_cast<size_t>(rng.range(0, static_cast<int64_t>(v.size()) - 1))];
    x = odd_value(rng, x);
  }
}

// Changes one field inside an attrs record.
void mutate_attr_fields(Rng& rng, Attrs& a) {
  std::visit(
      [&](auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, ValueShapeAttrs>) mutate_ints(rng, r.shape);
        else if constexpr (std::is_same_v<T, SeedAttrs>) r.seed = rng.next();
        else if constexpr (std::is_same_v<T, CustomAttrs>) {
          if (r.input_shapes.empty()) r.input_shapes.push_back({2});
          else mutate_ints(rng, r.input_shapes[0]);
        } else if constexpr (std::is_same_v<T, PermAttrs>) mutate_ints(rng, r.perm);
        else if constexpr (std::is_same_v<T, TransposeAttrs>) r.axis1 = odd_value(rng, r.axis1);
        else if constexpr (std::is_same_v<T, BroadcastAttrs>) mutate_ints(rng, rng.chance(50) ? r.from : r.to);
        else if constexpr (std::is_same_v<T, ReshapeAttrs>) mutate_ints(rng, rng.chance(50) ? r.in_shape : r.out_shape);
        else if constexpr (std::is_same_v<T, AxisAttrs>) r.axis = odd_value(rng, r.axis);
        else if constexpr (std::is_same_v<T, ClampAttrs>) r.bound = rng.chance(50) ? std::nan("") : -r.bound;
        else if constexpr (std::is_same_v<T, CastAttrs>) r.rounding = rng.chance(50) ? "" : "toward-zero";
        else if constexpr (std::is_same_v<T, WindowConfig>) {
          std::vector<int64_t>* f[] = {&r.kernel, &r.stride, &r.padding};
          if (rng.chance(20)) r.spatial_rank = odd_value(rng, r.spatial_rank);
          else mutate_ints(rng, *f[rng.range(0, 2)]);
        } else if constexpr (std::is_same_v<T, ConvConfig>) {
          std::vector<int64_t>* f[] = {&r.window.kernel, &r.window.stride, &r.window.padding, &r.dilation,
                                       &r.padding_after};
          int64_t* g[] = {&r.groups, &r.channel_axis, &r.in_channels, &r.out_channels, &r.window.spatial_rank};
          int64_t& field = *g[rng.range(0, 4)];
          if (rng.chance(50)) mutate_ints(rng, *f[rng.range(0, 4)]);
          else field = odd_value(rng, field);
        } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
          if (rng.chance(50)) r.channel_axis = odd_value(rng, r.channel_axis);
          else r.channels = odd_value(rng, r.channels);
        } else if constexpr (std::is_same_v<T, HardMask>) {
          if (rng.chance(50)) mutate_ints(rng, r.shape);
          else r.allowed.push_back(1);
        }
      },
      a);
}

// Changes the size of one payload vector, or drops a record.
void mutate_payload(Rng& rng, Payload<double>& p) {
  auto resize = [&](std::vector<double>& v) { v.resize(v.empty() ? 1 : (rng.chance(50) ? v.size() - 1 : v.size() + 2)); };
  const bool first = rng.chance(50);
  switch (rng.range(0, 5)) {
    case 0:
      if (!p.consts.empty()) resize(p.consts.begin()->second.values);
      break;
    case 1:
      if (p.linear.empty()) break;
      if (first) resize(p.linear.begin()->second.weight);
      else p.linear.begin()->second.in_dim = odd_value(rng, p.linear.begin()->second.in_dim);
      break;
    case 2:
      if (p.conv.empty()) break;
      if (first) resize(p.conv.begin()->second.weight);
      else mutate_ints(rng, p.conv.begin()->second.input_spatial);
      break;
    case 3:
      if (!p.batch_norm.empty()) resize(p.batch_norm.begin()->second.var);
      break;
    case 4:
      if (p.layernorm.empty()) break;
      if (first) resize(p.layernorm.begin()->second.gamma);
      else mutate_ints(rng, p.layernorm.begin()->second.normalized_shape);
      break;
    default:
      if (!p.linear.empty()) p.linear.erase(p.linear.begin());
      else if (!p.consts.empty()) p.consts.erase(p.consts.begin());
      else p.custom.clear();
  }
}

// One single-field mutation; returns what it did (for failure messages).
std::string mutate(Rng& rng, Model& m) {
  std::vector<Node>& nodes = m.graph.nodes;
  Node& n = nodes[static_cast<size_t>(rng.range(0, static_cast<int64_t>(nodes.size()) - 1))];
  const std::string at = "node " + std::to_string(n.id) + ": ";
  switch (rng.range(0, 6)) {
    case 0: mutate_ints(rng, n.out_shape); return at + "dim";
    case 1:
      if (n.parents.empty()) n.parents.push_back(rng.range(-2, static_cast<int64_t>(nodes.size()) + 1));
      else n.parents[static_cast<size_t>(rng.range(0, static_cast<int64_t>(n.parents.size()) - 1))] =
               rng.range(-2, static_cast<int64_t>(nodes.size()) + 1);
      return at + "parent";
    case 2: n.id = odd_value(rng, n.id); return at + "id";
    case 3: n.op = static_cast<Op>(rng.range(0, kNumOps - 1)); return at + "op tag";
    case 4: n.attrs = default_attrs(static_cast<Op>(rng.range(0, kNumOps - 1))); return at + "attrs kind";
    case 5: mutate_attr_fields(rng, n.attrs); return at + "attrs field";
    default: mutate_payload(rng, m.payload); return "payload";
  }
}

// Every check and pass runs on the mutated model and reports through a Status, never a crash.
void expect_robust(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& what) {
  SCOPED_TRACE(what);
  const Status wf = check_well_formed(m.graph);
  const Status shapes = check_shapes(m.graph);
  const std::vector<Diagnostic> d = diagnose(m.graph);
  EXPECT_EQ(d.empty(), shapes.ok()) << shapes.message();
  EXPECT_EQ(infer_shapes(m.graph).ok(), shapes.ok());
  if (!wf.ok()) {
    EXPECT_FALSE(shapes.ok());
  }
  for (const Diagnostic& x : d) EXPECT_EQ(x.message.rfind("IR graph: ", 0), 0u) << x.message;
  auto table = evaluate(m, inputs, 4096);
  if (!table.ok()) {
    EXPECT_EQ(table.message().rfind("IR ", 0), 0u) << table.message();
  }
  if (table.ok() && shapes.ok()) expect_values_fit(m.graph, *table);
  auto parsed = parse_model_json(write_model_json(m));
  if (parsed.ok()) (void)diagnose(parsed->graph);
  (void)format_listing(m.graph);
}

constexpr int kGraphs = 10'000;
constexpr int kMutationsPerGraph = 3;

TEST(RandomGraphs, ShapeRulesAgreeOnEveryOp) {
  Rng rng(0x5eed0001);
  const std::vector<Op> ops = all_ops();
  std::set<Op> seen;
  for (int i = 0; i < kGraphs; ++i) {
    Generator gen(rng, ops, false);
    gen.build(static_cast<int>(rng.range(1, 10)));
    const Model& m = gen.model();
    for (const Node& n : m.graph.nodes) seen.insert(n.op);
    Status s = check_shapes(m.graph);
    ASSERT_TRUE(s.ok()) << "graph " << i << ": " << s.message() << "\n" << format_listing(m.graph);
    ASSERT_TRUE(diagnose(m.graph).empty());
    for (int k = 0; k < kMutationsPerGraph; ++k) {
      Model mutated = m;
      std::string what = mutate(rng, mutated);
      expect_robust(mutated, gen.inputs(), "graph " + std::to_string(i) + ", " + what);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kNumOps));  // every op was generated
}

TEST(RandomGraphs, CheckedAndEvaluatedValuesHaveDeclaredShapes) {
  const std::vector<Op> ops = evaluable_ops();
  ASSERT_FALSE(ops.empty());
  std::string skipped;
  for (const OpInfo& info : kOpTable)
    if (std::find(ops.begin(), ops.end(), info.op) == ops.end()) skipped += " " + std::string(info.tag);
  if (!skipped.empty()) std::cout << "[ note ] ops without an evaluation rule (skipped):" << skipped << "\n";
  Rng rng(0x5eed0002);
  int evaluated = 0;
  for (int i = 0; i < kGraphs; ++i) {
    Generator gen(rng, ops, true);
    gen.build(static_cast<int>(rng.range(1, 10)));
    const Model& m = gen.model();
    ASSERT_TRUE(check_shapes(m.graph).ok()) << check_shapes(m.graph).message() << "\n" << format_listing(m.graph);
    auto table = evaluate(m, gen.inputs(), int64_t{1} << 20);
    if (table.ok()) {
      ++evaluated;
      expect_values_fit(m.graph, *table);
    } else {
      // The only failures a checked graph may have: log's domain (and nothing else here).
      EXPECT_NE(table.message().find("log: input contains values <= 0"), std::string::npos) << table.message();
    }
    // torchlean.ir.v1 round trip (custom bodies are not serialized).
    auto back = parse_model_json(write_model_json(m));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->graph, m.graph);
    EXPECT_EQ(back->output_ids, m.output_ids);
    EXPECT_TRUE(without_custom(back->payload) == without_custom(m.payload));
    for (int k = 0; k < kMutationsPerGraph; ++k) {
      Model mutated = m;
      std::string what = mutate(rng, mutated);
      expect_robust(mutated, gen.inputs(), "graph " + std::to_string(i) + ", " + what);
    }
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(evaluated, kGraphs * 3 / 4);  // the property is exercised, not vacuous
}

}  // namespace
}  // namespace denote
