// CROWN's boxes of nodes no relaxation reads (Engine::refresh_box), first those that keep their parent's
// elements in order (reshape, flatten):
// their first box is IBP's, computed from the parent's IBP box; once the parent's box is tightened by
// its own CROWN pass, theirs follows. The f32 a-priori error terms of the layers after them read those
// boxes: on cifar10_resnet's resnet_4b the reshape before the classifier kept IBP's box (values up to
// 1.5e4 where the relu before it is at most 6.8), and the f32 spec bounds came out 20x as wide as f64's.
// Then a node CROWN cuts (softmax), whose box is refreshed by IBP's step on its parent's CROWN box.
//
// The network: x in [-1, 1]^4, h = [x, x] (8), z_j = 100 (h_j - h_(j+4)) + 1 (exactly 1 everywhere; IBP
// says [-199, 201]), relu, reshape [2, 2], flatten [4], y = 1000 sum_j r_j (= 4000).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

struct Net {
  Model m;
  int64_t relu = -1, reshape = -1, flatten = -1, out = -1;
};

// x [4] -> h = [x, x] -> relu(100 (h_j - h_(j+4)) + 1): exactly 1, where IBP says [0, 201].
int64_t cancelling_relu(GraphBuilder& b) {
  const int64_t x = b.input({4});
  std::vector<double> w1(32, 0.0);
  for (int o = 0; o < 8; ++o) w1[static_cast<size_t>(o * 4 + o % 4)] = 1.0;
  const int64_t h = b.linear(x, 8, w1, std::vector<double>(8, 0.0));
  std::vector<double> w2(32, 0.0);
  for (int o = 0; o < 4; ++o) w2[static_cast<size_t>(o * 8 + o)] = 100.0, w2[static_cast<size_t>(o * 8 + o + 4)] = -100.0;
  return b.unary(Op::Relu, b.linear(h, 4, w2, std::vector<double>(4, 1.0)));
}

Net cancelling_net() {
  Net n;
  GraphBuilder b;
  n.relu = cancelling_relu(b);
  n.reshape = b.add(Op::Reshape, {n.relu}, ReshapeAttrs{{4}, {2, 2}}, Shape{2, 2});
  n.flatten = b.add(Op::Flatten, {n.reshape}, ValueShapeAttrs{{2, 2}}, Shape{4});
  n.out = b.linear(n.flatten, 1, std::vector<double>(4, 1000.0), {0.0});
  auto m = b.build({n.out});
  EXPECT_TRUE(m.ok()) << m.message();
  if (m.ok()) n.m = std::move(*m);
  return n;
}

CrownOptions crown_in(const char* arith) {
  CrownOptions o;
  o.method = BoundMethod::Crown;
  o.arith = *parse_arith_name(arith);
  return o;
}

TEST(CrownLayoutBox, ReshapeAndFlattenFollowTheirParentsTightenedBox) {
  const Net n = cancelling_net();
  const std::vector<DoubleBox> in = {DoubleBox{{4}, std::vector<double>(4, -1.0), std::vector<double>(4, 1.0)}};
  CrownOptions io;
  io.method = BoundMethod::Ibp;
  auto ibp = run_crown(n.m.graph, n.m.payload, in, n.out, nullptr, io);
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  EXPECT_GT(ibp->boxes[static_cast<size_t>(n.reshape)]->hi[0], 200);  // IBP alone
  for (const char* arith : {"f64", "f32"}) {
    auto r = run_crown(n.m.graph, n.m.payload, in, n.out, nullptr, crown_in(arith));
    ASSERT_TRUE(r.ok()) << r.message();
    const DoubleBox& relu = *r->boxes[static_cast<size_t>(n.relu)];
    for (int64_t id : {n.reshape, n.flatten}) {
      const DoubleBox& b = *r->boxes[static_cast<size_t>(id)];
      ASSERT_EQ(b.lo.size(), relu.lo.size());
      for (size_t j = 0; j < b.lo.size(); ++j) {
        EXPECT_EQ(b.lo[j], relu.lo[j]) << arith << " node " << id << " element " << j;
        EXPECT_EQ(b.hi[j], relu.hi[j]) << arith << " node " << id << " element " << j;
        EXPECT_LT(b.hi[j], 1.001) << arith << " node " << id;  // CROWN sees the cancellation
      }
    }
  }
  // The f32 bound of y = 4000 carries the evaluation's a-priori error of every layer (about 1.7 of width
  // here: the first two layers' terms, multiplied by the 1e5 that reaches them); the last layer's share,
  // (4 + 3) 2^-24 1.01 1000 sum_j max|r_j| per side, is 0.0017 with the relu's box and 0.34 with the
  // reshape's IBP box (201 a value): 2.42 of width before Engine::refresh_box.
  auto r32 = run_crown(n.m.graph, n.m.payload, in, n.out, nullptr, crown_in("f32"));
  ASSERT_TRUE(r32.ok());
  const DoubleBox& y = *r32->boxes[static_cast<size_t>(n.out)];
  EXPECT_LE(y.lo[0], 4000.0);
  EXPECT_GE(y.hi[0], 4000.0);
  EXPECT_LT(y.hi[0] - y.lo[0], 2.0);
  // And the f32 evaluation is inside at the box's corners and random points.
  ibp_test::Rng rng(0x1a7);
  F32Context f32;
  for (int j = 0; j < 32; ++j) {
    const std::vector<double> x = ibp_test::box_point(rng, in[0], j);
    auto t = ibp_test::eval_at(f32, n.m, x);
    ASSERT_TRUE(t.ok());
    const double v = (*t)[static_cast<size_t>(n.out)].data[0];
    EXPECT_GE(v, y.lo[0]);
    EXPECT_LE(v, y.hi[0]);
  }
}

// A node that CROWN cuts (softmax: no linear rule) is concretised at its box. Its first box is IBP's on
// the relu's IBP box (each relu in [0, 201]: softmax anywhere in [0, 1]); refreshed by IBP's step on
// the relu's CROWN box (each relu exactly 1), it is 1/4 up to rounding, and so is y = sum softmax / 4
// ... times 4 = 1 (Engine::refresh_box).
TEST(CrownLayoutBox, CutNodesBoxFollowsItsParentsTightenedBox) {
  GraphBuilder b;
  const int64_t r = cancelling_relu(b);
  const int64_t sm = b.add(Op::Softmax, {r}, AxisAttrs{0}, Shape{4});
  const int64_t y = b.linear(sm, 1, std::vector<double>(4, 1.0), {0.0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<DoubleBox> in = {DoubleBox{{4}, std::vector<double>(4, -1.0), std::vector<double>(4, 1.0)}};
  CrownOptions io;
  io.method = BoundMethod::Ibp;
  auto ibp = run_crown(m->graph, m->payload, in, y, nullptr, io);
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  EXPECT_LT(ibp->boxes[static_cast<size_t>(sm)]->lo[0], 0.01);  // IBP alone
  for (const char* arith : {"f64", "f32"}) {
    auto cr = run_crown(m->graph, m->payload, in, y, nullptr, crown_in(arith));
    ASSERT_TRUE(cr.ok()) << cr.message();
    EXPECT_EQ(cr->cut, std::vector<int64_t>{sm}) << arith;
    const DoubleBox& s = *cr->boxes[static_cast<size_t>(sm)];
    for (size_t j = 0; j < 4; ++j) {
      EXPECT_LE(s.lo[j], 0.25) << arith;
      EXPECT_GE(s.hi[j], 0.25) << arith;
      EXPECT_LT(s.hi[j] - s.lo[j], 1e-3) << arith << " element " << j;
    }
    const DoubleBox& out = *cr->boxes[static_cast<size_t>(y)];
    EXPECT_LE(out.lo[0], 1.0) << arith;
    EXPECT_GE(out.hi[0], 1.0) << arith;
    EXPECT_LT(out.hi[0] - out.lo[0], 4e-3) << arith;
    // The evaluations at the box's corners and random points are inside.
    ibp_test::Rng rng(0x50f);
    F64Context f64;
    F32Context f32;
    for (int j = 0; j < 32; ++j) {
      const std::vector<double> pt = ibp_test::box_point(rng, in[0], j);
      double v = 0;
      if (std::string(arith) == "f64") {
        auto t = ibp_test::eval_at(f64, *m, pt);
        ASSERT_TRUE(t.ok());
        v = (*t)[static_cast<size_t>(y)].data[0];
      } else {
        auto t = ibp_test::eval_at(f32, *m, pt);
        ASSERT_TRUE(t.ok());
        v = (*t)[static_cast<size_t>(y)].data[0];
      }
      EXPECT_GE(v, out.lo[0]) << arith << " point " << j;
      EXPECT_LE(v, out.hi[0]) << arith << " point " << j;
    }
  }
}

}  // namespace
}  // namespace denote
