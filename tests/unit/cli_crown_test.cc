// End-to-end tests of `denote bounds --method crown|alpha-crown [--spec C]`: the seed graph's CROWN
// bound in text and JSON (CLI.md), the spec rows, ACAS Xu with a property's C, usage errors.
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/io/json.h"
#include "denote/program/examples.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::write_file;

const char* kCenter = "--center '[0.3,-0.2,0.1,0.4]' --eps 0.05";

std::string six() { return write_file("six_crown.json", write_model_json(six_node_model())); }

TEST(CliCrown, SixNodeTextAndJson) {
  CliRun r = run_cli("bounds " + six() + " " + kCenter + " --method crown");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("method: crown, arith: f64, output nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("node 5: [0.024745] .. [0.031202]"), std::string::npos) << r.out;
  CliRun j = run_cli("bounds " + six() + " " + kCenter + " --method crown --spec '[[1], [-2]]' --json");
  ASSERT_EQ(j.code, 0) << j.err;
  const auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["method"], "crown");
  EXPECT_EQ(doc["boxes"][0]["id"], 5);
  EXPECT_EQ(doc["boxes"][0]["output"], true);
  ASSERT_EQ(doc["spec"]["lo"].size(), 2u);
  EXPECT_NEAR(doc["spec"]["lo"][0].get<double>(), 0.0247449476, 1e-10);
  EXPECT_NEAR(doc["spec"]["hi"][1].get<double>(), -2 * 0.0247449476, 1e-9);
  EXPECT_GT(doc["stats"]["passes"].get<int>(), 0);
  CliRun all = run_cli("bounds " + six() + " " + kCenter + " --method alpha-crown --alpha-iters 5 --all-nodes --json");
  ASSERT_EQ(all.code, 0) << all.err;
  const auto d2 = nlohmann::json::parse(all.out);
  ASSERT_EQ(d2["boxes"].size(), 6u);
  EXPECT_EQ(d2["boxes"][2]["output"], false);
  EXPECT_EQ(d2["stats"]["alpha_steps"].get<int>() > 0, true);
}

TEST(CliCrown, AcasXuPropertyTwoSpecFromNpyShapedJson) {
  const std::string net = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string box = "--box '[[[[0.6,-0.5,-0.5,0.45,-0.5]]]]' '[[[[0.679857769,0.5,0.5,0.5,-0.45]]]]'";
  const std::string spec = "--spec '[[1,-1,0,0,0],[1,0,-1,0,0],[1,0,0,-1,0],[1,0,0,0,-1]]'";
  CliRun r = run_cli("bounds " + net + " " + box + " --method crown --lirpa-compatible " + spec);
  ASSERT_EQ(r.code, 0) << r.err;
  // auto_LiRPA's CROWN for row 0 (Y_0 - Y_1): [-616.490760, 631.282583].
  EXPECT_NE(r.out.find("spec row 0: [-616.49076"), std::string::npos) << r.out;
  CliRun t = run_cli("bounds " + net + " " + box + " --method crown --arith f32 " + spec + " --json");
  ASSERT_EQ(t.code, 0) << t.err;
  const auto doc = nlohmann::json::parse(t.out);
  EXPECT_GT(doc["spec"]["lo"][0].get<double>(), -616.49076);  // the default is at least as tight
}

// --arith auto: the file's own arithmetic, f32 for ACAS Xu's FLOAT inputs (the bounds then hold for its
// float32 evaluation), f64 for a JSON model, which names none; IBP and CROWN alike.
TEST(CliCrown, ArithAutoTakesTheFilesArithmetic) {
  const std::string net = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string box = "--box '[[[[0.6,-0.5,-0.5,0.45,-0.5]]]]' '[[[[0.61,-0.49,-0.49,0.46,-0.49]]]]' --json";
  for (const char* method : {"ibp", "crown"}) {
    CliRun a = run_cli("bounds " + net + " " + box + " --method " + method + " --arith auto");
    CliRun f = run_cli("bounds " + net + " " + box + " --method " + method + " --arith f32");
    CliRun d = run_cli("bounds " + net + " " + box + " --method " + method + " --arith f64");
    ASSERT_EQ(a.code, 0) << a.err;
    const auto ja = nlohmann::json::parse(a.out), jf = nlohmann::json::parse(f.out), jd = nlohmann::json::parse(d.out);
    EXPECT_EQ(ja["arith"], "f32") << method;
    EXPECT_EQ(ja["boxes"], jf["boxes"]) << method;
    EXPECT_NE(ja["boxes"], jd["boxes"]) << method;
  }
  CliRun j = run_cli("bounds " + six() + " " + kCenter + " --arith auto --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_EQ(nlohmann::json::parse(j.out)["arith"], "f64");
  CliRun bad = run_cli("bounds " + six() + " " + kCenter + " --arith autox");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("expected f64, f32, auto or a binary format"), std::string::npos) << bad.err;
}

// --intermediate: forward linear bounds alone (cheap, looser than CROWN's passes on property 2's
// whole box, tighter than IBP), and before CROWN's passes (at least as tight as forward alone).
TEST(CliCrown, AcasXuIntermediateChoices) {
  const std::string net = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string box = "--box '[0.6,-0.5,-0.5,0.45,-0.5]' '[0.679857769,0.5,0.5,0.5,-0.45]'";
  const std::string spec = " --spec '[[1,-1,0,0,0]]' --arith f32 --json --method ";
  auto row0 = [&](const std::string& rest) {
    CliRun r = run_cli("bounds " + net + " " + box + spec + rest);
    EXPECT_EQ(r.code, 0) << r.err;
    return r.code == 0 ? nlohmann::json::parse(r.out)["spec"]["lo"][0].get<double>() : NAN;
  };
  const double ibp = row0("ibp"), fw = row0("crown --intermediate forward"), both = row0("crown --intermediate forward+crown");
  const double crown = row0("crown"), none = row0("crown --intermediate ibp");
  EXPECT_GT(fw, ibp);
  EXPECT_GE(fw, none);
  EXPECT_GE(both, fw);
  EXPECT_GT(crown, fw);
  CliRun bad = run_cli("bounds " + net + " " + box + " --method crown --intermediate backward");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.err.find("--intermediate backward: expected crown, forward, forward+crown or ibp"), std::string::npos)
      << bad.err;
}

TEST(CliCrown, AFallbackToIbpIsANote) {
  // A weight f32 rounds into its subnormal range leaves CROWN's error model: the bounds are IBP's, said so.
  const std::string doc = R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": [2]},
    {"id": 1, "kind": "linear", "parents": [0], "shape": [1], "out_dim": 1, "in_dim": 2, "weight": [[1, 1e-40]],
     "bias": [0]}]})";
  const std::string model = write_file("fallback_crown.json", doc);
  CliRun r = run_cli("bounds " + model + " --box '[0, 0]' '[1, 1]' --method crown --arith f32");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("note: the linear bounds are IBP's: a parameter leaves the arithmetic's error model (node 1 weight[1]"), std::string::npos)
      << r.out;
  CliRun j = run_cli("bounds " + model + " --box '[0, 0]' '[1, 1]' --method crown --arith f32 --json");
  ASSERT_EQ(j.code, 0) << j.err;
  EXPECT_NE(nlohmann::json::parse(j.out)["fallback"].get<std::string>().find("weight[1]"), std::string::npos) << j.out;
  CliRun ok = run_cli("bounds " + six() + " " + kCenter + " --method crown --json");
  EXPECT_EQ(nlohmann::json::parse(ok.out)["fallback"], "");
}

TEST(CliCrown, UsageAndInputErrors) {
  const std::string m = six();
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method beta").code, 2);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method crown --arith bfloat16").code, 2);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method crown --alpha-iters 3").code, 2);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method alpha-crown --alpha-iters 0").code, 2);
  EXPECT_EQ(run_cli("bounds " + m + " " + kCenter + " --method crown --outputs-only --all-nodes").code, 2);
  CliRun cols = run_cli("bounds " + m + " " + kCenter + " --method crown --spec '[[1, 2]]'");
  EXPECT_EQ(cols.code, 1);
  EXPECT_NE(cols.err.find("--spec: rows have 2 entries, the output has 1 elements"), std::string::npos) << cols.err;
  CliRun bad = run_cli("bounds " + m + " " + kCenter + " --method crown --spec '[[1'");
  EXPECT_EQ(bad.code, 1);
  EXPECT_NE(bad.err.find("--spec"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace denote
