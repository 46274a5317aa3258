// Forward linear intermediate bounds (CrownOptions::forward_intermediate, src/bounds/crown_symbolic.h):
// tight on affine chains (the exact range up to rounding, where IBP is loose), sound on deep random
// relu networks and on ACAS Xu at sampled f32 / f64 points, never looser than IBP, no change where
// they do not apply. The random-graph containment test is in crown_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"
#include "relu_nets.h"

namespace denote {
namespace {

CrownOptions forward_only(const std::string& arith) {
  CrownOptions o;
  o.method = BoundMethod::Crown;
  o.arith = *parse_arith_name(arith);
  o.forward_intermediate = true;
  o.intermediate_crown = false;
  return o;
}

// x (5) - c -> linear 5 -> 7 -> linear 7 -> 3: the output is affine in x, so its range on the box is
// attained at corners; forward bounds find it up to rounding, IBP (interval matrix products) not.
TEST(CrownForward, AffineChainIsTightWhereIbpIsNot) {
  ibp_test::Rng rng(0xaff);
  for (int t = 0; t < 20; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({5});
    std::vector<double> c(5), w1(35), b1(7), w2(21), b2(3);
    for (double& v : c) v = rng.real(-0.5, 0.5);
    for (double& v : w1) v = rng.real(-1, 1);
    for (double& v : b1) v = rng.real(-1, 1);
    for (double& v : w2) v = rng.real(-1, 1);
    for (double& v : b2) v = rng.real(-1, 1);
    const int64_t y1 = b.linear(b.add(Op::Sub, {x, b.constant({5}, c)}), 7, w1, b1);
    const int64_t y = b.linear(y1, 3, w2, b2);
    auto m = b.build({y});
    ASSERT_TRUE(m.ok()) << m.message();
    DoubleBox box{{5}, {}, {}};
    for (int i = 0; i < 5; ++i) {
      const double mid = rng.real(-1, 1), r = rng.real(0.01, 0.5);
      box.lo.push_back(mid - r), box.hi.push_back(mid + r);
    }
    const std::vector<DoubleBox> in = {box};
    auto fw = run_crown(m->graph, m->payload, in, y, nullptr, forward_only("f64"));
    CrownOptions ibp_o;
    ibp_o.method = BoundMethod::Ibp;
    auto ibp = run_crown(m->graph, m->payload, in, y, nullptr, ibp_o);
    ASSERT_TRUE(fw.ok() && ibp.ok());
    // The exact range from the 32 corners (each evaluated in long double, far below the tolerance).
    std::vector<long double> lo(3, INFINITY), hi(3, -INFINITY);
    for (int corner = 0; corner < 32; ++corner) {
      std::vector<long double> v(7);
      for (int o = 0; o < 7; ++o) {
        v[o] = b1[o];
        for (int i = 0; i < 5; ++i)
          v[o] += static_cast<long double>(w1[o * 5 + i]) * ((corner >> i & 1 ? box.hi[i] : box.lo[i]) - c[i]);
      }
      for (int o = 0; o < 3; ++o) {
        long double s = b2[o];
        for (int i = 0; i < 7; ++i) s += static_cast<long double>(w2[o * 7 + i]) * v[i];
        lo[o] = std::min(lo[o], s), hi[o] = std::max(hi[o], s);
      }
    }
    const DoubleBox& f = *fw->boxes[static_cast<size_t>(y)];
    const DoubleBox& ib = *ibp->boxes[static_cast<size_t>(y)];
    double ibp_slack = 0;
    for (int o = 0; o < 3; ++o) {
      EXPECT_LE(f.lo[o], lo[o]) << "trial " << t << " output " << o;
      EXPECT_GE(f.hi[o], hi[o]) << "trial " << t << " output " << o;
      EXPECT_GT(f.lo[o], lo[o] - 1e-12) << "trial " << t << " output " << o;
      EXPECT_LT(f.hi[o], hi[o] + 1e-12) << "trial " << t << " output " << o;
      ibp_slack += static_cast<double>((lo[o] - ib.lo[o]) + (ib.hi[o] - hi[o]));
    }
    EXPECT_GT(ibp_slack, 1e-6) << "trial " << t << ": IBP was exact, the test shows nothing";
  }
}

// Deep random relu networks (1 to 6 layers), forward bounds alone: every node's box contains the
// f64 and f32 evaluations at 64 points (corners, midpoint, random), and lies inside IBP's box.
TEST(CrownForward, ReluNetworksContainEvaluatedValuesAndNarrowIbp) {
  ibp_test::Rng rng(0x5e1);
  int64_t checks = 0, narrower = 0;
  for (int t = 0; t < 60; ++t) {
    const ReluNet net = random_relu_net(rng, 1 + t % 6);
    const std::vector<DoubleBox> in = {net.box};
    for (const char* arith : {"f64", "f32"}) {
      auto fw = run_crown(net.m.graph, net.m.payload, in, net.out, nullptr, forward_only(arith));
      CrownOptions ibp_o;
      ibp_o.method = BoundMethod::Ibp;
      ibp_o.arith = *parse_arith_name(arith);
      auto ibp = run_crown(net.m.graph, net.m.payload, in, net.out, nullptr, ibp_o);
      ASSERT_TRUE(fw.ok() && ibp.ok()) << (fw.ok() ? ibp.message() : fw.message());
      for (size_t id = 0; id < fw->boxes.size(); ++id)
        for (size_t i = 0; i < fw->boxes[id]->lo.size(); ++i) {
          ASSERT_GE(fw->boxes[id]->lo[i], ibp->boxes[id]->lo[i]);
          ASSERT_LE(fw->boxes[id]->hi[i], ibp->boxes[id]->hi[i]);
          narrower += fw->boxes[id]->hi[i] - fw->boxes[id]->lo[i] < ibp->boxes[id]->hi[i] - ibp->boxes[id]->lo[i];
        }
      for (int j = 0; j < 64; ++j) {
        const std::vector<double> x = ibp_test::box_point(rng, net.box, j);
        if (std::string(arith) == "f64") {
          F64Context ctx;
          auto table = ibp_test::eval_at(ctx, net.m, x);
          ASSERT_TRUE(table.ok());
          ibp_test::expect_inside(ctx, *table, DoubleIbp{fw->boxes, {}}, "f64", checks);
        } else {
          F32Context ctx;
          auto table = ibp_test::eval_at(ctx, net.m, x);
          ASSERT_TRUE(table.ok());
          ibp_test::expect_inside(ctx, *table, DoubleIbp{fw->boxes, {}}, "f32", checks);
        }
        ASSERT_FALSE(HasFatalFailure()) << "network " << t << " (" << 1 + t % 6 << " layers), " << arith;
      }
    }
  }
  EXPECT_GT(checks, 50000);
  EXPECT_GT(narrower, 500);  // the forward functions did tighten boxes, not only copy IBP's
}

// ACAS Xu 1_1 on small boxes of property 1's region (the boxes branch and bound meets): the f32
// evaluation (onnxruntime's arithmetic) at random points stays inside every forward box.
TEST(CrownForward, AcasXuSmallBoxesContainF32Values) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  const int64_t in_id = m->graph.input_ids()[0], out = m->output_ids[0];
  const Shape shape = m->graph.nodes[static_cast<size_t>(in_id)].out_shape;
  const std::vector<double> lo = {0.6, -0.5, -0.5, 0.45, -0.5}, hi = {0.679857769, 0.5, 0.5, 0.5, -0.45};
  ibp_test::Rng rng(0xac5);
  int64_t checks = 0;
  for (int t = 0; t < 40; ++t) {
    DoubleBox box{shape, {}, {}};
    const double frac = t < 20 ? 0.05 : 0.3;
    for (int i = 0; i < 5; ++i) {
      const double w = (hi[i] - lo[i]) * frac, a = lo[i] + rng.unit() * (hi[i] - lo[i] - w);
      box.lo.push_back(a), box.hi.push_back(a + w);
    }
    const std::vector<DoubleBox> in = {box};
    auto fw = run_crown(m->graph, m->payload, in, out, nullptr, forward_only("f32"));
    ASSERT_TRUE(fw.ok()) << fw.message();
    F32Context ctx;
    const Payload<float> p = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
    for (int j = 0; j < 40; ++j) {
      const std::vector<double> x = ibp_test::box_point(rng, DoubleBox{{5}, box.lo, box.hi}, j);
      std::vector<float> xf(x.begin(), x.end());
      std::vector<Tensor<float>> inputs = {Tensor<float>(shape, xf)};
      auto table = denote_all(m->graph, p, std::span<const Tensor<float>>(inputs), ctx);
      ASSERT_TRUE(table.ok()) << table.message();
      ibp_test::expect_inside(ctx, *table, DoubleIbp{fw->boxes, {}}, "f32", checks);
      ASSERT_FALSE(HasFatalFailure()) << "box " << t << " point " << j;
    }
  }
  EXPECT_GT(checks, 100000);
}

// A normalised input, ((x - mean) / std) * k with mean and std one-element constants broadcast (eran's
// form) and k per element of either sign, then linear 5 -> 7 -> relu -> linear 3 -> relu -> linear 2: the
// scale steps keep the forward functions (the hidden linear 3's boxes narrower than IBP's, which they
// would equal had the functions stopped at a scale step; the normalised node's box the exact range up
// to rounding), and every box contains the f64 and f32 evaluations at sampled points.
TEST(CrownForward, NormalisedInputsKeepTheForwardFunctions) {
  ibp_test::Rng rng(0x5ca1e);
  int narrower = 0;  // hidden elements whose forward box is narrower than IBP's
  for (int t = 0; t < 10; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({5});
    const double mean = 0.25, std_dev = 0.5;  // binary32-exact: the f32 evaluation reads them exactly
    std::vector<double> k(5), w1(35), b1(7), w2(21), b2(3);
    for (int i = 0; i < 5; ++i) k[static_cast<size_t>(i)] = i % 2 ? -1.5 : 0.75;
    for (double& v : w1) v = rng.real(-1, 1);
    for (double& v : b1) v = rng.real(-1, 1);
    for (double& v : w2) v = rng.real(-1, 1);
    for (double& v : b2) v = rng.real(-1, 1);
    auto spread = [&](double v) { return b.add(Op::BroadcastTo, {b.constant({1}, {v})}, BroadcastAttrs{{1}, {5}}); };
    const int64_t centred = b.binary(Op::Sub, x, spread(mean));
    const int64_t scaled = b.binary(Op::Div, centred, spread(std_dev));
    const int64_t z = b.binary(Op::MulElem, b.constant({5}, k), scaled);
    const int64_t h = b.linear(b.unary(Op::Relu, b.linear(z, 7, w1, b1)), 3, w2, b2);
    const int64_t y = b.linear(b.unary(Op::Relu, h), 2, std::vector<double>(6, 0.5), std::vector<double>(2, 0.0));
    auto m = b.build({y});
    ASSERT_TRUE(m.ok()) << m.message();
    DoubleBox box{{5}, {}, {}};
    for (int i = 0; i < 5; ++i) {
      const double mid = rng.real(-1, 1), r = rng.real(0.01, 0.3);
      box.lo.push_back(mid - r), box.hi.push_back(mid + r);
    }
    const std::vector<DoubleBox> in = {box};
    int64_t checks = 0;
    for (const char* arith : {"f64", "f32"}) {
      auto fw = run_crown(m->graph, m->payload, in, y, nullptr, forward_only(arith));
      CrownOptions ibp_o;
      ibp_o.method = BoundMethod::Ibp;
      ibp_o.arith = *parse_arith_name(arith);
      auto ibp = run_crown(m->graph, m->payload, in, y, nullptr, ibp_o);
      ASSERT_TRUE(fw.ok() && ibp.ok()) << (fw.ok() ? ibp.message() : fw.message());
      const DoubleBox &fh = *fw->boxes[static_cast<size_t>(h)], &ih = *ibp->boxes[static_cast<size_t>(h)];
      for (size_t o = 0; o < 3; ++o) narrower += fh.hi[o] - fh.lo[o] < ih.hi[o] - ih.lo[o] - 1e-9;
      // z is affine per element: its exact range is at the box's ends.
      const DoubleBox& zb = *fw->boxes[static_cast<size_t>(z)];
      for (size_t i = 0; i < 5; ++i) {
        const long double a = (box.lo[i] - 0.25L) / 0.5L * k[i], c = (box.hi[i] - 0.25L) / 0.5L * k[i];
        EXPECT_LE(zb.lo[i], std::min(a, c)) << arith << " element " << i;
        EXPECT_GE(zb.hi[i], std::max(a, c)) << arith << " element " << i;
        EXPECT_GT(zb.lo[i], std::min(a, c) - 1e-5) << arith << " element " << i;  // f32's rounding terms
        EXPECT_LT(zb.hi[i], std::max(a, c) + 1e-5) << arith << " element " << i;
      }
      for (int j = 0; j < 32; ++j) {
        const std::vector<double> pt = ibp_test::box_point(rng, box, j);
        if (std::string(arith) == "f64") {
          F64Context ctx;
          auto table = ibp_test::eval_at(ctx, *m, pt);
          ASSERT_TRUE(table.ok());
          ibp_test::expect_inside(ctx, *table, DoubleIbp{fw->boxes, {}}, "f64", checks);
        } else {
          F32Context ctx;
          auto table = ibp_test::eval_at(ctx, *m, pt);
          ASSERT_TRUE(table.ok());
          ibp_test::expect_inside(ctx, *table, DoubleIbp{fw->boxes, {}}, "f32", checks);
        }
        ASSERT_FALSE(HasFatalFailure()) << "trial " << t << " " << arith;
      }
    }
    EXPECT_GT(checks, 500);
  }
  EXPECT_GT(narrower, 5);
}

// Graphs the forward bounds do not take (two inputs; an input of more than 64 elements) get exactly
// the boxes of the run without them.
TEST(CrownForward, NoChangeWhereTheyDoNotApply) {
  GraphBuilder b;
  const int64_t x = b.input({65});
  std::vector<double> w(65 * 3), bias(3, 0.25);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(static_cast<double>(i));
  const int64_t y = b.linear(b.unary(Op::Relu, b.linear(x, 3, w, bias)), 3, std::vector<double>(9, 0.5), bias);
  auto m = b.build({y});
  ASSERT_TRUE(m.ok());
  const std::vector<DoubleBox> in = {DoubleBox{{65}, std::vector<double>(65, -1), std::vector<double>(65, 1)}};
  CrownOptions plain = forward_only("f64");
  plain.forward_intermediate = false;
  auto a = run_crown(m->graph, m->payload, in, y, nullptr, forward_only("f64"));
  auto c = run_crown(m->graph, m->payload, in, y, nullptr, plain);
  ASSERT_TRUE(a.ok() && c.ok());
  for (size_t id = 0; id < a->boxes.size(); ++id) {
    EXPECT_EQ(a->boxes[id]->lo, c->boxes[id]->lo) << "node " << id;
    EXPECT_EQ(a->boxes[id]->hi, c->boxes[id]->hi) << "node " << id;
  }
}

}  // namespace
}  // namespace denote
