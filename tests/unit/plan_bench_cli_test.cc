// End-to-end tests of `denote bench` on the seed's six-node graph (written by `denote demo --save`):
// the JSON document's fields and their consistency, the evaluator in a binary format, the compiled
// plan's step list, thread counts, and the usage errors.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/providers/providers.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::temp_dir;

std::string model() {
  const auto dir = temp_dir() / "bench_example";
  std::filesystem::create_directories(dir);
  if (!std::filesystem::exists(dir / "six_node.json")) {
    CliRun r = run_cli("demo --save " + dir.string());
    EXPECT_EQ(r.code, 0) << r.err;
  }
  return (dir / "six_node.json").string() + " --input @" + (dir / "x0.npy").string();
}

void expect_timings(const std::string& out, int calls, int threads, const std::string& arith,
                    const std::string& provider) {
  const nlohmann::json j = nlohmann::json::parse(out);
  EXPECT_EQ(j.at("calls").get<int>(), calls);
  EXPECT_EQ(j.at("threads").get<int>(), threads);
  EXPECT_EQ(j.at("arith").get<std::string>(), arith);
  EXPECT_EQ(j.at("provider").get<std::string>(), provider);
  const double lo = j.at("min_s"), mid = j.at("median_s"), hi = j.at("max_s");
  EXPECT_GT(lo, 0.0);
  EXPECT_LE(lo, mid);
  EXPECT_LE(mid, hi);
}

TEST(PlanBenchCli, JsonForThePlanAndTheEvaluator) {
  const std::string m = model();
  CliRun plan = run_cli("bench " + m + " --repeat 7 --warmup 2 --arith f32 --provider prefer:openblas --threads 2 --json");
  ASSERT_EQ(plan.code, 0) << plan.err;
  expect_timings(plan.out, 7, 2, "f32", "prefer:openblas");
  CliRun eval = run_cli("bench " + m + " --repeat 3 --arith bfloat16 --rounding upward --json");
  ASSERT_EQ(eval.code, 0) << eval.err;
  expect_timings(eval.out, 3, 1, "bfloat16", "");
  CliRun f64 = run_cli("bench " + m + " --repeat 4 --provider auto --json");
  ASSERT_EQ(f64.code, 0) << f64.err;
  expect_timings(f64.out, 4, 1, "f64", "auto");
}

TEST(PlanBenchCli, TextAndSteps) {
  const std::string m = model();
  CliRun r = run_cli("bench " + m + " --repeat 2 --arith f32 --provider prefer:openblas --steps");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("2 calls (f32, plan prefer:openblas, 1 thread): min "), std::string::npos) << r.out;
  // The six-node graph: linear, relu, linear, reduce_sum, tanh; relu fuses into the first linear.
  if (openblas_built()) {
    EXPECT_NE(r.err.find("step 0: linear[1] + relu[2] -> buffer 0 (openblas.linear + reference.relu"),
              std::string::npos)
        << r.err;
  }
  CliRun e = run_cli("bench " + m + " --repeat 2 --provider evaluator");
  ASSERT_EQ(e.code, 0) << e.err;
  EXPECT_NE(e.out.find("2 calls (f64, evaluator, 1 thread): min "), std::string::npos) << e.out;
  // Without --provider, f64 and f32 time the `auto` plan.
  CliRun d = run_cli("bench " + m + " --repeat 2 --threads 2");
  ASSERT_EQ(d.code, 0) << d.err;
  EXPECT_NE(d.out.find("2 calls (f64, plan auto, 2 threads): min "), std::string::npos) << d.out;
}

TEST(PlanBenchCli, UsageErrors) {
  const std::string m = model();
  const std::pair<std::string, std::string> cases[] = {
      {"--repeat 0", "--repeat 0: expected at least 1"},
      {"--warmup -1", "--warmup -1: expected at least 0"},
      {"--provider auto --threads 0", "--threads 0: expected 1 to 256"},
      {"--provider evaluator --threads 2", "--threads needs a kernel plan (f64 or f32) or a software binary --arith"},
      {"--provider auto --arith bfloat16", "--provider runs a kernel plan in f64 or f32 only, not --arith bfloat16"},
      {"--provider nope", "--provider: "},
  };
  for (const auto& [args, message] : cases) {
    CliRun r = run_cli("bench " + m + " " + args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_NE(r.err.find(message), std::string::npos) << args << ": " << r.err;
  }
  CliRun bad = run_cli("bench " + model() + " --input '[1]' --repeat 1");
  EXPECT_EQ(bad.code, 1) << bad.err;
}

}  // namespace
}  // namespace denote
