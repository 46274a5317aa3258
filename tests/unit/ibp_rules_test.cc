// The dedicated interval rules (src/bounds/ibp_rules.h) are tight where the generic rule is loose:
// the softmax family against the exact per-element range (softmax is monotone in every coordinate,
// so the range is attained at box corners, enumerated here in long double), layernorm against its
// hand-derived range and the sqrt(m - 1) cap, mse_loss's square, and the midpoint-radius linear rule
// against the generic rule run with exact directed rounding (binary64 / binary32 software endpoints).
// Soundness over random graphs is checked in ibp_random_test.cc.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/scalar/binary_context.h"
#include "denote/program/builder.h"

namespace denote {
namespace {

Model single_op(int64_t n, Op op, Attrs attrs = NoAttrs{}) {
  GraphBuilder b;
  const int64_t x = b.input({n});
  const int64_t y = b.unary(op, x, std::move(attrs));
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

DoubleBox box_of(const std::vector<double>& lo, const std::vector<double>& hi) {
  return DoubleBox{{static_cast<int64_t>(lo.size())}, lo, hi};
}

DoubleBox output_box(const Model& m, const DoubleBox& in, const char* arith) {
  std::vector<DoubleBox> inputs = {in};
  auto r = run_ibp_double(m.graph, m.payload, inputs, arith);
  EXPECT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->boxes.back().has_value()) << r->notes.back();
  return *r->boxes.back();
}

// Per-element [min, max] of softmax (or log_softmax) over the corners of the box, in long double.
std::vector<std::pair<long double, long double>> corner_range(const DoubleBox& b, bool log_form) {
  const size_t n = b.lo.size();
  std::vector<std::pair<long double, long double>> r(n, {INFINITY, -INFINITY});
  for (unsigned mask = 0; mask < (1u << n); ++mask) {
    std::vector<long double> x(n);
    long double big = -INFINITY, total = 0;
    for (size_t i = 0; i < n; ++i) big = std::max(big, x[i] = (mask >> i & 1) ? b.hi[i] : b.lo[i]);
    for (size_t i = 0; i < n; ++i) total += std::exp(x[i] - big);
    for (size_t i = 0; i < n; ++i) {
      const long double y = log_form ? x[i] - big - std::log(total) : std::exp(x[i] - big) / total;
      r[i] = {std::min(r[i].first, y), std::max(r[i].second, y)};
    }
  }
  return r;
}

TEST(IbpRules, SoftmaxAndLogSoftmaxBoxesAreTheExactRangeUpToRounding) {
  const DoubleBox in = box_of({-0.3, 0.2, 1.0, -2.0, 0.5}, {0.7, 0.6, 1.5, -1.0, 0.5});
  for (bool log_form : {false, true}) {
    const Model m = single_op(5, log_form ? Op::LogSoftmax : Op::Softmax, AxisAttrs{0});
    const auto exact = corner_range(in, log_form);
    for (const char* arith : {"f64", "f32", "binary32", "bfloat16"}) {
      const DoubleBox out = output_box(m, in, arith);
      // Allowed excess over the exact range: the format evaluator's error bound (see ibp_softmax.h).
      const double u = std::string(arith) == "bfloat16" ? 0x1p-8 : std::string(arith) == "f64" ? 0x1p-53 : 0x1p-24;
      const double slack = (std::string(arith)[0] == 'f' ? 200 : 40) * u;
      for (size_t i = 0; i < 5; ++i) {
        SCOPED_TRACE(::testing::Message() << arith << (log_form ? " log_softmax" : " softmax") << " element " << i);
        EXPECT_LE(out.lo[i], static_cast<double>(exact[i].first));
        EXPECT_GE(out.hi[i], static_cast<double>(exact[i].second));
        EXPECT_GE(out.lo[i], static_cast<double>(exact[i].first) - slack);
        EXPECT_LE(out.hi[i], static_cast<double>(exact[i].second) + slack);
      }
    }
  }
}

// Where a step of the evaluation overflows the format, the dedicated rule must not claim its tight
// range: in binary(3,10) (largest value below 16) a lane of 20 equal entries has total = 20 -> inf,
// so the evaluator's softmax is 0 everywhere (the exact one 0.05); in e4m3fn (largest 448) a spread
// of 500 overflows x - max. The box, when there is one, holds the evaluator's value.
TEST(IbpRules, SoftmaxLeavesLanesWhoseEvaluationOverflowsToTheGenericRule) {
  struct Case {
    const char* format;
    std::vector<double> x;
  };
  const std::vector<Case> cases = {{"binary(3,10)", std::vector<double>(20, 0.25)},
                                   {"e4m3fn", {-250, 250, 0, 1}}};
  for (const Case& c : cases) {
    for (bool log_form : {false, true}) {
      SCOPED_TRACE(::testing::Message() << c.format << (log_form ? " log_softmax" : " softmax"));
      const int64_t n = static_cast<int64_t>(c.x.size());
      const Model m = single_op(n, log_form ? Op::LogSoftmax : Op::Softmax, AxisAttrs{0});
      BinaryContext ctx(*parse_format(c.format));
      std::vector<FpWord> words;
      for (double v : c.x) words.push_back(ctx.from_double(v));
      const std::vector<Tensor<FpWord>> in = {Tensor<FpWord>({n}, words)};
      auto table = denote_all(m.graph, convert_payload<FpWord>(m.payload, [&](double v) { return ctx.from_double(v); }),
                              std::span<const Tensor<FpWord>>(in), ctx);
      std::vector<DoubleBox> inputs = {box_of(c.x, c.x)};
      auto r = run_ibp_double(m.graph, m.payload, inputs, c.format);
      ASSERT_TRUE(r.ok()) << r.message();
      if (!table.ok() || !r->boxes.back()) continue;  // no value, or no box claimed: nothing to hold
      const DoubleBox& b = *r->boxes.back();
      for (int64_t i = 0; i < n; ++i) {
        const double y = ctx.to_double((*table)[m.output_ids[0]].data[static_cast<size_t>(i)]);
        if (std::isnan(y)) continue;  // a NaN result is the generic rule's note, not a box claim
        EXPECT_LE(b.lo[static_cast<size_t>(i)], y) << i;
        EXPECT_GE(b.hi[static_cast<size_t>(i)], y) << i;
      }
    }
  }
}

TEST(IbpRules, MaskedSoftmaxBlocksEntriesAndALoneEntryIsExactlyOne) {
  const Model m = single_op(3, Op::HardMaskedSoftmax, HardMask{{3}, {1, 0, 0}});
  const DoubleBox out = output_box(m, box_of({-5, -1, 2}, {5, 1, 3}), "f32");
  EXPECT_EQ(out.lo, (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(out.hi, (std::vector<double>{1, 0, 0}));
  const Model one = single_op(1, Op::LogSoftmax, AxisAttrs{0});
  const DoubleBox z = output_box(one, box_of({-7}, {9}), "f64");
  EXPECT_EQ(z.lo[0], 0.0);
  EXPECT_EQ(z.hi[0], 0.0);
}

TEST(IbpRules, LayernormUsesTheMonotoneFormAndTheSqrtCap) {
  // x0 in [-0.1, 0.1], x1 in [0.9, 1.1], eps 1e-5. Exact: n0 = (x0 - x1) / 2 / sqrt(((x1 - x0) / 2)^2
  // + 1e-5) with x1 - x0 in [0.8, 1.2]: [-0.6 / sqrt(0.36001), -0.4 / sqrt(0.16001)], n1 = -n0.
  // The rule: c0 in [-0.6, -0.4], the rest of the variance K0 = c1^2 / 2 + eps in [0.08, 0.18] + eps,
  // n0 <= -0.4 / sqrt(0.16 / 2 + 0.18 + eps) = -0.78444 and n0 >= -sqrt(2 - 1) = -1 (the cap). The
  // plain interval evaluation of the formula gives [-1.5, -0.667].
  const Model m = single_op(2, Op::Layernorm, AxisAttrs{0});
  const double exact_lo = -0.6 / std::sqrt(0.36001), exact_hi = -0.4 / std::sqrt(0.16001);
  const double rule_hi = -0.4 / std::sqrt(0.08 + 0.18001);
  // (bfloat16 is only checked for containment: its own evaluator's error bound, about 0.39 here,
  // is wider than the plain box, which then stands.)
  for (const char* arith : {"f64", "f32", "bfloat16"}) {
    SCOPED_TRACE(arith);
    const DoubleBox out = output_box(m, box_of({-0.1, 0.9}, {0.1, 1.1}), arith);
    const double tol = std::string(arith) == "bfloat16" ? 1.0 : 1e-5;
    EXPECT_LE(out.lo[0], exact_lo);
    EXPECT_GE(out.hi[0], exact_hi);
    EXPECT_GE(out.lo[0], -1 - tol);
    EXPECT_LE(out.hi[0], rule_hi + tol);
    EXPECT_LE(out.lo[1], -exact_hi);
    EXPECT_GE(out.hi[1], -exact_lo);
    EXPECT_GE(out.lo[1], -rule_hi - tol);
    EXPECT_LE(out.hi[1], 1 + tol);
  }
}

TEST(IbpRules, LayernormOfWideBoxesIsCappedAtSqrtOfMMinusOne) {
  const Model m = single_op(4, Op::Layernorm, AxisAttrs{0});
  // |n| <= sqrt(4 - 1) holds exactly; the box adds the f32 evaluator's error bound, which is large
  // here (the variance may be 0, so only sqrt(eps) bounds sigma from below): about 0.0104.
  const DoubleBox out = output_box(m, box_of({-10, -10, -10, -10}, {10, 10, 10, 10}), "f32");
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_GE(out.lo[i], -std::sqrt(3.0) - 0.02);
    EXPECT_LE(out.hi[i], std::sqrt(3.0) + 0.02);
  }
}

TEST(IbpRules, BatchNormIsAffinePerElementSoTheGenericBoxIsExactUpToRounding) {
  // y = (x - 0.5) / sqrt(4 + 0) * -3 + 1 on x in [-1, 2]: decreasing, [1 - 1.5 * 1.5, 1 + 1.5 * 1.5].
  GraphBuilder b;
  const int64_t y = b.unary(Op::BatchNormEval, b.input({1}), BatchNormAttrs{0, 1});
  b.model().payload.batch_norm[y] = BatchNormRecord<double>{{-3.0}, {1.0}, {0.5}, {4.0}, 0.0};
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  for (const char* arith : {"f64", "f32", "binary64"}) {
    const DoubleBox out = output_box(*m, box_of({-1}, {2}), arith);
    EXPECT_LE(out.lo[0], -1.25) << arith;
    EXPECT_GE(out.hi[0], 3.25) << arith;
    EXPECT_NEAR(out.lo[0], -1.25, 1e-6) << arith;
    EXPECT_NEAR(out.hi[0], 3.25, 1e-6) << arith;
  }
}

TEST(IbpRules, MseLossOfAStraddlingDifferenceStartsAtZero) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t t = b.constant({2}, {0.0, 1.0});
  auto m = b.build({b.add(Op::MseLoss, {x, t})});
  ASSERT_TRUE(m.ok()) << m.message();
  // (x0 - 0)^2 in [0, 1], (x1 - 1)^2 in [0, 4]: mean in [0, 2.5].
  const DoubleBox out = output_box(*m, box_of({-1, -1}, {1, 1}), "f32");
  EXPECT_EQ(out.lo[0], 0.0);
  EXPECT_GE(out.hi[0], 2.5);
  EXPECT_LE(out.hi[0], 2.5 * (1 + 1e-6));
}

TEST(IbpRules, MidpointRadiusLinearAgreesWithExactDirectedRounding) {
  SplitMix64 rng(77);
  auto uniform = [&](double lo, double hi) { return lo + (hi - lo) * (static_cast<double>(rng.next() >> 11) * 0x1p-53); };
  const int64_t in = 30, out = 20;
  std::vector<double> w, bias, lo, hi;
  for (int64_t i = 0; i < in * out; ++i) w.push_back(static_cast<float>(uniform(-1, 1)));
  for (int64_t i = 0; i < out; ++i) bias.push_back(static_cast<float>(uniform(-0.5, 0.5)));
  for (int64_t i = 0; i < in; ++i) {
    const double c = static_cast<float>(uniform(-1, 1)), r = static_cast<float>(uniform(0, 0.1));
    lo.push_back(c - r);
    hi.push_back(c + r);
  }
  GraphBuilder b;
  auto m = b.build({b.linear(b.input({in}), out, w, bias)});
  ASSERT_TRUE(m.ok()) << m.message();
  const DoubleBox box = box_of(lo, hi);
  // f64 / f32 use the midpoint-radius rule; binary64 / binary32 the generic rule with exact
  // directed rounding. Both contain the exact range; they differ by the rounding terms only.
  const std::pair<const char*, const char*> pairs[] = {{"f64", "binary64"}, {"f32", "binary32"}};
  for (const auto& [fast, exact] : pairs) {
    const DoubleBox a = output_box(*m, box, fast), e = output_box(*m, box, exact);
    const double tol = std::string(fast) == "f64" ? 1e-12 : 1e-4;
    for (int64_t o = 0; o < out; ++o) {
      SCOPED_TRACE(::testing::Message() << fast << " output " << o);
      EXPECT_NEAR(a.lo[o], e.lo[o], tol);
      EXPECT_NEAR(a.hi[o], e.hi[o], tol);
    }
  }
}

}  // namespace
}  // namespace denote
