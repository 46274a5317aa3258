// Linear bounds over L2 / L1 balls (include/denote/bounds/lp_ball.h): box_bias and lp_ball_min against the
// exact values (MPFR at 256 bits), tighten_on_ball against the network evaluated at points of the ball, and
// the CLI's --norm.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include <mpfr.h>

#include "denote/bounds/lp_ball.h"
#include "denote/io/onnx.h"
#include "unit/cli_run.h"
#include "unit/ball_points.h"
#include "unit/evaluate_at.h"

namespace denote {
namespace {

// x's value to 256 bits, the sum of products exact enough to compare with one rounded double.
struct Big {
  mpfr_t v;
  Big() { mpfr_init2(v, 256), mpfr_set_zero(v, 1); }
  ~Big() { mpfr_clear(v); }
  double down() const { return mpfr_get_d(v, MPFR_RNDD); }
};

TEST(LpBall, BiasAndBallMinimumAreBelowTheExactValues) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  for (int t = 0; t < 300; ++t) {
    const size_t n = 1 + rng() % 40;
    std::vector<double> a(n), c(n);
    DoubleBox box{{static_cast<int64_t>(n)}, std::vector<double>(n), std::vector<double>(n)};
    const double eps = std::ldexp(std::fabs(u(rng)), -static_cast<int>(rng() % 8));
    for (size_t j = 0; j < n; ++j) {
      a[j] = u(rng) * std::ldexp(1.0, static_cast<int>(rng() % 20) - 10);
      c[j] = u(rng) * 100;
      box.lo[j] = c[j] - eps, box.hi[j] = c[j] + eps;
    }
    const double lower = u(rng);
    // box_bias: lower - min over the box of a . x, exactly.
    Big minbox, t1;
    for (size_t j = 0; j < n; ++j) {
      mpfr_set_d(t1.v, a[j] >= 0 ? box.lo[j] : box.hi[j], MPFR_RNDN);
      mpfr_mul_d(t1.v, t1.v, a[j], MPFR_RNDN);
      mpfr_add(minbox.v, minbox.v, t1.v, MPFR_RNDN);
    }
    Big want;
    mpfr_set_d(want.v, lower, MPFR_RNDN);
    mpfr_sub(want.v, want.v, minbox.v, MPFR_RNDN);
    const double bias = box_bias(a, box, lower);
    EXPECT_LE(bias, want.down());
    EXPECT_GE(bias, want.down() - 1e-9 * (1 + std::fabs(want.down()))) << "far below the exact value";
    // lp_ball_min: a . c + bias - eps ||a||_q, exactly (p = 2: the norm through MPFR's square root).
    for (double p : {1.0, 2.0}) {
      Big dot, norm, tmp;
      for (size_t j = 0; j < n; ++j) {
        mpfr_set_d(tmp.v, a[j], MPFR_RNDN);
        mpfr_mul_d(t1.v, tmp.v, c[j], MPFR_RNDN);
        mpfr_add(dot.v, dot.v, t1.v, MPFR_RNDN);
        if (p == 2) {
          mpfr_sqr(t1.v, tmp.v, MPFR_RNDN);
          mpfr_add(norm.v, norm.v, t1.v, MPFR_RNDN);
        } else {
          mpfr_abs(t1.v, tmp.v, MPFR_RNDN);
          mpfr_max(norm.v, norm.v, t1.v, MPFR_RNDN);
        }
      }
      if (p == 2) mpfr_sqrt(norm.v, norm.v, MPFR_RNDU);
      mpfr_mul_d(norm.v, norm.v, eps, MPFR_RNDU);
      Big exact;
      mpfr_sub(exact.v, dot.v, norm.v, MPFR_RNDD);
      mpfr_add_d(exact.v, exact.v, bias, MPFR_RNDD);
      const double got = lp_ball_min(a, bias, c, eps, p);
      EXPECT_LE(got, exact.down()) << "p " << p;
      EXPECT_GE(got, exact.down() - 1e-9 * (1 + std::fabs(exact.down()))) << "p " << p;
    }
  }
}


TEST(LpBall, TightenedBoundsHoldOnTheBallAndNeverLoosen) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  const Shape shape{1, 1, 1, 5};
  const std::vector<double> c = {0.64, 0.1, -0.2, 0.475, -0.475};
  const double eps = 0.02;
  auto box = box_around(Tensor<double>(shape, c), eps);
  ASSERT_TRUE(box.ok());
  for (double p : {2.0, 1.0}) {
    auto r = bound_with(*m, {*box}, "f64", BoundMethod::Crown);
    ASSERT_TRUE(r.ok()) << r.message();
    const DoubleBox out = *r->boxes[static_cast<size_t>(m->output_ids[0])];
    std::vector<double> lo = out.lo, hi = out.hi;
    CrownOptions o;
    ASSERT_TRUE(tighten_on_ball(m->graph, m->payload, *box, c, eps, p, m->output_ids[0], nullptr, o, lo, hi).ok());
    bool tighter = false;
    for (size_t k = 0; k < lo.size(); ++k) {
      EXPECT_GE(lo[k], out.lo[k]);
      EXPECT_LE(hi[k], out.hi[k]);
      tighter = tighter || lo[k] > out.lo[k] || hi[k] < out.hi[k];
    }
    EXPECT_TRUE(tighter) << "p " << p;
    for (const auto& x : ball_points(c, eps, p, 300, static_cast<uint64_t>(p))) {
      const std::vector<double> y = evaluate_at(*m, shape, x, false);
      for (size_t k = 0; k < y.size(); ++k) {
        EXPECT_LE(lo[k], y[k]) << "p " << p << " row " << k;
        EXPECT_GE(hi[k], y[k]) << "p " << p << " row " << k;
      }
    }
  }
}

TEST(LpBall, CliNorm) {
  const std::string model = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";
  const std::string x = " --center '[[[[0.64,0.1,-0.2,0.475,-0.475]]]]' --eps 0.02 --method crown";
  const testing::CliRun l2 = testing::run_cli("bounds " + model + x + " --norm 2");
  EXPECT_EQ(l2.code, 0) << l2.err;
  EXPECT_NE(l2.out.find("norm 2 (bounded on the ball)"), std::string::npos) << l2.out;
  EXPECT_EQ(testing::run_cli("bounds " + model + x + " --norm 3").code, 2);
  const testing::CliRun with_box =
      testing::run_cli("bounds " + model + " --box '[[[[0,0,0,0,0]]]]' '[[[[1,1,1,1,1]]]]' --norm 1");
  EXPECT_EQ(with_box.code, 2);
  EXPECT_NE(with_box.err.find("--norm goes with --center and --eps"), std::string::npos) << with_box.err;
}

}  // namespace
}  // namespace denote
