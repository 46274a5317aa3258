// check_model / diagnose_model: what evaluation would refuse for the model itself (payload records
// against the graph, non-finite parameters, norm eps, cast targets) and the typed JSON fields,
// each naming node and field; plus the JSON reader's hardening (deep nesting, "inf" strings) and
// the typed JSON writer.
#include <cmath>
#include <limits>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_typed.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "denote/typed/check.h"
#include "denote/typed/interp.h"

namespace denote {
namespace {

const double kInf = std::numeric_limits<double>::infinity();

void expect_refused(const Model& m, int64_t node, const std::string& field, const std::string& text) {
  const std::vector<Diagnostic> d = diagnose_model(m);
  ASSERT_EQ(d.size(), 1u) << (d.empty() ? std::string("none") : d[1].message);
  EXPECT_EQ(d[0].node, node);
  EXPECT_EQ(d[0].status.node(), node);
  EXPECT_EQ(d[0].status.field(), field) << d[0].message;
  EXPECT_EQ(d[0].message.rfind(fmt::format("IR graph: node {}: ", node), 0), 0u) << d[0].message;
  EXPECT_NE(d[0].message.find(text), std::string::npos) << d[0].message;
  const Status s = check_model(m);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.message(), d[0].message);
}

TEST(ModelCheck, TheSeedModelPasses) {
  EXPECT_TRUE(diagnose_model(six_node_model()).empty());
  EXPECT_TRUE(check_model(six_node_model()).ok());
}

TEST(ModelCheck, LinearOutDimMustMatchTheDeclaredShape) {
  // Node 3 is declared [3]; its weight has 2 rows (out_dim 2), which passed `check` before.
  Model m = six_node_model();
  m.payload.linear[3].out_dim = 2;
  m.payload.linear[3].weight.resize(10);
  m.payload.linear[3].bias.resize(2);
  expect_refused(m, 3, "out_dim", "linear: out_dim 2 differs from the last dim 3 of the declared outShape [3]");
}

TEST(ModelCheck, LinearInDimAndCounts) {
  Model m = six_node_model();
  m.payload.linear[1].in_dim = 3;
  expect_refused(m, 1, "in_dim", "linear: in_dim 3 differs from the last dim 4 of the input shape [4]");
  m = six_node_model();
  m.payload.linear[1].weight.pop_back();
  expect_refused(m, 1, "weight", "linear: weight has 19 values, expected 20");
  m = six_node_model();
  m.payload.linear[1].bias.push_back(0);
  expect_refused(m, 1, "bias", "linear: bias has 6 values, expected 5");
  m = six_node_model();
  m.payload.linear.erase(1);
  expect_refused(m, 1, "payload", "missing linear payload");
}

TEST(ModelCheck, InfiniteAndNanWeightsAreRefused) {
  Model m = six_node_model();
  m.payload.linear[1].weight[6] = kInf;
  expect_refused(m, 1, "weight", "linear: weight[6] is inf: parameters must be finite");
  m = six_node_model();
  m.payload.linear[3].bias[2] = -kInf;
  expect_refused(m, 3, "bias", "linear: bias[2] is -inf");
  m = six_node_model();
  m.payload.linear[3].weight[0] = std::nan("");
  expect_refused(m, 3, "weight", "linear: weight[0] is nan");
}

TEST(ModelCheck, ConstValuesMayBeInfiniteButMustCount) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t c = b.constant({2}, {-kInf, 1});
  auto m = b.build({b.binary(Op::Add, x, c)});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(diagnose_model(*m).empty());
  m->payload.consts[c].values.push_back(3);
  expect_refused(*m, c, "values", "const: values has 3 values, expected 2");
}

Model norm_model(bool layernorm) {
  GraphBuilder b;
  const int64_t x = b.input({2, 3});
  const int64_t y = layernorm ? b.add(Op::Layernorm, {x}, AxisAttrs{1}) : b.add(Op::BatchNormEval, {x}, BatchNormAttrs{1, 3});
  Model m = *b.build({y});
  if (layernorm) m.payload.layernorm[y] = {{3}, {1, 1, 1}, {0, 0, 0}, 1e-5};
  else m.payload.batch_norm[y] = {{1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {1, 1, 1}, 1e-5};
  return m;
}

TEST(ModelCheck, NormEpsMustBePositiveAndFinite) {
  Model bn = norm_model(false);
  ASSERT_TRUE(diagnose_model(bn).empty()) << diagnose_model(bn)[0].message;
  bn.payload.batch_norm[1].eps = -1e-5;
  expect_refused(bn, 1, "eps", "batch_norm_eval: eps -1e-05 must be positive and finite");
  bn = norm_model(false);
  bn.payload.batch_norm[1].var.pop_back();
  expect_refused(bn, 1, "var", "batch_norm_eval: var has 2 values, expected 3 (one per channel)");
  bn = norm_model(false);
  bn.payload.batch_norm[1].mean[1] = kInf;
  expect_refused(bn, 1, "mean", "batch_norm_eval: mean[1] is inf");

  Model ln = norm_model(true);
  ASSERT_TRUE(diagnose_model(ln).empty()) << diagnose_model(ln)[0].message;
  ln.payload.layernorm[1].eps = std::nan("");
  expect_refused(ln, 1, "eps", "layernorm: eps nan must be positive and finite");
  ln = norm_model(true);
  ln.payload.layernorm[1].gamma.pop_back();
  expect_refused(ln, 1, "gamma", "layernorm: gamma has 2 values, expected 3");
  ln = norm_model(true);
  ln.payload.layernorm[1].normalized_shape = {2, 3};
  expect_refused(ln, 1, "normalized_shape", "layernorm: normalized_shape [2, 3] differs");
}

TEST(ModelCheck, ConvRecordAgainstTheNode) {
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 3, 3});
  ConvConfig c;
  c.channel_axis = 1;
  c.in_channels = 1;
  c.out_channels = 2;
  c.window.spatial_rank = 2;
  c.window.kernel = {2, 2};
  c.window.stride = {1, 1};
  c.window.padding = {0, 0};
  const int64_t y = b.conv(x, c, std::vector<double>(8, 0.5), {0, 0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  ASSERT_TRUE(diagnose_model(*m).empty()) << diagnose_model(*m)[0].message;
  Model bad = *m;
  bad.payload.conv[y].input_spatial = {4, 4};
  expect_refused(bad, y, "input_spatial", "conv: payload input_spatial [4, 4]");
  bad = *m;
  bad.payload.conv[y].weight.pop_back();
  expect_refused(bad, y, "weight", "conv: weight has 7 values");
  bad = *m;
  bad.payload.conv[y].config.groups = 2;
  expect_refused(bad, y, "config", "conv: payload config does not match");
  bad = *m;
  bad.payload.conv[y].bias[1] = kInf;
  expect_refused(bad, y, "bias", "conv: bias[1] is inf");
}

TEST(ModelCheck, CastTargetsAreChecked) {
  for (const char* dtype : {"binary(100,100)", "f33", "binary(-1,3)"}) {
    GraphBuilder b;
    const int64_t x = b.input({2});
    const int64_t y = b.add(Op::Cast, {x}, CastAttrs{dtype, "nearest-even"});
    Model m = b.model();
    m.output_ids = {y};
    const std::vector<Diagnostic> d = diagnose_model(m);
    ASSERT_EQ(d.size(), 1u) << dtype;
    EXPECT_EQ(d[0].node, 1) << dtype;
    EXPECT_EQ(d[0].status.field(), "dtype") << d[0].message;
    EXPECT_NE(d[0].message.find("IR graph: node 1: cast"), std::string::npos) << d[0].message;
  }
  GraphBuilder b;
  const int64_t y = b.add(Op::Cast, {b.input({2})}, CastAttrs{"binary16", "sideways"});
  Model m = b.model();
  m.output_ids = {y};
  const std::vector<Diagnostic> d = diagnose_model(m);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_NE(d[0].message.find("IR graph: node 1: cast: unknown rounding mode 'sideways'"), std::string::npos)
      << d[0].message;
}

// A float model's cast to an integer dtype that does not exist (int(0), a width above 65536, a
// malformed int name) passed check while run refused it (issue 13); valid integer and bool
// targets stay legal (typed execution with --input-words runs them).
TEST(ModelCheck, IntegerCastTargetsOfFloatModelsAreChecked) {
  const std::pair<const char*, const char*> bad[] = {
      {"int(0)", "cast: int width 0 is unsupported (expected >= 1)"},
      {"uint(0)", "cast: int width 0 is unsupported"},
      {"int(1000000)", "cast: int width 1000000 is unsupported (at most 65536)"},
      {"int(65537)", "cast: int width 65537 is unsupported"},
      {"intx", "cast: malformed dtype 'intx'"},
      {"uint(8", "cast: malformed dtype 'uint(8'"},
      {"int(-3)", "cast: malformed dtype 'int(-3)'"},
  };
  for (const auto& [dtype, text] : bad) {
    GraphBuilder b;
    const int64_t y = b.add(Op::Cast, {b.input({2})}, CastAttrs{dtype, "nearest-even"});
    Model m = b.model();
    m.output_ids = {y};
    expect_refused(m, 1, "dtype", text);
    EXPECT_NE(check_model(m).message().find("IR graph: node 1: cast: "), std::string::npos) << dtype;
  }
  for (const char* dtype : {"int8", "uint64", "int(1)", "uint(65536)", "bool", "binary16", "f32"}) {
    GraphBuilder b;
    const int64_t y = b.add(Op::Cast, {b.input({2})}, CastAttrs{dtype, "toward-zero"});
    Model m = b.model();
    m.output_ids = {y};
    EXPECT_TRUE(diagnose_model(m).empty()) << dtype << ": " << check_model(m).message();
  }
}

TEST(ModelCheck, DiagnosticsAreSortedByNodeOneEach) {
  Model m = six_node_model();
  m.graph.nodes[2].out_shape = {4};        // a shape error on node 2 (relu of a [5])
  m.payload.linear[1].weight[0] = kInf;    // a payload error on node 1
  const std::vector<Diagnostic> d = diagnose_model(m);
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].node, 1);
  EXPECT_EQ(d[0].status.field(), "weight");
  EXPECT_EQ(d[1].node, 2);
  EXPECT_EQ(d[1].status.field(), "outShape");
  // Node 3 is checked against the declared [4] it would be given.
  EXPECT_EQ(d[2].node, 3);
  EXPECT_EQ(d[2].status.field(), "in_dim");
}

// ---- typed models

std::string typed_doc(const std::string& nodes, const std::string& outputs) {
  return R"({"format": "torchlean.ir.v1", "input_ids": [0], "output_ids": [)" + outputs + R"(], "nodes": [)" + nodes +
         "]}";
}

const std::string kTypedInput = R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int8"})";

TEST(TypedModelCheck, BadDtypesAndWordsNameNodeAndField) {
  struct Case {
    std::string node1, field, text;
  };
  const Case cases[] = {
      {R"J({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int(0)", "words": [1, 2]})J",
       "dtype", "int width 0 is unsupported"},
      {R"J({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int(1000000)", "words": [1, 2]})J",
       "dtype", "int width 1000000 is unsupported"},
      {R"({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8", "words": [1]})",
       "words", "has 2 elements, got 1 words"},
      {R"({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8", "words": ["0xzz", 1]})",
       "words", "word 0: malformed word"},
      {R"({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8", "words": "12"})",
       "words", "expected an array of words"},
      {R"J({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "binary(100,100)", "words": [1, 2]})J",
       "dtype", "exponent bits E=100 out of range"},
      {R"J({"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "binary(30,60)", "words": [1, 2]})J",
       "dtype", "storage bits exceeds 64"},
  };
  for (const Case& c : cases) {
    auto tm = parse_typed_model_json(typed_doc(kTypedInput + ", " + c.node1, "1"));
    ASSERT_FALSE(tm.ok()) << c.node1;
    EXPECT_EQ(tm.status().node(), 1) << tm.message();
    EXPECT_EQ(tm.status().field(), c.field) << tm.message();
    EXPECT_NE(tm.message().find("nodes[1] (id 1, kind const)"), std::string::npos) << tm.message();
    EXPECT_NE(tm.message().find(c.text), std::string::npos) << tm.message();
  }
}

TEST(TypedModelCheck, CastDtypesAreRefusedByTheModelCheck) {
  for (const char* dtype : {"binary(100,100)", "f33", "binary(-1,3)", "int(0)", "binary(30,60)"}) {
    auto tm = parse_typed_model_json(typed_doc(
        kTypedInput + R"(, {"id": 1, "kind": "cast", "parents": [0], "shape": [2], "dtype": ")" + dtype + R"("})", "1"));
    ASSERT_TRUE(tm.ok()) << tm.message();
    const std::vector<Diagnostic> d = diagnose_typed_model(*tm);
    ASSERT_EQ(d.size(), 1u) << dtype;
    EXPECT_EQ(d[0].node, 1);
    EXPECT_EQ(d[0].status.field(), "dtype");
  }
}

TEST(TypedModelCheck, TypedConstsNeedNoValues) {
  auto tm = parse_typed_model_json(typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8",
        "words": ["0x7f", 3]}, {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]})",
      "2"));
  ASSERT_TRUE(tm.ok()) << tm.message();
  EXPECT_TRUE(diagnose_typed_model(*tm).empty());
  EXPECT_FALSE(diagnose_model(tm->model).empty());  // as a float model, the const has no values
}

TEST(TypedModelCheck, DeeplyNestedWordIsAnErrorNotACrash) {
  // 10^5 nested arrays as one word: the error quotes a bounded description, never the value.
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string text = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [1], "value_shape": [1], "dtype": "int8", "words": [)" +
          deep + "]}",
      "1");
  auto tm = parse_typed_model_json(text);
  ASSERT_FALSE(tm.ok());
  EXPECT_NE(tm.message().find("nested deeper than 512 levels"), std::string::npos) << tm.message().substr(0, 200);
  // Below the depth limit the word error quotes the array by its size.
  const std::string shallow = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [1], "value_shape": [1], "dtype": "int8", "words": [[[1, 2]]]})",
      "1");
  tm = parse_typed_model_json(shallow);
  ASSERT_FALSE(tm.ok());
  EXPECT_NE(tm.message().find("word 0: expected a hex string, a decimal string or a nonnegative integer, got an array of 1 "
                              "elements"),
            std::string::npos)
      << tm.message();
  // parse_word_list (--input-words) has no depth limit of its own: still no crash.
  auto words = parse_word_list("[" + deep + "]");
  ASSERT_FALSE(words.ok());
  EXPECT_NE(words.message().find("got an array of 1 elements"), std::string::npos) << words.message().substr(0, 200);
}

TEST(TypedModelCheck, WriterRoundTripsDtypesAndWords) {
  const std::string text = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8",
        "words": ["0x7f", 255]}, {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]})",
      "2");
  auto tm = parse_typed_model_json(text);
  ASSERT_TRUE(tm.ok()) << tm.message();
  const std::string written = write_typed_model_json(*tm);
  EXPECT_NE(written.find(R"("dtype":"int8")"), std::string::npos) << written;
  EXPECT_NE(written.find(R"("words":["0x7f","0xff"])"), std::string::npos) << written;
  auto back = parse_typed_model_json(written);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(back->model, tm->model);
  EXPECT_EQ(back->input_dtypes, tm->input_dtypes);
  ASSERT_EQ(back->consts.size(), 1u);
  EXPECT_EQ(typed::words(back->consts.at(1)), typed::words(tm->consts.at(1)));
  EXPECT_EQ(back->consts.at(1).dtype, tm->consts.at(1).dtype);
}

// ---- JSON reader hardening

TEST(JsonHardening, DeepNestingIsRefusedWithAClearError) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto m = parse_model_json(R"({"format": "torchlean.ir.v1", "nodes": )" + deep + "}");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.message(), "torchlean.ir.v1: JSON nested deeper than 512 levels");
}

TEST(JsonHardening, NonFiniteStringsWrittenByTheWriterReadBack) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t c = b.constant({3}, {kInf, -kInf, std::nan("")});
  Model m = *b.build({b.binary(Op::Add, x, c)});
  const std::string text = write_model_json(m);
  EXPECT_NE(text.find(R"(["inf","-inf","nan"])"), std::string::npos) << text;
  auto back = parse_model_json(text);
  ASSERT_TRUE(back.ok()) << back.message();
  const auto& v = back->payload.consts.at(c).values;
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], -kInf);
  EXPECT_TRUE(std::isnan(v[2]));
  // Also in nested lists and in the eps field.
  auto nested = parse_model_json(
      R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1], "nodes": [
      {"id": 0, "kind": "input", "parents": [], "shape": [1, 2]},
      {"id": 1, "kind": "const", "parents": [], "shape": [1, 2], "value_shape": [1, 2], "values": [["-inf", "nan"]]}]})");
  ASSERT_TRUE(nested.ok()) << nested.message();
  EXPECT_EQ(nested->payload.consts.at(1).values[0], -kInf);
}

TEST(JsonHardening, InvalidUtf8IsAParseError) {
  auto m = parse_model_json("{\"format\": \"torchlean.ir.v1\", \"nodes\": [{\"id\": 0, \"kind\": \"re\xff\xfelu\"}]}");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.message().find("ill-formed UTF-8 byte"), std::string::npos) << m.message();
}

}  // namespace
}  // namespace denote
