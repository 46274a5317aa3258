// write_model_onnx on models that were never checked (issue 12): the exporter runs the full
// structural and shape check first and returns its error; it never throws, aborts or reads out
// of bounds, whatever the graph holds.
#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "denote/program/builder.h"

namespace denote {
namespace {

// input [3] -> relu -> output; each test breaks one thing.
Model relu_model() {
  Model m;
  m.graph.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {3}});
  m.graph.nodes.push_back(Node{1, {0}, Op::Relu, NoAttrs{}, {3}});
  m.output_ids = {1};
  return m;
}

void expect_error(const Model& m, const std::string& needle) {
  Result<std::string> r = write_model_onnx(m);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find(needle), std::string::npos) << r.message();
  EXPECT_FALSE(write_model_onnx_file("/nonexistent-dir/never-written.onnx", m).ok());
}

TEST(OnnxExportUnchecked, TheIntactModelExports) {
  auto r = write_model_onnx(relu_model());
  EXPECT_TRUE(r.ok()) << r.message();
}

TEST(OnnxExportUnchecked, WrongAttrsKindIsAnError) {
  Model m = relu_model();
  m.graph.nodes.push_back(Node{2, {1}, Op::Permute, AxisAttrs{0}, {3}});  // was bad_variant_access
  m.graph.nodes.push_back(Node{3, {1}, Op::Softmax, NoAttrs{}, {3}});
  m.output_ids = {2, 3};
  expect_error(m, "IR graph: node 2");
  m.graph.nodes[2].attrs = PermAttrs{{0}};
  expect_error(m, "IR graph: node 3");
}

TEST(OnnxExportUnchecked, WrongArityIsAnError) {
  Model m = relu_model();
  m.graph.nodes[1].parents = {};  // relu without a parent: was an out-of-bounds read
  expect_error(m, "IR graph: node 1");
  m.graph.nodes[1].parents = {0, 0};
  expect_error(m, "IR graph: node 1");
  Model conv = relu_model();
  conv.graph.nodes[1] = Node{1, {}, Op::Linear, NoAttrs{}, {3}};
  expect_error(conv, "IR graph: node 1");
}

TEST(OnnxExportUnchecked, ParentIdsOutOfRangeAreErrors) {
  for (int64_t bad : {int64_t{-1}, int64_t{1}, int64_t{7}, int64_t{1} << 40}) {
    Model m = relu_model();
    m.graph.nodes[1].parents = {bad};
    expect_error(m, "IR graph: node 1");
  }
}

TEST(OnnxExportUnchecked, IdDisciplineAndShapesAreChecked) {
  Model ids = relu_model();
  ids.graph.nodes[1].id = 5;
  expect_error(ids, "IR graph:");
  Model shape = relu_model();
  shape.graph.nodes[1].out_shape = {4};
  expect_error(shape, "outShape mismatch");
  Model transpose = relu_model();  // axes out of range: was an out-of-bounds write
  transpose.graph.nodes.push_back(Node{2, {1}, Op::Transpose, TransposeAttrs{0, 9}, {3}});
  transpose.output_ids = {2};
  expect_error(transpose, "IR graph: node 2");
  Model conv = relu_model();  // a conv whose config disagrees with its input
  ConvConfig cc{WindowConfig{2, {3, 3}, {1, 1}, {0, 0}}, {1, 1}, {0, 0}, 1, 1, 2, 3};
  conv.graph.nodes.push_back(Node{2, {1}, Op::Conv, cc, {3}});
  conv.output_ids = {2};
  expect_error(conv, "IR graph: node 2");
}

TEST(OnnxExportUnchecked, OutputIdsAreChecked) {
  Model m = relu_model();
  m.output_ids = {2};
  expect_error(m, "onnx export: output id 2 is out of range");
  m.output_ids = {-1};
  expect_error(m, "onnx export: output id -1 is out of range");
  m.output_ids.clear();
  expect_error(m, "onnx export: the model has no outputs");
}

TEST(OnnxExportUnchecked, AnEmptyGraphIsAnErrorNotACrash) {
  Model m;
  expect_error(m, "onnx export:");
}

}  // namespace
}  // namespace denote
