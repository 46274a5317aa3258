// `denote check` finds what `run` refuses for the model itself (payloads, typed dtypes and words,
// cast targets), prints `error:` before each diagnostic, never crashes on hostile JSON (deep
// nesting, invalid UTF-8 with --json); `denote convert` keeps a typed model's dtypes and words.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/program/examples.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::slurp;
using testing::temp_dir;
using testing::write_file;

std::string typed_doc(const std::string& nodes, const std::string& outputs) {
  return R"({"format": "torchlean.ir.v1", "input_ids": [0], "output_ids": [)" + outputs + R"(], "nodes": [)" + nodes +
         "]}";
}

const std::string kTypedInput = R"({"id": 0, "kind": "input", "parents": [], "shape": [2], "dtype": "int8"})";

TEST(CliCheck, PayloadMismatchIsFoundAndPrintedAsAnError) {
  Model m = six_node_model();
  m.payload.linear[3].out_dim = 2;  // node 3 is declared [3]
  m.payload.linear[3].weight.resize(10);
  m.payload.linear[3].bias.resize(2);
  const std::string path = write_file("out_dim.json", write_model_json(m));
  CliRun r = run_cli("check " + path);
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err.rfind("error: IR graph: node 3: linear: out_dim 2 differs from the last dim 3", 0), 0u) << r.err;
  // run refuses it as well.
  EXPECT_EQ(run_cli("run " + path + " --input '[0.3,-0.2,0.1,0.4]'").code, 1);
  CliRun json = run_cli("check --json " + path);
  EXPECT_EQ(json.code, 1);
  auto doc = nlohmann::json::parse(json.out);
  ASSERT_EQ(doc["diagnostics"].size(), 1u);
  EXPECT_EQ(doc["diagnostics"][0]["node"], 3);
  EXPECT_EQ(doc["diagnostics"][0]["field"], "out_dim");
}

TEST(CliCheck, InfiniteWeightAndNegativeEps) {
  Model m = six_node_model();
  m.payload.linear[1].weight[0] = std::numeric_limits<double>::infinity();
  CliRun r = run_cli("check " + write_file("inf.json", write_model_json(m)));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error: IR graph: node 1: linear: weight[0] is inf: parameters must be finite"), std::string::npos)
      << r.err;
}

TEST(CliCheck, EveryLineOfTheGraphDiagnosticsHasTheErrorPrefix) {
  Model m = six_node_model();
  m.graph.nodes[2].out_shape = {4};
  m.graph.nodes[5].parents = {7};
  CliRun r = run_cli("check " + write_file("two.json", write_model_json(m)));
  EXPECT_EQ(r.code, 1);
  std::stringstream ss(r.err);
  int lines = 0;
  for (std::string line; std::getline(ss, line); ++lines) EXPECT_EQ(line.rfind("error: IR graph: node ", 0), 0u) << line;
  EXPECT_EQ(lines, 3);  // node 2's shape, node 3's in_dim against the declared [4], node 5's parent
}

TEST(CliCheck, TypedDtypesWordsAndCastsAreChecked) {
  const std::string bad_dtype = typed_doc(
      kTypedInput + R"J(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int(0)",
        "words": [1, 2]})J",
      "1");
  CliRun r = run_cli("check " + write_file("int0.json", bad_dtype));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("error: "), std::string::npos);
  EXPECT_NE(r.err.find("nodes[1] (id 1, kind const): field 'dtype': int width 0 is unsupported"), std::string::npos)
      << r.err;
  const std::string short_words = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8",
        "words": [1]})",
      "1");
  r = run_cli("check --json " + write_file("short.json", short_words));
  EXPECT_EQ(r.code, 1);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["diagnostics"][0]["node"], 1);
  EXPECT_EQ(doc["diagnostics"][0]["field"], "words");
  for (const char* dtype : {"binary(100,100)", "f33", "binary(-1,3)"}) {
    const std::string cast = typed_doc(
        kTypedInput + R"(, {"id": 1, "kind": "cast", "parents": [0], "shape": [2], "dtype": ")" + dtype + R"("})", "1");
    r = run_cli("check " + write_file("cast.json", cast));
    EXPECT_EQ(r.code, 1) << dtype;
    EXPECT_NE(r.err.find("error: IR graph: node 1: cast"), std::string::npos) << r.err;
  }
  const std::string good = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8",
        "words": [1, "0xff"]}, {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]})",
      "2");
  r = run_cli("check " + write_file("good_typed.json", good));
  EXPECT_EQ(r.code, 0) << r.err;
}

// A float model (no dtypes) whose cast targets an integer dtype typed execution does not have:
// check refuses it as run does, naming node and field.
TEST(CliCheck, FloatModelCastToAMissingIntegerDtype) {
  for (const char* dtype : {"int(0)", "int(1000000)", "intx"}) {
    const std::string doc =
        R"({"format": "torchlean.ir.v1", "input_ids": [0], "output_ids": [1], "nodes": [{"id": 0, "kind": "input",
        "parents": [], "shape": [2]}, {"id": 1, "kind": "cast", "parents": [0], "shape": [2], "dtype": ")" +
        std::string(dtype) + R"("}]})";
    const std::string path = write_file("float_cast.json", doc);
    CliRun r = run_cli("check " + path);
    EXPECT_EQ(r.code, 1) << dtype;
    EXPECT_EQ(r.err.rfind("error: IR graph: node 1: cast: ", 0), 0u) << r.err;
    r = run_cli("check --json " + path);
    EXPECT_EQ(r.code, 1) << dtype;
    auto json = nlohmann::json::parse(r.out);
    EXPECT_EQ(json["diagnostics"][0]["node"], 1);
    EXPECT_EQ(json["diagnostics"][0]["field"], "dtype");
    EXPECT_EQ(run_cli("run " + path + " --input '[1, 2]'").code, 1) << dtype;  // run refuses it too
  }
}

TEST(CliCheck, DeeplyNestedWordsAreAnErrorNotACrash) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string text = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [1], "value_shape": [1], "dtype": "int8", "words": [)" +
          deep + "]}",
      "1");
  const std::string path = write_file("deep.json", text);
  for (const char* cmd : {"check ", "check --json ", "run ", "convert "}) {
    CliRun r = run_cli(cmd + path + (std::string(cmd) == "convert " ? " " + (temp_dir() / "deep_out.json").string() : ""));
    EXPECT_EQ(r.code, 1) << cmd << r.err.substr(0, 300);
    EXPECT_NE(r.err.find("nested deeper than 512 levels"), std::string::npos) << cmd << r.err.substr(0, 300);
  }
}

TEST(CliCheck, JsonOutputSurvivesInvalidUtf8) {
  // The parser quotes the bad bytes in its message; the JSON writer replaces them (U+FFFD).
  const std::string text = "{\"format\": \"torchlean.ir.v1\", \"input_id\": 0, \"output_ids\": [0], \"nodes\": "
                           "[{\"id\": 0, \"kind\": \"re\xff\xfelu\", \"parents\": [], \"shape\": [1]}]}";
  CliRun r = run_cli("check --json " + write_file("utf8.json", text));
  EXPECT_EQ(r.code, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  ASSERT_EQ(doc["diagnostics"].size(), 1u);
  const std::string message = doc["diagnostics"][0]["message"].get<std::string>();
  EXPECT_NE(message.find("ill-formed UTF-8 byte"), std::string::npos) << message;
  EXPECT_NE(message.find("\xEF\xBF\xBD"), std::string::npos) << message;
  EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
}

TEST(CliCheck, ConvertKeepsTypedFields) {
  const std::string text = typed_doc(
      kTypedInput + R"(, {"id": 1, "kind": "const", "parents": [], "shape": [2], "value_shape": [2], "dtype": "int8",
        "words": [1, "0xff"]}, {"id": 2, "kind": "add", "parents": [0, 1], "shape": [2]})",
      "2");
  const std::string in = write_file("typed_in.json", text);
  const std::string out = (temp_dir() / "typed_out.json").string();
  CliRun r = run_cli("convert " + in + " " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string written = slurp(out);
  EXPECT_NE(written.find(R"("dtype":"int8")"), std::string::npos) << written;
  EXPECT_NE(written.find(R"("words":["0x1","0xff"])"), std::string::npos) << written;
  // The converted model runs exactly as the original.
  const std::string args = " --input-words '0=int8:[1,2]'";
  CliRun a = run_cli("run " + in + args), b = run_cli("run " + out + args);
  EXPECT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, b.out);
  CliRun onnx = run_cli("convert " + in + " " + (temp_dir() / "typed.onnx").string());
  EXPECT_EQ(onnx.code, 1);
  EXPECT_NE(onnx.err.find("error: "), std::string::npos);
  EXPECT_NE(onnx.err.find("a typed model (dtype / words fields) cannot be converted to ONNX"), std::string::npos)
      << onnx.err;
}

}  // namespace
}  // namespace denote
