// `denote grad` and `denote jvp` (docs/AUTODIFF.md, docs/CLI.md): the printed gradients are the
// library's, in JSON and text, for JSON and ONNX models, in every arithmetic; errors and exit codes.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "cli_run.h"
#include "denote/autodiff/grad.h"
#include "denote/io/json.h"
#include "denote/program/examples.h"

namespace denote {
namespace {

using testing::CliRun;
using testing::run_cli;
using testing::write_file;

const std::vector<double> kX{0.3, -0.2, 0.1, 0.4};

std::vector<double> doubles(const nlohmann::json& j) {
  std::vector<double> v;
  for (const auto& e : j) v.push_back(e.get<double>());
  return v;
}

TEST(CliGrad, JsonGradientIsTheLibrarysInputAndParameterGradient) {
  const Model m = six_node_model();
  const std::string path = write_file("grad_six.json", write_model_json(m));
  CliRun r = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --wrt all --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  F64Context ctx;
  const std::vector<Tensor<double>> in{Tensor<double>({4}, kX)};
  GradOptions all;
  all.wrt = GradWrt::All;
  auto g = vjp(m.graph, m.payload, std::span<const Tensor<double>>(in), m.output_ids[0], nullptr, ctx, all);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(j["output"], m.output_ids[0]);
  ASSERT_EQ(j["gradients"].size(), 1u);
  EXPECT_EQ(j["gradients"][0]["id"], 0);
  EXPECT_EQ(j["gradients"][0]["shape"], nlohmann::json::array({4}));
  EXPECT_EQ(doubles(j["gradients"][0]["values"]), g->inputs[0].data);
  ASSERT_EQ(j["params"].size(), g->params.size());
  ASSERT_GE(g->params.size(), 4u);  // two linear layers: weight and bias each
  for (size_t k = 0; k < g->params.size(); ++k) {
    EXPECT_EQ(j["params"][k]["node"], g->params[k].node);
    EXPECT_EQ(j["params"][k]["field"], g->params[k].field);
    EXPECT_EQ(doubles(j["params"][k]["values"]), g->params[k].values);
  }
  EXPECT_TRUE(j["flags"].empty());
}

TEST(CliGrad, JvpAgreesWithGradAlongADirectionAndOnnxIsAccepted) {
  const std::string json = write_file("jvp_six.json", write_model_json(six_node_model()));
  const std::string onnx = (testing::temp_dir() / "jvp_six.onnx").string();
  ASSERT_EQ(run_cli("convert " + json + " " + onnx).code, 0);
  CliRun g = run_cli("grad " + onnx + " --input '[0.3,-0.2,0.1,0.4]' --json");
  ASSERT_EQ(g.code, 0) << g.err;
  CliRun t = run_cli("jvp " + onnx + " --input '[0.3,-0.2,0.1,0.4]' --tangent '[1,-2,0.5,3]' --json");
  ASSERT_EQ(t.code, 0) << t.err;
  const auto gj = nlohmann::json::parse(g.out), tj = nlohmann::json::parse(t.out);
  const std::vector<double> grad = doubles(gj["gradients"][0]["values"]), dir{1, -2, 0.5, 3};
  double dot = 0;
  for (size_t k = 0; k < 4; ++k) dot += grad[k] * dir[k];
  EXPECT_NEAR(doubles(tj["tangent"]["values"])[0], dot, 1e-15);
  CliRun text = run_cli("jvp " + json + " --input '[0.3,-0.2,0.1,0.4]' --tangent '[1,-2,0.5,3]'");
  ASSERT_EQ(text.code, 0) << text.err;
  EXPECT_NE(text.out.find("tangent [] = ["), std::string::npos) << text.out;
}

TEST(CliGrad, BinaryFormatsRoundTheGradientAndReportFlags) {
  const std::string path = write_file("grad_bf16.json", write_model_json(six_node_model()));
  CliRun r = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --arith bfloat16 --json");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["arith"], "bfloat16");
  EXPECT_EQ(j["flags"], nlohmann::json::array({"inexact"}));
  for (double v : doubles(j["gradients"][0]["values"])) {
    const float f = static_cast<float>(v);
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    EXPECT_EQ(bits & 0xffffu, 0u) << v << " is not a bfloat16 value";
  }
  CliRun text = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --arith bfloat16");
  EXPECT_NE(text.out.find("flags: inexact"), std::string::npos) << text.out;
}

TEST(CliGrad, CotangentScalesTheGradient) {
  const std::string path = write_file("grad_cot.json", write_model_json(six_node_model()));
  CliRun one = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --json");
  CliRun two = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --cotangent 2 --json");
  ASSERT_EQ(one.code, 0) << one.err;
  ASSERT_EQ(two.code, 0) << two.err;
  const auto a = doubles(nlohmann::json::parse(one.out)["gradients"][0]["values"]);
  const auto b = doubles(nlohmann::json::parse(two.out)["gradients"][0]["values"]);
  for (size_t k = 0; k < a.size(); ++k) EXPECT_EQ(b[k], 2 * a[k]);
}

TEST(CliGrad, ErrorsAndExitCodes) {
  const std::string path = write_file("grad_err.json", write_model_json(six_node_model()));
  CliRun wrt = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --wrt weights");
  EXPECT_EQ(wrt.code, 2);
  EXPECT_NE(wrt.err.find("--wrt 'weights': expected inputs, params or all"), std::string::npos) << wrt.err;
  CliRun cot = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --cotangent '[1,2]'");
  EXPECT_EQ(cot.code, 1);
  EXPECT_NE(cot.err.find("--cotangent: expected the output's shape []"), std::string::npos) << cot.err;
  CliRun tan = run_cli("jvp " + path + " --input '[0.3,-0.2,0.1,0.4]'");
  EXPECT_EQ(tan.code, 1);
  EXPECT_NE(tan.err.find("missing --tangent for input node 0"), std::string::npos) << tan.err;
  // An id the model lacks depends on the model (exit 1); a malformed one is usage (exit 2).
  CliRun out = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --output 99");
  EXPECT_EQ(out.code, 1);
  EXPECT_NE(out.err.find("--output '99': expected a node id below"), std::string::npos) << out.err;
  EXPECT_EQ(run_cli("jvp " + path + " --input '[0.3,-0.2,0.1,0.4]' --tangent '[1,0,0,0]' --output 999").code, 1);
  EXPECT_EQ(run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --output x1").code, 2);
  CliRun arith = run_cli("grad " + path + " --input '[0.3,-0.2,0.1,0.4]' --arith f16x");
  EXPECT_EQ(arith.code, 2);
  // A gradient that must pass through a random mask's keep probability.
  const std::string masked = write_file("grad_mask.json", R"({"format": "torchlean.ir.v1", "input_id": 0,
    "output_ids": [3], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": []},
    {"id": 1, "kind": "sigmoid", "parents": [0], "shape": []},
    {"id": 2, "kind": "bernoulli_mask", "parents": [1], "shape": [3], "seed": 5},
    {"id": 3, "kind": "sum", "parents": [2], "shape": []}]})");
  CliRun mask = run_cli("grad " + masked + " --input 0.5");
  EXPECT_EQ(mask.code, 1);
  EXPECT_NE(mask.err.find("IR grad: node 2: bernoulli_mask has no derivative"), std::string::npos) << mask.err;
}

}  // namespace
}  // namespace denote
