// The typed ONNX import never dereferences a failed Result (issue 12): element types without a
// dtype reaching the integer paths are errors naming the node, not crashes.
#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using testing::OnnxBuilder;

TEST(OnnxTypedRobust, StringTensorIntoMaxPoolIsAnError) {
  OnnxBuilder b;
  b.input("x", {1, 1, 4}, onnx::TensorProto::STRING);
  auto* n = b.node("MaxPool", {"x"}, {"y"}, "pool");
  OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2});
  b.output("y");
  auto r = read_typed_model_onnx(b.bytes());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("MaxPool"), std::string::npos) << r.message();
}

TEST(OnnxTypedRobust, StringTensorIntoArithmeticIsAnError) {
  for (const char* op : {"Add", "Div", "Clip", "Relu", "Pow", "Mod", "And"}) {
    OnnxBuilder b;
    b.input("x", {2}, onnx::TensorProto::STRING);
    b.node(op, {"x", "x"}, {"y"}, "n");
    b.output("y");
    auto r = read_typed_model_onnx(b.bytes());
    EXPECT_FALSE(r.ok()) << op;
  }
}

TEST(OnnxTypedRobust, CastToTheSameTypeIsAnAlias) {
  OnnxBuilder b;
  b.input("x", {2}, onnx::TensorProto::INT32);
  OnnxBuilder::attr(b.node("Cast", {"x"}, {"y"}, "c"), "to", int64_t{onnx::TensorProto::INT32});
  b.output("y");
  auto r = read_typed_model_onnx(b.bytes());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->model.graph.size(), 1u);
}

}  // namespace
}  // namespace denote
