// The batched dense-chain evaluator of branch and bound's sampling (src/verify/dense_chain.h):
// recognised on ACAS Xu and mnistfc, equal to the f64 evaluator within binary32 rounding at random
// points (also with a large sparse layer kept by rows), refused on graphs that are not a chain of linear and
// relu layers.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "unit/relu_nets.h"
#include "verify/dense_chain.h"

namespace denote {
namespace {

using verify_detail::DenseChain;

void expect_matches_evaluator(const Model& m, int rows, double lo, double hi) {
  const auto chain = DenseChain::of(m);
  ASSERT_TRUE(chain.has_value());
  const int64_t n = chain->inputs(), k = chain->outputs();
  std::vector<float> X(static_cast<size_t>(rows * n)), Y, scratch;
  uint64_t state = 12345;
  for (float& x : X) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    x = static_cast<float>(lo + (hi - lo) * static_cast<double>(state >> 11) * 0x1p-53);
  }
  chain->eval(X, rows, Y, scratch);
  ASSERT_EQ(Y.size(), static_cast<size_t>(rows * k));
  const int64_t in_id = m.graph.input_ids()[0];
  F64Context ctx;
  for (int r = 0; r < rows; ++r) {
    std::vector<double> x(X.begin() + r * n, X.begin() + (r + 1) * n);
    std::vector<Tensor<double>> in = {Tensor<double>(m.graph.nodes[static_cast<size_t>(in_id)].out_shape, x)};
    auto y = denote(m.graph, m.payload, std::span<const Tensor<double>>(in), m.output_ids[0], ctx);
    ASSERT_TRUE(y.ok()) << y.message();
    double scale = 1;
    for (double v : y->data) scale = std::max(scale, std::fabs(v));
    for (int64_t j = 0; j < k; ++j)
      EXPECT_NEAR(Y[static_cast<size_t>(r * k + j)], y->data[static_cast<size_t>(j)], 1e-4 * scale) << "row " << r;
  }
}

TEST(DenseChain, AcasXuAndMnistfcMatchTheEvaluator) {
  auto acas =
      load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  ASSERT_TRUE(acas.ok()) << acas.message();
  expect_matches_evaluator(*acas, 64, -0.5, 0.5);
  auto mnist = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/mnistfc/mnist-net_256x2.onnx");
  ASSERT_TRUE(mnist.ok()) << mnist.message();
  expect_matches_evaluator(*mnist, 8, 0, 1);
}

// A nonzero input shift (ACAS Xu's is zero): x - c and x + c, a reshape, relu between the layers.
TEST(DenseChain, ShiftedInputsMatchTheEvaluator) {
  for (Op op : {Op::Sub, Op::Add}) {
    GraphBuilder b;
    const int64_t x = b.input({1, 4});
    const int64_t s = b.add(op, {x, b.constant({1, 4}, {0.5, -0.25, 1.5, -2})});
    const int64_t f = b.unary(Op::Reshape, s, ReshapeAttrs{{1, 4}, {4}});
    auto m = b.build({fixed_relu_tail(b, f)});
    ASSERT_TRUE(m.ok()) << m.message();
    expect_matches_evaluator(*m, 32, -3, 3);
  }
}

// The input's normalisation as eran's MLPs write it, (x - mean) / std with one-element constants
// behind broadcast_to, then a per-element product and division with both signs: folded into the first
// layer.
TEST(DenseChain, NormalisedInputsMatchTheEvaluator) {
  GraphBuilder b;
  const int64_t x = b.input({1, 4});
  auto spread = [&](double v) {  // a one-element constant broadcast to [1, 4], as ONNX import writes it
    return b.add(Op::BroadcastTo, {b.constant({1, 1}, {v})}, BroadcastAttrs{{1, 1}, {1, 4}});
  };
  int64_t h = b.add(Op::Sub, {x, spread(0.1307)});
  h = b.add(Op::Div, {h, spread(0.3081)});
  h = b.add(Op::MulElem, {h, b.constant({1, 4}, {2, -0.5, 1.25, 3})});
  h = b.add(Op::Div, {h, b.constant({1, 4}, {-4, 0.75, 2, -1.5})});
  h = b.add(Op::Sub, {h, spread(0.375)});
  const int64_t f = b.unary(Op::Reshape, h, ReshapeAttrs{{1, 4}, {4}});
  std::vector<double> w1(24), w2(12);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(static_cast<double>(i) + 1);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(static_cast<double>(i) * 0.7);
  const int64_t r = b.unary(Op::Relu, b.linear(f, 6, w1, {0.1, -0.2, 0.3, 0, 0.05, -0.4}));
  auto m = b.build({b.linear(r, 2, w2, {0.25, -0.5})});
  ASSERT_TRUE(m.ok()) << m.message();
  expect_matches_evaluator(*m, 32, -3, 3);
  // A normalisation after the first layer is no input normalisation: refused.
  GraphBuilder c;
  const int64_t y = c.input({4});
  const int64_t l = c.linear(y, 4, std::vector<double>(16, 0.5), {0, 0, 0, 0});
  auto late = c.build({c.linear(c.add(Op::Div, {l, c.constant({4}, {2, 2, 2, 2})}), 2, std::vector<double>(8, 1), {0, 0})});
  ASSERT_TRUE(late.ok()) << late.message();
  EXPECT_FALSE(DenseChain::of(*late).has_value());
  // Division by a zero constant: refused.
  GraphBuilder z;
  const int64_t zi = z.input({2});
  auto zero = z.build({z.linear(z.add(Op::Div, {zi, z.constant({2}, {1, 0})}), 1, {1, 1}, {0})});
  ASSERT_TRUE(zero.ok()) << zero.message();
  EXPECT_FALSE(DenseChain::of(*zero).has_value());
}

TEST(DenseChain, OtherGraphsAreRefused) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t h = b.unary(Op::Tanh, b.linear(x, 3, std::vector<double>(9, 0.5), {0, 0, 0}));
  auto tanh_net = b.build({b.linear(h, 2, std::vector<double>(6, 1), {0, 0})});
  ASSERT_TRUE(tanh_net.ok());
  EXPECT_FALSE(DenseChain::of(*tanh_net).has_value());
  GraphBuilder c;
  const int64_t y = c.input({3});
  const int64_t l = c.linear(y, 3, std::vector<double>(9, 0.5), {0, 0, 0});
  auto skip = c.build({c.add(Op::Add, {l, y})});  // a residual: not a chain
  ASSERT_TRUE(skip.ok());
  EXPECT_FALSE(DenseChain::of(*skip).has_value());
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// matmul with a constant weight, as ONNX files write dense layers without Gemm: W x (W [out, in], x a
// vector: nn4sys's learned indices) and x W (x [1, in], W [in, out]: marabou-cifar10), each followed by
// x + c (the layer's bias) and relu; then the same layers with the bias subtracted. The chain equals the
// evaluator; a bias after the relu, or a matmul of two values, is not a chain.
TEST(DenseChain, MatmulWithConstantWeightsAndBiasAddsMatchTheEvaluator) {
  uint64_t state = 99;
  auto values = [&](size_t n) {
    std::vector<double> v(n);
    for (double& x : v) {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      x = static_cast<double>(state >> 11) * 0x1p-52 - 1;
    }
    return v;
  };
  for (Op bias_op : {Op::Add, Op::Sub}) {
    GraphBuilder b;
    int64_t h = b.input({6});
    h = b.add(Op::Matmul, {b.constant({5, 6}, values(30)), h});                 // W x: [5]
    h = b.unary(Op::Relu, b.add(bias_op, {h, b.constant({5}, values(5))}));
    h = b.add(Op::Reshape, {h}, ReshapeAttrs{{5}, {1, 5}});
    h = b.add(Op::Matmul, {h, b.constant({5, 3}, values(15))});                 // x W: [1, 3]
    h = b.add(bias_op, {h, b.constant({1, 3}, values(3))});
    auto m = b.build({h});
    ASSERT_TRUE(m.ok()) << m.message();
    expect_matches_evaluator(*m, 16, -1, 1);
  }
  GraphBuilder after;  // a bias after the relu is not the layer's
  int64_t h = after.input({4});
  h = after.unary(Op::Relu, after.add(Op::Matmul, {after.constant({3, 4}, values(12)), h}));
  h = after.add(Op::Add, {h, after.constant({3}, values(3))});
  auto m = after.build({h});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_FALSE(DenseChain::of(*m).has_value());
  GraphBuilder two;  // x^T x: no constant operand
  const int64_t x = two.input({4});
  auto sq = two.build({two.add(Op::Matmul, {x, x})});
  ASSERT_TRUE(sq.ok()) << sq.message();
  EXPECT_FALSE(DenseChain::of(*sq).has_value());
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// A layer of at least 2^16 weights with at most one in eight nonzero is kept by its rows' nonzeros
// (nn4sys's learned indexes): the chain still matches the evaluator, between dense layers.
TEST(DenseChain, SparseLayersMatchTheEvaluator) {
  GraphBuilder b;
  const int64_t x = b.input({8});
  std::vector<double> w0(8 * 300), b0(300), w1(300 * 300, 0.0), b1(300), w2(2 * 300), b2(2, 0.1);
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = std::sin(static_cast<double>(i) * 0.37);
  for (size_t i = 0; i < b0.size(); ++i) b0[i] = 0.1 * std::cos(static_cast<double>(i));
  for (int o = 0; o < 300; ++o) {  // 3 of 300 weights a row nonzero
    for (int k = 0; k < 3; ++k) w1[static_cast<size_t>(o * 300 + (o * 7 + k * 101) % 300)] = 1.0 - 0.5 * k;
    b1[static_cast<size_t>(o)] = -0.05 * (o % 5);
  }
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(static_cast<double>(i) * 0.11);
  int64_t h = b.unary(Op::Relu, b.linear(x, 300, w0, b0));
  h = b.unary(Op::Relu, b.linear(h, 300, w1, b1));
  auto m = b.build({b.linear(h, 2, w2, b2)});
  ASSERT_TRUE(m.ok()) << m.message();
  expect_matches_evaluator(*m, 16, -1, 1);
}

}  // namespace
}  // namespace denote
