// The one graph walk (src/eval/walk.h) and structured errors: every rule error is attributed to its
// node with code and field, in evaluation, IBP, plan execution, the typed interpreter and
// check_shapes; liveness frees values; the reverse walk visits children before parents.
#include <gtest/gtest.h>

#include <cmath>

#include "denote/bounds/ibp.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "eval/walk.h"

namespace denote {
namespace {

// x -> log -> log: the second log fails on the values the first one produced (log(0.5) < 0).
Model two_logs() {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t l1 = b.add(Op::Log, {x});
  const int64_t l2 = b.add(Op::Log, {l1});
  auto m = b.build({l2});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(Walk, RuleErrorNamesTheFailingNodeOfTwoAlike) {
  const Model m = two_logs();
  F64Context ctx;
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {0.5, 2.0})};
  auto r = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().node(), 2);
  EXPECT_EQ(r.status().code(), ErrorCode::kEval);
  EXPECT_EQ(r.status().detail().rfind("log: input contains values <= 0", 0), 0u);
  EXPECT_EQ(r.message().rfind("IR eval: node 2: log: input contains values <= 0", 0), 0u) << r.message();
  EXPECT_NE(r.message().find("(Node(id=2, kind=log"), std::string::npos) << r.message();
}

TEST(Walk, InputShapeErrorNamesTheInputNode) {
  const Model m = two_logs();
  F32Context ctx;
  const std::vector<Tensor<float>> in = {Tensor<float>({3}, {1, 2, 3})};
  auto r = denote(m.graph, convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); }),
                  std::span<const Tensor<float>>(in), 2, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().node(), 0);
  EXPECT_EQ(r.status().field(), "input");
  EXPECT_EQ(r.message().rfind("IR eval: node 0: input shape mismatch: expected [2], got [3]", 0), 0u) << r.message();
}

TEST(Walk, CheckShapesAttachesTheNodeToARuleError) {
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {6}});
  g.nodes.push_back(Node{1, {0}, Op::Reshape, ReshapeAttrs{{6}, {5}}, {5}});
  const Status s = check_shapes(g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.node(), 1);
  EXPECT_EQ(s.code(), ErrorCode::kShape);
  EXPECT_EQ(s.message().rfind("IR graph: node 1: ", 0), 0u) << s.message();
  EXPECT_NE(s.message().find(s.detail()), std::string::npos);
  // diagnose reports the same error as a value.
  const std::vector<Diagnostic> d = diagnose(g);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0].status.node(), 1);
  EXPECT_EQ(d[0].message, s.message());
}

TEST(Walk, StructuralErrorsCarryCodeAndField) {
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(Node{1, {0, 0}, Op::Relu, NoAttrs{}, {2}});
  const Status s = check_well_formed(g);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::kStructure);
  EXPECT_EQ(s.node(), 1);
  EXPECT_EQ(s.field(), "parents");
  g.nodes[1] = Node{1, {0}, Op::Relu, AxisAttrs{0}, {2}};
  EXPECT_EQ(check_well_formed(g).field(), "attrs");
}

// A pass that counts the elements it produced, to drive the walker directly.
struct CountPass {
  using Value = Tensor<double>;
  int visited = 0;
  static const Shape& shape_of(const Value& v) { return v.shape; }
  static bool well_sized(const Value& v) { return v.data.size() == static_cast<size_t>(numel(v.shape)); }
  Result<Value> visit(const Node& n, std::span<const Value* const> parents, const Shape& out, const Value* supplied) {
    ++visited;
    if (supplied) return *supplied;
    return Value::filled(out, static_cast<double>(n.id));
  }
};

TEST(Walk, LivenessFreesValuesAfterTheirLastReader) {
  // 0 input -> 1 relu -> 2 relu -> 3 add(1, 2): node 1 is read last by 3, node 2 by 3.
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(Node{1, {0}, Op::Relu, NoAttrs{}, {2}});
  g.nodes.push_back(Node{2, {1}, Op::Relu, NoAttrs{}, {2}});
  g.nodes.push_back(Node{3, {1, 2}, Op::Add, NoAttrs{}, {2}});
  CountPass pass;
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {1, 2})};
  std::vector<bool> keep(4, false);
  keep[3] = true;
  walk::Config cfg;
  cfg.keep = &keep;
  std::vector<Tensor<double>> table;
  std::vector<bool> present;
  ASSERT_TRUE(walk::forward(g, pass, std::span<const Tensor<double>>(in), cfg, table, present).ok());
  EXPECT_EQ(pass.visited, 4);
  EXPECT_EQ(present, (std::vector<bool>{false, false, false, true}));
  EXPECT_TRUE(table[1].data.empty());
  EXPECT_EQ(table[3].data, (std::vector<double>{3, 3}));
  // Without `keep` every value stays.
  cfg.keep = nullptr;
  ASSERT_TRUE(walk::forward(g, pass, std::span<const Tensor<double>>(in), cfg, table, present).ok());
  EXPECT_EQ(present, (std::vector<bool>{true, true, true, true}));
}

TEST(Walk, WalkerChecksTheValueAPassProduces) {
  struct WrongShape : CountPass {
    Result<Value> visit(const Node& n, std::span<const Value* const>, const Shape&, const Value* supplied) {
      if (supplied) return *supplied;
      return Value::filled({3}, 0.0);
    }
  };
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {2}});
  g.nodes.push_back(Node{1, {0}, Op::Relu, NoAttrs{}, {2}});
  WrongShape pass;
  const std::vector<Tensor<double>> in = {Tensor<double>({2}, {1, 2})};
  std::vector<Tensor<double>> table;
  std::vector<bool> present;
  const Status s = walk::forward(g, pass, std::span<const Tensor<double>>(in), walk::Config{}, table, present);
  EXPECT_EQ(s.node(), 1);
  EXPECT_EQ(s.code(), ErrorCode::kShape);
  EXPECT_EQ(s.message().rfind("IR eval: node 1: produced shape mismatch: produced=[3], declared=[2]", 0), 0u)
      << s.message();
}

TEST(Walk, ReverseVisitsChildrenFirstAndAttachesErrors) {
  const Model m = two_logs();
  std::vector<int64_t> order;
  const Status ok = walk::reverse(m.graph, "IR grad", [&](const Node& n) {
    order.push_back(n.id);
    return ok_status();
  });
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(order, (std::vector<int64_t>{2, 1, 0}));
  const Status bad = walk::reverse(m.graph, "IR grad", [&](const Node& n) {
    return n.id == 1 ? Status::error(ErrorCode::kUnsupported, "no derivative") : ok_status();
  });
  EXPECT_EQ(bad.node(), 1);
  EXPECT_EQ(bad.message().rfind("IR grad: node 1: no derivative (Node(id=1", 0), 0u) << bad.message();
  EXPECT_EQ(walk::ancestors(m.graph, 1), (std::vector<bool>{true, true, false}));
}

TEST(Walk, IbpNotesKeepWalkingPastANodeWithoutABox) {
  // log over a box touching 0 has no box; its child notes the missing parent box.
  const Model m = two_logs();
  const std::vector<DoubleBox> boxes = {DoubleBox{{2}, {0.0, 1.0}, {1.0, 2.0}}};
  auto r = run_ibp_double(m.graph, m.payload, boxes, "f64");
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_TRUE(r->boxes[0].has_value());
  EXPECT_FALSE(r->boxes[1].has_value());
  EXPECT_FALSE(r->boxes[2].has_value());
  EXPECT_EQ(r->notes[2], "parent 1 has no box");
  EXPECT_EQ(r->notes[1].rfind("IR eval: node 1: ", 0), 0u) << r->notes[1];
}

// A chain x -> relu -> relu -> ... of `length` nodes over [n] doubles.
Model relu_chain(int64_t n, int length) {
  GraphBuilder b;
  int64_t x = b.input({n});
  for (int i = 0; i < length; ++i) x = b.add(Op::Relu, {x});
  auto m = b.build({x});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(Walk, MemoryBudgetIsCheckedBeforeAllocating) {
  // rand_uniform [2^30] doubles: 8 GiB, refused under a 1 MiB budget before anything is allocated.
  Graph g;
  g.nodes.push_back(Node{0, {}, Op::RandUniform, SeedAttrs{1}, {int64_t{1} << 30}});
  F64Context ctx;
  EvalOptions o;
  o.max_bytes = 1 << 20;
  auto r = denote_all(g, Payload<double>{}, std::span<const Tensor<double>>(), ctx, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.status().node(), 0);
  EXPECT_NE(r.message().find("needs 8589934592 bytes (8.0 GiB)"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("the memory budget is 1048576 bytes (1.0 MiB)"), std::string::npos) << r.message();
}

TEST(Walk, LivenessKeepsTheLiveSetUnderTheBudget) {
  // 10 values of 1 MiB: the whole table needs 11 MiB, the live set at most 2 MiB.
  const Model m = relu_chain(int64_t{1} << 17, 10);
  const std::vector<Tensor<double>> in = {Tensor<double>::filled({int64_t{1} << 17}, -1.0)};
  F64Context ctx;
  EvalOptions o;
  o.max_bytes = 3 << 20;
  auto all = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(in), ctx, o);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().code(), ErrorCode::kResource);
  EXPECT_EQ(all.status().node(), 3);  // nodes 0..2 fill 3 MiB
  const std::vector<int64_t> out = {10};
  auto live = denote_outputs(m.graph, m.payload, std::span<const Tensor<double>>(in), out, ctx, o);
  ASSERT_TRUE(live.ok()) << live.message();
  EXPECT_EQ((*live)[10].data.size(), size_t{1} << 17);
  EXPECT_TRUE((*live)[5].data.empty());
  auto one = denote(m.graph, m.payload, std::span<const Tensor<double>>(in), 10, ctx, o);
  ASSERT_TRUE(one.ok()) << one.message();
  EXPECT_EQ(one->data, (*live)[10].data);
}

TEST(Walk, DoublingConcatChainStopsAtTheBudget) {
  // A 242-byte file can ask for 2^k copies; the node where the budget runs out is named.
  GraphBuilder b;
  int64_t x = b.input({1024});
  for (int i = 0; i < 30; ++i) x = b.add(Op::Concat, {x, x}, AxisAttrs{0});
  auto m = b.build({x});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<Tensor<double>> in = {Tensor<double>::filled({1024}, 1.0)};
  F64Context ctx;
  EvalOptions o;
  o.max_bytes = 64 << 20;
  const std::vector<int64_t> out = {30};
  auto r = denote_outputs(m->graph, m->payload, std::span<const Tensor<double>>(in), out, ctx, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_GT(r.status().node(), 10);
  EXPECT_LT(r.status().node(), 14);
}

TEST(Walk, RealPrecisionCountsAgainstTheBudget) {
  // 1024 MPFR values at 10^6 bits take about 128 MB: refused under 64 MiB, naming the node.
  const Model m = relu_chain(1024, 1);
  RealContext ctx(1000000);
  std::vector<RealScalar> data;
  for (int i = 0; i < 1024; ++i) data.push_back(ctx.from_double(1.0));
  const std::vector<Tensor<RealScalar>> in = {Tensor<RealScalar>({1024}, data)};
  EvalOptions o;
  o.max_bytes = 64 << 20;
  auto r = denote_all(m.graph, convert_payload<RealScalar>(m.payload, [&](double v) { return ctx.from_double(v); }),
                      std::span<const Tensor<RealScalar>>(in), ctx, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
}

}  // namespace
}  // namespace denote
