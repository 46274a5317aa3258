// End-to-end tests of `denote plan` and `denote run --provider` on the seed's six-node graph
// (written by `denote demo --save`). Expected plan lines are SPEC-PLANNING.md's.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/plan/registry.h"
#include "denote/providers/providers.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;

// Writes six_node.json and x0.npy once; returns the directory.
std::string example() {
  const auto dir = temp_dir() / "example";
  std::filesystem::create_directories(dir);
  if (!std::filesystem::exists(dir / "six_node.json")) {
    CliRun r = run_cli("demo --save " + dir.string());
    EXPECT_EQ(r.code, 0) << r.err;
  }
  return dir.string();
}

TEST(PlanCli, ReferencePlanIsTheSeeds) {
  const std::string dir = example();
  CliRun r = run_cli("plan " + dir + "/six_node.json --provider only:reference");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "1: linear -> reference.linear provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "2: relu -> reference.relu provider=reference device=cpu trust=checked reduction=n/a\n"
            "3: linear -> reference.linear provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "4: reduce_sum -> reference.reduce_sum provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "5: tanh -> reference.tanh provider=reference device=cpu trust=checked reduction=n/a\n");
}

TEST(PlanCli, JsonAndPreferOpenblas) {
  if (!openblas_built()) GTEST_SKIP() << "built without OpenBLAS";
  const std::string dir = example();
  CliRun r = run_cli("plan " + dir + "/six_node.json --provider prefer:openblas --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["device"], "cpu");
  ASSERT_EQ(doc["nodes"].size(), 5u);
  const std::vector<std::string> expected = {"openblas.linear", "reference.relu", "openblas.linear",
                                             "reference.reduce_sum", "reference.tanh"};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(doc["nodes"][i]["id"], static_cast<int>(i) + 1);
    EXPECT_EQ(doc["nodes"][i]["capsule"], expected[i]);
  }
  EXPECT_EQ(doc["nodes"][0]["reduction"], "implementation-defined");
  EXPECT_EQ(doc["nodes"][3]["op"], "reduce_sum");
}

TEST(PlanCli, ErrorsAndExitCodes) {
  const std::string dir = example();
  CliRun cuda = run_cli("plan " + dir + "/six_node.json --provider only:cuda");
  EXPECT_EQ(cuda.code, 1);
  EXPECT_EQ(cuda.err, "error: no admissible kernel capsule for op linear on device cpu\n");
  EXPECT_EQ(cuda.out, "");
  CliRun device = run_cli("plan " + dir + "/six_node.json --device cuda");
  EXPECT_EQ(device.code, 1);
  EXPECT_EQ(device.err, "error: no admissible kernel capsule for op linear on device cuda\n");
  EXPECT_EQ(run_cli("plan " + dir + "/six_node.json --provider openblas").code, 2);
  // prefer: a provider that is not here at all is an error, not a silent run on the others (issue 51).
  for (const char* cmd : {"plan ", "run "}) {
    const std::string input = std::string(cmd) == "run " ? " --input '[0.3,-0.2,0.1,0.4]'" : "";
    CliRun absent = run_cli(cmd + dir + "/six_node.json" + input + " --provider prefer:cuda");
    EXPECT_NE(absent.code, 0) << cmd;
    EXPECT_NE(absent.err.find("prefer:cuda: cuda is not available in this build on this machine (available: "),
              std::string::npos)
        << absent.err;
  }
  EXPECT_EQ(run_cli("plan " + dir + "/six_node.json --assurance none").code, 2);
  EXPECT_EQ(run_cli("plan " + dir + "/missing.json").code, 1);
  CliRun external = run_cli("plan " + dir + "/six_node.json --assurance external");
  EXPECT_EQ(external.code, 0);
}

TEST(PlanCli, RunThroughAPlan) {
  const std::string dir = example();
  const std::string base = "run " + dir + "/six_node.json --input @" + dir + "/x0.npy --json";
  CliRun plain = run_cli(base + " --trace --provider evaluator");
  CliRun planned = run_cli(base + " --trace --provider only:reference");
  ASSERT_EQ(plain.code, 0) << plain.err;
  ASSERT_EQ(planned.code, 0) << planned.err;
  const auto pj = nlohmann::json::parse(plain.out), qj = nlohmann::json::parse(planned.out);
  EXPECT_EQ(pj["engine"], "evaluator");
  EXPECT_EQ(qj["engine"], "plan only:reference");
  EXPECT_EQ(qj["outputs"], pj["outputs"]);  // the reference plan is denote_all, digit for digit
  EXPECT_EQ(qj["trace"], pj["trace"]);
  // Without --provider: the `auto` plan (the fastest providers), within their reductions' rounding.
  CliRun fast = run_cli(base);
  ASSERT_EQ(fast.code, 0) << fast.err;
  const auto fj = nlohmann::json::parse(fast.out);
  EXPECT_EQ(fj["engine"], "plan auto");
  EXPECT_NEAR(fj["outputs"][0]["values"][0].get<double>(), pj["outputs"][0]["values"][0].get<double>(), 1e-14);
  CliRun blas = run_cli(base + " --provider prefer:openblas --arith f32");
  ASSERT_EQ(blas.code, 0) << blas.err;
  const double y = nlohmann::json::parse(blas.out)["outputs"][0]["values"][0];
  EXPECT_NEAR(y, 0.0277129, 1e-6);  // the seed's output, tanh(0.02772)
  CliRun cuda = run_cli(base + " --provider only:cuda");
  EXPECT_EQ(cuda.code, 1);
  EXPECT_EQ(cuda.err, "error: no admissible kernel capsule for op linear on device cpu\n");
  CliRun narrow = run_cli(base + " --provider auto --arith binary16");
  EXPECT_EQ(narrow.code, 2);  // a usage error, before the model is read (as bench)
  EXPECT_EQ(narrow.err, "error: --provider runs a kernel plan in f64 or f32 only, not --arith binary16\n");
}

}  // namespace
}  // namespace denote
