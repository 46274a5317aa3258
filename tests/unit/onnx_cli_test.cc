// `denote convert` between JSON and ONNX, and ONNX files accepted by the other commands
// (check, run) through the model loader's extension dispatch.
#include <sys/wait.h>

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

namespace denote {
namespace {

struct CliResult {
  int code = -1;
  std::string out, err;
};

std::filesystem::path dir() {
  auto d = std::filesystem::temp_directory_path() / ("denote_onnx_cli_" + std::to_string(::getpid()));
  std::filesystem::create_directories(d);
  return d;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

CliResult cli(const std::string& args) {
  const auto out = dir() / "stdout", err = dir() / "stderr";
  const std::string cmd = std::string(DENOTE_CLI_PATH) + " " + args + " >" + out.string() + " 2>" + err.string();
  CliResult r;
  const int status = std::system(cmd.c_str());
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

const std::string kAcas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";

std::vector<double> run_values(const std::string& model) {
  CliResult r = cli("run " + model + " --input '[0.2,-0.1,0.3,0.4,-0.3]' --json");
  EXPECT_EQ(r.code, 0) << r.err;
  if (r.code != 0) return {};
  return nlohmann::json::parse(r.out).at("outputs").at(0).at("values").get<std::vector<double>>();
}

TEST(OnnxCli, ConvertOnnxToJsonAndBackKeepsValues) {
  const std::string json = (dir() / "acas.json").string(), onnx = (dir() / "acas.onnx").string();
  CliResult a = cli("convert " + kAcas + " " + json);
  ASSERT_EQ(a.code, 0) << a.err;
  EXPECT_EQ(a.out, "wrote " + json + " (17 nodes)\n");
  CliResult b = cli("convert " + json + " " + onnx);
  ASSERT_EQ(b.code, 0) << b.err;
  // Golden value from tests/data/acasxu/golden.json (python3-onnx + numpy), network 1_1, input 1.
  const std::vector<double> want{-0.021542088193970094, -0.01824592282520721, -0.018059241315832957,
                                 -0.018286378585139706, -0.018112898612886643};
  for (const std::string& model : {kAcas, json, onnx}) {
    const std::vector<double> got = run_values(model);
    ASSERT_EQ(got.size(), want.size()) << model;
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-12) << model;
  }
  CliResult check = cli("check " + onnx);
  EXPECT_EQ(check.code, 0) << check.err;
}

TEST(OnnxCli, ConvertJsonModelToOnnx) {
  const std::string json = (dir() / "six.json").string(), onnx = (dir() / "six.onnx").string();
  std::ofstream(json) << write_model_json(six_node_model());
  ASSERT_EQ(cli("convert " + json + " " + onnx).code, 0);
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
  const std::string path = (dir() / "int8_add.onnx").string();
  std::ofstream(path, std::ios::binary) << b.bytes();
  // int8: 127 + 1 wraps to -128 (0x80).
  CliResult r = cli("run " + path + " --input-words '0=int8:[127,1]' --input-words '1=int8:[1,1]'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("words [0x80, 0x2] values [-128, 2]"), std::string::npos) << r.out;
  CliResult floats = cli("run " + path + " --input '[1,2]' --input '[1,1]'");
  EXPECT_EQ(floats.code, 1);
  EXPECT_NE(floats.err.find("--input-words"), std::string::npos) << floats.err;
}

TEST(OnnxCli, ConvertErrors) {
  CliResult bad_out = cli("convert " + kAcas + " " + (dir() / "x.txt").string());
  EXPECT_EQ(bad_out.code, 1);
  EXPECT_EQ(bad_out.err, "error: '" + (dir() / "x.txt").string() + "': unsupported output format (expected .json or .onnx)\n");
  const std::string junk = (dir() / "junk.onnx").string();
  std::ofstream(junk) << "not a model";
  CliResult bad_in = cli("convert " + junk + " " + (dir() / "y.json").string());
  EXPECT_EQ(bad_in.code, 1);
  EXPECT_EQ(bad_in.err, "error: " + junk + ": onnx: not a valid ONNX model (protobuf parse failed: truncated or not a "
                        "ModelProto)\n");
  CliResult check = cli("check " + junk);
  EXPECT_EQ(check.code, 1);
  EXPECT_EQ(cli("convert").code, 2);
}

// `check --json` quotes ONNX node names from the file: invalid UTF-8 in one is replaced, never a
// throw from the JSON writer.
TEST(OnnxCli, CheckJsonWithInvalidUtf8NodeName) {
  testing::OnnxBuilder b;
  b.input("x", {2});
  b.node("NoSuchOp", {"x"}, {"y"}, std::string("bad\xff\xfe name"));
  b.output("y");
  const auto path = dir() / "bad_utf8.onnx";
  std::ofstream(path, std::ios::binary) << b.bytes();
  CliResult r = cli("check --json " + path.string());
  EXPECT_EQ(r.code, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_FALSE(doc["ok"].get<bool>());
  ASSERT_EQ(doc["diagnostics"].size(), 1u);
  EXPECT_NE(doc["diagnostics"][0]["message"].get<std::string>().find("unsupported ops: NoSuchOp"), std::string::npos);
  EXPECT_NE(r.err.find("error: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace denote
