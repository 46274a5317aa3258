// Typed ONNX import (read_typed_model_onnx + typed::eval_typed): integer and bool models built in
// code and checked against hand arithmetic (two's complement wrapping, truncating division, the two
// Mod conventions, numpy's truncating float -> int cast), exact words of wide constants, and errors
// that name the ONNX node for ops without an exact integer meaning.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "denote/io/onnx.h"
#include "denote/typed/interp.h"
#include "onnx_test_util.h"

namespace denote {
namespace {

using onnx::TensorProto;
using testing::OnnxBuilder;
using typed::DType;
using typed::TypedTensor;

TypedTensor tensor(int32_t et, const Shape& shape, const std::vector<uint64_t>& words) {
  std::vector<Word> ws;
  for (uint64_t w : words) ws.push_back(Word::of(w));
  auto t = typed::load(*onnx_dtype(et), shape, ws);
  EXPECT_TRUE(t.ok()) << t.message();
  return *t;
}

// Imports, evaluates and returns the words of output 0.
std::vector<Word> run_words(const OnnxBuilder& b, const std::vector<TypedTensor>& inputs) {
  auto tm = read_typed_model_onnx(b.bytes());
  EXPECT_TRUE(tm.ok()) << tm.message();
  if (!tm.ok()) return {};
  auto r = typed::eval_typed(*tm, inputs);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return {};
  return typed::words(r->table[static_cast<size_t>(tm->model.output_ids[0])]);
}

std::vector<Word> words_of(const std::vector<uint64_t>& v) {
  std::vector<Word> out;
  for (uint64_t w : v) out.push_back(Word::of(w));
  return out;
}

OnnxBuilder binary_model(const std::string& op, int32_t et, int64_t n, int64_t opset = 17) {
  OnnxBuilder b(opset);
  b.input("a", {n}, et);
  b.input("b", {n}, et);
  b.node(op, {"a", "b"}, {"y"}, "the_" + op);
  b.output("y");
  return b;
}

TEST(OnnxTyped, Int8AddWraps) {
  // 127 + 1 = -128 (0x80); -128 + -1 = 127 (0x7f); 100 + 27 = 127.
  OnnxBuilder b = binary_model("Add", TensorProto::INT8, 3);
  auto tm = read_typed_model_onnx(b.bytes());
  ASSERT_TRUE(tm.ok()) << tm.message();
  EXPECT_EQ(tm->input_dtypes.at(0), DType::integer(8, true));
  EXPECT_EQ(run_words(b, {tensor(TensorProto::INT8, {3}, {0x7f, 0x80, 100}), tensor(TensorProto::INT8, {3}, {1, 0xff, 27})}),
            words_of({0x80, 0x7f, 127}));
}

TEST(OnnxTyped, Uint8SubAndMulWrap) {
  // 3 - 5 = 254 (mod 256); 16 * 17 = 272 = 16 (mod 256).
  EXPECT_EQ(run_words(binary_model("Sub", TensorProto::UINT8, 1),
                      {tensor(TensorProto::UINT8, {1}, {3}), tensor(TensorProto::UINT8, {1}, {5})}),
            words_of({254}));
  EXPECT_EQ(run_words(binary_model("Mul", TensorProto::UINT8, 1),
                      {tensor(TensorProto::UINT8, {1}, {16}), tensor(TensorProto::UINT8, {1}, {17})}),
            words_of({16}));
}

TEST(OnnxTyped, Int32DivTruncatesTowardZero) {
  // -7 / 2 = -3, 7 / -2 = -3, -7 / -2 = 3, 7 / 2 = 3.
  const uint64_t m7 = 0xfffffff9, m2 = 0xfffffffe;
  EXPECT_EQ(run_words(binary_model("Div", TensorProto::INT32, 4),
                      {tensor(TensorProto::INT32, {4}, {m7, 7, m7, 7}), tensor(TensorProto::INT32, {4}, {2, m2, m2, 2})}),
            words_of({0xfffffffd, 0xfffffffd, 3, 3}));
}

TEST(OnnxTyped, ModTakesTheDivisorsSignOrWithFmodTheDividends) {
  const uint64_t m7 = 0xfff9, m2 = 0xfffe;  // int16 -7, -2
  const auto a = tensor(TensorProto::INT16, {4}, {m7, 7, m7, 7}), b = tensor(TensorProto::INT16, {4}, {2, m2, m2, 2});
  // Python %: -7 % 2 = 1, 7 % -2 = -1, -7 % -2 = -1, 7 % 2 = 1.
  EXPECT_EQ(run_words(binary_model("Mod", TensorProto::INT16, 4), {a, b}), words_of({1, 0xffff, 0xffff, 1}));
  // C fmod: fmod(-7, 2) = -1, fmod(7, -2) = 1, fmod(-7, -2) = -1, fmod(7, 2) = 1.
  OnnxBuilder f = binary_model("Mod", TensorProto::INT16, 4);
  OnnxBuilder::attr(f.graph()->mutable_node(0), "fmod", int64_t{1});
  EXPECT_EQ(run_words(f, {a, b}), words_of({0xffff, 1, 0xffff, 1}));
  // fmod(INT16_MIN, -1) = 0 although the quotient overflows.
  EXPECT_EQ(run_words(f, {tensor(TensorProto::INT16, {4}, {0x8000, 0x8000, 5, 0}),
                          tensor(TensorProto::INT16, {4}, {0xffff, 3, 0x8000, 0x8000})}),
            words_of({0, 0xfffe, 5, 0}));  // -32768 fmod 3 = -2; 5 fmod -32768 = 5; 0
}

TEST(OnnxTyped, CastFloatToInt32TruncatesLikeNumpyAstype) {
  // ONNX's reference casts with numpy's astype, which truncates toward zero: 2.7 -> 2, -2.7 -> -2.
  OnnxBuilder b;
  b.input("x", {3}, TensorProto::FLOAT);
  auto* n = b.node("Cast", {"x"}, {"y"}, "to_int");
  OnnxBuilder::attr(n, "to", int64_t{TensorProto::INT32});
  b.output("y");
  float v[3] = {2.7f, -2.7f, 0.5f};
  std::vector<uint64_t> bits;
  for (float f : v) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    bits.push_back(u);
  }
  EXPECT_EQ(run_words(b, {tensor(TensorProto::FLOAT, {3}, bits)}), words_of({2, 0xfffffffe, 0}));
}

TEST(OnnxTyped, IntToFloatCastRoundsToNearestEven) {
  // int32 16777217 = 2^24 + 1 is a tie in binary32: nearest-even gives 2^24 (0x4b800000).
  OnnxBuilder b;
  b.input("x", {1}, TensorProto::INT32);
  auto* n = b.node("Cast", {"x"}, {"y"});
  OnnxBuilder::attr(n, "to", int64_t{TensorProto::FLOAT});
  b.output("y");
  EXPECT_EQ(run_words(b, {tensor(TensorProto::INT32, {1}, {16777217})}), words_of({0x4b800000}));
}

TEST(OnnxTyped, WideInt64ConstantsKeepTheirWords) {
  // 2^62 + 1 is not a double; x + c with x = 1 must give 2^62 + 2 exactly.
  OnnxBuilder b;
  b.input("x", {1}, TensorProto::INT64);
  b.init_ints("c", {(int64_t{1} << 62) + 1});
  b.node("Add", {"x", "c"}, {"y"});
  b.output("y");
  EXPECT_EQ(run_words(b, {tensor(TensorProto::INT64, {1}, {1})}), words_of({(uint64_t{1} << 62) + 2}));
}

TEST(OnnxTyped, MaxBroadcastsAndChainsVariadicOperands) {
  // Max(a [2, 2], b [2], c []) over uint16: row-wise with the largest of each.
  OnnxBuilder b;
  b.input("a", {2, 2}, TensorProto::UINT16);
  b.input("b", {2}, TensorProto::UINT16);
  b.input("c", {}, TensorProto::UINT16);
  b.node("Max", {"a", "b", "c"}, {"y"});
  b.output("y");
  EXPECT_EQ(run_words(b, {tensor(TensorProto::UINT16, {2, 2}, {1, 0xffff, 7, 2}), tensor(TensorProto::UINT16, {2}, {5, 3}),
                          tensor(TensorProto::UINT16, {}, {4})}),
            words_of({5, 0xffff, 7, 4}));
}

TEST(OnnxTyped, BoolAndOr) {
  OnnxBuilder a = binary_model("And", TensorProto::BOOL, 4), o = binary_model("Or", TensorProto::BOOL, 4);
  const auto x = tensor(TensorProto::BOOL, {4}, {0, 0, 1, 1}), y = tensor(TensorProto::BOOL, {4}, {0, 1, 0, 1});
  EXPECT_EQ(run_words(a, {x, y}), words_of({0, 0, 0, 1}));
  EXPECT_EQ(run_words(o, {x, y}), words_of({0, 1, 1, 1}));
}

TEST(OnnxTyped, Int8MaxPoolRunsExactlyThroughBinary64) {
  // Windows of 2 with stride 2 over [-5, -128, 127, 3]: [-5, 127].
  OnnxBuilder b;
  b.input("x", {1, 1, 4}, TensorProto::INT8);
  auto* n = b.node("MaxPool", {"x"}, {"y"}, "pool");
  OnnxBuilder::attr(n, "kernel_shape", std::vector<int64_t>{2});
  OnnxBuilder::attr(n, "strides", std::vector<int64_t>{2});
  b.output("y");
  EXPECT_EQ(run_words(b, {tensor(TensorProto::INT8, {1, 1, 4}, {0xfb, 0x80, 0x7f, 3})}), words_of({0xfb, 0x7f}));
  // int64 values are not all exact in binary64: not mapped.
  b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(TensorProto::INT64);
  auto tm = read_typed_model_onnx(b.bytes());
  ASSERT_FALSE(tm.ok());
  EXPECT_NE(tm.message().find("node 0 ('pool', MaxPool): MaxPool on INT64 tensors is not supported"), std::string::npos)
      << tm.message();
}

TEST(OnnxTyped, Float32GraphsEvaluateInBinary32WithSynthesizedConstants) {
  // Mean(x, y) = (x + y) / 2 with the importer's constant 2 taking the operands' type binary32:
  // (1 + 2^-23) + 1 = 2 + 2^-23 rounds to 2 (tie, even) in binary32, so the mean is exactly 1.
  OnnxBuilder b;
  b.input("x", {1}, TensorProto::FLOAT);
  b.input("y", {1}, TensorProto::FLOAT);
  b.node("Mean", {"x", "y"}, {"m"});
  b.output("m");
  EXPECT_EQ(run_words(b, {tensor(TensorProto::FLOAT, {1}, {0x3f800001}), tensor(TensorProto::FLOAT, {1}, {0x3f800000})}),
            words_of({0x3f800000}));
}

TEST(OnnxTyped, UnsupportedIntOpNamesTheNode) {
  OnnxBuilder b;
  b.input("x", {2}, TensorProto::INT32);
  b.node("Relu", {"x"}, {"y"}, "act");
  b.output("y");
  auto tm = read_typed_model_onnx(b.bytes());
  ASSERT_FALSE(tm.ok());
  EXPECT_EQ(tm.message(), "onnx: node 0 ('act', Relu): Relu on INT32 tensors is not supported by the typed import");
}

TEST(OnnxTyped, IntToOtherIntCastIsRejectedByOurCastRules) {
  OnnxBuilder b;
  b.input("x", {2}, TensorProto::INT64);
  auto* n = b.node("Cast", {"x"}, {"y"}, "narrow");
  OnnxBuilder::attr(n, "to", int64_t{TensorProto::INT8});
  b.output("y");
  auto tm = read_typed_model_onnx(b.bytes());
  ASSERT_FALSE(tm.ok());
  EXPECT_EQ(tm.message().rfind("onnx: node 0 ('narrow', Cast): cast int64->int8: ", 0), 0u) << tm.message();
}

TEST(OnnxTyped, FloatModIsNotMapped) {
  OnnxBuilder b = binary_model("Mod", TensorProto::FLOAT, 2);
  OnnxBuilder::attr(b.graph()->mutable_node(0), "fmod", int64_t{1});
  auto tm = read_typed_model_onnx(b.bytes());
  ASSERT_FALSE(tm.ok());
  EXPECT_NE(tm.message().find("Mod on FLOAT tensors is not supported by the typed import"), std::string::npos)
      << tm.message();
}

TEST(OnnxTyped, TypedTensorFileKeepsUint64Words) {
  TensorProto t;
  t.set_data_type(TensorProto::UINT64);
  t.add_dims(2);
  t.add_uint64_data(UINT64_MAX);
  t.add_uint64_data((uint64_t{1} << 63) + 3);
  auto r = read_onnx_typed_tensor(t.SerializeAsString());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->dtype, DType::integer(64, false));
  EXPECT_EQ(typed::words(*r), words_of({UINT64_MAX, (uint64_t{1} << 63) + 3}));
}

TEST(OnnxTyped, FloatImportStillRejectsIntegerInputs) {
  auto m = read_model_onnx(binary_model("Add", TensorProto::INT8, 1).bytes());
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("element type INT8 is not supported"), std::string::npos) << m.message();
}

}  // namespace
}  // namespace denote
