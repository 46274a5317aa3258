// CROWN on an L2 / L1 ball (Subdomain::ball, include/denote/bounds/crown.h): every pass, the
// intermediate ones included, minimises its rows over the ball. On ACAS Xu and a small CNN the
// boxes of every node hold the network's values (f64, and f32 for the f32 bounds) at points of the
// ball; the hidden boxes narrow against the box's run, the output's bounds against the earlier
// final-rows-only minimisation (lower-only passes on the box, each row's input coefficients minimised
// over the ball); balls it cannot take are errors naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "denote/bounds/lp_ball.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "unit/ball_points.h"
#include "unit/conv2d_config.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {


// Node id's value at x (f64, or f32 with the weights rounded to f32).
std::vector<double> node_value(const Model& m, const Shape& shape, const std::vector<double>& x, int64_t id, bool f32) {
  Model one = m;
  one.output_ids = {id};
  return evaluate_at(one, shape, x, f32);
}

Result<CrownResult> on_ball(const Model& m, const DoubleBox& box, std::shared_ptr<const InputBall> ball,
                            const char* arith, const SpecMatrix* spec = nullptr) {
  CrownOptions o;
  o.arith = *parse_arith_name(arith);
  o.method = BoundMethod::Crown;
  Subdomain where;
  where.ball = std::move(ball);
  return run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], spec, o, where);
}

double total_width(const DoubleBox& b) {
  double w = 0;
  for (size_t j = 0; j < b.lo.size(); ++j) w += b.hi[j] - b.lo[j];
  return w;
}

// Every node's box (with and without the ball) holds the values at the ball's points.
void expect_boxes_hold(const Model& m, const CrownResult& r, const std::vector<std::vector<double>>& xs, bool f32) {
  const Shape& shape = m.graph.nodes[0].out_shape;
  for (int64_t id = 1; id < static_cast<int64_t>(m.graph.nodes.size()); ++id) {
    const auto& b = r.boxes[static_cast<size_t>(id)];
    if (!b) continue;
    for (const auto& x : xs) {
      const std::vector<double> y = node_value(m, shape, x, id, f32);
      for (size_t j = 0; j < y.size(); ++j) {
        ASSERT_LE(b->lo[j], y[j]) << "node " << id << " elem " << j << (f32 ? " f32" : " f64");
        ASSERT_GE(b->hi[j], y[j]) << "node " << id << " elem " << j << (f32 ? " f32" : " f64");
      }
    }
  }
}

TEST(CrownBall, AcasXuBallBoundsHoldAndBeatTheBoxAndTheFinalRowsOnly) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  const Shape shape{1, 1, 1, 5};
  const std::vector<double> c = {0.64, 0.1, -0.2, 0.475, -0.475};
  const double eps = 0.05;
  auto box = box_around(Tensor<double>(shape, c), eps);
  ASSERT_TRUE(box.ok());
  const int64_t out = m->output_ids[0];
  for (double p : {2.0, 1.0}) {
    SCOPED_TRACE(p);
    for (const char* arith : {"f64", "f32"}) {
      auto ball = std::make_shared<const InputBall>(InputBall{c, eps, p});
      auto with = on_ball(*m, *box, ball, arith);
      auto without = on_ball(*m, *box, nullptr, arith);
      ASSERT_TRUE(with.ok() && without.ok()) << with.message() << without.message();
      // The hidden boxes narrow: in all, and on some node strictly.
      double narrowed = 0;
      for (int64_t id = 1; id < out; ++id)
        if (with->boxes[static_cast<size_t>(id)] && without->boxes[static_cast<size_t>(id)])
          narrowed += total_width(*without->boxes[static_cast<size_t>(id)]) - total_width(*with->boxes[static_cast<size_t>(id)]);
      EXPECT_GT(narrowed, 0) << arith;
      expect_boxes_hold(*m, *with, ball_points(c, eps, p, 150, static_cast<uint64_t>(p) + 5), std::string(arith) == "f32");
      // The final rows alone minimised over the ball (tighten_on_ball before the engine took the ball).
      const DoubleBox& o_box = *without->boxes[static_cast<size_t>(out)];
      std::vector<double> lo = o_box.lo, hi = o_box.hi;
      const SpecMatrix I = spec_or_identity(nullptr, static_cast<int64_t>(lo.size()));
      CrownOptions side;
      side.arith = *parse_arith_name(arith);
      side.lower_only = side.input_coefficients = true;
      for (int sign : {1, -1}) {
        SpecMatrix rows = I;
        for (double& v : rows.c) v *= sign;
        auto r = run_crown(m->graph, m->payload, std::span<const DoubleBox>(&*box, 1), out, &rows, side);
        ASSERT_TRUE(r.ok() && r->input_linear);
        for (size_t k = 0; k < lo.size(); ++k) {
          const std::span<const double> a(r->input_coef.data() + k * 5, 5);
          const double v = lp_ball_min(a, box_bias(a, *box, r->spec_lo[k]), c, eps, p);
          if (sign > 0) lo[k] = std::max(lo[k], v);
          else hi[k] = std::min(hi[k], -v);
        }
      }
      double final_only = 0, engine = 0;
      for (size_t k = 0; k < lo.size(); ++k)
        final_only += hi[k] - lo[k], engine += with->spec_hi[k] - with->spec_lo[k];
      EXPECT_LT(engine, final_only) << arith;
    }
  }
}

// conv(1->3, k3, s2, p1) -> relu -> reshape -> linear 27->4 on a 6x6 image, f32-exact weights.
Model small_cnn() {
  const ConvConfig cv = conv2d_config(1, 3, 3, 2, 1);
  auto f32 = [](int64_t n, uint64_t seed) {
    std::vector<double> v = lcg_values(n, seed, 0.6);
    for (double& x : v) x = static_cast<double>(static_cast<float>(x));
    return v;
  };
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 6, 6});
  int64_t h = b.add(Op::Relu, {b.conv(x, cv, f32(27, 3), f32(3, 4))}, {}, Shape{1, 3, 3, 3});
  h = b.add(Op::Reshape, {h}, ReshapeAttrs{{1, 3, 3, 3}, {1, 27}}, Shape{1, 27});
  h = b.add(Op::Relu, {b.linear(h, 8, f32(216, 5), f32(8, 6))}, {}, Shape{1, 8});
  h = b.linear(h, 4, f32(32, 7), f32(4, 8));
  auto m = b.build({h});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(CrownBall, CnnBallBoundsHoldInF64AndF32) {
  const Model m = small_cnn();
  const Shape shape{1, 1, 6, 6};
  const std::vector<double> c = lcg_values(36, 77, 1.0);
  for (double p : {2.0, 1.0}) {
    const double eps = p == 2 ? 0.3 : 0.6;
    auto box = box_around(Tensor<double>(shape, c), eps);
    ASSERT_TRUE(box.ok());
    for (const char* arith : {"f64", "f32"}) {
      auto with = on_ball(m, *box, std::make_shared<const InputBall>(InputBall{c, eps, p}), arith);
      auto without = on_ball(m, *box, nullptr, arith);
      ASSERT_TRUE(with.ok() && without.ok()) << with.message();
      const size_t out = static_cast<size_t>(m.output_ids[0]);
      EXPECT_LT(total_width(*with->boxes[out]), total_width(*without->boxes[out])) << p << " " << arith;
      expect_boxes_hold(m, *with, ball_points(c, eps, p, 120, 9), std::string(arith) == "f32");
    }
  }
}

TEST(CrownBall, BallsTheEngineCannotTakeAreErrors) {
  const Model m = small_cnn();
  const std::vector<double> c(36, 0.0);
  auto box = box_around(Tensor<double>(Shape{1, 1, 6, 6}, c), 0.1);
  ASSERT_TRUE(box.ok());
  auto expect_error = [&](InputBall b, BoundMethod method, const std::string& what) {
    CrownOptions o;
    o.method = method;
    Subdomain where;
    where.ball = std::make_shared<const InputBall>(std::move(b));
    auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&*box, 1), m.output_ids[0], nullptr, o, where);
    ASSERT_FALSE(r.ok()) << what;
    EXPECT_EQ(r.status().field(), "ball");
    EXPECT_NE(r.message().find(what), std::string::npos) << r.message();
  };
  expect_error(InputBall{std::vector<double>(35, 0.0), 0.1, 2}, BoundMethod::Crown, "center of 35 values, the input has 36");
  expect_error(InputBall{c, 0.1, 3}, BoundMethod::Crown, "p 3: expected 1 or 2");
  expect_error(InputBall{c, NAN, 2}, BoundMethod::Crown, "eps nan");
}

// alpha-CROWN on a ball: never looser than CROWN on the ball nor than alpha-CROWN on the box, and sound.
TEST(CrownBall, AlphaCrownOnABallTakesTheTighterOfBoth) {
  const Model m = small_cnn();
  const Shape shape{1, 1, 6, 6};
  const std::vector<double> c = lcg_values(36, 78, 1.0);
  auto box = box_around(Tensor<double>(shape, c), 0.3);
  ASSERT_TRUE(box.ok());
  auto ball = std::make_shared<const InputBall>(InputBall{c, 0.3, 2});
  CrownOptions o;
  o.method = BoundMethod::AlphaCrown;
  o.alpha_iters = 10;
  Subdomain on, off;
  on.ball = ball;
  const size_t out = static_cast<size_t>(m.output_ids[0]);
  auto a_ball = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&*box, 1), m.output_ids[0], nullptr, o, on);
  auto a_box = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&*box, 1), m.output_ids[0], nullptr, o, off);
  auto c_ball = on_ball(m, *box, ball, "f64");
  ASSERT_TRUE(a_ball.ok() && a_box.ok() && c_ball.ok()) << a_ball.message();
  for (size_t k = 0; k < a_ball->boxes[out]->lo.size(); ++k) {
    EXPECT_GE(a_ball->boxes[out]->lo[k], std::max(a_box->boxes[out]->lo[k], c_ball->boxes[out]->lo[k]));
    EXPECT_LE(a_ball->boxes[out]->hi[k], std::min(a_box->boxes[out]->hi[k], c_ball->boxes[out]->hi[k]));
  }
  expect_boxes_hold(m, *a_ball, ball_points(c, 0.3, 2, 60, 4), false);
}

}  // namespace
}  // namespace denote
