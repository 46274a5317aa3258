// Refuting a conjunction by a combination of its atoms' linear lower bounds (src/verify/combine.h):
// the small simplex, the rounded-down bound, soundness and completeness of the refutation on random
// linear atoms, and verify() deciding at the root what single atoms leave to branch and bound.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/bounds/crown.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"
#include "denote/verify/verify.h"
#include "verify/combine.h"
#include "verify/falsify.h"

namespace denote {
namespace {

using verify_detail::combined_lower_bound;
using verify_detail::lp_max_origin_feasible;
using verify_detail::refuting_combination;

TEST(VerifyCombine, SimplexSolvesASmallProgram) {
  // max 3x + 2y s.t. x + y <= 4, x + 3y <= 6, x <= 3: optimum (3, 1), value 11.
  const auto v = lp_max_origin_feasible({3, 2}, {1, 1, 1, 3, 1, 0}, {4, 6, 3});
  ASSERT_TRUE(v.has_value());
  EXPECT_NEAR((*v)[0], 3, 1e-12);
  EXPECT_NEAR((*v)[1], 1, 1e-12);
  // A degenerate program (zero right-hand sides, as the combination's rows are) ends, at the origin.
  const auto d = lp_max_origin_feasible({1, 1}, {1, -1, -1, 1}, {0, 0});
  EXPECT_FALSE(d.has_value());  // unbounded along x = y
  const auto z = lp_max_origin_feasible({-1, -1}, {1, -1, -1, 1}, {0, 0});
  ASSERT_TRUE(z.has_value());
  EXPECT_EQ(*z, (std::vector<double>{0, 0}));
  // Malformed: a negative right-hand side, a size mismatch, a NaN.
  EXPECT_FALSE(lp_max_origin_feasible({1}, {1}, {-1}).has_value());
  EXPECT_FALSE(lp_max_origin_feasible({1, 2}, {1}, {1}).has_value());
  EXPECT_FALSE(lp_max_origin_feasible({NAN}, {1}, {1}).has_value());
}

// x in [-1, 1]: "x <= -0.1" and "-x <= -0.1" (x >= 0.1) cannot both hold, though each alone can.
TEST(VerifyCombine, TwoOpposedAtomsAreRefutedTogether) {
  const std::vector<double> low{-1, -1}, coef{1, -1}, lo{-1}, hi{1};
  const auto lambda = refuting_combination(low, std::vector<double>{-0.1, -0.1}, coef, lo, hi);
  ASSERT_TRUE(lambda.has_value());
  EXPECT_GT(combined_lower_bound(*lambda, low, std::vector<double>{-0.1, -0.1}, coef, lo, hi), 0);
  // "x <= 0.1" and "x >= -0.1" hold together on [-0.1, 0.1]: no refutation.
  EXPECT_FALSE(refuting_combination(low, std::vector<double>{0.1, 0.1}, coef, lo, hi).has_value());
  // One atom alone is never combined (the single-atom test decides it).
  EXPECT_FALSE(refuting_combination(std::vector<double>{-1}, std::vector<double>{-2}, std::vector<double>{1}, lo, hi));
  // A bound that is not finite takes no part, and the other atom alone cannot refute.
  EXPECT_FALSE(refuting_combination(std::vector<double>{-INFINITY, -1}, std::vector<double>{-0.1, -0.1}, coef, lo, hi));
}

// The rounded-down bound is below the same expression in long double (whose own rounding error is
// about 2^-11 of the doubles' ulp) on random data of mixed magnitudes.
TEST(VerifyCombine, TheCombinedBoundRoundsDown) {
  SplitMix64 rng(7);
  auto uni = [&](double a, double b) { return a + (b - a) * (static_cast<double>(rng.next() >> 11) * 0x1p-53); };
  for (int t = 0; t < 2000; ++t) {
    const size_t K = 2 + rng.next() % 4, n = 1 + rng.next() % 6;
    std::vector<double> lambda(K), low(K), rhs(K), coef(K * n), lo(n), hi(n);
    for (size_t k = 0; k < K; ++k)
      lambda[k] = uni(0, 1), low[k] = uni(-1, 1) * std::exp2(uni(-20, 20)),
      rhs[k] = uni(-1, 1) * std::exp2(uni(-20, 20));
    for (double& a : coef) a = uni(-1, 1) * std::exp2(uni(-30, 30));
    for (size_t i = 0; i < n; ++i) lo[i] = uni(-2, 1), hi[i] = lo[i] + uni(0, 1) * std::exp2(uni(-30, 0));
    long double total = 0;
    for (size_t k = 0; k < K; ++k)
      total += static_cast<long double>(lambda[k]) * (static_cast<long double>(low[k]) - rhs[k]);
    for (size_t i = 0; i < n; ++i) {
      long double p = 0, q = 0;
      for (size_t k = 0; k < K; ++k) {
        const long double a = coef[k * n + i];
        (a > 0 ? p : q) += lambda[k] * std::fabs(a);
      }
      total += (static_cast<long double>(hi[i]) - lo[i]) * std::min(p, q);
    }
    const double bound = combined_lower_bound(lambda, low, rhs, coef, lo, hi);
    ASSERT_LE(static_cast<long double>(bound), total) << "trial " << t;
    ASSERT_GT(static_cast<long double>(bound), total - 1e-9L * (1 + std::fabs(total))) << "trial " << t;
  }
}

// Random linear atoms f_k(x) = a_k . x + b_k on a random box (their exact lower bounds: low_k = the
// minimum over the box). Sound: a refuted conjunction has no point satisfying every atom among many
// sampled ones, and a point that satisfies every atom means no refutation. Complete in one
// dimension, where the set is an interval: an empty one (by a clear margin) is refuted.
TEST(VerifyCombine, RefutationIsSoundAndCompleteOnLinearAtoms) {
  SplitMix64 rng(11);
  auto uni = [&](double a, double b) { return a + (b - a) * (static_cast<double>(rng.next() >> 11) * 0x1p-53); };
  int refuted = 0, complete_cases = 0;
  for (int t = 0; t < 10000; ++t) {
    const size_t K = 2 + rng.next() % 3, n = 1 + rng.next() % 3;
    std::vector<double> a(K * n), b(K), low(K), rhs(K), lo(n), hi(n);
    for (size_t i = 0; i < n; ++i) lo[i] = uni(-1, 0), hi[i] = lo[i] + uni(0.1, 1);
    for (size_t k = 0; k < K; ++k) {
      b[k] = uni(-1, 1), rhs[k] = uni(-0.5, 0.5);
      low[k] = b[k];
      for (size_t i = 0; i < n; ++i) {
        a[k * n + i] = uni(-2, 2);
        low[k] += a[k * n + i] * (a[k * n + i] > 0 ? lo[i] : hi[i]);
      }
      low[k] -= 1e-12;  // a lower bound, as CROWN's is
    }
    const bool claimed = refuting_combination(low, rhs, a, lo, hi).has_value();
    refuted += claimed;
    bool feasible_point = false;
    std::vector<double> x(n);
    for (int s = 0; s < 400 && !feasible_point; ++s) {
      for (size_t i = 0; i < n; ++i) x[i] = uni(lo[i], hi[i]);
      bool all = true;
      for (size_t k = 0; k < K && all; ++k) {
        double f = b[k];
        for (size_t i = 0; i < n; ++i) f += a[k * n + i] * x[i];
        all = f <= rhs[k];
      }
      feasible_point = all;
    }
    ASSERT_FALSE(claimed && feasible_point) << "trial " << t << ": refuted, but a point satisfies every atom";
    if (n == 1) {  // the interval {x in [lo, hi] : a_k x + b_k <= rhs_k for all k}
      double l = lo[0], h = hi[0];
      for (size_t k = 0; k < K; ++k) {
        const double c = a[k], bound = (rhs[k] - b[k]) / c;
        if (c > 0) h = std::min(h, bound);
        if (c < 0) l = std::max(l, bound);
        if (c == 0 && b[k] > rhs[k]) l = INFINITY;
      }
      bool single = false;
      for (size_t k = 0; k < K; ++k) single = single || low[k] > rhs[k];
      if (l > h + 1e-6 && !single) {
        ++complete_cases;
        EXPECT_TRUE(claimed) << "trial " << t << ": the set is empty, and no single atom shows it";
      }
    }
  }
  EXPECT_GT(refuted, 100);
  EXPECT_GT(complete_cases, 40);
}

// The contract combined atoms rest on (CrownResult::input_linear): on the box, each spec row satisfies
// (C y(x))_r >= spec_lo[r] + sum_i |a_ri| d_ri(x_i), d the distance of x_i from the end where a_r . x is
// smallest, for the network's own evaluation (f32 and f64, CROWN in that arithmetic). ACAS Xu 1_1,
// property 2's rows Y_j - Y_0, random sub-boxes of its box, 200 points in each, the box's corners too.
TEST(VerifyCombine, InputLinearBoundsHoldAtEvaluatedPoints) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<double> lo0{0.6, -0.5, -0.5, 0.45, -0.5}, hi0{0.679857769, 0.5, 0.5, 0.5, -0.45};
  SpecMatrix spec{4, 5, std::vector<double>(20, 0.0)};
  for (int j = 1; j <= 4; ++j) spec.c[(j - 1) * 5 + j] = 1, spec.c[(j - 1) * 5] = -1;
  SplitMix64 rng(3);
  auto u01 = [&] { return static_cast<double>(rng.next() >> 11) * 0x1p-53; };
  int checked = 0;
  for (const std::string arith : {"f32", "f64"})
    for (int t = 0; t < 20; ++t) {
      std::vector<double> lo(5), hi(5);
      for (size_t i = 0; i < 5; ++i) {
        const double w = (hi0[i] - lo0[i]) * std::exp2(-static_cast<double>(rng.next() % 8));
        lo[i] = lo0[i] + (hi0[i] - lo0[i] - w) * u01(), hi[i] = lo[i] + w;
      }
      const DoubleBox box{verify_detail::input_shape(*m), lo, hi};
      CrownOptions co;
      co.arith = *parse_arith_name(arith);
      co.input_coefficients = true;
      co.lower_only = true;
      auto r = run_crown(m->graph, m->payload, std::span<const DoubleBox>(&box, 1), m->output_ids[0], &spec, co);
      ASSERT_TRUE(r.ok()) << r.message();
      ASSERT_TRUE(r->input_linear);
      for (int s = 0; s < 232; ++s) {
        std::vector<double> x(5);
        for (size_t i = 0; i < 5; ++i) x[i] = s < 32 ? ((s >> i) & 1 ? hi[i] : lo[i]) : lo[i] + (hi[i] - lo[i]) * u01();
        const std::vector<double> y = verify_detail::eval_point(*m, x, *parse_arith_name(arith));
        ASSERT_EQ(y.size(), 5u);
        for (int k = 0; k < 4; ++k) {
          double bound = r->spec_lo[static_cast<size_t>(k)], mag = std::fabs(bound);
          for (size_t i = 0; i < 5; ++i) {
            const double a = r->input_coef[static_cast<size_t>(k) * 5 + i];
            const double d = a >= 0 ? x[i] - lo[i] : hi[i] - x[i];
            bound += std::fabs(a) * d, mag += std::fabs(a * d);
          }
          const double value = y[static_cast<size_t>(k) + 1] - y[0];
          ASSERT_GE(value, bound - 1e-12 * (1 + mag)) << arith << " box " << t << " point " << s << " row " << k;
          ++checked;
        }
      }
    }
  EXPECT_EQ(checked, 2 * 20 * 232 * 4);
}

// A network y = x on [-1, 1] and a conjunction "y <= -0.1 and y >= 0.1": no single atom's CROWN
// bound refutes it on the whole box, the combination does (unsat at the root); without it, branch
// and bound splits the box first.
TEST(VerifyCombine, VerifyDecidesAtTheRootWhatSingleAtomsCannot) {
  auto m = read_model_json(R"({"format": "torchlean.ir.v1", "input_id": 0, "output_ids": [1], "nodes": [
    {"id": 0, "kind": "input", "parents": [], "shape": [1, 1]},
    {"id": 1, "kind": "linear", "parents": [0], "shape": [1, 1], "out_dim": 1, "in_dim": 1, "weight": [1], "bias": [0]}]})");
  ASSERT_TRUE(m.ok()) << m.message();
  auto p = parse_vnnlib(
      "(declare-const X_0 Real)\n(declare-const Y_0 Real)\n(assert (>= X_0 -1))\n(assert (<= X_0 1))\n"
      "(assert (<= Y_0 -0.1))\n(assert (>= Y_0 0.1))\n");
  ASSERT_TRUE(p.ok()) << p.message();
  VerifyOptions o;
  o.timeout_s = 20;
  o.samples = 64;
  auto with = verify(*m, *p, o);
  ASSERT_TRUE(with.ok()) << with.message();
  EXPECT_EQ(with->result, VerifyResult::Unsat) << with->note;
  o.combine_atoms = false;
  auto without = verify(*m, *p, o);
  ASSERT_TRUE(without.ok()) << without.message();
  EXPECT_EQ(without->result, VerifyResult::Unsat) << without->note;
  EXPECT_EQ(without->stats.combined, 0);
  EXPECT_GE(with->stats.combined, 1);
  EXPECT_LT(with->stats.domains, without->stats.domains);
}

}  // namespace
}  // namespace denote
