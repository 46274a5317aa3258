// The 45 ACAS Xu networks (tests/data/acasxu/*.onnx, run2a, from the VNN-COMP benchmark) import,
// pass the shape check, map onto 7 linear layers and evaluate in f64 to the golden outputs of
// tests/golden/gen_acasxu_golden.py (python3-onnx + numpy with exactly summed dot products),
// within 1e-12 relative.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"

namespace denote {
namespace {

const std::filesystem::path kDir = std::filesystem::path(DENOTE_SOURCE_DIR) / "tests/data/acasxu";

nlohmann::json golden() {
  std::ifstream f(kDir / "golden.json");
  return nlohmann::json::parse(f);
}

TEST(OnnxAcasXu, AllNetworksMatchGolden) {
  const nlohmann::json g = golden();
  const auto& inputs = g.at("inputs");
  ASSERT_EQ(g.at("outputs").size(), 45u);
  for (const auto& [file, outs] : g.at("outputs").items()) {
    SCOPED_TRACE(file);
    auto m = load_model_onnx_file((kDir / file).string());
    ASSERT_TRUE(m.ok()) << m.message();
    ASSERT_TRUE(check_shapes(m->graph).ok()) << check_shapes(m->graph).message();
    EXPECT_EQ(m->payload.linear.size(), 7u);  // MatMul + Add fused into linear
    ASSERT_EQ(m->graph.input_ids().size(), 1u);
    ASSERT_EQ(m->output_ids.size(), 1u);
    EXPECT_EQ(m->graph.nodes[static_cast<size_t>(m->output_ids[0])].out_shape, (Shape{1, 5}));
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::vector<Tensor<double>> in{Tensor<double>{{1, 1, 1, 5}, inputs[k].get<std::vector<double>>()}};
      F64Context ctx;
      auto y = denote(m->graph, m->payload, std::span<const Tensor<double>>(in), m->output_ids[0], ctx);
      ASSERT_TRUE(y.ok()) << y.message();
      const std::vector<double> want = outs[k].get<std::vector<double>>();
      ASSERT_EQ(y->data.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_NEAR(y->data[i], want[i], 1e-12 * std::max(1.0, std::fabs(want[i]))) << "input " << k << " out " << i;
    }
  }
}

TEST(OnnxAcasXu, LoadsThroughTheGenericLoader) {
  auto m = load_model_file((kDir / "ACASXU_run2a_1_1_batch_2000.onnx").string());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m->graph.nodes[0].op, Op::Input);
  EXPECT_EQ(m->graph.nodes[0].out_shape, (Shape{1, 1, 1, 5}));
}

}  // namespace
}  // namespace denote
