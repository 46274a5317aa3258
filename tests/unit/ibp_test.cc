// Interval bound propagation: the six-node graph against the numbers of SPEC-IR.md / SPEC-NUMERICS.md
// (auto_LiRPA 0.7.1 and the seed), random graphs with random input boxes checked at points evaluated
// with MPFR (RealContext, 200 bits) and in the endpoint arithmetic, and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"

namespace denote {
namespace {

DoubleIbp six_node_boxes(std::string_view arith, double eps = 0.05) {
  const Model m = six_node_model();
  auto box = box_around(Tensor<double>({4}, six_node_x0()), eps);
  EXPECT_TRUE(box.ok());
  std::vector<DoubleBox> in = {*box};
  auto r = run_ibp_double(m.graph, m.payload, in, arith);
  EXPECT_TRUE(r.ok()) << r.message();
  return *r;
}

// The published boxes are printed with 6 decimals: ours must agree to that print (+ a few ulps).
void expect_published(const DoubleBox& b, const std::vector<double>& lo, const std::vector<double>& hi) {
  ASSERT_EQ(b.lo.size(), lo.size());
  for (size_t i = 0; i < lo.size(); ++i) {
    EXPECT_NEAR(b.lo[i], lo[i], 5.1e-7) << "lo " << i;
    EXPECT_NEAR(b.hi[i], hi[i], 5.1e-7) << "hi " << i;
  }
}

TEST(Ibp, SixNodeBoxesMatchTheSeedInBinary32) {
  const DoubleIbp r = six_node_boxes("binary32");
  ASSERT_EQ(r.boxes.size(), 6u);
  for (const auto& b : r.boxes) ASSERT_TRUE(b.has_value());
  expect_published(*r.boxes[1], {0.087, -0.0315, -0.0075, 0.0675, -0.015}, {0.127, -0.0025, 0.0155, 0.0945, 0.009});
  expect_published(*r.boxes[2], {0.087, 0, 0, 0.0675, 0}, {0.127, 0, 0.0155, 0.0945, 0.009});
  EXPECT_EQ(r.boxes[2]->lo[1], 0.0);
  EXPECT_EQ(r.boxes[2]->hi[1], 0.0);
  expect_published(*r.boxes[3], {0.025445, -0.016025, 0.011355}, {0.029815, -0.01222, 0.018045});
  expect_published(*r.boxes[4], {0.020775}, {0.035640});
  // Node 5: the tight tanh rule, inside TorchLean's [-1, 1] and the issue's [0.0207, 0.0357].
  expect_published(*r.boxes[5], {0.020772}, {0.035625});
  EXPECT_GT(r.boxes[5]->lo[0], 0.0207);
  EXPECT_LT(r.boxes[5]->hi[0], 0.0357);
}

TEST(Ibp, SixNodeOutputContainsAutoLirpaIbpAndTheExactRange) {
  // SPEC-NUMERICS.md: auto_LiRPA IBP y in [0.0207720117, 0.0356249176] (f64, not outward), exact
  // range [0.024744947597, 0.030680368236]. Sound boxes may be wider by a few ulps, never narrower.
  for (const char* arith : {"f64", "f32", "binary32", "binary64", "bfloat16"}) {
    const DoubleIbp r = six_node_boxes(arith);
    ASSERT_TRUE(r.boxes[5]) << arith;
    const double ulp = std::string_view(arith) == "bfloat16" ? 0 : 2e-9;
    EXPECT_LE(r.boxes[5]->lo[0], 0.0207720117 + ulp) << arith;
    EXPECT_GE(r.boxes[5]->hi[0], 0.0356249176 - ulp) << arith;
    EXPECT_LE(r.boxes[5]->lo[0], 0.024744947597) << arith;
    EXPECT_GE(r.boxes[5]->hi[0], 0.030680368236) << arith;
    if (std::string_view(arith) != "bfloat16") {  // not much wider either: a few ulps per layer
      const double slack = std::string_view(arith).find("64") != std::string_view::npos ? 1e-10 : 1e-7;  // the reference has 10 decimals
      EXPECT_GT(r.boxes[5]->lo[0], 0.0207720117 - slack) << arith;
      EXPECT_LT(r.boxes[5]->hi[0], 0.0356249176 + slack) << arith;
    }
  }
}

TEST(Ibp, BadInputIsAnError) {
  const Model m = six_node_model();
  auto run = [&](DoubleBox b, std::string_view arith = "f64") {
    std::vector<DoubleBox> in = {std::move(b)};
    return run_ibp_double(m.graph, m.payload, in, arith);
  };
  EXPECT_FALSE(run({{4}, {0, 0, 1, 0}, {1, 1, 0, 1}}).ok());       // lo > hi
  EXPECT_FALSE(run({{4}, {0, NAN, 0, 0}, {1, 1, 1, 1}}).ok());     // nan
  EXPECT_FALSE(run({{3}, {0, 0, 0}, {1, 1, 1}}).ok());             // shape
  EXPECT_FALSE(run({{4}, {0, 0, 0}, {1, 1, 1, 1}}).ok());          // length
  EXPECT_FALSE(run({{4}, {0, 0, 0, 0}, {1, 1, 1, 1}}, "f16x").ok());  // arith
  EXPECT_TRUE(run({{4}, {0, 0, 0, 0}, {1, 1, 1, 1}}, "e4m3fn").ok());
  std::vector<DoubleBox> none;
  EXPECT_FALSE(run_ibp_double(m.graph, m.payload, none, "f64").ok());
  EXPECT_FALSE(box_around(Tensor<double>({4}, six_node_x0()), -0.1).ok());
  EXPECT_FALSE(box_around(Tensor<double>({4}, six_node_x0()), NAN).ok());
  // Not representable in the endpoint format: e8m0 has no negative values; e2m1fn (no infinity)
  // would saturate 30 to 6, which bounds nothing.
  EXPECT_FALSE(run({{4}, {-1, 0, 0, 0}, {1, 1, 1, 1}}, "e8m0fnu").ok());
  EXPECT_FALSE(run({{4}, {30, 0, 0, 0}, {31, 1, 1, 1}}, "e2m1fn").ok());
  // Weights round outward to [0, 0.5] in e2m1fn, so the first linear overflows 6: no box.
  auto sat = run({{4}, {5, 5, 5, 5}, {6, 6, 6, 6}}, "e2m1fn");
  ASSERT_TRUE(sat.ok()) << sat.message();
  EXPECT_TRUE(sat->boxes[0]);
  EXPECT_FALSE(sat->boxes[1]);
  auto r = run({{4}, {-1e300, 0, 0, 0}, {1e300, 1, 1, 1}});
  ASSERT_TRUE(r.ok());
}

TEST(Ibp, NodesWithoutASoundRuleGetNoBoxAndTheirChildrenNone) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t lg = b.unary(Op::Log, x);        // the box reaches 0: no box
  const int64_t t = b.unary(Op::Tanh, lg);       // parent without a box
  const int64_t d = b.binary(Op::Div, x, x);     // divisor contains 0
  const int64_t ok = b.unary(Op::Sigmoid, x);
  auto m = b.build({t, d, ok});
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<DoubleBox> in = {{{2}, {-1, 0.5}, {1, 2}}};
  auto r = run_ibp_double(m->graph, m->payload, in, "binary32");
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->boxes[x]);
  EXPECT_FALSE(r->boxes[lg]);
  EXPECT_FALSE(r->boxes[t]);
  EXPECT_NE(r->notes[t].find("parent"), std::string::npos) << r->notes[t];
  EXPECT_FALSE(r->boxes[d]);
  EXPECT_NE(r->notes[d].find("contains 0"), std::string::npos) << r->notes[d];
  ASSERT_TRUE(r->boxes[ok]);
  EXPECT_LE(r->boxes[ok]->lo[0], 1 / (1 + std::exp(1.0)));
}

TEST(Ibp, SinAndCosUsePeriodAnalysis) {
  IntervalContext<NativeEndpoints<double>> ctx;
  const auto s = ctx.sin(ctx.make(0.1, 0.2));  // monotone piece: [sin 0.1, sin 0.2], a few ulps wider
  EXPECT_LE(s.lo, std::sin(0.1));
  EXPECT_GT(s.lo, std::sin(0.1) - 1e-15);
  EXPECT_GE(s.hi, std::sin(0.2));
  EXPECT_LT(s.hi, std::sin(0.2) + 1e-15);
  const auto c = ctx.cos(ctx.make(-0.5, 0.25));  // contains the maximum at 0
  EXPECT_EQ(c.hi, 1.0);
  EXPECT_LE(c.lo, std::cos(-0.5));
  EXPECT_GT(c.lo, std::cos(-0.5) - 1e-15);
  const auto m = ctx.sin(ctx.make(4.0, 5.0));  // contains the minimum at 3π/2
  EXPECT_EQ(m.lo, -1.0);
  EXPECT_GE(m.hi, std::sin(4.0));
  const auto w = ctx.sin(ctx.make(0, 7));
  EXPECT_EQ(w.lo, -1.0);
  EXPECT_EQ(w.hi, 1.0);
  EXPECT_EQ(ctx.take_error(), "");
}

// pow by a constant exponent (ONNX Pow, ml4acopf's squares): every evaluation t^p of a point of the box,
// in f64 (std::pow) and f32 (powf), lies in the box of the f64 / f32 endpoints, which is the exact range up
// to a few ulps; a box where the evaluation can be NaN or infinite, or a non-point exponent, has none.
TEST(Ibp, PowByAConstantEnclosesEveryEvaluation) {
  IntervalContext<NativeEndpoints<double>> c64;
  IntervalContext<NativeEndpoints<float>> c32;
  const double boxes[][2] = {{-1.5, 2.0}, {0.25, 3.0}, {-3.0, -0.5}, {0.0, 1.0}, {-2.0, 0.0}, {1.0, 1.0}};
  int checks = 0;
  for (double p : {2.0, 3.0, 1.0, 0.0, -1.0, -2.0, 0.5, 1.5}) {
    for (const auto& bx : boxes) {
      const double lo = bx[0], hi = bx[1];
      const bool nan = std::floor(p) != p && lo < 0, inf = p < 0 && lo <= 0 && hi >= 0;
      const auto y64 = c64.pow(c64.make(lo, hi), c64.from_double(p));
      const auto y32 = c32.pow(c32.make(lo, hi), c32.from_double(p));
      const std::string e64 = c64.take_error(), e32 = c32.take_error();
      if (nan || inf) {
        EXPECT_NE(e64, "") << p << " [" << lo << ", " << hi << "]";
        EXPECT_NE(e32, "") << p << " [" << lo << ", " << hi << "]";
        continue;
      }
      ASSERT_EQ(e64, "") << p << " [" << lo << ", " << hi << "]";
      ASSERT_EQ(e32, "") << p << " [" << lo << ", " << hi << "]";
      double rlo = INFINITY, rhi = -INFINITY;
      for (int k = 0; k <= 64; ++k) {
        const double t = lo + (hi - lo) * k / 64.0;
        const double v = std::pow(t, p);
        const float f = std::pow(static_cast<float>(t), static_cast<float>(p));
        EXPECT_TRUE(y64.lo <= v && v <= y64.hi) << p << " at " << t << ": " << v << " [" << y64.lo << ", " << y64.hi << "]";
        EXPECT_TRUE(y32.lo <= f && f <= y32.hi) << p << " at " << t << ": " << f << " [" << y32.lo << ", " << y32.hi << "]";
        rlo = std::min(rlo, v), rhi = std::max(rhi, v), checks += 2;
      }
      if (lo < 0 && hi > 0 && std::fmod(p, 2.0) == 0) rlo = 0;  // the even power's minimum at 0
      EXPECT_GT(y64.lo, rlo - 1e-14 * (1 + std::fabs(rlo))) << p << " [" << lo << ", " << hi << "]";
      EXPECT_LT(y64.hi, rhi + 1e-14 * (1 + std::fabs(rhi))) << p << " [" << lo << ", " << hi << "]";
    }
  }
  EXPECT_GT(checks, 4000);
  (void)c64.pow(c64.make(1, 2), c64.make(2, 3));  // an exponent that is not one value
  EXPECT_NE(c64.take_error(), "");
}

}  // namespace
}  // namespace denote
