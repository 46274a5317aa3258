// The seed's six-node example: checks, broken variants and the value table at x0.
#include <gtest/gtest.h>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/program/examples.h"

namespace denote {
namespace {

TEST(SeedExample, BothChecksPass) {
  Model m = six_node_model();
  EXPECT_TRUE(check_well_formed(m.graph).ok());
  EXPECT_TRUE(check_shapes(m.graph).ok());
}

TEST(SeedExample, BrokenVariantsGiveTheSeedMessages) {
  Graph bad_shape = six_node_bad_shape();
  EXPECT_TRUE(check_well_formed(bad_shape).ok());
  EXPECT_EQ(check_shapes(bad_shape).message(),
            "IR graph: node 2: outShape mismatch: inferred=[5], declared=[4] (Node(id=2, kind=relu, parents=#[1], "
            "outShape=[4]))");
  EXPECT_EQ(check_well_formed(six_node_forward_parent()).message(),
            "IR graph: node 2: parent id 3 is not < 2 (Node(id=2, kind=relu, parents=#[3], outShape=[5]))");
  EXPECT_EQ(check_well_formed(six_node_bad_id()).message(), "IR graph: id discipline violated at index 2: nodes[2].id = 7");
}

TEST(SeedExample, ValueTableMatchesTheSeed) {
  Model m = six_node_model();
  F64Context ctx;
  std::vector<Tensor<double>> inputs = {Tensor<double>({4}, six_node_x0())};
  auto table = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx);
  ASSERT_TRUE(table.ok()) << table.message();
  const std::vector<double> node1 = {0.107, -0.017, 0.004, 0.081, -0.003};
  for (size_t i = 0; i < 5; ++i) EXPECT_NEAR((*table)[1].data[i], node1[i], 1e-12);
  EXPECT_NEAR((*table)[3].data[0], 0.02754, 1e-12);
  EXPECT_NEAR((*table)[4].data[0], 0.027720, 1e-12);
  EXPECT_NEAR((*table)[5].data[0], std::tanh(0.02772), 1e-12);
}

TEST(SeedExample, SwappedPayloadIsReported) {
  Model m = six_node_model();
  F64Context ctx;
  std::vector<Tensor<double>> inputs = {Tensor<double>({4}, six_node_x0())};
  auto r = denote(m.graph, six_node_swapped_payload(), std::span<const Tensor<double>>(inputs), 5, ctx);
  EXPECT_EQ(r.message(), "IR eval: linear 1: declared outShape mismatch: [5] vs expected [3]");
}

}  // namespace
}  // namespace denote
