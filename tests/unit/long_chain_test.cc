// A 1,000,000-node chain is checked and evaluated without recursion (a recursive pass would
// overflow the stack long before the end). No timing assertions: only the results.
#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "denote/check/check.h"
#include "denote/eval/eval.h"

namespace denote {
namespace {

constexpr int64_t kNodes = 1'000'000;

// Node 0: input x = [1, -1]. Odd ids: relu of the previous node. Even ids > 0: previous + x.
Graph long_chain() {
  Graph g;
  g.nodes.reserve(kNodes);
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  for (int64_t i = 1; i < kNodes; ++i) {
    if (i % 2 == 1) g.nodes.push_back(Node{i, {i - 1}, Op::Relu, NoAttrs{}, {2}});
    else g.nodes.push_back(Node{i, {i - 1, 0}, Op::Add, NoAttrs{}, {2}});
  }
  return g;
}

TEST(LongChain, MillionNodesCheckAndEvaluate) {
  const Graph g = long_chain();
  ASSERT_EQ(g.size(), static_cast<size_t>(kNodes));
  Status wf = check_well_formed(g);
  ASSERT_TRUE(wf.ok()) << wf.message();
  Status shapes = check_shapes(g);
  ASSERT_TRUE(shapes.ok()) << shapes.message();
  EXPECT_TRUE(diagnose(g).empty());

  // By hand: the first entry starts at relu(1) = 1 and each of the 499,999 adds (ids 2, 4, ...,
  // 999,998) adds 1, so the last node (relu, id 999,999) holds 500,000. The second entry is
  // relu(-1) = 0, then -1 after each add and 0 after each relu: 0 at the end.
  std::vector<Tensor<double>> inputs = {Tensor<double>({2}, {1.0, -1.0})};
  F64Context ctx;
  auto table = denote_all(g, Payload<double>{}, std::span<const Tensor<double>>(inputs), ctx);
  ASSERT_TRUE(table.ok()) << table.message();
  ASSERT_EQ(table->size(), static_cast<size_t>(kNodes));
  EXPECT_EQ(table->back().shape, (Shape{2}));
  EXPECT_EQ(table->back().data, (std::vector<double>{500000.0, 0.0}));
  EXPECT_EQ((*table)[kNodes - 2].data, (std::vector<double>{500000.0, -1.0}));

  auto last = denote(g, Payload<double>{}, std::span<const Tensor<double>>(inputs), kNodes - 1, ctx);
  ASSERT_TRUE(last.ok()) << last.message();
  EXPECT_EQ(last->data, (std::vector<double>{500000.0, 0.0}));
}

TEST(LongChain, ErrorAtTheEndIsFound) {
  Graph g = long_chain();
  g.nodes.back().out_shape = {3};
  EXPECT_EQ(check_shapes(g).message(),
            "IR graph: node 999999: outShape mismatch: inferred=[2], declared=[3] (Node(id=999999, kind=relu, "
            "parents=#[999998], outShape=[3]))");
  std::vector<Diagnostic> d = diagnose(g);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].node, kNodes - 1);
}

}  // namespace
}  // namespace denote
