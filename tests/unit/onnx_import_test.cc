// ONNX import: op mapping (Gemm/MatMul onto linear, numpy broadcasting through explicit
// broadcast_to nodes, opset-dependent Softmax, Reshape's 0 / -1 rules, reductions) checked against
// hand-computed values, and the options (symbolic dims, constant inputs).
#include <cmath>

#include <gtest/gtest.h>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using testing::OnnxBuilder;

Model import_ok(const OnnxBuilder& b, const OnnxImportOptions& o = {}) {
  auto m = read_model_onnx(b.bytes(), o);
  EXPECT_TRUE(m.ok()) << m.message();
  if (!m.ok()) return Model{};
  EXPECT_TRUE(check_shapes(m->graph).ok()) << check_shapes(m->graph).message();
  return *m;
}

std::vector<Tensor<double>> eval_outputs(const Model& m, std::vector<Tensor<double>> inputs) {
  F64Context ctx;
  auto t = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx);
  EXPECT_TRUE(t.ok()) << t.message();
  std::vector<Tensor<double>> out;
  if (t.ok())
    for (int64_t id : m.output_ids) out.push_back((*t)[static_cast<size_t>(id)]);
  return out;
}

size_t count_op(const Model& m, Op op) {
  size_t n = 0;
  for (const Node& node : m.graph.nodes) n += node.op == op;
  return n;
}

TEST(OnnxImport, GemmWithTransposesAlphaBetaMapsToLinear) {
  OnnxBuilder b;
  b.input("a", {3, 2});                                   // transA: A^T is [2, 3]
  b.init("w", {4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1});  // transB: B^T is [3, 4]
  b.init("c", {4}, {10, 20, 30, 40});
  auto* n = b.node("Gemm", {"a", "w", "c"}, {"y"}, "fc");
  OnnxBuilder::attr(n, "transA", 1);
  OnnxBuilder::attr(n, "transB", 1);
  OnnxBuilder::attr_f(n, "alpha", 2.0f);
  OnnxBuilder::attr_f(n, "beta", 0.5f);
  b.output("y");
  Model m = import_ok(b);
  EXPECT_EQ(count_op(m, Op::Linear), 1u);
  // A = [[1, 4], [2, 5], [3, 6]] so A^T rows are (1, 2, 3) and (4, 5, 6).
  auto y = eval_outputs(m, {Tensor<double>{{3, 2}, {1, 4, 2, 5, 3, 6}}});
  ASSERT_EQ(y.size(), 1u);
  EXPECT_EQ(y[0].shape, (Shape{2, 4}));
  // row (1,2,3): W rows e1,e2,e3,(1,1,1) -> (1, 2, 3, 6) * 2 + (5, 10, 15, 20)
  EXPECT_EQ(y[0].data, (std::vector<double>{7, 14, 21, 32, 13, 20, 27, 50}));
}

// Outputs y (a MatMul + Add with constant operands) and y2 (a MatMul with a computed operand): the
// first is one linear node with its bias, the second stays a matmul.
Model import_fused(OnnxBuilder& b) {
  b.output("y");
  b.output("y2");
  Model m = import_ok(b);
  EXPECT_EQ(count_op(m, Op::Linear), 1u);
  EXPECT_EQ(count_op(m, Op::Add), 0u);
  EXPECT_EQ(count_op(m, Op::Matmul), 1u);
  return m;
}

TEST(OnnxImport, MatMulAddFusesIntoLinearOnlyForConstantWeights) {
  OnnxBuilder b;
  b.input("x", {1, 2});
  b.input("z", {2, 2});
  b.init("w", {2, 3}, {1, 2, 3, 4, 5, 6});
  b.init("bias", {3}, {0.5, -0.5, 1});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("Add", {"h", "bias"}, {"y"});
  b.node("MatMul", {"x", "z"}, {"y2"});  // computed weight: a matmul node
  Model m = import_fused(b);
  auto y = eval_outputs(m, {Tensor<double>{{1, 2}, {1, 2}}, Tensor<double>{{2, 2}, {1, 0, 0, 1}}});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0].data, (std::vector<double>{9.5, 11.5, 16}));  // (1*1+2*4, 1*2+2*5, 1*3+2*6) + bias
  EXPECT_EQ(y[1].data, (std::vector<double>{1, 2}));
}

// W x with a constant W and a vector x (nn4sys's layers), then + b: one linear node, no constant node
// for W; the values are the matmul's. A matrix x (W X) stays a matmul.
TEST(OnnxImport, WeightFirstMatMulOfAVectorFusesIntoLinear) {
  OnnxBuilder b;
  b.input("x", {2});
  b.input("X", {2, 2});
  b.init("w", {3, 2}, {1, 2, 3, 4, 5, 6});
  b.init("bias", {3}, {0.5, -0.5, 1});
  b.node("MatMul", {"w", "x"}, {"h"});
  b.node("Add", {"h", "bias"}, {"y"});
  b.node("MatMul", {"w", "X"}, {"y2"});
  Model m = import_fused(b);
  auto y = eval_outputs(m, {Tensor<double>{{2}, {1, 2}}, Tensor<double>{{2, 2}, {1, 0, 0, 1}}});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0].shape, (Shape{3}));
  EXPECT_EQ(y[0].data, (std::vector<double>{5.5, 10.5, 18}));  // (1+4, 3+8, 5+12) + bias
  EXPECT_EQ(y[1].data, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

// An alias of the MatMul output used elsewhere keeps the Add separate (the bias must not leak).
TEST(OnnxImport, MatMulAddDoesNotFuseThroughAliases) {
  OnnxBuilder b;
  b.input("x", {1, 2});
  b.init("w", {2, 1}, {1, 1});
  b.init("bias", {1}, {10});
  b.node("MatMul", {"x", "w"}, {"h"});
  b.node("Identity", {"h"}, {"h2"});
  b.node("Add", {"h2", "bias"}, {"y"});
  b.node("Relu", {"h2"}, {"z"});
  b.output("y");
  b.output("z");
  Model m = import_ok(b);
  auto y = eval_outputs(m, {Tensor<double>{{1, 2}, {1, 2}}});
  ASSERT_EQ(y.size(), 2u);
  EXPECT_EQ(y[0].data, (std::vector<double>{13}));
  EXPECT_EQ(y[1].data, (std::vector<double>{3}));
}

TEST(OnnxImport, BroadcastingInsertsBroadcastToNodes) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.input("r", {3});
  b.input("c", {2, 1});
  b.node("Sub", {"x", "r"}, {"d"});
  b.node("Mul", {"d", "c"}, {"y"});
  b.output("y");
  Model m = import_ok(b);
  EXPECT_EQ(count_op(m, Op::BroadcastTo), 2u);
  auto y = eval_outputs(m, {Tensor<double>{{2, 3}, {1, 2, 3, 4, 5, 6}}, Tensor<double>{{3}, {1, 1, 1}},
                            Tensor<double>{{2, 1}, {10, -1}}});
  EXPECT_EQ(y[0].data, (std::vector<double>{0, 10, 20, -3, -4, -5}));
}

// Softmax of [1, 2, 3, 4] (flattened, opset < 13) vs two rows [1, 2], [3, 4] (axis = 1, opset 13).
TEST(OnnxImport, SoftmaxAxisSemanticsDependOnOpset) {
  for (int64_t opset : {11, 13}) {
    OnnxBuilder b(opset);
    b.input("x", {1, 2, 2});
    OnnxBuilder::attr(b.node("Softmax", {"x"}, {"y"}), "axis", 1);
    b.output("y");
    Model m = import_ok(b);
    auto y = eval_outputs(m, {Tensor<double>{{1, 2, 2}, {1, 2, 3, 4}}});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_EQ(y[0].shape, (Shape{1, 2, 2}));
    const double z4 = std::exp(1) + std::exp(2) + std::exp(3) + std::exp(4);
    if (opset == 11) {
      EXPECT_NEAR(y[0].data[0], std::exp(1) / z4, 1e-15);
      EXPECT_NEAR(y[0].data[3], std::exp(4) / z4, 1e-15);
    } else {  // along axis 1: entries 0 and 2 form one softmax
      EXPECT_NEAR(y[0].data[0], std::exp(1) / (std::exp(1) + std::exp(3)), 1e-15);
      EXPECT_NEAR(y[0].data[3], std::exp(4) / (std::exp(2) + std::exp(4)), 1e-15);
    }
  }
}

TEST(OnnxImport, ReshapeZeroAndMinusOneRules) {
  OnnxBuilder b;
  b.input("x", {2, 3, 4});
  b.init_ints("s", {0, -1});
  b.node("Reshape", {"x", "s"}, {"y"});
  b.output("y");
  Model m = import_ok(b);
  EXPECT_EQ(m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape, (Shape{2, 12}));
}

TEST(OnnxImport, ReductionsWithAxesInputAndAttribute) {
  OnnxBuilder b(13);
  b.input("x", {2, 3});
  b.init_ints("axes", {-1});
  b.node("ReduceSum", {"x", "axes"}, {"s"});  // keepdims default 1
  auto* mean = b.node("ReduceMean", {"x"}, {"m"});
  OnnxBuilder::attr(mean, "axes", std::vector<int64_t>{0});
  OnnxBuilder::attr(mean, "keepdims", 0);
  b.node("ReduceSum", {"x"}, {"all"});  // no axes: all of them
  b.output("s");
  b.output("m");
  b.output("all");
  Model m = import_ok(b);
  auto y = eval_outputs(m, {Tensor<double>{{2, 3}, {1, 2, 3, 4, 5, 6}}});
  ASSERT_EQ(y.size(), 3u);
  EXPECT_EQ(y[0].shape, (Shape{2, 1}));
  EXPECT_EQ(y[0].data, (std::vector<double>{6, 15}));
  EXPECT_EQ(y[1].shape, (Shape{3}));
  EXPECT_EQ(y[1].data, (std::vector<double>{2.5, 3.5, 4.5}));
  EXPECT_EQ(y[2].shape, (Shape{1, 1}));
  EXPECT_EQ(y[2].data, (std::vector<double>{21}));
}

TEST(OnnxImport, ReduceMaxMinAndComposedActivations) {
  OnnxBuilder b(13);
  b.input("x", {2, 3});
  auto* mx = b.node("ReduceMax", {"x"}, {"mx"});
  OnnxBuilder::attr(mx, "axes", std::vector<int64_t>{0});
  OnnxBuilder::attr(mx, "keepdims", 0);
  auto* mn = b.node("ReduceMin", {"x"}, {"mn"});
  OnnxBuilder::attr(mn, "axes", std::vector<int64_t>{1});
  OnnxBuilder::attr_f(b.node("LeakyRelu", {"x"}, {"lr"}), "alpha", 0.5f);
  b.node("ReduceL2", {"x"}, {"l2"});
  b.output("mx");
  b.output("mn");
  b.output("lr");
  b.output("l2");
  Model m = import_ok(b);
  auto y = eval_outputs(m, {Tensor<double>{{2, 3}, {1, -4, 3, -2, 5, 0}}});
  ASSERT_EQ(y.size(), 4u);
  EXPECT_EQ(y[0].shape, (Shape{3}));
  EXPECT_EQ(y[0].data, (std::vector<double>{1, 5, 3}));
  EXPECT_EQ(y[1].shape, (Shape{2, 1}));
  EXPECT_EQ(y[1].data, (std::vector<double>{-4, -2}));
  EXPECT_EQ(y[2].data, (std::vector<double>{1, -2, 3, -1, 5, 0}));
  EXPECT_EQ(y[3].shape, (Shape{1, 1}));
  EXPECT_DOUBLE_EQ(y[3].data[0], std::sqrt(55.0));  // 1 + 16 + 9 + 4 + 25
}

TEST(OnnxImport, ClipSqueezeUnsqueezeConcatAndConstants) {
  OnnxBuilder b(13);
  b.input("x", {1, 3});
  b.init("lo", {}, {0});
  b.init("hi", {}, {2});
  b.init_ints("ax0", {0});
  b.node("Clip", {"x", "lo", "hi"}, {"c"});
  b.node("Squeeze", {"c", "ax0"}, {"s"});  // [3]
  b.node("Unsqueeze", {"s", "ax0"}, {"u"});  // [1, 3]
  auto* k = b.node("Constant", {}, {"k"});
  auto* a = k->add_attribute();
  a->set_name("value_floats");
  a->set_type(onnx::AttributeProto::FLOATS);
  for (float v : {7.f, 8.f, 9.f}) a->add_floats(v);
  b.node("Unsqueeze", {"k", "ax0"}, {"k2"});
  OnnxBuilder::attr(b.node("Concat", {"u", "k2"}, {"y"}), "axis", 0);
  b.output("y");
  Model m = import_ok(b);
  auto y = eval_outputs(m, {Tensor<double>{{1, 3}, {-1, 1.5, 3}}});
  EXPECT_EQ(y[0].shape, (Shape{2, 3}));
  EXPECT_EQ(y[0].data, (std::vector<double>{0, 1.5, 2, 7, 8, 9}));
}

TEST(OnnxImport, InputsKeepTheirOrderAndInitializerInputsAreConstants) {
  OnnxBuilder b(8);
  b.input("w", {2});  // also an initializer: a constant, not an input node
  b.input("b", {2});
  b.input("a", {2});
  b.init("w", {2}, {3, 4});
  b.node("Sub", {"a", "b"}, {"d"});
  b.node("Mul", {"d", "w"}, {"y"});
  b.output("y");
  Model m = import_ok(b);
  ASSERT_EQ(m.graph.input_ids().size(), 2u);
  auto y = eval_outputs(m, {Tensor<double>{{2}, {1, 1}}, Tensor<double>{{2}, {5, 7}}});  // b, then a
  EXPECT_EQ(y[0].data, (std::vector<double>{12, 24}));
}

TEST(OnnxImport, SymbolicDimsNeedTheOption) {
  OnnxBuilder b;
  b.input("x", {1, 4});
  b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(1)->set_dim_param("W");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  auto bad = read_model_onnx(b.bytes());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("graph input 'x': dim 1 is symbolic ('W')"), std::string::npos) << bad.message();
  OnnxImportOptions o;
  o.unknown_dims_as_one = true;
  Model m = import_ok(b, o);
  EXPECT_EQ(m.graph.nodes[0].out_shape, (Shape{1, 1}));
  OnnxImportOptions fixed;  // --onnx-dim W=6
  fixed.dims["W"] = 6;
  EXPECT_EQ(import_ok(b, fixed).graph.nodes[0].out_shape, (Shape{1, 6}));
}

// A symbolic batch dim (VNN-COMP's 'unk__17') reads as 1 with a note; --onnx-dim fixes it; with
// symbolic_batch_as_one off it is an error.
TEST(OnnxImport, SymbolicBatchDimReadsAsOneWithANote) {
  OnnxBuilder b;
  b.input("x", {1, 4});
  b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_param("unk__17");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  std::vector<std::string> notes;
  OnnxImportOptions o;
  o.notes = &notes;
  Model m = import_ok(b, o);
  EXPECT_EQ(m.graph.nodes[0].out_shape, (Shape{1, 4}));
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "onnx: graph input 'x': dim 0 is symbolic ('unk__17'); read as 1 (a batch of 1; --onnx-dim "
                      "unk__17=N fixes it)");
  OnnxImportOptions fixed;
  fixed.dims["unk__17"] = 3;
  EXPECT_EQ(import_ok(b, fixed).graph.nodes[0].out_shape, (Shape{3, 4}));
  OnnxImportOptions strict;
  strict.symbolic_batch_as_one = false;
  auto bad = read_model_onnx(b.bytes(), strict);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("dim 0 is symbolic ('unk__17')"), std::string::npos) << bad.message();
}

TEST(OnnxImport, ConstantInputsOptionBindsWeights) {
  OnnxBuilder b;
  b.input("x", {1, 1, 3, 3});
  b.input("w", {1, 1, 2, 2});
  b.node("Conv", {"x", "w"}, {"y"});
  b.output("y");
  auto plain = read_model_onnx(b.bytes());
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.message(), "onnx: node 0 ('', Conv): the weight W must be an initializer or constant");
  OnnxImportOptions o;
  o.constant_inputs["w"] = Tensor<double>{{1, 1, 2, 2}, {1, 0, 0, 1}};
  Model m = import_ok(b, o);
  auto y = eval_outputs(m, {Tensor<double>{{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}});
  EXPECT_EQ(y[0].data, (std::vector<double>{6, 8, 12, 14}));  // x[i][j] + x[i+1][j+1]
}

// The erf form of GELU as exporters write it (two operand orders) becomes one gelu node; a near
// miss (0.6 instead of 0.5) stays op by op.
OnnxBuilder gelu_graph(int variant, float half) {
  OnnxBuilder b;
  b.input("x", {4});
  b.init("sqrt2", {}, {1.4142135f});
  b.init("one", {}, {1.0f});
  b.init("half", {}, {half});
  b.node("Div", {"x", "sqrt2"}, {"d"});
  b.node("Erf", {"d"}, {"e"});
  b.node("Add", {"one", "e"}, {"p"});
  if (variant == 0) {
    b.node("Mul", {"x", "p"}, {"m"});
    b.node("Mul", {"m", "half"}, {"y"});
  } else {
    b.node("Mul", {"half", "x"}, {"h"});
    b.node("Mul", {"h", "p"}, {"y"});
  }
  b.node("Relu", {"y"}, {"out"});
  b.output("out");
  return b;
}

TEST(OnnxImport, GeluErfPatternsBecomeOneGeluNode) {
  const std::vector<double> x{-2, -0.5, 0.25, 3};
  for (int variant : {0, 1}) {
    Model m = import_ok(gelu_graph(variant, 0.5f));
    EXPECT_EQ(count_op(m, Op::Gelu), 1u);
    EXPECT_EQ(count_op(m, Op::Erf), 0u);
    EXPECT_EQ(m.graph.size(), 3u);  // input, gelu, relu
    auto y = eval_outputs(m, {Tensor<double>{{4}, x}});
    for (size_t i = 0; i < x.size(); ++i)
      EXPECT_NEAR(y[0].data[i], std::max(0.0, x[i] * (1 + std::erf(x[i] / std::sqrt(2.0))) / 2), 1e-15);
  }
  Model near = import_ok(gelu_graph(0, 0.6f));
  EXPECT_EQ(count_op(near, Op::Gelu), 0u);
  EXPECT_EQ(count_op(near, Op::Erf), 1u);
}

TEST(OnnxImport, SupportedOpListIsSortedAndCoversTheIssueList) {
  const std::vector<std::string> ops = onnx_supported_ops();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* op : {"Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt",
                         "Abs", "Neg", "Softmax", "LogSoftmax", "LayerNormalization", "BatchNormalization", "Conv",
                         "MaxPool", "AveragePool", "GlobalAveragePool", "Flatten", "Reshape", "Transpose", "Concat",
                         "ReduceSum", "ReduceMean", "Identity", "Dropout", "Constant", "Cast", "Erf", "Pow", "Max",
                         "Min", "Clip", "Squeeze", "Unsqueeze"})
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), op)) << op;
}

}  // namespace
}  // namespace denote
