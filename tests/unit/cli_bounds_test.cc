// End-to-end tests of `denote bounds` and `denote sample` on the seed's six-node model: the seed's
// printed IBP boxes, the JSON shape of CLI.md, nodes without a box, sampled containment, bad input.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;

std::string model_file(const Model& m, const std::string& name) {
  const auto p = temp_dir() / name;
  std::ofstream(p) << write_model_json(m);
  return p.string();
}

const char* kCenter = "--center '[0.3,-0.2,0.1,0.4]' --eps 0.05";

TEST(CliBounds, SixNodeBoxesInBinary32AreTheSeeds) {
  const std::string m = model_file(six_node_model(), "six.json");
  CliRun r = run_cli("bounds " + m + " " + kCenter + " --arith binary32 --all-nodes");
  ASSERT_EQ(r.code, 0) << r.err;
  // The seed document's lines (SPEC-IR.md: the six-node example).
  for (const char* line :
       {"node 1: [0.087000, -0.031500, -0.007500, 0.067500, -0.015000] .. [0.127000, -0.002500, 0.015500, 0.094500, "
        "0.009000]",
        "node 3: [0.025445, -0.016025, 0.011355] .. [0.029815, -0.012220, 0.018045]",
        "node 4: [0.020775] .. [0.035640]", "node 5: [0.020772] .. [0.035625]"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
}

TEST(CliBounds, BoxRepeatsOncePerInput) {
  GraphBuilder b;
  const int64_t x = b.input({2}), y = b.input({2});
  auto m = b.build({b.binary(Op::Add, x, y)});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::string path = model_file(*m, "two_inputs.json");
  // [0, 1] + [10, 11] = [10, 12]; [1, 2] + [10, 12] = [11, 14].
  CliRun r = run_cli("bounds " + path + " --box '[0,1]' '[1,2]' --box '[10,10]' '[11,12]' --all-nodes");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("node 2: [10.000000, 11.000000] .. [12.000000, 14.000000]"), std::string::npos) << r.out;
  EXPECT_EQ(run_cli("bounds " + path + " --box '[0,1]' '[1,2]'").code, 1);
}

TEST(CliBounds, JsonHasOneEntryPerNodeAndNullForNoBox) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t l = b.unary(Op::Log, x);
  const int64_t t = b.unary(Op::Tanh, x);
  auto m = b.build({l, t});
  ASSERT_TRUE(m.ok());
  const std::string path = model_file(*m, "log.json");
  CliRun r = run_cli("bounds " + path + " --box '[-1,0.5]' '[1,2]' --json --arith f32 --all-nodes");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["method"], "ibp");
  EXPECT_EQ(doc["arith"], "f32");
  EXPECT_EQ(doc["nodes"], "all");
  ASSERT_EQ(doc["boxes"].size(), 3u);
  EXPECT_TRUE(doc["boxes"][1]["box"].is_null());
  EXPECT_EQ(doc["boxes"][2]["id"], 2);
  EXPECT_LE(doc["boxes"][2]["lo"][0].get<double>(), std::tanh(-1.0));
  EXPECT_GE(doc["boxes"][2]["hi"][1].get<double>(), std::tanh(2.0));
  CliRun text = run_cli("bounds " + path + " --box '[-1,0.5]' '[1,2]'");
  EXPECT_NE(text.out.find("node 1: none"), std::string::npos) << text.out;  // node 1 is an output
  // Without --all-nodes only the output nodes (1 and 2) are listed (issue 13).
  CliRun outputs = run_cli("bounds " + path + " --box '[-1,0.5]' '[1,2]' --json");
  ASSERT_EQ(outputs.code, 0) << outputs.err;
  auto only = nlohmann::json::parse(outputs.out);
  EXPECT_EQ(only["nodes"], "outputs");
  ASSERT_EQ(only["boxes"].size(), 2u);
  EXPECT_EQ(only["boxes"][0]["id"], 1);
  EXPECT_EQ(only["boxes"][1]["id"], 2);
  EXPECT_EQ(text.out.find("node 0:"), std::string::npos) << text.out;
}

TEST(CliBounds, SampleReportsContainment) {
  const std::string m = model_file(six_node_model(), "six2.json");
  for (const char* arith : {"f64", "f32", "binary32", "bfloat16", "e4m3fn"}) {
    CliRun r = run_cli("sample " + m + " " + kCenter + " --samples 300 --seed 7 --arith " + arith);
    EXPECT_EQ(r.code, 0) << arith << r.err << r.out;
    EXPECT_NE(r.out.find("consistency: 300/300 samples"), std::string::npos) << r.out;
  }
  CliRun j = run_cli("sample " + m + " " + kCenter + " --samples 20 --json");
  ASSERT_EQ(j.code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["samples"], 20);
  EXPECT_EQ(doc["contained"], 20);
  EXPECT_TRUE(doc["counterexample"].is_null());
}

TEST(CliBounds, BadInputIsReported) {
  const std::string m = model_file(six_node_model(), "six3.json");
  EXPECT_EQ(run_cli("bounds " + m + " --center '[0.3,-0.2,0.1,0.4]' --eps -0.1").code, 2);  // a usage error
  EXPECT_EQ(run_cli("bounds " + m + " --box '[0,0,0,0]' '[1,-1,1,1]'").code, 1);
  EXPECT_EQ(run_cli("bounds " + m + " --box '[0,0,0]' '[1,1,1]'").code, 1);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --arith f16x").code, 2);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method beta-crown").code, 2);  // unknown method
  EXPECT_EQ(run_cli("bounds " + m).code, 2);  // neither --center nor --box
  EXPECT_EQ(run_cli("sample " + m + " " + kCenter + " --samples 0").code, 2);
}

}  // namespace
}  // namespace denote
