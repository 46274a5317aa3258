// The typed interpreter and the dtype/words extension of torchlean.ir.v1 (issue 6). Expected words
// are hand-computed (int8 bits, binary16 encodings).
#include <gtest/gtest.h>

#include "denote/io/json_typed.h"
#include "denote/typed/interp.h"

namespace denote {
namespace {

using typed::DType;
using typed::TypedTensor;

// A document; input_ids lists the input nodes (found by their kind).
std::string doc(const std::string& nodes, const std::string& outputs) {
  std::string inputs;
  for (size_t at = nodes.find("\"kind\": \"input\""); at != std::string::npos;
       at = nodes.find("\"kind\": \"input\"", at + 1)) {
    const size_t id = nodes.rfind("\"id\": ", at) + 6;
    inputs += (inputs.empty() ? "" : ", ") + nodes.substr(id, nodes.find(',', id) - id);
  }
  return R"({"format": "torchlean.ir.v1", "input_ids": [)" + inputs + R"(], "nodes": [)" + nodes +
         R"(], "output_ids": [)" + outputs + "]}";
}

TypedTensor tensor(const std::string& dtype, const Shape& shape, std::vector<uint64_t> ws) {
  std::vector<Word> words;
  for (uint64_t w : ws) words.push_back(Word::of(w));
  auto t = typed::load(*typed::parse_dtype(dtype), shape, words);
  EXPECT_TRUE(t.ok()) << t.message();
  return *t;
}

Result<typed::TypedRun> run(const std::string& text, std::vector<TypedTensor> inputs, Rounding r = Rounding::NearestEven) {
  DENOTE_ASSIGN_OR_RETURN(TypedModel tm, read_typed_model_json(text));
  typed::TypedOptions o;
  o.rounding = r;
  return typed::eval_typed(tm, inputs, o);
}

std::vector<Word> ws(std::vector<uint64_t> v) {
  std::vector<Word> out;
  for (uint64_t x : v) out.push_back(Word::of(x));
  return out;
}

const std::string kInt8Graph = doc(
    R"({"id": 0, "kind": "input", "parents": [], "shape": [2, 2], "dtype": "int8"},
       {"id": 1, "kind": "const", "parents": [], "shape": [2, 2], "value_shape": [2, 2], "dtype": "int8",
        "words": ["0x7f", 2, "0x80", "255"]},
       {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2, 2]},
       {"id": 3, "kind": "transpose", "parents": [2], "shape": [2, 2], "axis1": 0, "axis2": 1},
       {"id": 4, "kind": "neg", "parents": [3], "shape": [2, 2]},
       {"id": 5, "kind": "cast", "parents": [4], "shape": [2, 2], "dtype": "binary16", "rounding": "nearest-even"},
       {"id": 6, "kind": "reshape", "parents": [5], "shape": [4], "in_shape": [2, 2], "out_shape": [4]})",
    "6");

TEST(TypedInterp, Int8GraphWithCastToBinary16) {
  // x = [1, 2, 3, -1]; x + c = [128 -> -128, 4, -125, -2]; transpose = [-128, -125, 4, -2];
  // neg = [-128, 125, -4, 2]; binary16: -128 = 0xd800, 125 = 0x57d0, -4 = 0xc400, 2 = 0x4000.
  auto r = run(kInt8Graph, {tensor("int8", {2, 2}, {1, 2, 3, 0xff})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(typed::words(r->table[2]), ws({0x80, 4, 0x83, 0xfe}));
  EXPECT_EQ(typed::words(r->table[4]), ws({0x80, 0x7d, 0xfc, 2}));
  EXPECT_EQ(typed::dtype_name(r->table[6].dtype), "binary16");
  EXPECT_EQ(typed::words(r->table[6]), ws({0xd800, 0x57d0, 0xc400, 0x4000}));
  EXPECT_EQ(r->flags, 0u);
}

TEST(TypedInterp, InputDtypeAndShapeAreChecked) {
  auto r = run(kInt8Graph, {tensor("uint8", {2, 2}, {1, 2, 3, 4})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 0: input dtype mismatch: expected int8, got uint8"), std::string::npos) << r.message();
  r = run(kInt8Graph, {tensor("int8", {4}, {1, 2, 3, 4})});
  EXPECT_NE(r.message().find("node 0: shape mismatch"), std::string::npos) << r.message();
  EXPECT_FALSE(run(kInt8Graph, {}).ok());
}

TEST(TypedInterp, MixedDtypesWithoutCastNameTheNode) {
  const std::string text = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int8"},
         {"id": 1, "kind": "input", "parents": [], "shape": [2], "dtype": "int16"},
         {"id": 2, "kind": "mul_elem", "parents": [0, 1], "shape": [2]})",
      "2");
  auto r = run(text, {tensor("int8", {2}, {1, 2}), tensor("int16", {2}, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 2: parents have different dtypes (int8 and int16); insert a cast"),
            std::string::npos) << r.message();
}

TEST(TypedInterp, IntegerErrorsNameTheNode) {
  const std::string div = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int32"},
         {"id": 1, "kind": "input", "parents": [], "shape": [2], "dtype": "int32"},
         {"id": 2, "kind": "div_floor", "parents": [0, 1], "shape": [2]},
         {"id": 3, "kind": "exp", "parents": [2], "shape": [2]})",
      "3");
  auto r = run(div, {tensor("int32", {2}, {7, 7}), tensor("int32", {2}, {2, 0})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 2: element 1: div_floor: division by zero"), std::string::npos) << r.message();
  r = run(div, {tensor("int32", {2}, {7, 7}), tensor("int32", {2}, {2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 3: exp is not defined on int32"), std::string::npos) << r.message();
}

// Integer pow on a wide dtype is bounded (issue 13): a small file broadcasting one int(65536)
// exponent of 65536 bits would otherwise cost 65534 squarings of 65536 bits per element. The
// bound (TypedOptions::max_pow_work) is checked before any squaring and the error names the node.
TEST(TypedInterp, WidePowWorkIsBoundedAndNamesTheNode) {
  const std::string ones = "0x" + std::string(65536 / 4, 'f');
  const std::string text = doc(
      R"J({"id": 0, "kind": "input", "parents": [], "shape": [4], "dtype": "uint(65536)"},
         {"id": 1, "kind": "const", "parents": [], "shape": [1], "value_shape": [1], "dtype": "uint(65536)",
          "words": [")J" + ones + R"J("]},
         {"id": 2, "kind": "broadcast_to", "parents": [1], "shape": [4], "from_shape": [1], "to_shape": [4]},
         {"id": 3, "kind": "pow", "parents": [0, 2], "shape": [4]})J",
      "3");
  auto tm = read_typed_model_json(text);
  ASSERT_TRUE(tm.ok()) << tm.message();
  auto bases = [](std::vector<uint64_t> v) {
    return std::vector<TypedTensor>{tensor("uint(65536)", {4}, std::move(v))};
  };
  typed::TypedOptions o;
  auto r = typed::eval_typed(*tm, bases({3, 5, 7, 9}), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("IR eval: node 3: pow: the exponents up to element 1 need 8589672448 bit-squarings of "
                              "uint(65536) (exponent bits x width), above the limit of 4294967296 per pow node",
                              0),
            0u)
      << r.message().substr(0, 300);
  // Even bases (and 0, 1) with the same exponents are known without squarings: 0, 0, 0, 1.
  r = typed::eval_typed(*tm, bases({2, 6, 0, 1}), o);
  ASSERT_TRUE(r.ok()) << r.message().substr(0, 300);
  EXPECT_EQ(typed::words(r->table[3]), ws({0, 0, 0, 1}));
  o.max_pow_work = 0;  // the bound is the caller's: 0 allows only shortcut results
  EXPECT_TRUE(typed::eval_typed(*tm, bases({2, 6, 0, 1}), o).ok());
  EXPECT_NE(typed::eval_typed(*tm, bases({2, 3, 0, 1}), o).message().find("node 3: pow: the exponents up to element 1"),
            std::string::npos);
}

TEST(TypedInterp, ClampMinBoundMustBeAnIntegerOfTheDtype) {
  auto text = [](const std::string& bound) {
    return doc(R"({"id": 0, "kind": "input", "parents": [], "shape": [3], "dtype": "uint8"},
                  {"id": 1, "kind": "clamp_min", "parents": [0], "shape": [3], "bound": )" + bound + "}",
               "1");
  };
  auto r = run(text("3"), {tensor("uint8", {3}, {0, 5, 200})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(typed::words(r->table[1]), ws({3, 5, 200}));
  EXPECT_FALSE(run(text("2.5"), {tensor("uint8", {3}, {0, 5, 200})}).ok());
  EXPECT_FALSE(run(text("-1"), {tensor("uint8", {3}, {0, 5, 200})}).ok());
}

TEST(TypedInterp, StorageOpsMoveWideAndBoolWords) {
  const std::string text = doc(
      R"J({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "uint(130)"},
         {"id": 1, "kind": "const", "parents": [], "shape": [1], "value_shape": [1], "dtype": "uint(130)",
          "words": ["0x3ffffffffffffffffffffffffffffffff"]},
         {"id": 2, "kind": "concat", "parents": [1, 0], "shape": [3], "axis": 0},
         {"id": 3, "kind": "add", "parents": [2, 2], "shape": [3]},
         {"id": 4, "kind": "input", "parents": [], "shape": [2], "dtype": "bool"},
         {"id": 5, "kind": "broadcast_to", "parents": [4], "shape": [2, 2], "from_shape": [2], "to_shape": [2, 2]},
         {"id": 6, "kind": "max_elem", "parents": [5, 5], "shape": [2, 2]})J",
      "3, 6");
  std::vector<Word> wide = {Word{{5, 0, 2}}, Word::of(7)};
  auto x = typed::load(*typed::parse_dtype("uint(130)"), {2}, wide);
  ASSERT_TRUE(x.ok());
  auto r = run(text, {*x, tensor("bool", {2}, {1, 0})});
  ASSERT_TRUE(r.ok()) << r.message();
  // (2^130 - 1) * 2 mod 2^130 = 2^130 - 2; (2^129 + 5) * 2 mod 2^130 = 10; 7 * 2 = 14.
  const auto w = typed::words(r->table[3]);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(to_hex(w[0]), "0x3fffffffffffffffffffffffffffffffe");
  EXPECT_EQ(w[1], Word::of(10));
  EXPECT_EQ(w[2], Word::of(14));
  EXPECT_EQ(typed::words(r->table[6]), ws({1, 0, 1, 0}));
}

TEST(TypedInterp, BinaryFormatArithmeticReportsFlags) {
  const std::string text = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "binary16"},
         {"id": 1, "kind": "exp", "parents": [0], "shape": [2]},
         {"id": 2, "kind": "cast", "parents": [1], "shape": [2], "dtype": "int16", "rounding": "toward-zero"})",
      "2");
  // exp(0) = 1 exactly; exp(1) = 2.71828 -> binary16 0x4170 (2.71875), inexact; toward zero: 1, 2.
  auto r = run(text, {tensor("binary16", {2}, {0x0000, 0x3c00})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(typed::words(r->table[1]), ws({0x3c00, 0x4170}));
  EXPECT_EQ(typed::words(r->table[2]), ws({1, 2}));
  EXPECT_EQ(r->flags, uint32_t{kFpInexact});
  // exp(12) overflows binary16 (max 65504): inf, then the cast to int16 is an error naming node 2.
  r = run(text, {tensor("binary16", {2}, {0x0000, 0x4a00})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 2: element 1: cast binary16->int16: infinity"), std::string::npos) << r.message();
}

TEST(TypedInterp, BinaryNodesUseTheirPayloadAndKeepTheirIds) {
  const std::string text = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "binary16"},
         {"id": 1, "kind": "linear", "parents": [0], "shape": [1], "out_dim": 1, "in_dim": 2,
          "weight": [[1.0, 2.0]], "bias": [0.5]},
         {"id": 2, "kind": "sqrt", "parents": [1], "shape": [1]})",
      "2");
  // 1*1 + 2*1 + 0.5 = 3.5 = 0x4300 in binary16; sqrt(3.5) = 1.8708 -> 0x3f7c (1.87109375), inexact.
  auto r = run(text, {tensor("binary16", {2}, {0x3c00, 0x3c00})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(typed::words(r->table[1]), ws({0x4300}));
  EXPECT_EQ(typed::words(r->table[2]), ws({0x3f7c}));
  EXPECT_EQ(r->flags, uint32_t{kFpInexact});
  // e2m1fn has no NaN: sqrt(-1) is an error, reported for node 2 (not the one-node graph's id).
  const std::string fp4 = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [1], "dtype": "e2m1fn"},
         {"id": 1, "kind": "detach", "parents": [0], "shape": [1]},
         {"id": 2, "kind": "sqrt", "parents": [1], "shape": [1]})",
      "2");
  r = run(fp4, {tensor("e2m1fn", {1}, {0xa})});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message().rfind("IR eval: node 2: ", 0), 0u) << r.message();
  EXPECT_NE(r.message().find("Node(id=2"), std::string::npos) << r.message();
}

TEST(TypedInterp, ShapeRulesStillApply) {
  const std::string text = doc(
      R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int8"},
         {"id": 1, "kind": "input", "parents": [], "shape": [3], "dtype": "int8"},
         {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]})",
      "2");
  auto tm = parse_typed_model_json(text);
  ASSERT_TRUE(tm.ok()) << tm.message();
  auto r = typed::eval_typed(*tm, std::vector<TypedTensor>{tensor("int8", {2}, {1, 2}), tensor("int8", {3}, {1, 2, 3})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("node 2"), std::string::npos) << r.message();
}

TEST(TypedJson, BadWordsAndDtypesAreErrors) {
  auto bad = [](const std::string& dtype, const std::string& words) {
    return parse_typed_model_json(doc(R"({"id": 0, "kind": "const", "parents": [], "shape": [2], "value_shape": [2],
                                          "dtype": )" + dtype + R"(, "words": )" + words + "}",
                                      "0"));
  };
  EXPECT_TRUE(bad("\"int8\"", "[1, \"0x80\"]").ok());
  EXPECT_NE(bad("\"int8\"", "[1, \"0x180\"]").message().find("word 1: word 0x180 has bits above the 8-bit width"),
            std::string::npos);
  EXPECT_NE(bad("\"int8\"", "[1]").message().find("has 2 elements, got 1 words"), std::string::npos);
  EXPECT_NE(bad("\"int(0)\"", "[1, 2]").message().find("int width 0 is unsupported"), std::string::npos);
  EXPECT_NE(bad("\"int8\"", "[1, -2]").message().find("word 1: expected"), std::string::npos);
  EXPECT_NE(bad("\"int8\"", "[1, 2.5]").message().find("word 1"), std::string::npos);
  EXPECT_FALSE(bad("\"int8\"", "{}").ok());
  EXPECT_FALSE(bad("3", "[1, 2]").ok());
  EXPECT_TRUE(has_typed_nodes(kInt8Graph));
  EXPECT_FALSE(has_typed_nodes("{not json"));
}

}  // namespace
}  // namespace denote
