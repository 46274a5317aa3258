// ONNX import of broken files: truncated bytes, non-ONNX bytes, absurd dims, dangling names,
// nodes out of topological order, duplicate outputs, unsupported ops (all listed at once), bad
// opsets and element types. Every case is a clear error naming the node or field, never a crash.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using testing::error_of;
using testing::OnnxBuilder;
using testing::relu_model;

std::string acasxu_bytes() {
  std::ifstream f(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx",
                  std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

TEST(OnnxBadInput, TruncatedFilesAreParseErrors) {
  const std::string full = acasxu_bytes();
  ASSERT_GT(full.size(), 1000u);
  ASSERT_TRUE(read_model_onnx(full).ok());
  for (size_t cut : {full.size() - 1, full.size() / 2, size_t{7}}) {
    const std::string msg = error_of(full.substr(0, cut));
    EXPECT_TRUE(msg.rfind("onnx: ", 0) == 0) << msg;
  }
  EXPECT_EQ(error_of(full.substr(0, full.size() / 2)),
            "onnx: not a valid ONNX model (protobuf parse failed: truncated or not a ModelProto)");
}

TEST(OnnxBadInput, WrongMagicAndEmptyFiles) {
  EXPECT_EQ(error_of("{\"format\": \"torchlean.ir.v1\"}"),
            "onnx: not a valid ONNX model (protobuf parse failed: truncated or not a ModelProto)");
  EXPECT_EQ(error_of(""), "onnx: the model has no graph (not an ONNX model?)");
  EXPECT_EQ(error_of(std::string("\x89PNG\r\n\x1a\n", 8)),
            "onnx: not a valid ONNX model (protobuf parse failed: truncated or not a ModelProto)");
}

TEST(OnnxBadInput, AbsurdDimsInInitializers) {
  OnnxBuilder b = relu_model();
  b.init("big", {int64_t{1} << 40, int64_t{1} << 40}, {1});
  EXPECT_EQ(error_of(b.bytes()), "onnx: initializer: tensor 'big': dims [1099511627776, 1099511627776] are too large");
  OnnxBuilder c = relu_model();
  c.init("short", {3}, {1, 2});
  EXPECT_EQ(error_of(c.bytes()), "onnx: initializer: tensor 'short': has 2 values, expected 3");
  OnnxBuilder d = relu_model();
  d.init("neg", {-2}, {});
  EXPECT_EQ(error_of(d.bytes()), "onnx: initializer: tensor 'neg': negative dim -2");
}

TEST(OnnxBadInput, DanglingInputNamesTheNode) {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Add", {"x", "nowhere"}, {"y"}, "adder");
  b.output("y");
  EXPECT_EQ(error_of(b.bytes()),
            "onnx: node 0 ('adder', Add): input 'nowhere' is not produced by any node, initializer or graph input");
}

TEST(OnnxBadInput, NodesOutOfTopologicalOrderAreRejected) {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Relu", {"h"}, {"y"}, "second");
  b.node("Neg", {"x"}, {"h"}, "first");
  b.output("y");
  EXPECT_EQ(error_of(b.bytes()),
            "onnx: node 0 ('second', Relu): input 'h' is produced by a later node 1 ('first', Neg) (nodes must be in "
            "topological order)");
  OnnxBuilder cyc;  // a cycle can never be in topological order
  cyc.input("x", {2});
  cyc.node("Add", {"x", "b"}, {"a"}, "n0");
  cyc.node("Relu", {"a"}, {"b"}, "n1");
  cyc.output("b");
  EXPECT_NE(error_of(cyc.bytes()).find("topological order"), std::string::npos);
}

TEST(OnnxBadInput, DuplicateOutputs) {
  OnnxBuilder b;
  b.input("x", {2});
  b.node("Relu", {"x"}, {"y"}, "a");
  b.node("Neg", {"x"}, {"y"}, "b");
  b.output("y");
  EXPECT_EQ(error_of(b.bytes()), "onnx: node 1 ('b', Neg): output 'y' is already produced by node 0 ('a', Relu)");
  OnnxBuilder c = relu_model();
  c.output("y");
  EXPECT_EQ(error_of(c.bytes()), "onnx: graph output 'y': listed twice");
  OnnxBuilder d = relu_model();
  d.node("Neg", {"y"}, {"x"}, "shadow");
  EXPECT_EQ(error_of(d.bytes()),
            "onnx: node 1 ('shadow', Neg): output 'x' is already produced by an initializer or graph input");
}

TEST(OnnxBadInput, EveryUnsupportedOpIsListedAtOnce) {
  OnnxBuilder b;
  b.input("x", {2, 2});
  b.node("Relu", {"x"}, {"a"}, "ok");
  b.node("LSTM", {"a"}, {"b"}, "rnn");
  b.node("Einsum", {"b"}, {"c"}, "");
  b.node("LSTM", {"c"}, {"d"}, "rnn2");
  auto* custom = b.node("FusedThing", {"d"}, {"e"}, "vendor");
  custom->set_domain("com.example");
  b.output("e");
  EXPECT_EQ(error_of(b.bytes()),
            "onnx: unsupported ops: Einsum, LSTM, com.example::FusedThing (at node 1 ('rnn', LSTM), node 2 ('', Einsum), "
            "node 3 ('rnn2', LSTM), node 4 ('vendor', com.example::FusedThing))");
}

TEST(OnnxBadInput, OpsetElementTypesAndOutputs) {
  OnnxBuilder high(99);
  high.input("x", {2});
  high.node("Relu", {"x"}, {"y"});
  high.output("y");
  EXPECT_EQ(error_of(high.bytes()), "onnx: opset 99 is not supported (supported: 1 to 18)");
  OnnxBuilder ints;
  ints.input("x", {2}, onnx::TensorProto::INT64);
  ints.node("Relu", {"x"}, {"y"});
  ints.output("y");
  EXPECT_EQ(error_of(ints.bytes()),
            "onnx: graph input 'x': element type INT64 is not supported by the float import (FLOAT, DOUBLE, FLOAT16, "
            "BFLOAT16); integer and bool models run through the typed import (denote run --input-words)");
  OnnxBuilder none;
  none.input("x", {2});
  none.node("Relu", {"x"}, {"y"});
  EXPECT_EQ(error_of(none.bytes()), "onnx: the graph has no outputs");
  OnnxBuilder wrong = relu_model();
  wrong.graph()->mutable_output(0)->set_name("z");
  EXPECT_EQ(error_of(wrong.bytes()), "onnx: graph output 'z': not produced by any node, initializer or input");
  OnnxBuilder shape;
  shape.input("x", {2});
  shape.node("Relu", {"x"}, {"y"});
  shape.output("y", {3});
  EXPECT_EQ(error_of(shape.bytes()), "onnx: graph output 'y': declared shape [3] but the graph computes [2]");
}

TEST(OnnxBadInput, ShapeErrorsNameTheNode) {
  OnnxBuilder b;
  b.input("x", {2, 3});
  b.input("z", {4});
  b.node("Add", {"x", "z"}, {"y"}, "plus");
  b.output("y");
  EXPECT_EQ(error_of(b.bytes()), "onnx: node 0 ('plus', Add): operand shapes [2, 3] and [4] do not broadcast");
  OnnxBuilder r;
  r.input("x", {2, 3});
  r.init_ints("s", {4, -1, -1});
  r.node("Reshape", {"x", "s"}, {"y"}, "rs");
  r.output("y");
  EXPECT_EQ(error_of(r.bytes()), "onnx: node 0 ('rs', Reshape): shape has more than one -1");
}

// Dims whose product is 0 but whose suffix products overflow, and empty weights with huge widths:
// errors or small graphs, never an allocation of the nominal size.
TEST(OnnxBadInput, HugeDimsWithZeroElements) {
  const int64_t big = int64_t{1} << 40;
  OnnxBuilder ln;
  ln.input("x", {0, big, big});
  OnnxBuilder::attr(ln.node("LayerNormalization", {"x"}, {"y"}, "ln"), "axis", 1);
  ln.output("y");
  EXPECT_EQ(error_of(ln.bytes()), "onnx: node 0 ('ln', LayerNormalization): the normalized shape is too large");
  OnnxBuilder conv;
  conv.input("x", {1, 0, 3, 3});
  auto* w = conv.graph()->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {big, int64_t{0}, int64_t{1}, int64_t{1}}) w->add_dims(d);
  conv.node("Conv", {"x", "w"}, {"y"}, "c");
  conv.output("y");
  EXPECT_EQ(error_of(conv.bytes()), "onnx: node 0 ('c', Conv): W has too many output channels");
  OnnxBuilder fl;
  fl.input("x", {0, big, big});
  fl.node("Flatten", {"x"}, {"y"}, "f");
  fl.output("y");
  EXPECT_EQ(error_of(fl.bytes()), "onnx: node 0 ('f', Flatten): the flattened dims overflow");
}

// Constants the file does not hold (ConstantOfShape here) count against one budget for the whole
// import: three blocks of 400 elements pass a budget of 1000 two at a time, not three.
TEST(OnnxBadInput, SynthesizedElementsHaveABudgetForTheWholeImport) {
  OnnxBuilder b;
  b.input("x", {20, 20});
  b.init_ints("s", {20, 20});
  std::string last = "x";
  for (int i = 0; i < 3; ++i) {
    const std::string c = "c" + std::to_string(i), y = "y" + std::to_string(i);
    b.node("ConstantOfShape", {"s"}, {c}, c);
    b.node("Add", {last, c}, {y}, "add" + std::to_string(i));
    last = y;
  }
  b.output(last);
  ASSERT_TRUE(read_model_onnx(b.bytes()).ok());  // the default budget: 2^26 elements
  OnnxImportOptions small;
  small.max_synthesized_elements = 1000;
  auto r = read_model_onnx(b.bytes(), small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "onnx: node 4 ('c2', ConstantOfShape): value of output 'c2' of 400 elements brings what the "
                         "import creates beyond the file's data to 1200 elements; expected at most 1000 "
                         "(OnnxImportOptions::max_synthesized_elements)");
  small.max_synthesized_elements = 1200;
  EXPECT_TRUE(read_model_onnx(b.bytes(), small).ok());
}

TEST(OnnxBadInput, MissingFileNamesThePath) {
  EXPECT_EQ(load_model_onnx_file("/nonexistent/x.onnx").message(), "cannot open file '/nonexistent/x.onnx'");
}

}  // namespace
}  // namespace denote
