// ONNX export: exported models pass libonnx's checker and strict, type-checked shape inference
// (what onnx.checker.check_model(full_check=True) runs), and import(export(m)) evaluates to
// exactly the same values in f64. IR ops without an ONNX counterpart are errors naming the node.
#include <cmath>

#include <gtest/gtest.h>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "onnx_full_check.h"

namespace denote {
namespace {

std::vector<double> ramp(int64_t n, double start, double step) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(start + step * static_cast<double>(i % 7) - 0.01 * static_cast<double>(i));
  return v;
}

ValueTable<double> outputs(const Model& m, const std::vector<Tensor<double>>& in) {
  F64Context ctx;
  auto t = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), ctx);
  EXPECT_TRUE(t.ok()) << t.message();
  ValueTable<double> out;
  if (t.ok())
    for (int64_t id : m.output_ids) out.push_back((*t)[static_cast<size_t>(id)]);
  return out;
}

// A model touching every exported op family.
Model wide_model() {
  GraphBuilder b;
  const int64_t x = b.input({1, 2, 4, 4});
  ConvConfig cc{WindowConfig{2, {3, 3}, {1, 1}, {1, 1}}, {1, 1}, {1, 0}, 1, 1, 2, 3};
  const int64_t c1 = b.conv(x, cc, ramp(54, -0.2, 0.07), {0.1, -0.1, 0.05});
  const int64_t bn = b.add(Op::BatchNormEval, {c1}, BatchNormAttrs{1, 3});
  b.model().payload.batch_norm[bn] = {{1, 0.5, 2}, {0, 0.1, -0.1}, {0.01, 0.02, -0.03}, {1.5, 0.7, 0.2}, 1e-5};
  const int64_t r = b.unary(Op::Relu, bn);
  const int64_t mp = b.add(Op::MaxPool, {r}, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  const int64_t ap = b.add(Op::AvgPool, {r}, WindowConfig{2, {3, 3}, {1, 1}, {1, 1}});
  const int64_t rs = b.add(Op::Reshape, {mp}, ReshapeAttrs{{1, 3, 2, 1}, {1, 6}});
  const int64_t l1 = b.linear(rs, 5, ramp(30, -0.3, 0.1), {0.1, 0.2, -0.1, 0, 0.05});
  const int64_t ln = b.add(Op::Layernorm, {l1}, AxisAttrs{1});
  b.model().payload.layernorm[ln] = {{5}, {1, 2, 0.5, 1, 1}, {0, 0.1, 0, -0.1, 0}, 1.0 / 1024};
  const int64_t sm = b.add(Op::Softmax, {ln}, AxisAttrs{1});
  const int64_t lsm = b.add(Op::LogSoftmax, {l1}, AxisAttrs{1});
  const int64_t t = b.add(Op::Transpose, {l1}, TransposeAttrs{0, 1});
  const int64_t mm = b.binary(Op::Matmul, l1, t);
  const int64_t bt = b.add(Op::BroadcastTo, {mm}, BroadcastAttrs{{1, 1}, {1, 5}});
  const int64_t a = b.binary(Op::Add, bt, sm);
  const int64_t d = b.binary(Op::Div, b.binary(Op::Sub, a, lsm), b.binary(Op::MaxElem, a, b.unary(Op::Exp, lsm)));
  const int64_t e = b.binary(Op::MinElem, b.binary(Op::MulElem, d, d), b.unary(Op::Sigmoid, d));
  const int64_t cm = b.unary(Op::ClampMin, e, ClampAttrs{0.1});
  const int64_t ca = b.unary(Op::Cast, cm, CastAttrs{"binary32", "nearest-even"});
  const int64_t u = b.unary(Op::Rsqrt, b.unary(Op::Softplus, b.unary(Op::Erf, b.unary(Op::Neg, b.unary(Op::Tanh, ca)))));
  const int64_t v = b.unary(Op::Log, b.unary(Op::Sqrt, b.unary(Op::Inv, b.unary(Op::Abs, b.unary(Op::Sin, u)))));
  const int64_t w = b.binary(Op::Pow, b.unary(Op::Cos, v), b.constant({1, 5}, {2, 1, 0.5, 3, -1}));
  const int64_t cat = b.add(Op::Concat, {w, a, b.unary(Op::Detach, u)}, AxisAttrs{0});
  const int64_t red = b.add(Op::ReduceSum, {cat}, AxisAttrs{1});
  const int64_t mean = b.add(Op::ReduceMean, {cat}, AxisAttrs{0});
  const int64_t all = b.sum(cat);
  const int64_t p = b.add(Op::Permute, {ap}, PermAttrs{{0, 2, 3, 1}});
  const int64_t l3 = b.linear(p, 2, {0.5, -0.25, 1, 0.125, 2, -1}, {0.01, 0.02});
  const int64_t fl = b.add(Op::Flatten, {l3}, ValueShapeAttrs{{1, 4, 3, 2}});
  auto m = b.build({red, mean, all, fl, red});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(OnnxExport, WideModelPassesTheCheckerAndRoundTripsExactly) {
  const Model m = wide_model();
  ASSERT_TRUE(check_shapes(m.graph).ok()) << check_shapes(m.graph).message();
  auto bytes = write_model_onnx(m);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(onnx_full_check(*bytes), "");
  auto back = read_model_onnx(*bytes);
  ASSERT_TRUE(back.ok()) << back.message();
  ASSERT_TRUE(check_shapes(back->graph).ok());
  const std::vector<Tensor<double>> in{Tensor<double>{{1, 2, 4, 4}, ramp(32, -1, 0.3)}};
  const auto want = outputs(m, in);
  const auto got = outputs(*back, in);
  ASSERT_EQ(want.size(), 5u);
  EXPECT_EQ(got, want);
  EXPECT_EQ(back->payload.linear.size(), 2u);  // Gemm and MatMul + Add come back as linear
  EXPECT_EQ(back->payload.conv.size(), 1u);
  EXPECT_EQ(back->payload.batch_norm.size(), 1u);
}

TEST(OnnxExport, SixNodeModelRoundTripsThroughOnnxAndJson) {
  const Model m = six_node_model();
  auto bytes = write_model_onnx(m);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(onnx_full_check(*bytes), "");
  auto back = read_model_onnx(*bytes);
  ASSERT_TRUE(back.ok()) << back.message();
  const std::vector<Tensor<double>> in{Tensor<double>{{4}, six_node_x0()}};
  const auto got = outputs(*back, in);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got, outputs(m, in));
  EXPECT_NEAR(got[0].data[0], 0.027713, 5e-7);  // the seed's value
}

TEST(OnnxExport, OpsWithoutOnnxCounterpartAreErrors) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t r = b.add(Op::RandUniform, {}, SeedAttrs{7}, Shape{3});
  auto m = b.build({b.binary(Op::Add, x, r)});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(write_model_onnx(*m).message(), "onnx export: node 1 (rand_uniform): has no ONNX counterpart");
  Model empty = *m;
  empty.output_ids.clear();
  EXPECT_EQ(write_model_onnx(empty).message(), "onnx export: node 1 (rand_uniform): has no ONNX counterpart");
  Model nolinear = six_node_model();
  nolinear.payload.linear.erase(1);
  EXPECT_EQ(write_model_onnx(nolinear).message(), "onnx export: node 1 (linear): missing linear payload");
}

}  // namespace
}  // namespace denote
