// Evaluation of conv, max_pool and avg_pool under F64Context and F32Context, against hand-computed
// values and a naive zero-padded convolution / pooling written independently here (3 spatial axes;
// 1-D and 2-D cases embed into it with unit axes of kernel 1, stride 1 and no padding).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <limits>

#include "eval_ctx_util.h"

namespace denote {
namespace {

using eval_ctx::build_or_die;
using eval_ctx::expect_values;
using eval_ctx::sample;

template <class Ctx>
class EvalConv : public ::testing::Test {};
template <class Ctx>
class EvalPool : public ::testing::Test {};
using Contexts = ::testing::Types<F64Context, F32Context>;
TYPED_TEST_SUITE(EvalConv, Contexts);
TYPED_TEST_SUITE(EvalPool, Contexts);

using A3 = std::array<int64_t, 3>;

// Geometry of the naive reference: batch n, channels c -> o, spatial extents `in`.
struct Naive {
  int64_t n = 1, c = 1, o = 1, groups = 1;
  A3 in{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, pb{0, 0, 0}, pa{0, 0, 0}, d{1, 1, 1};
};

// Zero-pads x ([n, c, in0, in1, in2]) by pb before and pa after each spatial axis.
std::vector<double> zero_pad(const Naive& g, const std::vector<double>& x, A3& padded) {
  for (int i = 0; i < 3; ++i) padded[i] = g.in[i] + g.pb[i] + g.pa[i];
  std::vector<double> out(static_cast<size_t>(g.n * g.c * padded[0] * padded[1] * padded[2]), 0.0);
  for (int64_t b = 0; b < g.n * g.c; ++b)
    for (int64_t z = 0; z < g.in[0]; ++z)
      for (int64_t y = 0; y < g.in[1]; ++y)
        for (int64_t v = 0; v < g.in[2]; ++v)
          out[(((b * padded[0]) + z + g.pb[0]) * padded[1] + y + g.pb[1]) * padded[2] + v + g.pb[2]] =
              x[((b * g.in[0] + z) * g.in[1] + y) * g.in[2] + v];
  return out;
}

// torch.nn.functional.conv3d semantics, written directly: cross-correlation on the padded input.
std::vector<double> naive_conv(const Naive& g, const std::vector<double>& x, const std::vector<double>& w,
                               const std::vector<double>& bias) {
  A3 p{}, out{};
  const std::vector<double> xp = zero_pad(g, x, p);
  for (int i = 0; i < 3; ++i) out[i] = (p[i] - (g.d[i] * (g.k[i] - 1) + 1)) / g.s[i] + 1;
  const int64_t cg = g.c / g.groups, og = g.o / g.groups;
  std::vector<double> y;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t oc = 0; oc < g.o; ++oc)
      for (int64_t z = 0; z < out[0]; ++z)
        for (int64_t r = 0; r < out[1]; ++r)
          for (int64_t q = 0; q < out[2]; ++q) {
            double acc = 0;
            for (int64_t ic = 0; ic < cg; ++ic)
              for (int64_t kz = 0; kz < g.k[0]; ++kz)
                for (int64_t ky = 0; ky < g.k[1]; ++ky)
                  for (int64_t kx = 0; kx < g.k[2]; ++kx) {
                    const int64_t ch = (oc / og) * cg + ic;
                    const int64_t iz = z * g.s[0] + kz * g.d[0], iy = r * g.s[1] + ky * g.d[1],
                                  ix = q * g.s[2] + kx * g.d[2];
                    acc += xp[(((b * g.c + ch) * p[0] + iz) * p[1] + iy) * p[2] + ix] *
                           w[(((oc * cg + ic) * g.k[0] + kz) * g.k[1] + ky) * g.k[2] + kx];
                  }
            y.push_back(acc + bias[oc]);
          }
  return y;
}

// Runs a conv with config `c` on an input of shape `in` with sample data; compares with the naive one.
template <class Ctx>
void check_conv(const Shape& in, const ConvConfig& c, const Naive& g, const Shape& want_shape) {
  const int64_t wcount = c.out_channels * (c.in_channels / c.groups) * numel(c.window.kernel);
  const auto x = sample(numel(in), 1), w = sample(wcount, 2), bias = sample(c.out_channels, 3);
  GraphBuilder b;
  const int64_t id = b.conv(b.input(in), c, w, bias);
  const Model m = build_or_die(b, {id});
  auto y = eval_ctx::run<Ctx>(m, {Tensor<double>(in, x)}, id);
  ASSERT_TRUE(y.ok()) << y.message();
  expect_values<Ctx>(*y, want_shape, naive_conv(g, x, w, bias));
}

ConvConfig conv_config(std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p) {
  ConvConfig c;
  c.window = WindowConfig{static_cast<int64_t>(k.size()), std::move(k), std::move(s), std::move(p)};
  return c;
}

TYPED_TEST(EvalConv, HandComputedCases) {
  // 1-D, channel_axis 0: [1, 2, 3] cross-correlated with [1, 2, 3], padding 1 both sides = [8, 14, 8].
  GraphBuilder b;
  ConvConfig c = conv_config({3}, {1}, {1});
  c.in_channels = c.out_channels = 1;
  const int64_t y1 = b.conv(b.input({1, 3}), c, {1, 2, 3}, {0});
  // padding_after 0 drops the last window: [8, 14]; bias 0.5 is added last.
  c.padding_after = {0};
  const int64_t y2 = b.conv(0, c, {1, 2, 3}, {0.5});
  // 2-D: x = 1..9 in [1, 1, 3, 3], w = [[1, 0], [0, -1]]: x[i, j] - x[i+1, j+1] = -4, bias 0.5.
  const int64_t x2 = b.input({1, 1, 3, 3});
  ConvConfig c2 = conv_config({2, 2}, {1, 1}, {0, 0});
  c2.channel_axis = 1;
  c2.in_channels = c2.out_channels = 1;
  const int64_t y3 = b.conv(x2, c2, {1, 0, 0, -1}, {0.5});
  const Model m = build_or_die(b, {y1, y2, y3});
  const std::vector<Tensor<double>> in = {Tensor<double>({1, 3}, {1, 2, 3}),
                                          Tensor<double>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})};
  auto r1 = eval_ctx::run<TypeParam>(m, in, y1), r2 = eval_ctx::run<TypeParam>(m, in, y2),
       r3 = eval_ctx::run<TypeParam>(m, in, y3);
  ASSERT_TRUE(r1.ok() && r2.ok() && r3.ok()) << r1.message() << r2.message() << r3.message();
  expect_values<TypeParam>(*r1, {1, 3}, {8, 14, 8});
  expect_values<TypeParam>(*r2, {1, 2}, {8.5, 14.5});
  expect_values<TypeParam>(*r3, {1, 1, 2, 2}, {-3.5, -3.5, -3.5, -3.5});
}

TYPED_TEST(EvalConv, TwoDGroupedDilatedAsymmetric) {
  // [2, 4, 5, 6], groups 2 -> 6 channels, kernel [2, 3], stride [2, 1], padding [1, 0] before and
  // [0, 2] after, dilation [2, 1]: out H = (5 + 1 - 3) / 2 + 1 = 2, W = (6 + 2 - 3) / 1 + 1 = 6.
  ConvConfig c = conv_config({2, 3}, {2, 1}, {1, 0});
  c.padding_after = {0, 2};
  c.dilation = {2, 1};
  c.groups = 2;
  c.channel_axis = 1;
  c.in_channels = 4;
  c.out_channels = 6;
  Naive g{2, 4, 6, 2, {1, 5, 6}, {1, 2, 3}, {1, 2, 1}, {0, 1, 0}, {0, 0, 2}, {1, 2, 1}};
  check_conv<TypeParam>({2, 4, 5, 6}, c, g, {2, 6, 2, 6});
}

TYPED_TEST(EvalConv, OneDDepthwiseWithLeadingBatchDims) {
  // [2, 2, 3, 7] with channel_axis 2 (batch dims [2, 2]); groups 3 -> 6 channels; kernel 3,
  // stride 2, padding 1 / 2, dilation 2: out = (7 + 3 - 5) / 2 + 1 = 3.
  ConvConfig c = conv_config({3}, {2}, {1});
  c.padding_after = {2};
  c.dilation = {2};
  c.groups = 3;
  c.channel_axis = 2;
  c.in_channels = 3;
  c.out_channels = 6;
  Naive g{4, 3, 6, 3, {1, 1, 7}, {1, 1, 3}, {1, 1, 2}, {0, 0, 1}, {0, 0, 2}, {1, 1, 2}};
  check_conv<TypeParam>({2, 2, 3, 7}, c, g, {2, 2, 6, 3});
}

TYPED_TEST(EvalConv, ThreeDGroupedDilatedAsymmetric) {
  // [1, 2, 4, 3, 5], groups 2 -> 4 channels, kernel [2, 2, 3], stride [1, 2, 1], padding [1, 0, 1]
  // before and [0, 1, 1] after, dilation [1, 1, 2]: out [4, 2, 3].
  ConvConfig c = conv_config({2, 2, 3}, {1, 2, 1}, {1, 0, 1});
  c.padding_after = {0, 1, 1};
  c.dilation = {1, 1, 2};
  c.groups = 2;
  c.channel_axis = 1;
  c.in_channels = 2;
  c.out_channels = 4;
  Naive g{1, 2, 4, 2, {4, 3, 5}, {2, 2, 3}, {1, 2, 1}, {1, 0, 1}, {0, 1, 1}, {1, 1, 2}};
  check_conv<TypeParam>({1, 2, 4, 3, 5}, c, g, {1, 4, 4, 2, 3});
}

// The 2-D grouped model of TwoDGroupedDilatedAsymmetric with conv node id 1, for the error paths.
Model grouped_model(const ConvConfig& c) {
  GraphBuilder b;
  const int64_t id = b.conv(b.input({2, 4, 5, 6}), c, sample(6 * 2 * 6, 2), sample(6, 3));
  return build_or_die(b, {id});
}

ConvConfig grouped_config() {
  ConvConfig c = conv_config({2, 3}, {2, 1}, {1, 0});
  c.padding_after = {0, 2};
  c.dilation = {2, 1};
  c.groups = 2;
  c.channel_axis = 1;
  c.in_channels = 4;
  c.out_channels = 6;
  return c;
}

TYPED_TEST(EvalConv, PayloadErrors) {
  const Model m = grouped_model(grouped_config());
  const std::vector<Tensor<double>> in = {Tensor<double>({2, 4, 5, 6}, sample(240))};
  auto run = [&](auto edit) {
    auto p = eval_ctx::payload_of<TypeParam>(m);
    edit(p);
    const Status s = eval_ctx::run_with<TypeParam>(m, p, in, 1).status();
    // The walker attributes the rule's error to its node; the rule's own text is the detail.
    EXPECT_EQ(s.node(), 1);
    EXPECT_EQ(s.message().rfind("IR eval: node 1: " + s.detail() + " (Node(id=1", 0), 0u) << s.message();
    return s.detail() + " [" + s.field() + "]";
  };
  EXPECT_EQ(run([](auto& p) { p.conv.erase(1); }), "missing conv payload [payload]");
  EXPECT_EQ(run([](auto& p) { p.conv[1].config.window.stride = {2, 2}; }),
            "conv: payload config does not match the node's config: stride [2, 2] vs [2, 1] (payload vs node) [config]");
  EXPECT_EQ(run([](auto& p) { p.conv[1].config.groups = 1; }),
            "conv: payload config does not match the node's config: groups 1 vs 2 (payload vs node) [config]");
  EXPECT_EQ(run([](auto& p) { p.conv[1].input_spatial = {5, 7}; }),
            "conv: payload input_spatial [5, 7] does not match the input's spatial dims [5, 6] [input_spatial]");
  EXPECT_EQ(run([](auto& p) { p.conv[1].weight.pop_back(); }),
            "conv: weight has 71 values, expected shape [6, 2, 2, 3] [weight]");
  EXPECT_EQ(run([](auto& p) { p.conv[1].bias.pop_back(); }), "conv: bias has 5 values, expected shape [6] [bias]");
}

TYPED_TEST(EvalConv, ConfigMustMatchExactlyNotJustInMeaning) {
  // Dilation [] means all 1, but a payload saying [1, 1] is still a different record.
  ConvConfig c = grouped_config();
  c.dilation = {};
  const Model m = grouped_model(c);
  auto p = eval_ctx::payload_of<TypeParam>(m);
  p.conv[1].config.dilation = {1, 1};
  auto r = eval_ctx::run_with<TypeParam>(m, p, {Tensor<double>({2, 4, 5, 6}, sample(240))}, 1);
  EXPECT_EQ(r.status().node(), 1);
  EXPECT_EQ(r.status().detail(),
            "conv: payload config does not match the node's config: dilation [1, 1] vs [] (payload vs node)");
}

// Naive pooling over 3 spatial axes of x ([n, in0, in1, in2]) with symmetric padding pb; max ignores
// padded positions, avg divides by the kernel volume.
std::vector<double> naive_pool(const Naive& g, const std::vector<double>& x, bool is_max) {
  A3 out{};
  for (int i = 0; i < 3; ++i) out[i] = (g.in[i] + 2 * g.pb[i] - g.k[i]) / g.s[i] + 1;
  std::vector<double> y;
  for (int64_t b = 0; b < g.n; ++b)
    for (int64_t z = 0; z < out[0]; ++z)
      for (int64_t r = 0; r < out[1]; ++r)
        for (int64_t q = 0; q < out[2]; ++q) {
          double acc = is_max ? -std::numeric_limits<double>::infinity() : 0.0;
          for (int64_t kz = 0; kz < g.k[0]; ++kz)
            for (int64_t ky = 0; ky < g.k[1]; ++ky)
              for (int64_t kx = 0; kx < g.k[2]; ++kx) {
                const int64_t iz = z * g.s[0] - g.pb[0] + kz, iy = r * g.s[1] - g.pb[1] + ky,
                              ix = q * g.s[2] - g.pb[2] + kx;
                if (iz < 0 || iy < 0 || ix < 0 || iz >= g.in[0] || iy >= g.in[1] || ix >= g.in[2]) continue;
                const double v = x[((b * g.in[0] + iz) * g.in[1] + iy) * g.in[2] + ix];
                acc = is_max ? std::max(acc, v) : acc + v;
              }
          y.push_back(is_max ? acc : acc / static_cast<double>(g.k[0] * g.k[1] * g.k[2]));
        }
  return y;
}

// Evaluates max_pool (is_max) or avg_pool with window `w` on `x` of shape `in`.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> pool(bool is_max, const Shape& in, const std::vector<double>& x,
                                          const WindowConfig& w) {
  GraphBuilder b;
  const int64_t id = b.unary(is_max ? Op::MaxPool : Op::AvgPool, b.input(in), w);
  return eval_ctx::run<Ctx>(build_or_die(b, {id}), {Tensor<double>(in, x)}, id);
}

template <class Ctx>
void check_pool(const Shape& in, const WindowConfig& w, const Naive& g, const Shape& want_shape) {
  const auto x = sample(numel(in), 4);
  for (bool is_max : {true, false}) {
    auto y = pool<Ctx>(is_max, in, x, w);
    ASSERT_TRUE(y.ok()) << y.message();
    expect_values<Ctx>(*y, want_shape, naive_pool(g, x, is_max));
  }
}

TYPED_TEST(EvalPool, HandComputedCases) {
  std::vector<double> x16;
  for (int i = 1; i <= 16; ++i) x16.push_back(i);
  const WindowConfig w2{2, {2, 2}, {2, 2}, {0, 0}};
  auto mx = pool<TypeParam>(true, {1, 4, 4}, x16, w2);
  auto av = pool<TypeParam>(false, {1, 4, 4}, x16, w2);
  ASSERT_TRUE(mx.ok() && av.ok()) << mx.message() << av.message();
  expect_values<TypeParam>(*mx, {1, 2, 2}, {6, 8, 14, 16});
  expect_values<TypeParam>(*av, {1, 2, 2}, {3.5, 5.5, 11.5, 13.5});
  // Padding: max ignores it (all-negative input stays negative); avg counts it in the divisor.
  const WindowConfig w1{1, {3}, {1}, {1}};
  auto mneg = pool<TypeParam>(true, {3}, {-5, -1, -3}, w1);
  auto a123 = pool<TypeParam>(false, {3}, {1, 2, 3}, w1);
  ASSERT_TRUE(mneg.ok() && a123.ok());
  expect_values<TypeParam>(*mneg, {3}, {-1, -1, -1});
  expect_values<TypeParam>(*a123, {3}, {1, 2, 5.0 / 3.0});
}

TYPED_TEST(EvalPool, TwoDOverTheLastAxes) {
  // [2, 3, 5, 6], kernel [3, 2], stride [2, 1], padding [1, 1]: out [3, 7].
  Naive g;
  g.n = 6;
  g.in = {1, 5, 6};
  g.k = {1, 3, 2};
  g.s = {1, 2, 1};
  g.pb = {0, 1, 1};
  check_pool<TypeParam>({2, 3, 5, 6}, WindowConfig{2, {3, 2}, {2, 1}, {1, 1}}, g, {2, 3, 3, 7});
}

TYPED_TEST(EvalPool, OneDAndThreeD) {
  Naive g1;
  g1.n = 6;
  g1.in = {1, 1, 7};
  g1.k = {1, 1, 3};
  g1.s = {1, 1, 2};
  g1.pb = {0, 0, 1};
  check_pool<TypeParam>({2, 3, 7}, WindowConfig{1, {3}, {2}, {1}}, g1, {2, 3, 4});
  Naive g3;
  g3.n = 2;
  g3.in = {4, 5, 6};
  g3.k = {2, 3, 2};
  g3.s = {1, 2, 2};
  g3.pb = {1, 1, 0};
  check_pool<TypeParam>({2, 4, 5, 6}, WindowConfig{3, {2, 3, 2}, {1, 2, 2}, {1, 1, 0}}, g3, {2, 5, 3, 3});
}

TYPED_TEST(EvalPool, OversizedWindowGivesAnEmptyAxis) {
  for (bool is_max : {true, false}) {
    auto y = pool<TypeParam>(is_max, {2, 2}, {1, 2, 3, 4}, WindowConfig{1, {3}, {1}, {0}});
    ASSERT_TRUE(y.ok()) << y.message();
    EXPECT_EQ(y->shape, (Shape{2, 0}));
    EXPECT_TRUE(y->data.empty());
  }
}

TEST(EvalPoolNaN, MaxPoolPropagatesNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto y = pool<F64Context>(true, {4}, {1, nan, 3, 4}, WindowConfig{1, {2}, {2}, {0}});
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_TRUE(std::isnan(y->data[0]));
  EXPECT_EQ(y->data[1], 4.0);
}

}  // namespace
}  // namespace denote
