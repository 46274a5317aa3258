// End-to-end tests of `denote verify`: the VNN-COMP result text (sat with the witness one pair per line,
// values that read back exactly), --json, --out, --instances with 1 and 2 jobs (same answers), errors.
#include <cstdlib>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::slurp;
using testing::temp_dir;

const std::string kTest = std::string(DENOTE_SOURCE_DIR) + "/tests/data/vnncomp2021_test/";

TEST(CliVerify, SatWitnessInTheVnncompFormat) {
  const std::string out = (temp_dir() / "verify_sat.txt").string();
  CliRun r = run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --out " + out);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(slurp(out), r.out);
  std::istringstream in(r.out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "sat");
  int xs = 0, ys = 0;
  while (std::getline(in, line)) {
    if (line == ")") break;
    const bool x = line.find("(X_") != std::string::npos;
    EXPECT_TRUE(x || line.rfind(" (Y_", 0) == 0) << line;
    EXPECT_EQ(line.substr(0, 1), xs == 0 && x ? "(" : " ") << line;
    // The value reads back as a double.
    const std::string v = line.substr(line.rfind(' ') + 1, line.size() - line.rfind(' ') - 2);
    char* end = nullptr;
    std::strtod(v.c_str(), &end);
    EXPECT_EQ(*end, '\0') << v;
    (x ? xs : ys) += 1;
  }
  EXPECT_EQ(xs, 5);
  EXPECT_EQ(ys, 5);
}

TEST(CliVerify, JsonAndUnsat) {
  CliRun r = run_cli("verify " + kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["result"], "unsat");
  EXPECT_TRUE(doc["witness"].is_null());
  EXPECT_GE(doc["stats"]["crown_calls"].get<int>(), 1);
  // The stage split: branch and bound's time is bounding plus probing (and a little bookkeeping).
  const auto& st = doc["stats"];
  EXPECT_LE(st["bab_bounds_s"].get<double>() + st["bab_probe_s"].get<double>(), st["bab_s"].get<double>() + 1e-6);
  CliRun two = run_cli("verify " + kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib --json --threads 2");
  ASSERT_EQ(two.code, 0) << two.err;
  const auto d2 = nlohmann::json::parse(two.out);
  EXPECT_EQ(d2["stats"]["threads"], 2);
  EXPECT_EQ(d2["result"], "unsat");
  EXPECT_EQ(d2["stats"]["domains"], st["domains"]);
}

// The search's switches: combined atoms off, alpha-CROWN on open boxes from the first one, or never;
// every setting gives the same answer, the JSON counts what each did, bad values are usage errors.
TEST(CliVerify, SearchSwitches) {
  const std::string inst = kTest + "test_unsat.onnx " + kTest + "test_prop.vnnlib --json";
  CliRun dflt = run_cli("verify " + inst);
  CliRun early = run_cli("verify " + inst + " --bab-alpha-after 0 --bab-alpha-iters 3");
  CliRun never = run_cli("verify " + inst + " --bab-alpha-iters 0 --no-combine --bab-alpha-no-intermediate");
  for (const CliRun* r : {&dflt, &early, &never}) {
    ASSERT_EQ(r->code, 0) << r->err;
    const auto doc = nlohmann::json::parse(r->out);
    EXPECT_EQ(doc["result"], "unsat");
    EXPECT_GE(doc["stats"]["combined"].get<int>(), 0);
  }
  const auto d = nlohmann::json::parse(dflt.out), e = nlohmann::json::parse(early.out);
  const auto n = nlohmann::json::parse(never.out);
  EXPECT_EQ(n["stats"]["combined"], 0);
  EXPECT_GE(e["stats"]["alpha_calls"].get<int>(), d["stats"]["alpha_calls"].get<int>());
  CliRun bad = run_cli("verify " + inst + " --bab-alpha-iters -1");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--bab-alpha-iters -1: expected 0 to 1000"), std::string::npos) << bad.err;
  CliRun bad2 = run_cli("verify " + inst + " --bab-alpha-after -5");
  EXPECT_EQ(bad2.code, 2);
  EXPECT_NE(bad2.err.find("--bab-alpha-after -5: expected a count >= 0"), std::string::npos) << bad2.err;
}

TEST(CliVerify, InstancesGiveTheSameAnswersOnOneAndTwoJobs) {
  CliRun one = run_cli("verify --instances " + kTest + "test_instances.csv --jobs 1");
  CliRun two = run_cli("verify --instances " + kTest + "test_instances.csv --jobs 2 --json");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  EXPECT_NE(one.out.find("test_sat.onnx,test_prop.vnnlib,sat,"), std::string::npos) << one.out;
  EXPECT_NE(one.out.find("test_unsat.onnx,test_prop.vnnlib,unsat,"), std::string::npos) << one.out;
  const auto doc = nlohmann::json::parse(two.out);
  EXPECT_EQ(doc["instances"], 5);
  EXPECT_EQ(doc["counts"]["sat"], 1);
  EXPECT_EQ(doc["counts"]["unsat"], 4);
  // The stage split sums the instances' stages: each is at least 0, together at most the total.
  const auto& st = doc["stages_s"];
  const double stages = st["falsify"].get<double>() + st["bounds"].get<double>() + st["bab"].get<double>();
  EXPECT_GE(st["falsify"].get<double>(), 0.0);
  EXPECT_GT(stages, 0.0);
  EXPECT_LE(stages, doc["total_s"].get<double>() + 1e-6);
  EXPECT_NE(one.out.find("stages: falsification "), std::string::npos) << one.out;
}

TEST(CliVerify, ErrorsAndUsage) {
  EXPECT_EQ(run_cli("verify").code, 2);
  EXPECT_EQ(run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --arith bfloat16").code, 2);
  EXPECT_EQ(run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --timeout 0").code, 2);
  CliRun threads = run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --threads -1");
  EXPECT_EQ(threads.code, 2);
  EXPECT_NE(threads.err.find("--threads -1: expected 1 to 256"), std::string::npos) << threads.err;
  CliRun split = run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --split neurons");
  EXPECT_EQ(split.code, 2);
  EXPECT_NE(split.err.find("--split neurons: expected auto, input or relu"), std::string::npos) << split.err;
  CliRun beta = run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_prop.vnnlib --beta-iters -2");
  EXPECT_EQ(beta.code, 2);
  EXPECT_NE(beta.err.find("--beta-iters -2: expected 0 to 1000"), std::string::npos) << beta.err;
  CliRun bad = run_cli("verify " + kTest + "test_sat.onnx " + kTest + "test_nano.vnnlib");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("the property declares 1 inputs"), std::string::npos) << bad.err;
  CliRun missing = run_cli("verify " + kTest + "test_sat.onnx /nonexistent.vnnlib");
  EXPECT_EQ(missing.code, 1);
}

}  // namespace
}  // namespace denote
