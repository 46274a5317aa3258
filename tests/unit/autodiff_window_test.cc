// JVP and VJP rules of the window family (conv, max_pool, avg_pool: src/autodiff/diff_window.h)
// and the normalization family (batch_norm_eval, softmax, log_softmax, hard_masked_softmax,
// layernorm: src/autodiff/diff_normalization.h), called directly on one hand-built node (input 0,
// op 1) with its payload:
//   - the JVP equals central finite differences of the eval rule in F64Context (h = 1e-6, every
//     entry within 1e-7 * max(1, |JVP|_inf));
//   - the adjoint identity <v, JVP(u)> == <VJP(v), u> for random u, v to 1e-12 relative (relative
//     to the sum of |v_i JVP(u)_i|, which is free of cancellation);
//   - parameter gradients (conv weight/bias, batch_norm_eval and layernorm gamma/beta) equal
//     finite differences of <v, eval> in every parameter entry;
//   - max_pool's tie rule (the first maximal element in scan order; a NaN takes over);
//   - one run per op in RealContext (MPFR, 200 bits) and BinaryContext bfloat16 against f64 on
//     the same (rounded) inputs and parameters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "autodiff/diff_normalization.h"
#include "autodiff/diff_window.h"
#include "denote/program/builder.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/real_context.h"
#include "unit/conv2d_config.h"

namespace denote {
namespace {

// One op's eval, JVP and VJP rules as a type, so the checks below are templates over it.
#define ADW_RULES(OP)                                                                                  \
  struct OP##Rules {                                                                                   \
    template <class Ctx, class... A>                                                                   \
    static auto eval(Ctx& c, A&&... a) { return rules::eval_##OP(c, std::forward<A>(a)...); }          \
    template <class Ctx, class... A>                                                                   \
    static auto jvp(Ctx& c, A&&... a) { return ad::jvp_##OP(c, std::forward<A>(a)...); }              \
    template <class Ctx, class... A>                                                                   \
    static auto vjp(Ctx& c, A&&... a) { return ad::vjp_##OP(c, std::forward<A>(a)...); }              \
  };
ADW_RULES(Conv)
ADW_RULES(MaxPool)
ADW_RULES(AvgPool)
ADW_RULES(BatchNormEval)
ADW_RULES(Softmax)
ADW_RULES(LogSoftmax)
ADW_RULES(HardMaskedSoftmax)
ADW_RULES(Layernorm)
#undef ADW_RULES

// One op node (id 1) on one input (id 0), with its f64 payload.
struct Case {
  std::string name;
  Model m;
  bool distinct = false;  // inputs well apart (max_pool: no near-ties in finite differences)
  std::vector<std::pair<std::string, Shape>> params;  // the parameter gradients the VJP must give
  const Node& node() const { return m.graph.nodes[1]; }
  const Shape& in_shape() const { return m.graph.nodes[0].out_shape; }
};

// Calls the rules of op R on one node in context Ctx.
template <class R, class Ctx>
struct Rig {
  using S = typename Ctx::Scalar;
  Ctx& ctx;
  const Node& node;
  const Payload<S>& payload;
  EvalOptions opts{};

  Tensor<S> eval(const Tensor<S>& x) const {
    const Tensor<S>* ps[] = {&x};
    auto y = R::eval(ctx, rules::EvalArgs<S>{node, ps, payload, node.out_shape, nullptr, opts});
    EXPECT_TRUE(y.ok()) << y.message();
    return y.ok() ? *y : Tensor<S>{};
  }
  Tensor<S> jvp(const Tensor<S>& x, const Tensor<S>& y, const Tensor<S>& t) const {
    const Tensor<S>* ps[] = {&x};
    const Tensor<S>* ts[] = {&t};
    auto r = R::jvp(ctx, ad::DiffArgs<S>{node, ps, y, payload, opts}, std::span<const Tensor<S>* const>(ts));
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? *r : Tensor<S>{};
  }
  ad::VjpOut<S> vjp(const Tensor<S>& x, const Tensor<S>& y, const Tensor<S>& g, bool want_x, bool params) const {
    const Tensor<S>* ps[] = {&x};
    ad::VjpOut<S> out;
    out.want = {want_x};
    out.parents.resize(1);
    out.want_params = params;
    const Status s = R::vjp(ctx, ad::DiffArgs<S>{node, ps, y, payload, opts}, g, out);
    EXPECT_TRUE(s.ok()) << s.message();
    return out;
  }
};

using T64 = Tensor<double>;

T64 random_tensor(const Shape& s, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0) {
  std::uniform_real_distribution<double> d(lo, hi);
  T64 t = T64::filled(s, 0.0);
  for (double& v : t.data) v = d(rng);
  return t;
}

// A random permutation of n values 2 / n apart in [-1, 1) (plus a small jitter).
T64 distinct_tensor(const Shape& s, std::mt19937_64& rng) {
  T64 t = random_tensor(s, rng, 0.0, 0.5);
  const double n = static_cast<double>(t.data.size());
  for (size_t i = 0; i < t.data.size(); ++i) t.data[i] = (static_cast<double>(i) + t.data[i]) * 2.0 / n - 1.0;
  std::shuffle(t.data.begin(), t.data.end(), rng);
  return t;
}

T64 input_for(const Case& c, std::mt19937_64& rng) {
  return c.distinct ? distinct_tensor(c.in_shape(), rng) : random_tensor(c.in_shape(), rng);
}

// x + h * u
T64 axpy(const T64& x, double h, const T64& u) {
  T64 r = x;
  for (size_t i = 0; i < r.data.size(); ++i) r.data[i] += h * u.data[i];
  return r;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

double inf_norm(const std::vector<double>& a) {
  double m = 0;
  for (double v : a) m = std::max(m, std::fabs(v));
  return m;
}

constexpr double kH = 1e-6, kFdRel = 1e-7;

// (1) JVP == central finite differences of the eval rule.
template <class R>
void check_jvp_fd(const Case& c, uint64_t seed = 1) {
  SCOPED_TRACE(c.name);
  ASSERT_EQ(c.m.graph.nodes.size(), 2u);
  std::mt19937_64 rng(seed);
  F64Context ctx;
  const Rig<R, F64Context> rig{ctx, c.node(), c.m.payload};
  const T64 x = input_for(c, rng), u = random_tensor(x.shape, rng);
  const T64 y = rig.eval(x), jv = rig.jvp(x, y, u);
  ASSERT_EQ(jv.shape, c.node().out_shape);
  const T64 yp = rig.eval(axpy(x, kH, u)), ym = rig.eval(axpy(x, -kH, u));
  const double tol = kFdRel * std::max(1.0, inf_norm(jv.data));
  for (size_t i = 0; i < jv.data.size(); ++i)
    EXPECT_NEAR(jv.data[i], (yp.data[i] - ym.data[i]) / (2 * kH), tol) << "output " << i;
}

// (2) <v, JVP(u)> == <VJP(v), u> for three random (u, v).
template <class R>
void check_adjoint(const Case& c, uint64_t seed = 2) {
  SCOPED_TRACE(c.name);
  ASSERT_EQ(c.m.graph.nodes.size(), 2u);
  std::mt19937_64 rng(seed);
  F64Context ctx;
  const Rig<R, F64Context> rig{ctx, c.node(), c.m.payload};
  const T64 x = input_for(c, rng), y = rig.eval(x);
  for (int trial = 0; trial < 3; ++trial) {
    const T64 u = random_tensor(x.shape, rng), v = random_tensor(y.shape, rng);
    const T64 jv = rig.jvp(x, y, u);
    const auto out = rig.vjp(x, y, v, true, false);
    ASSERT_EQ(out.parents[0].shape, x.shape);
    EXPECT_TRUE(out.params.empty());
    double scale = 0;
    for (size_t i = 0; i < jv.data.size(); ++i) scale += std::fabs(v.data[i] * jv.data[i]);
    EXPECT_NEAR(dot(v.data, jv.data), dot(out.parents[0].data, u.data), 1e-12 * std::max(scale, 1e-300));
  }
}

// The payload values of parameter `field` of node `id` (conv, batch_norm_eval, layernorm).
std::vector<double>* param_values(Payload<double>& p, int64_t id, const std::string& field) {
  const bool w = field == "weight";
  if (auto it = p.conv.find(id); it != p.conv.end()) return w ? &it->second.weight : &it->second.bias;
  if (auto it = p.batch_norm.find(id); it != p.batch_norm.end()) return w ? &it->second.gamma : &it->second.beta;
  if (auto it = p.layernorm.find(id); it != p.layernorm.end()) return w ? &it->second.gamma : &it->second.beta;
  return nullptr;
}

// (3) The VJP's parameter gradients: the fields c.params names, with their shapes, each entry equal
// to finite differences of <v, eval(x)> in that entry.
template <class R>
void check_param_fd(const Case& c, uint64_t seed = 3) {
  SCOPED_TRACE(c.name);
  ASSERT_EQ(c.m.graph.nodes.size(), 2u);
  std::mt19937_64 rng(seed);
  F64Context ctx;
  Payload<double> p = c.m.payload;
  const Rig<R, F64Context> rig{ctx, c.node(), p};
  const T64 x = input_for(c, rng), y = rig.eval(x), v = random_tensor(y.shape, rng);
  const auto out = rig.vjp(x, y, v, false, true);
  EXPECT_TRUE(out.parents[0].data.empty());
  ASSERT_EQ(out.params.size(), c.params.size());
  for (size_t f = 0; f < c.params.size(); ++f) {
    const ParamGrad<double>& g = out.params[f];
    EXPECT_EQ(g.node, 1);
    EXPECT_EQ(g.field, c.params[f].first);
    EXPECT_EQ(g.shape, c.params[f].second);
    std::vector<double>* values = param_values(p, 1, g.field);
    ASSERT_TRUE(values != nullptr);
    ASSERT_EQ(g.values.size(), values->size());
    const double tol = kFdRel * std::max(1.0, inf_norm(g.values));
    for (size_t j = 0; j < values->size(); ++j) {
      const double keep = (*values)[j];
      (*values)[j] = keep + kH;
      const double lp = dot(v.data, rig.eval(x).data);
      (*values)[j] = keep - kH;
      const double lm = dot(v.data, rig.eval(x).data);
      (*values)[j] = keep;
      EXPECT_NEAR(g.values[j], (lp - lm) / (2 * kH), tol) << g.field << " entry " << j;
    }
  }
}

template <class R>
void check_all(const std::vector<Case>& cases) {
  for (const Case& c : cases) {
    check_jvp_fd<R>(c);
    check_adjoint<R>(c);
    if (!c.params.empty()) check_param_fd<R>(c);
  }
}

// ---- cases

Case op_case(std::string name, const Shape& in, Op op, Attrs attrs) {
  GraphBuilder b;
  const int64_t id = b.unary(op, b.input(in), std::move(attrs));
  auto m = b.build({id});
  EXPECT_TRUE(m.ok()) << name << ": " << m.message();
  return Case{std::move(name), m.ok() ? *m : Model{}, false, {}};
}

std::vector<double> random_values(int64_t n, uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  return random_tensor({n}, rng, lo, hi).data;
}

struct ConvSpec {
  std::vector<int64_t> k, s, p, pa, d;
  int64_t groups, axis, cin, cout;
};

Case conv_case(std::string name, const Shape& in, const ConvSpec& g) {
  ConvConfig c;
  c.window = WindowConfig{static_cast<int64_t>(g.k.size()), g.k, g.s, g.p};
  c.padding_after = g.pa;
  c.dilation = g.d;
  c.groups = g.groups;
  c.channel_axis = g.axis;
  c.in_channels = g.cin;
  c.out_channels = g.cout;
  Shape wshape{g.cout, g.cin / g.groups};
  wshape.insert(wshape.end(), g.k.begin(), g.k.end());
  GraphBuilder b;
  const int64_t id = b.conv(b.input(in), c, random_values(numel(wshape), 11), random_values(g.cout, 12));
  auto m = b.build({id});
  EXPECT_TRUE(m.ok()) << name << ": " << m.message();
  Case out{std::move(name), m.ok() ? *m : Model{}, false, {}};
  out.params = {{"weight", wshape}, {"bias", {g.cout}}};
  return out;
}

std::vector<Case> conv_cases() {
  return {
      conv_case("conv1d", {2, 3, 7}, {{3}, {1}, {1}, {}, {}, 1, 1, 3, 2}),
      // channel_axis 0, groups 2, stride 2, dilation 2, padding 2 before / 1 after
      conv_case("conv1d_axis0_grouped", {4, 11}, {{3}, {2}, {2}, {1}, {2}, 2, 0, 4, 2}),
      conv_case("conv2d_grouped_dilated_asymmetric", {2, 4, 5, 6},
                {{2, 3}, {2, 1}, {1, 0}, {0, 2}, {2, 1}, 2, 1, 4, 6}),
      conv_case("conv3d_grouped", {1, 2, 4, 3, 5}, {{2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 2}, 2, 1, 2, 4}),
      // leading batch dims [2, 2] before channel_axis 2; depthwise-like groups 3
      conv_case("conv1d_leading_batch", {2, 2, 3, 7}, {{3}, {2}, {1}, {2}, {2}, 3, 2, 3, 6}),
  };
}

std::vector<Case> pool_cases(Op op) {
  std::vector<Case> cases = {
      op_case("pool1d_stride2_pad1", {2, 3, 9}, op, WindowConfig{1, {3}, {2}, {1}}),
      op_case("pool2d", {2, 2, 5, 6}, op, WindowConfig{2, {2, 3}, {2, 2}, {1, 1}}),
      op_case("pool3d", {1, 3, 4, 4}, op, WindowConfig{3, {2, 2, 2}, {1, 2, 2}, {1, 0, 1}}),
      op_case("pool2d_no_lead", {5, 5}, op, WindowConfig{2, {3, 3}, {2, 2}, {1, 1}}),
  };
  for (Case& c : cases) c.distinct = true;
  return cases;
}

std::vector<Case> axis_cases(Op op) {
  std::vector<Case> cases;
  for (int64_t axis = 0; axis < 3; ++axis)
    cases.push_back(op_case("axis" + std::to_string(axis), {2, 3, 4}, op, AxisAttrs{axis}));
  cases.push_back(op_case("vector", {5}, op, AxisAttrs{0}));
  return cases;
}

// [2, 3, 4]: row (0, 1) fully blocked, row (1, 2) with one allowed entry.
HardMask test_mask() {
  HardMask mask{{2, 3, 4}, std::vector<uint8_t>(24, 1)};
  for (int j = 0; j < 4; ++j) mask.allowed[4 + j] = 0;
  for (int j = 0; j < 4; ++j) mask.allowed[20 + j] = j == 2;
  mask.allowed[1] = mask.allowed[14] = 0;
  return mask;
}

Case layernorm_case(int64_t axis, bool with_payload) {
  const Shape in{2, 3, 4};
  Case c = op_case(fmt::format("layernorm_axis{}{}", axis, with_payload ? "" : "_no_payload"), in, Op::Layernorm,
                   AxisAttrs{axis});
  if (!with_payload) return c;
  const Shape norm(in.begin() + axis, in.end());
  const int64_t n = numel(norm);
  c.m.payload.layernorm[1] = {norm, random_values(n, 21, 0.5, 1.5), random_values(n, 22), 1e-5};
  c.params = {{"weight", norm}, {"bias", norm}};
  return c;
}

Case batch_norm_case(const Shape& in, int64_t axis) {
  const int64_t ch = in[axis];
  Case c = op_case(fmt::format("batch_norm_{}_axis{}", to_string(in), axis), in, Op::BatchNormEval,
                   BatchNormAttrs{axis, ch});
  c.m.payload.batch_norm[1] = {random_values(ch, 31, 0.5, 1.5), random_values(ch, 32), random_values(ch, 33),
                               random_values(ch, 34, 0.5, 1.5), 1e-5};
  c.params = {{"weight", {ch}}, {"bias", {ch}}};
  return c;
}

// ---- window family

TEST(AutodiffWindow, ConvJvpAdjointAndParams) { check_all<ConvRules>(conv_cases()); }

TEST(AutodiffWindow, MaxPoolJvpAndAdjoint) { check_all<MaxPoolRules>(pool_cases(Op::MaxPool)); }

TEST(AutodiffWindow, AvgPoolJvpAndAdjoint) { check_all<AvgPoolRules>(pool_cases(Op::AvgPool)); }

TEST(AutodiffWindow, ConvVjpOnlyWhatIsWanted) {
  const Case c = conv_cases()[2];
  F64Context ctx;
  const Rig<ConvRules, F64Context> rig{ctx, c.node(), c.m.payload};
  std::mt19937_64 rng(5);
  const T64 x = random_tensor(c.in_shape(), rng), y = rig.eval(x), g = random_tensor(y.shape, rng);
  const auto none = rig.vjp(x, y, g, false, false);
  EXPECT_TRUE(none.parents[0].data.empty());
  EXPECT_TRUE(none.params.empty());
  const auto both = rig.vjp(x, y, g, true, true);
  EXPECT_EQ(both.parents[0].shape, x.shape);
  ASSERT_EQ(both.params.size(), 2u);
  // The bias gradient is the sum of the cotangent over everything but the output channel.
  const int64_t out_vol = 2 * 6;
  for (int64_t o = 0; o < 6; ++o) {
    double s = 0;
    for (int64_t l = 0; l < 2; ++l)
      for (int64_t p = 0; p < out_vol; ++p) s += g.data[(l * 6 + o) * out_vol + p];
    EXPECT_NEAR(both.params[1].values[o], s, 1e-12);
  }
}

TEST(AutodiffWindow, MaxPoolTiesGoToTheFirstElement) {
  F64Context ctx;
  // 2-D, all equal, 2x2 windows with stride 2: each window's top-left element takes its gradient.
  const Case c2 = op_case("ties2d", {1, 1, 4, 4}, Op::MaxPool, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  const Rig<MaxPoolRules, F64Context> r2{ctx, c2.node(), c2.m.payload};
  const T64 x2 = T64::filled({1, 1, 4, 4}, 0.5), y2 = r2.eval(x2);
  const auto d2 = r2.vjp(x2, y2, T64({1, 1, 2, 2}, {1, 2, 3, 4}), true, false);
  EXPECT_EQ(d2.parents[0].data, (std::vector<double>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
  T64 t2 = T64::filled({1, 1, 4, 4}, 0.0);
  for (size_t i = 0; i < 16; ++i) t2.data[i] = static_cast<double>(i);
  EXPECT_EQ(r2.jvp(x2, y2, t2).data, (std::vector<double>{0, 2, 8, 10}));
  // 1-D with padding 1 (ignored): windows {0, 1}, {1, 2, 3}, {3, 4}; the first unpadded one wins.
  const Case c1 = op_case("ties1d", {1, 5}, Op::MaxPool, WindowConfig{1, {3}, {2}, {1}});
  const Rig<MaxPoolRules, F64Context> r1{ctx, c1.node(), c1.m.payload};
  const T64 x1 = T64::filled({1, 5}, -2.0), y1 = r1.eval(x1);
  EXPECT_EQ(r1.vjp(x1, y1, T64({1, 3}, {1, 2, 3}), true, false).parents[0].data,
            (std::vector<double>{1, 2, 0, 3, 0}));
  // Partial ties: the first of the two maxima; a NaN takes over from a larger number (PyTorch).
  const T64 x3({1, 5}, {3, 5, 5, 4, std::nan("")});
  const auto d3 = r1.vjp(x3, r1.eval(x3), T64({1, 3}, {1, 2, 3}), true, false);
  EXPECT_EQ(d3.parents[0].data, (std::vector<double>{0, 3, 0, 0, 3}));
}

TEST(AutodiffWindow, AvgPoolDividesByTheKernelVolume) {
  // kernel 3, padding 1: the padded window {pad, 0, 1} still divides by 3.
  const Case c = op_case("avg", {1, 4}, Op::AvgPool, WindowConfig{1, {3}, {1}, {1}});
  F64Context ctx;
  const Rig<AvgPoolRules, F64Context> rig{ctx, c.node(), c.m.payload};
  const T64 x = T64::filled({1, 4}, 1.0), y = rig.eval(x);
  const auto d = rig.vjp(x, y, T64({1, 4}, {3, 6, 9, 12}), true, false);
  EXPECT_EQ(d.parents[0].data, (std::vector<double>{3, 6, 9, 7}));
}

// ---- normalization family

TEST(AutodiffNormalization, SoftmaxOnEveryAxis) { check_all<SoftmaxRules>(axis_cases(Op::Softmax)); }

TEST(AutodiffNormalization, LogSoftmaxOnEveryAxis) { check_all<LogSoftmaxRules>(axis_cases(Op::LogSoftmax)); }

TEST(AutodiffNormalization, HardMaskedSoftmax) {
  const Case c = op_case("hard_mask", {2, 3, 4}, Op::HardMaskedSoftmax, test_mask());
  check_all<HardMaskedSoftmaxRules>({c});
  // Blocked entries, a fully blocked row and a single-entry row (softmax constant 1) get zero.
  F64Context ctx;
  const Rig<HardMaskedSoftmaxRules, F64Context> rig{ctx, c.node(), c.m.payload};
  std::mt19937_64 rng(7);
  const T64 x = random_tensor(c.in_shape(), rng), y = rig.eval(x), g = random_tensor(y.shape, rng);
  const T64 dx = rig.vjp(x, y, g, true, false).parents[0], dt = rig.jvp(x, y, g);
  const HardMask mask = test_mask();
  for (size_t i = 0; i < 24; ++i) {
    if (mask.allowed[i] && i / 4 != 5) continue;
    EXPECT_EQ(dx.data[i], 0.0) << i;
    EXPECT_EQ(dt.data[i], 0.0) << i;
  }
}

TEST(AutodiffNormalization, LayernormWithAndWithoutPayload) {
  std::vector<Case> cases;
  for (int64_t axis = 0; axis < 3; ++axis) {
    cases.push_back(layernorm_case(axis, true));
    cases.push_back(layernorm_case(axis, false));
  }
  check_all<LayernormRules>(cases);
  // Without a payload there are no parameters, even when they are asked for.
  const Case c = layernorm_case(1, false);
  F64Context ctx;
  const Rig<LayernormRules, F64Context> rig{ctx, c.node(), c.m.payload};
  std::mt19937_64 rng(8);
  const T64 x = random_tensor(c.in_shape(), rng), y = rig.eval(x);
  const auto out = rig.vjp(x, y, random_tensor(y.shape, rng), true, true);
  EXPECT_TRUE(out.params.empty());
  EXPECT_EQ(out.parents[0].shape, x.shape);
}

TEST(AutodiffNormalization, BatchNormEvalWithChannelAxis) {
  check_all<BatchNormEvalRules>({batch_norm_case({2, 3, 4}, 1), batch_norm_case({3, 5}, 0),
                                 batch_norm_case({2, 2, 3}, 2), batch_norm_case({4, 3}, 1)});
}

TEST(AutodiffNormalization, MissingPayloadIsAnError) {
  Case c = batch_norm_case({2, 3}, 1);
  c.m.payload.batch_norm.clear();
  F64Context ctx;
  const T64 x = T64::filled({2, 3}, 1.0), t = x;
  const Tensor<double>* ps[] = {&x};
  const Tensor<double>* ts[] = {&t};
  const ad::DiffArgs<double> a{c.node(), ps, x, c.m.payload, EvalOptions{}};
  auto r = ad::jvp_BatchNormEval(ctx, a, std::span<const Tensor<double>* const>(ts));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().detail(), "missing batch_norm_eval payload");
  ad::VjpOut<double> out;
  out.want = {true};
  EXPECT_FALSE(ad::vjp_BatchNormEval(ctx, a, x, out).ok());
}

// ---- other contexts

// Runs the JVP and VJP (with parameters) of case c in ctx on inputs and parameters rounded to the
// context, and compares with f64 on the same values: every entry within rel * max(1, |ref|_inf).
template <class R, class Ctx>
void check_in_context(Ctx& ctx, const Case& c, double rel) {
  using S = typename Ctx::Scalar;
  SCOPED_TRACE(c.name);
  ASSERT_EQ(c.m.graph.nodes.size(), 2u);
  std::mt19937_64 rng(9);
  auto to_ctx = [&](const T64& t) {
    Tensor<S> r;
    r.shape = t.shape;
    for (double v : t.data) r.data.push_back(ctx.from_double(v));
    return r;
  };
  auto to_f64 = [&](const std::vector<S>& v) {
    std::vector<double> r;
    for (const S& s : v) r.push_back(ctx.to_double(s));
    return r;
  };
  const Payload<S> pc = convert_payload<S>(c.m.payload, [&](double v) { return ctx.from_double(v); });
  const Payload<double> p64 = convert_payload<double>(pc, [&](const S& v) { return ctx.to_double(v); });
  const T64 x0 = input_for(c, rng), u0 = random_tensor(x0.shape, rng), v0 = random_tensor(c.node().out_shape, rng);
  const Tensor<S> xs = to_ctx(x0), us = to_ctx(u0), vs = to_ctx(v0);
  const T64 x(x0.shape, to_f64(xs.data)), u(u0.shape, to_f64(us.data)), v(v0.shape, to_f64(vs.data));
  const Rig<R, Ctx> rig{ctx, c.node(), pc};
  F64Context f64;
  const Rig<R, F64Context> ref{f64, c.node(), p64};
  const Tensor<S> ys = rig.eval(xs);
  const T64 y = ref.eval(x);
  auto expect_close = [&](const std::vector<S>& got, const std::vector<double>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    const double tol = rel * std::max(1.0, inf_norm(want));
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(ctx.to_double(got[i]), want[i], tol) << what << " " << i;
  };
  expect_close(rig.jvp(xs, ys, us).data, ref.jvp(x, y, u).data, "jvp");
  const auto got = rig.vjp(xs, ys, vs, true, true);
  const auto want = ref.vjp(x, y, v, true, true);
  expect_close(got.parents[0].data, want.parents[0].data, "vjp");
  ASSERT_EQ(got.params.size(), want.params.size());
  for (size_t f = 0; f < want.params.size(); ++f) {
    EXPECT_EQ(got.params[f].field, want.params[f].field);
    EXPECT_EQ(got.params[f].shape, want.params[f].shape);
    expect_close(got.params[f].values, want.params[f].values, want.params[f].field.c_str());
  }
}

template <class Ctx>
void check_every_op_in(Ctx& ctx, double rel) {
  check_in_context<ConvRules>(ctx, conv_cases()[2], rel);
  check_in_context<MaxPoolRules>(ctx, pool_cases(Op::MaxPool)[1], rel);
  check_in_context<AvgPoolRules>(ctx, pool_cases(Op::AvgPool)[1], rel);
  check_in_context<SoftmaxRules>(ctx, axis_cases(Op::Softmax)[1], rel);
  check_in_context<LogSoftmaxRules>(ctx, axis_cases(Op::LogSoftmax)[1], rel);
  check_in_context<HardMaskedSoftmaxRules>(ctx, op_case("hard_mask", {2, 3, 4}, Op::HardMaskedSoftmax, test_mask()),
                                           rel);
  check_in_context<LayernormRules>(ctx, layernorm_case(1, true), rel);
  check_in_context<BatchNormEvalRules>(ctx, batch_norm_case({2, 3, 4}, 1), rel);
}

TEST(AutodiffWindow, EveryRuleRunsInMpfrAt200Bits) {
  RealContext ctx(200);
  // f64's own rounding is the whole difference (observed below 4e-16).
  check_every_op_in(ctx, 1e-14);
}

TEST(AutodiffWindow, EveryRuleRunsInBfloat16) {
  BinaryContext ctx(*parse_format("bfloat16"));
  // bfloat16 keeps 8 significant bits (unit roundoff 2^-9); with the sums of products and the
  // softmax / normalization statistics rounded at every step, the results stay within 2^-5 of the
  // largest f64 entry on the same inputs (observed: below 0.009).
  check_every_op_in(ctx, 0x1p-5);
}

// GradKernels::Blas skips the conv outputs whose cotangent is 0 (ConvGrads::skip_zero): conv, relu (zeros
// in the cotangent), strided padded conv, sum. The gradients of everything equal the exact rules' as values
// (a skipped term is g * w = +-0 with finite weights), in f64 and f32.
template <class Ctx>
void check_skipped_zeros() {
  using S = typename Ctx::Scalar;
  auto config = [](int64_t cin, int64_t cout, int64_t stride, int64_t pad) {
    return conv2d_config(cin, cout, 3, stride, pad);
  };
  GraphBuilder b;
  const int64_t x = b.input({1, 2, 9, 9});
  const int64_t h = b.unary(Op::Relu, b.conv(x, config(2, 4, 1, 1), random_values(72, 21), random_values(4, 22)));
  const int64_t y = b.sum(b.conv(h, config(4, 3, 2, 1), random_values(108, 23), random_values(3, 24)));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const Payload<S> payload = convert_payload<S>(m->payload, [](double v) { return static_cast<S>(v); });
  std::vector<S> xs;
  for (double v : random_values(162, 25)) xs.push_back(static_cast<S>(v));
  const std::vector<Tensor<S>> in{Tensor<S>({1, 2, 9, 9}, xs)};
  Ctx ctx;
  GradOptions o;
  o.wrt = GradWrt::All;
  auto exact = vjp(m->graph, payload, std::span<const Tensor<S>>(in), y, nullptr, ctx, o);
  o.kernels = GradKernels::Blas;
  auto fast = vjp(m->graph, payload, std::span<const Tensor<S>>(in), y, nullptr, ctx, o);
  ASSERT_TRUE(exact.ok() && fast.ok());
  EXPECT_EQ(exact->inputs[0].data, fast->inputs[0].data);
  ASSERT_EQ(exact->params.size(), fast->params.size());
  for (size_t k = 0; k < exact->params.size(); ++k) EXPECT_EQ(exact->params[k].values, fast->params[k].values) << k;
  auto h_values = denote(m->graph, payload, std::span<const Tensor<S>>(in), h, ctx);
  ASSERT_TRUE(h_values.ok());
  EXPECT_GT(std::count(h_values->data.begin(), h_values->data.end(), S(0)), 20);  // relu zeros: terms skipped
}

TEST(AutodiffWindow, BlasKernelsSkipZeroConvCotangents) {
  check_skipped_zeros<F64Context>();
  check_skipped_zeros<F32Context>();
}

}  // namespace
}  // namespace denote
