// `denote convert` between JSON and ONNX, and ONNX files accepted by the other commands
// (check, run) through the model loader's extension dispatch.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/io/onnx.h"
#include "denote/program/examples.h"

#include "onnx_test_util.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;

const std::string kAcas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";

std::vector<double> run_values(const std::string& model) {
  CliRun r = run_cli("run " + model + " --input '[0.2,-0.1,0.3,0.4,-0.3]' --json");
  EXPECT_EQ(r.code, 0) << r.err;
  if (r.code != 0) return {};
  return nlohmann::json::parse(r.out).at("outputs").at(0).at("values").get<std::vector<double>>();
}

TEST(OnnxCli, ConvertOnnxToJsonAndBackKeepsValues) {
  const std::string json = (temp_dir() / "acas.json").string(), onnx = (temp_dir() / "acas.onnx").string();
  CliRun a = run_cli("convert " + kAcas + " " + json);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, "wrote " + json + " (17 nodes)\n");
  CliRun b = run_cli("convert " + json + " " + onnx);
  ASSERT_EQ(b.code, 0) << b.err;
  // Golden value from tests/data/acasxu/golden.json (python3-onnx + numpy), network 1_1, input 1.
  const std::vector<double> want{-0.021542088193970094, -0.01824592282520721, -0.018059241315832957,
                                 -0.018286378585139706, -0.018112898612886643};
  for (const std::string& model : {kAcas, json, onnx}) {
    const std::vector<double> got = run_values(model);
    ASSERT_EQ(got.size(), want.size()) << model;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << model;
  }
  CliRun check = run_cli("check " + onnx);
  EXPECT_EQ(check.code, 0) << check.err;
}

TEST(OnnxCli, ConvertJsonModelToOnnx) {
  const std::string json = (temp_dir() / "six.json").string(), onnx = (temp_dir() / "six.onnx").string();
  std::ofstream(json) << write_model_json(six_node_model());
  ASSERT_EQ(run_cli("convert " + json + " " + onnx).code, 0);
  auto m = load_model_onnx_file(onnx);
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->payload.linear.size(), 2u);
}

TEST(OnnxCli, IntegerModelsRunThroughTheTypedImport) {
  testing::OnnxBuilder b;
  b.input("a", {2}, onnx::TensorProto::INT8);
  b.input("b", {2}, onnx::TensorProto::INT8);
  b.node("Add", {"a", "b"}, {"y"}, "add");
  b.output("y");
  const std::string path = (temp_dir() / "int8_add.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  // int8: 127 + 1 wraps to -128 (0x80).
  CliRun r = run_cli("run " + path + " --input-words '0=int8:[127,1]' --input-words '1=int8:[1,1]'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("words [0x80, 0x2] values [-128, 2]"), std::string::npos) << r.out;
  CliRun floats = run_cli("run " + path + " --input '[1,2]' --input '[1,1]'");
  EXPECT_EQ(floats.code, 1);
  EXPECT_NE(floats.err.find("--input-words"), std::string::npos) << floats.err;
}

TEST(OnnxCli, ConvertErrors) {
  CliRun bad_out = run_cli("convert " + kAcas + " " + (temp_dir() / "x.txt").string());
  EXPECT_EQ(bad_out.code, 1);
  EXPECT_EQ(bad_out.err,
            "error: '" + (temp_dir() / "x.txt").string() + "': unsupported output format (expected .json or .onnx)\n");
  const std::string junk = (temp_dir() / "junk.onnx").string();
  std::ofstream(junk) << "not a model";
  CliRun bad_in = run_cli("convert " + junk + " " + (temp_dir() / "y.json").string());
  EXPECT_EQ(bad_in.code, 1);
  EXPECT_EQ(bad_in.err, "error: " + junk + ": onnx: not a valid ONNX model (protobuf parse failed: truncated or not a "
                        "ModelProto)\n");
  CliRun check = run_cli("check " + junk);
  EXPECT_EQ(check.code, 1);
  EXPECT_EQ(run_cli("convert").code, 2);
}

// `check --json` quotes ONNX node names from the file: invalid UTF-8 in one is replaced, never a
// throw from the JSON writer.
TEST(OnnxCli, CheckJsonWithInvalidUtf8NodeName) {
  testing::OnnxBuilder b;
  b.input("x", {2});
  b.node("NoSuchOp", {"x"}, {"y"}, std::string("bad\xff\xfe name"));
  b.output("y");
  const auto path = temp_dir() / "bad_utf8.onnx";
  std::ofstream(path, std::ios::binary) << b.bytes();
  CliRun r = run_cli("check --json " + path.string());
  EXPECT_EQ(r.code, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_FALSE(doc["ok"].get<bool>());
  ASSERT_EQ(doc["diagnostics"].size(), 1u);
  EXPECT_NE(doc["diagnostics"][0]["message"].get<std::string>().find("unsupported ops: NoSuchOp"), std::string::npos);
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
}

// A symbolic batch dim reads as 1 with a note on stderr; --onnx-dim fixes it on every command; a
// symbolic dim elsewhere is an error naming the input; a malformed spec is a usage error.
TEST(OnnxCli, SymbolicDimsReadAsOneOrFixedByOnnxDim) {
  testing::OnnxBuilder b;
  b.input("x", {1, 3});
  auto* shape = b.graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  shape->mutable_dim(0)->set_dim_param("unk__17");
  b.node("Relu", {"x"}, {"y"});
  b.output("y");
  const std::string path = (temp_dir() / "symbolic_batch.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  CliRun r = run_cli("run " + path + " --input '[1,-2,3]'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("note: onnx: graph input 'x': dim 0 is symbolic ('unk__17'); read as 1"), std::string::npos)
      << r.err;
  CliRun f = run_cli("run " + path + " --onnx-dim unk__17=2 --input '[1,-2,3,4,5,-6]'");
  ASSERT_EQ(f.code, 0) << f.err;
  EXPECT_NE(f.out.find("[2, 3] = [1, 0, 3, 4, 5, 0]"), std::string::npos) << f.out;
  EXPECT_EQ(f.err, "");
  shape->mutable_dim(1)->set_dim_param("W");
  std::ofstream(path, std::ios::binary | std::ios::trunc) << b.bytes();
  CliRun e = run_cli("check " + path);
  EXPECT_EQ(e.code, 1);
  EXPECT_NE(e.err.find("dim 1 is symbolic ('W')"), std::string::npos) << e.err;
  EXPECT_EQ(run_cli("check " + path + " --onnx-dim W=3").code, 0);
  EXPECT_EQ(run_cli("check " + path + " --onnx-dim W").code, 2);
  // A name no graph input has is an error listing the model's symbolic dims (was silently ignored).
  CliRun typo = run_cli("check " + path + " --onnx-dim w=3");
  EXPECT_EQ(typo.code, 1);
  EXPECT_NE(typo.err.find("--onnx-dim w=3: no graph input has a symbolic dim 'w' (the model's: 'W', 'unk__17')"),
            std::string::npos)
      << typo.err;
}

}  // namespace
}  // namespace denote
