// Forward linear bounds through convolutional generators (src/bounds/crown_symbolic.h: conv, batch-norm,
// the storage-only ops of an upsampling ConvTranspose lowered to gather + concat + conv, as the ONNX
// importer writes VNN-COMP 2023's cGAN generators), and CROWN passes that stop at them
// (CrownOptions::forward_cut_work, "forward+crown"): every box holds the exact, f64 and f32 evaluations
// at sampled points, lies inside IBP's, and the forward functions narrow the boxes past the first conv
// where IBP's grow.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "conv2d_config.h"
#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

std::vector<double> draw(ibp_test::Rng& rng, size_t n, double lo, double hi) {
  std::vector<double> v(n);
  for (double& x : v) x = rng.real(lo, hi);
  return v;
}

// x (5) -> linear 8 -> reshape [1, 2, 2, 2] -> batch-norm -> zeros inserted between and around the
// pixels (concat with a constant, gather; both spatial axes: [1, 2, 5, 5]) -> conv 2->3 k2 -> batch-norm
// -> relu -> conv 3->2 k3 s2 p1 -> relu -> flatten -> linear 2.
struct Generator {
  Model m;
  int64_t out = -1, first_conv = -1;
};
Generator generator(ibp_test::Rng& rng) {
  GraphBuilder b;
  Generator gen;
  const int64_t x = b.input({5});
  int64_t h = b.linear(x, 8, draw(rng, 40, -1, 1), draw(rng, 8, -0.5, 0.5));
  h = b.add(Op::Reshape, {h}, ReshapeAttrs{{8}, {1, 2, 2, 2}}, Shape{1, 2, 2, 2});
  auto batch_norm = [&](int64_t v, int64_t ch) {
    const int64_t y = b.unary(Op::BatchNormEval, v, BatchNormAttrs{1, ch});
    b.payload().batch_norm[y] = BatchNormRecord<double>{draw(rng, ch, -2, 2), draw(rng, ch, -0.5, 0.5),
                                                        draw(rng, ch, -0.5, 0.5), draw(rng, ch, 0.2, 2), 1e-5};
    return y;
  };
  h = batch_norm(h, 2);
  const std::vector<int64_t> spread = {2, 0, 2, 1, 2};  // index 2: the appended zero
  h = b.add(Op::Concat, {h, b.constant({1, 2, 1, 2}, std::vector<double>(4, 0.0))}, AxisAttrs{2});
  h = b.add(Op::Gather, {h}, GatherAttrs{2, spread});
  h = b.add(Op::Concat, {h, b.constant({1, 2, 5, 1}, std::vector<double>(10, 0.0))}, AxisAttrs{3});
  h = b.add(Op::Gather, {h}, GatherAttrs{3, spread});
  gen.first_conv = h = b.conv(h, conv2d_config(2, 3, 2, 1, 0), draw(rng, 24, -1, 1), draw(rng, 3, -0.3, 0.3));
  h = b.unary(Op::Relu, batch_norm(h, 3));
  h = b.unary(Op::Relu, b.conv(h, conv2d_config(3, 2, 3, 2, 1), draw(rng, 54, -1, 1), draw(rng, 2, -0.3, 0.3)));
  h = b.add(Op::Flatten, {h}, ValueShapeAttrs{{1, 2, 2, 2}}, Shape{8});
  gen.out = b.linear(h, 2, draw(rng, 16, -1, 1), draw(rng, 2, -0.5, 0.5));
  auto m = b.build({gen.out});
  EXPECT_TRUE(m.ok()) << m.message();
  gen.m = *m;
  return gen;
}

CrownOptions options(const std::string& arith, const std::string& intermediate) {
  CrownOptions o;
  o.method = BoundMethod::Crown;
  o.arith = *parse_arith_name(arith);
  EXPECT_TRUE(set_intermediate(intermediate, o));
  return o;
}

// Every box holds the exact value (MPFR) and the arithmetic's evaluation at 24 points of the box.
void expect_holds(ibp_test::Rng& rng, const Model& m, const DoubleBox& box, const DoubleIbp& boxes,
                  const std::string& arith, int64_t& checks) {
  for (int j = 0; j < 24; ++j) {
    const std::vector<double> x = ibp_test::box_point(rng, box, j);
    RealContext real(200);
    auto exact = ibp_test::eval_at(real, m, x);
    ASSERT_TRUE(exact.ok()) << exact.message();
    ibp_test::expect_inside(real, *exact, boxes, "exact", checks);
    if (arith == "f64") {
      F64Context ctx;
      auto t = ibp_test::eval_at(ctx, m, x);
      ASSERT_TRUE(t.ok());
      ibp_test::expect_inside(ctx, *t, boxes, "f64", checks);
    } else {
      F32Context ctx;
      auto t = ibp_test::eval_at(ctx, m, x);
      ASSERT_TRUE(t.ok());
      ibp_test::expect_inside(ctx, *t, boxes, "f32", checks);
    }
  }
}

DoubleBox random_box(ibp_test::Rng& rng) {
  DoubleBox box{{5}, {}, {}};
  for (int i = 0; i < 5; ++i) {
    const double mid = rng.real(-1, 1), r = i == 3 ? 0.0 : rng.real(0.01, 0.3);  // one input pinned
    box.lo.push_back(mid - r), box.hi.push_back(mid + r);
  }
  return box;
}

TEST(CrownForwardCnn, GeneratorBoxesHoldEvaluationsAndNarrowIbp) {
  ibp_test::Rng rng(0x9e7);
  int64_t checks = 0, narrower = 0, conv_elems = 0;
  for (int t = 0; t < 12; ++t) {
    const Generator gen = generator(rng);
    const DoubleBox box = random_box(rng);
    const std::vector<DoubleBox> in = {box};
    for (const std::string arith : {"f64", "f32"}) {
      auto fw = run_crown(gen.m.graph, gen.m.payload, in, gen.out, nullptr, options(arith, "forward"));
      CrownOptions ibp_o = options(arith, "ibp");
      ibp_o.method = BoundMethod::Ibp;
      auto ibp = run_crown(gen.m.graph, gen.m.payload, in, gen.out, nullptr, ibp_o);
      ASSERT_TRUE(fw.ok() && ibp.ok()) << (fw.ok() ? ibp.message() : fw.message());
      for (size_t id = 0; id < fw->boxes.size(); ++id)
        for (size_t i = 0; i < fw->boxes[id]->lo.size(); ++i) {
          ASSERT_GE(fw->boxes[id]->lo[i], ibp->boxes[id]->lo[i]) << "node " << id;
          ASSERT_LE(fw->boxes[id]->hi[i], ibp->boxes[id]->hi[i]) << "node " << id;
          if (static_cast<int64_t>(id) < gen.first_conv) continue;
          ++conv_elems;
          narrower += fw->boxes[id]->hi[i] - fw->boxes[id]->lo[i] < 0.99 * (ibp->boxes[id]->hi[i] - ibp->boxes[id]->lo[i]);
        }
      expect_holds(rng, gen.m, box, DoubleIbp{fw->boxes, {}}, arith, checks);
      ASSERT_FALSE(HasFatalFailure()) << "generator " << t << ", " << arith;
    }
  }
  EXPECT_GT(checks, 30000);
  // The functions reach through the conv, batch-norm and storage-only steps (they stopped at the first
  // gather before: every box past it was IBP's).
  EXPECT_GT(narrower, conv_elems / 4);
}

// forward+crown: the passes stop at forward functions once going on costs more than forward_cut_work
// multiply-adds (1: at the first node below each start). Every run holds the evaluations; where no pass
// reaches the default budget (these small networks) the boxes are those of the passes that never stop
// (forward_cut_work 0), bit for bit.
TEST(CrownForwardCnn, PassesStoppingAtForwardFunctionsHold) {
  ibp_test::Rng rng(0xc07);
  int64_t checks = 0;
  for (int t = 0; t < 8; ++t) {
    const Generator gen = generator(rng);
    const DoubleBox box = random_box(rng);
    const std::vector<DoubleBox> in = {box};
    for (const std::string arith : {"f64", "f32"}) {
      std::vector<CrownResult> runs;
      for (double work : {1.0, kForwardCutWork, 0.0}) {
        CrownOptions o = options(arith, "forward+crown");
        o.forward_cut_work = work;
        auto r = run_crown(gen.m.graph, gen.m.payload, in, gen.out, nullptr, o);
        ASSERT_TRUE(r.ok()) << r.message();
        expect_holds(rng, gen.m, box, DoubleIbp{r->boxes, {}}, arith, checks);
        ASSERT_FALSE(HasFatalFailure()) << "generator " << t << ", " << arith << ", work " << work;
        runs.push_back(std::move(*r));
      }
      for (size_t id = 0; id < runs[1].boxes.size(); ++id) {
        EXPECT_EQ(runs[1].boxes[id]->lo, runs[2].boxes[id]->lo) << "node " << id;
        EXPECT_EQ(runs[1].boxes[id]->hi, runs[2].boxes[id]->hi) << "node " << id;
      }
    }
  }
  EXPECT_GT(checks, 30000);
}

// The estimate verify chooses intermediate bounds by, on a chain by hand: input 5 -> linear 3 -> relu ->
// linear 2 -> relu -> linear 1. One row's backward steps up to each node (id order): 5, 20 (15 products),
// 23, 29 (6), 31, 33; the relus read linear 3 (2 x 3 rows x 20) and linear 2 (2 x 2 rows x 29): 236.
TEST(CrownForwardCnn, IntermediateWorkEstimateByHand) {
  GraphBuilder b;
  const int64_t x = b.input({5});
  const int64_t h = b.unary(Op::Relu, b.linear(x, 3, std::vector<double>(15, 0.5), std::vector<double>(3, 0.0)));
  const int64_t g = b.unary(Op::Relu, b.linear(h, 2, std::vector<double>(6, 0.5), std::vector<double>(2, 0.0)));
  auto m = b.build({b.linear(g, 1, std::vector<double>(2, 0.5), std::vector<double>(1, 0.0))});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(crown_intermediate_work(m->graph, m->payload), 236.0);
}

}  // namespace
}  // namespace denote
