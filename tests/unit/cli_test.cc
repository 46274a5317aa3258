// End-to-end tests of build/bin/denote: exit codes, the demo against the seed's own texts, and
// the JSON outputs.

#include <cstdio>
#include <filesystem>
#include <fstream>
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
using testing::write_file;

std::vector<std::string> stripped_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream ss(text);
  for (std::string line; std::getline(ss, line);) {
    line.erase(0, line.find_first_not_of(' '));
    lines.push_back(line);
  }
  return lines;
}

TEST(Cli, DemoReproducesTheSeedTexts) {
  CliRun r = run_cli("demo");
  ASSERT_EQ(r.code, 0) << r.err;
  // Extracted from the seed document by tests/golden/extract_seed_golden.py.
  const auto expected = stripped_lines(slurp(std::string(DENOTE_SOURCE_DIR) + "/tests/golden/seed_demo_expected.txt"));
  const auto got = stripped_lines(r.out);
  ASSERT_GT(expected.size(), 30u);
  for (const std::string& line : expected)
    EXPECT_NE(std::find(got.begin(), got.end(), line), got.end()) << "demo output lacks the seed line: " << line;
}

TEST(Cli, DemoMatchesItsGoldenTranscript) {
  // Regenerate with scripts/update_golden.sh after an intended change of the demo.
  CliRun r = run_cli("demo");
  EXPECT_EQ(r.out, slurp(std::string(DENOTE_SOURCE_DIR) + "/tests/golden/demo.txt"));
}

TEST(Cli, CheckAcceptsTheSeedModelAndRejectsBrokenOnes) {
  Model m = six_node_model();
  const std::string good = write_file("good.json", write_model_json(m));
  EXPECT_EQ(run_cli("check " + good).code, 0);

  m.graph.nodes[2].out_shape = {4};
  CliRun bad = run_cli("check " + write_file("bad_shape.json", write_model_json(m)));
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("IR graph: node 2: outShape mismatch: inferred=[5], declared=[4]"), std::string::npos) << bad.err;

  CliRun json = run_cli("check --json " + write_file("bad_shape2.json", write_model_json(m)));
  EXPECT_EQ(json.code, 1);
  auto doc = nlohmann::json::parse(json.out);
  EXPECT_FALSE(doc["ok"].get<bool>());
  ASSERT_GE(doc["diagnostics"].size(), 1u);
  EXPECT_EQ(doc["diagnostics"][0]["node"].get<int>(), 2);
  EXPECT_EQ(doc["diagnostics"][0]["code"].get<std::string>(), "shape");
  EXPECT_EQ(doc["diagnostics"][0]["field"].get<std::string>(), "outShape");
}

TEST(Cli, CheckReportsEveryDiagnostic) {
  Model m = six_node_model();
  m.graph.nodes[2].out_shape = {4};
  m.graph.nodes[5].parents = {7};
  CliRun r = run_cli("check " + write_file("two.json", write_model_json(m)));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("IR graph: node 2:"), std::string::npos);
  EXPECT_NE(r.err.find("IR graph: node 5: parent id 7 is not < 5"), std::string::npos) << r.err;
}

TEST(Cli, BadFilesAreExitOneWithAClearError) {
  CliRun r = run_cli("check " + write_file("malformed.json", "{\"format\": \"torchlean.ir.v1\", \"nodes\": [}"));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("malformed JSON at byte"), std::string::npos) << r.err;
  CliRun missing = run_cli("print /nonexistent/model.json");
  EXPECT_EQ(missing.code, 1);
  EXPECT_NE(missing.err.find("cannot open file"), std::string::npos);
}

TEST(Cli, UsageErrorsAreExitTwo) {
  EXPECT_EQ(run_cli("").code, 2);
  EXPECT_EQ(run_cli("no-such-command").code, 2);
  EXPECT_EQ(run_cli("check").code, 2);
}

TEST(Cli, PrintListingAndDot) {
  const std::string path = write_file("p.json", write_model_json(six_node_model()));
  CliRun listing = run_cli("print " + path);
  EXPECT_EQ(listing.code, 0);
  EXPECT_NE(listing.out.find("1: linear(payload=node_id) parents=[0] out=[5]"), std::string::npos);
  CliRun dot = run_cli("print --dot " + path);
  EXPECT_EQ(dot.out.rfind("digraph IR {", 0), 0u);
}

TEST(Cli, RunJsonGivesTheSeedValue) {
  const std::string path = write_file("r.json", write_model_json(six_node_model()));
  CliRun r = run_cli("run " + path + " --input '[0.3,-0.2,0.1,0.4]' --json --trace");
  ASSERT_EQ(r.code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["arith"], "f64");
  EXPECT_EQ(doc["outputs"][0]["id"], 5);
  EXPECT_NEAR(doc["outputs"][0]["values"][0].get<double>(), std::tanh(0.02772), 1e-15);
  EXPECT_EQ(doc["trace"].size(), 6u);
  CliRun f32 = run_cli("run " + path + " --input '[0.3,-0.2,0.1,0.4]' --arith f32");
  EXPECT_EQ(f32.code, 0) << f32.err;
  CliRun wrong = run_cli("run " + path + " --input '[0.3,-0.2,0.1]'");
  EXPECT_EQ(wrong.code, 1);
  EXPECT_NE(wrong.err.find("--input for input node 0: expected shape [4] (4 elements), got shape [3] (3 elements)"),
            std::string::npos)
      << wrong.err;
}

TEST(Cli, OpsMarkdownIsTheCommittedOpsDoc) {
  CliRun r = run_cli("ops --markdown");
  ASSERT_EQ(r.code, 0);
  EXPECT_EQ(r.out, slurp(std::string(DENOTE_SOURCE_DIR) + "/docs/OPS.md")) << "regenerate with scripts/update_golden.sh";
}

}  // namespace
}  // namespace denote
