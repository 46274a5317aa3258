// `denote run --provider P` end to end on models from tests/data: without --trace it runs the
// compiled plan (denote/plan/compiled.h), with --trace the plan node by node. Checked here:
//  - only:reference (exact capsules) prints what `run` without --provider prints, digit for digit,
//    in f64 and f32, text and --json;
//  - prefer:openblas and prefer:avx2 (implementation-defined summation order) print the same ids and
//    shapes and values within a relative 1e-12 (f64) / 1e-5 (f32) of `run`'s, and of the node-by-node
//    plan's (--trace), a loose bound on the capsules' stated gamma(k + 1) tolerance for these sizes
//    (the differential harness, plan_differential_test.cc, checks the stated bound itself);
//  - --trace still prints every node, through the plan as without it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "denote/providers/providers.h"
#include "unit/cli_run.h"
#include "unit/sanitized.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;

struct CliModel {
  std::string name;
  std::string args;  // the model path and its --input options
  int nodes = 0;
};

std::string data(const std::string& rel) { return std::string(DENOTE_SOURCE_DIR) + "/tests/data/" + rel; }

std::string golden(const std::string& c, int inputs) {
  std::string args = data("golden/" + c + "/model.json");
  for (int k = 0; k < inputs; ++k) args += fmt::format(" --input @{}", data(fmt::format("golden/{}/input_{}.npy", c, k)));
  return args;
}

// A flat JSON list of n deterministic values in [-1, 1) (the CLI gives it the input node's shape).
std::string flat_input(int n) {
  std::string out = "'[";
  for (int i = 0; i < n; ++i) out += fmt::format("{}{}", i ? "," : "", ((i * 37) % 101) / 50.5 - 1.0);
  return out + "]'";
}

std::vector<CliModel> models() {
  return {
      {"composite_mlp_softmax", golden("composite_mlp_softmax", 1), 5},  // linear, relu, linear, softmax
      {"conv2d_batch", golden("conv2d_batch", 1), 2},
      {"matmul_broadcast", golden("matmul_broadcast", 2), 3},
      {"mnist mlp", data("mnistfc/mnist-net_256x2.onnx") + " --input " + flat_input(784), 7},
      {"convnet avgpool", data("verivital/Convnet_avgpool.onnx") + " --input " + flat_input(784), 6},
  };
}

std::vector<std::string> fast_providers() {
  std::vector<std::string> p;
  if (openblas_built()) p.push_back("prefer:openblas");
  if (!avx2_module().capsules.empty()) p.push_back("prefer:avx2");
  return p;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = text.find('\n', start);
    lines.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return lines;
}

CliRun ok_run(const std::string& args) {
  CliRun r = run_cli(args);
  EXPECT_EQ(r.code, 0) << args << "\n" << r.err;
  return r;
}

// The outputs of two `run --json` documents: same ids and shapes, values within rel * max(1, |want|).
void expect_close(const std::string& got_text, const std::string& want_text, double rel, const std::string& label) {
  const auto got = nlohmann::json::parse(got_text), want = nlohmann::json::parse(want_text);
  ASSERT_EQ(got["outputs"].size(), want["outputs"].size()) << label;
  for (size_t k = 0; k < want["outputs"].size(); ++k) {
    const auto& g = got["outputs"][k];
    const auto& w = want["outputs"][k];
    ASSERT_EQ(g["id"], w["id"]) << label;
    ASSERT_EQ(g["shape"], w["shape"]) << label;
    ASSERT_EQ(g["values"].size(), w["values"].size()) << label;
    for (size_t i = 0; i < w["values"].size(); ++i) {
      const double a = g["values"][i], b = w["values"][i];
      EXPECT_LE(std::fabs(a - b), rel * std::max(1.0, std::fabs(b))) << label << ": output " << k << " value " << i;
    }
  }
}

// Under the sanitizers (every CLI start about half a second) each model runs half of the combinations,
// alternating, so that every arithmetic, output form and provider still runs instrumented; the release
// pass runs them all.
// Combination i of `per` per model: every other one, shifted by one from model to model when `per` is even.
bool sampled(size_t i, size_t per) {
  return !denote::testing::sanitized_build() || (i + (per % 2 == 0 ? (i / per) % 2 : 0)) % 2 == 0;
}

TEST(CliRunProvider, ReferencePlanPrintsWhatRunPrints) {
  size_t k = 0;
  for (const CliModel& m : models())
    for (const std::string arith : {"f64", "f32"})
      for (const std::string json : {"", " --json"}) {
        const size_t i = k++;
        if (!sampled(i, 4)) continue;
        const std::string base = "run " + m.args + " --arith " + arith + json;
        CliRun plain = ok_run(base + " --provider evaluator");
        CliRun planned = ok_run(base + " --provider only:reference");
        EXPECT_EQ(planned.err, "") << m.name;
        if (json.empty()) {
          EXPECT_EQ(planned.out, plain.out) << m.name << " " << arith;
          continue;
        }
        // The documents differ only in the engine that ran.
        auto pj = nlohmann::json::parse(plain.out), qj = nlohmann::json::parse(planned.out);
        EXPECT_EQ(pj["engine"], "evaluator");
        EXPECT_EQ(qj["engine"], "plan only:reference");
        pj.erase("engine"), qj.erase("engine");
        EXPECT_EQ(qj, pj) << m.name << " " << arith << json;
      }
}

TEST(CliRunProvider, FastProvidersWithinTheTolerance) {
  const std::vector<std::string> providers = fast_providers();
  if (providers.empty()) GTEST_SKIP() << "no provider besides the reference in this build / on this CPU";
  size_t k = 0;
  for (const CliModel& m : models())
    for (const std::string arith : {"f64", "f32"}) {
      const size_t i = k++;
      if (!sampled(i, 2)) continue;
      const std::string base = "run " + m.args + " --arith " + arith + " --json";
      const double rel = arith == "f64" ? 1e-12 : 1e-5;
      CliRun plain = ok_run(base + " --provider evaluator");
      // No --provider: the auto plan, the fastest providers'.
      CliRun fast = ok_run(base);
      EXPECT_EQ(nlohmann::json::parse(fast.out)["engine"], "plan auto") << m.name;
      expect_close(fast.out, plain.out, rel, m.name + " " + arith + " default vs the evaluator");
      for (const std::string& p : providers) {
        const std::string label = m.name + " " + arith + " " + p;
        CliRun compiled = ok_run(base + " --provider " + p);
        CliRun per_node = ok_run(base + " --provider " + p + " --trace");
        expect_close(compiled.out, plain.out, rel, label + " vs run");
        expect_close(compiled.out, per_node.out, rel, label + " vs --trace");
      }
    }
}

TEST(CliRunProvider, TraceStillPrintsEveryNode) {
  std::vector<std::string> providers = fast_providers();
  providers.push_back("only:reference");
  size_t k = 0;
  for (const CliModel& m : models()) {
    CliRun plain = ok_run("run " + m.args + " --trace --provider evaluator");
    for (const std::string& p : providers) {
      const size_t i = k++;
      if (!sampled(i, providers.size())) continue;
      CliRun text = ok_run("run " + m.args + " --trace --provider " + p);
      const std::vector<std::string> lines = split_lines(text.out);
      ASSERT_EQ(lines.size(), static_cast<size_t>(m.nodes) + 1) << m.name << " " << p << "\n" << text.out;
      for (int id = 0; id < m.nodes; ++id)
        EXPECT_EQ(lines[static_cast<size_t>(id)].rfind(fmt::format("{}: ", id), 0), 0u) << m.name << " " << p;
      EXPECT_EQ(lines.back().rfind("output ", 0), 0u) << m.name << " " << p;
      if (p == "only:reference") {
        EXPECT_EQ(text.out, plain.out) << m.name;
      }
      CliRun json = ok_run("run " + m.args + " --trace --json --provider " + p);
      const auto doc = nlohmann::json::parse(json.out);
      ASSERT_EQ(doc["trace"].size(), static_cast<size_t>(m.nodes)) << m.name << " " << p;
      for (int id = 0; id < m.nodes; ++id) EXPECT_EQ(doc["trace"][static_cast<size_t>(id)]["id"], id);
    }
  }
}

}  // namespace
}  // namespace denote
