// ONNX import refuses files that are not sound ONNX, each with a clear error: duplicate graph-input
// names, unnamed initializers and inputs, a nonsensical ir_version, two default-domain opset
// entries, declared graph output element types that disagree with the computed value.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using testing::error_of;
using testing::OnnxBuilder;
using testing::relu_model;

TEST(OnnxImportHardening, DuplicateGraphInputNames) {
  OnnxBuilder b = relu_model();
  b.input("x", {2});
  EXPECT_EQ(error_of(b.bytes()), "onnx: graph input 'x' is listed twice");
  // An initializer listed as a graph input is still a constant (ONNX IR < 4 style).
  OnnxBuilder c;
  c.input("x", {2});
  c.init("w", {2}, {1, 2});
  c.input("w", {2});
  c.node("Add", {"x", "w"}, {"y"}, "a");
  c.output("y");
  auto m = read_model_onnx(c.bytes());
  EXPECT_TRUE(m.ok()) << m.message();
}

TEST(OnnxImportHardening, UnnamedInitializersAndInputs) {
  OnnxBuilder b = relu_model();
  b.init("", {1}, {1});
  EXPECT_EQ(error_of(b.bytes()), "onnx: initializer 0 has no name");
  OnnxBuilder c = relu_model();
  c.input("", {2});
  EXPECT_EQ(error_of(c.bytes()), "onnx: graph input 1 has no name");
  OnnxBuilder d = relu_model();
  d.init("w", {1}, {1});
  d.init("w", {1}, {2});
  EXPECT_EQ(error_of(d.bytes()), "onnx: initializer 'w' is defined twice");
}

TEST(OnnxImportHardening, IrVersion) {
  for (int64_t v : {int64_t{0}, int64_t{-3}, int64_t{65}, int64_t{1} << 40}) {
    OnnxBuilder b = relu_model();
    b.proto().set_ir_version(v);
    EXPECT_EQ(error_of(b.bytes()), fmt::format("onnx: ir_version {} is not an ONNX IR version (expected 1 to 64)", v));
  }
  OnnxBuilder b = relu_model();
  b.proto().clear_ir_version();
  EXPECT_EQ(error_of(b.bytes()), "onnx: the model has no ir_version (ModelProto.ir_version is required)");
  for (int64_t v : {3, 8, 10}) {
    OnnxBuilder ok = relu_model();
    ok.proto().set_ir_version(v);
    EXPECT_TRUE(read_model_onnx(ok.bytes()).ok()) << v;
  }
}

TEST(OnnxImportHardening, TwoDefaultDomainOpsets) {
  OnnxBuilder b = relu_model();
  auto* o = b.proto().add_opset_import();
  o->set_domain("ai.onnx");
  o->set_version(13);
  EXPECT_EQ(error_of(b.bytes()), "onnx: opset_import lists the default domain twice (versions 17 and 13)");
  // Another domain besides the default one is fine.
  OnnxBuilder c = relu_model();
  auto* ml = c.proto().add_opset_import();
  ml->set_domain("ai.onnx.ml");
  ml->set_version(3);
  EXPECT_TRUE(read_model_onnx(c.bytes()).ok());
}

TEST(OnnxImportHardening, DeclaredOutputTypeMustFitTheValue) {
  OnnxBuilder b = relu_model();
  b.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  EXPECT_EQ(error_of(b.bytes()),
            "onnx: graph output 'y': declared element type INT64 but the float import computes floating-point values");
  for (int32_t et : {onnx::TensorProto::FLOAT, onnx::TensorProto::DOUBLE, onnx::TensorProto::FLOAT16}) {
    OnnxBuilder ok = relu_model();
    ok.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(et);
    EXPECT_TRUE(read_model_onnx(ok.bytes()).ok()) << et;
  }
  // The typed import knows the element type of each value.
  OnnxBuilder t;
  t.input("x", {2}, onnx::TensorProto::INT32);
  t.node("Neg", {"x"}, {"y"}, "n");
  t.output("y");
  t.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT32);
  auto good = read_typed_model_onnx(t.bytes());
  EXPECT_TRUE(good.ok()) << good.message();
  t.graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  auto bad = read_typed_model_onnx(t.bytes());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.message(), "onnx: graph output 'y': declared element type INT64 but the graph computes INT32");
}

}  // namespace
}  // namespace denote
