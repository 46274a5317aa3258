// Issue 47's soundness regressions: a sat needs a witness that satisfies the file's strict bounds and
// the property for the exact real network (an MPFR enclosure compared with the decimals, never
// rounded to doubles); CROWN's bounds and an unsat hold for the f32/f64 evaluation where it
// overflows or where parameters leave the format's normal range; IBP's layernorm box holds where the
// format's variance overflows; deadlines of any size.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>

#include "denote/base/deadline.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/bounds/interval_real.h"
#include "denote/program/builder.h"
#include "denote/verify/verify.h"
#include "unit/verify_models.h"

namespace denote {
namespace {

using testing::affine;
using testing::prop;

VerifyOutcome decide(const Model& m, const VnnProperty& p, const char* arith, double timeout = 2) {
  VerifyOptions o;
  o.arith = *parse_arith_name(arith);
  o.timeout_s = timeout;
  o.samples = 64;
  auto r = verify(m, p, o);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : VerifyOutcome{};
}

// --- a witness on an excluded end of a strict bound

TEST(VerifySoundness, NoFloatStrictlyInsideIsNeverSat) {
  // No float lies in (0.5, 0.5000000000000002); the f32 witness search moved 0.5+ulp onto 0.5.
  const Model m = affine(1, 1, {1.0}, {0.0});
  const VnnProperty p = prop(
      "(declare-const X_0 Real)(declare-const Y_0 Real)"
      "(assert (> X_0 0.5))(assert (< X_0 0.5000000000000002))(assert (>= Y_0 0))");
  const VerifyOutcome r = decide(m, p, "f32");
  EXPECT_NE(r.result, VerifyResult::Sat);
  EXPECT_NE(r.result, VerifyResult::Unsat);  // the real network satisfies Y_0 >= 0 inside
  // The excluded end is not in the box, the double inside it is.
  EXPECT_FALSE(check_witness(m, p.cases[0], p.cases[0].output[0], {0.5}, ArithSpec::f32()).in_box);
  EXPECT_TRUE(check_witness(m, p.cases[0], p.cases[0].output[0], {std::nextafter(0.5, 1.0)}, ArithSpec::f64()).in_box);
}

TEST(VerifySoundness, NoDoubleStrictlyInsideIsNeverSat) {
  const Model m = affine(1, 1, {1.0}, {0.0});
  const VnnProperty p = prop(
      "(declare-const X_0 Real)(declare-const Y_0 Real)"
      "(assert (> X_0 0))(assert (< X_0 4.9406564584124654e-324))(assert (>= Y_0 0))");
  const VerifyOutcome r = decide(m, p, "f64");
  EXPECT_NE(r.result, VerifyResult::Sat);
  const WitnessCheck w = check_witness(m, p.cases[0], p.cases[0].output[0], {0.0}, ArithSpec::f64());
  EXPECT_FALSE(w.in_box);
}

TEST(VerifySoundness, StrictAndNonStrictBoundsAtTheSameDecimal) {
  const Model m = affine(1, 1, {1.0}, {0.0});
  const VnnProperty closed = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                                  "(assert (>= X_0 0.25))(assert (<= X_0 0.75))(assert (>= Y_0 0))");
  const VnnProperty open = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                                "(assert (> X_0 0.25))(assert (< X_0 0.75))(assert (>= Y_0 0))");
  for (double x : {0.25, 0.75}) {
    EXPECT_TRUE(check_witness(m, closed.cases[0], closed.cases[0].output[0], {x}, ArithSpec::f64()).in_box) << x;
    EXPECT_FALSE(check_witness(m, open.cases[0], open.cases[0].output[0], {x}, ArithSpec::f64()).in_box) << x;
  }
  const WitnessCheck inside = check_witness(m, open.cases[0], open.cases[0].output[0], {0.5}, ArithSpec::f64());
  EXPECT_TRUE(inside.in_box && inside.holds_arith && inside.holds_exact);
}

// --- the exact re-check never rounds the real network's outputs

TEST(VerifySoundness, ATieInDoublesIsNoWitnessForTheRealNetwork) {
  // Y_0 = X_0 + 2^-60, Y_1 = X_0: Y_0 <= Y_1 holds in f64 for X_0 in [1, 2] and never exactly.
  const Model m = affine(1, 2, {1.0, 1.0}, {0x1p-60, 0.0});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)(declare-const Y_1 Real)"
                             "(assert (>= X_0 1))(assert (<= X_0 2))(assert (<= Y_0 Y_1))");
  const WitnessCheck w = check_witness(m, p.cases[0], p.cases[0].output[0], {1.5}, ArithSpec::f64());
  EXPECT_TRUE(w.in_box && w.holds_arith);
  EXPECT_FALSE(w.holds_exact);
  const VerifyOutcome r = decide(m, p, "f64");
  EXPECT_NE(r.result, VerifyResult::Sat);
  EXPECT_NE(r.result, VerifyResult::Unsat);  // the f64 network violates it everywhere
  EXPECT_GT(r.stats.disagreements, 0);
  EXPECT_NE(r.note.find("exact real network"), std::string::npos) << r.note;
}

TEST(VerifySoundness, AnOverflowToInfIsNoWitnessForTheRealNetwork) {
  // Y_0 = 1e300 X_0 >= 1e400: inf in f64 for X_0 > 1.8e8, at most 1e310 exactly.
  const Model m = affine(1, 1, {1e300}, {0.0});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 1))(assert (<= X_0 1e10))(assert (>= Y_0 1e400))");
  const WitnessCheck w = check_witness(m, p.cases[0], p.cases[0].output[0], {1e10}, ArithSpec::f64());
  EXPECT_TRUE(w.holds_arith);
  EXPECT_FALSE(w.holds_exact);
  const VerifyOutcome r = decide(m, p, "f64");
  EXPECT_NE(r.result, VerifyResult::Sat);
  EXPECT_NE(r.result, VerifyResult::Unsat);  // the f64 network reaches inf
}

TEST(VerifySoundness, ExactTiesAreConfirmedWhenTheEnclosureIsAPoint) {
  // Y_0 = 0.5 X_0 - 0.25 <= 0 at X_0 = 0.5 exactly: the MPFR enclosure is the point 0.
  const Model m = affine(1, 1, {0.5}, {-0.25});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 0.5))(assert (<= X_0 1))(assert (<= Y_0 0))");
  const WitnessCheck w = check_witness(m, p.cases[0], p.cases[0].output[0], {0.5}, ArithSpec::f64());
  EXPECT_TRUE(w.in_box && w.holds_arith && w.holds_exact);
  const VerifyOutcome r = decide(m, p, "f64");
  EXPECT_EQ(r.result, VerifyResult::Sat);
}

TEST(VerifySoundness, RealEnclosureHoldsTheMpfrValueOfSmoothOps) {
  // sigmoid, tanh, gelu, softplus at a point: the MPFR enclosure is narrow and holds the 256-bit value.
  for (Op op : {Op::Sigmoid, Op::Tanh, Op::Gelu, Op::Softplus, Op::Exp}) {
    GraphBuilder b;
    const int64_t y = b.unary(op, b.input({3}));
    auto m = b.build({y});
    ASSERT_TRUE(m.ok());
    const std::vector<Tensor<double>> in = {Tensor<double>({3}, {-0.75, 0.1, 3.0})};
    const int64_t out = y;
    auto r = enclose_real(m->graph, m->payload, std::span<const Tensor<double>>(in), std::span<const int64_t>(&out, 1));
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_TRUE((*r)[0].has_value());
    RealContext rc(300);
    for (size_t i = 0; i < 3; ++i) {
      const auto& iv = (*r)[0]->data[i];
      const RealScalar x = rc.from_double(in[0].data[i]);
      const RealScalar v = op == Op::Sigmoid ? rc.sigmoid(x)
                           : op == Op::Tanh  ? rc.tanh(x)
                           : op == Op::Gelu  ? rc.gelu(x)
                           : op == Op::Exp   ? rc.exp(x)
                                             : rc.softplus(x);
      EXPECT_LE(mpfr_cmp(iv.lo.get(), v.get()), 0) << op_tag(op) << " " << i;
      EXPECT_GE(mpfr_cmp(iv.hi.get(), v.get()), 0) << op_tag(op) << " " << i;
      RealScalar width(64);
      mpfr_sub(width.get(), iv.hi.get(), iv.lo.get(), MPFR_RNDU);
      EXPECT_LT(mpfr_get_d(width.get(), MPFR_RNDU), 1e-60) << op_tag(op) << " " << i;
    }
  }
}

// --- CROWN and unsat where the f32 evaluation overflows or parameters leave the normal range

CrownResult crown_f32(const Model& m, double lo, double hi, BoundMethod method = BoundMethod::Crown) {
  CrownOptions o;
  o.arith = ArithSpec::f32();
  o.method = method;
  const std::vector<DoubleBox> in = {DoubleBox{{1}, {lo}, {hi}}};
  auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : CrownResult{};
}

TEST(VerifySoundness, CrownHoldsTheF32OverflowToInf) {
  const Model m = affine(1, 1, {2.0}, {0.0});
  for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown, BoundMethod::Ibp}) {
    const CrownResult r = crown_f32(m, 1e38, 3e38, method);
    ASSERT_EQ(r.spec_hi.size(), 1u);
    EXPECT_EQ(r.spec_hi[0], INFINITY) << bound_method_name(method);
  }
  EXPECT_FALSE(crown_f32(m, 1e38, 3e38).fallback.empty());
  EXPECT_TRUE(crown_f32(m, 1, 3).fallback.empty());
  // verify: Y_0 >= 1e39 is violated by the f32 network (inf) for X_0 > 1.7e38: never unsat.
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 1e38))(assert (<= X_0 3e38))(assert (>= Y_0 1e39))");
  const VerifyOutcome r = decide(m, p, "f32");
  EXPECT_NE(r.result, VerifyResult::Unsat);
  EXPECT_NE(r.result, VerifyResult::Sat);  // the real network never reaches 1e39
}

TEST(VerifySoundness, CrownHoldsParametersThatF32RoundsOutsideItsNormalRange) {
  // The f32 network's weight: 1e-46 -> 0, 1e-45 -> 2^-149, 3.5e38 -> inf.
  for (double w : {1e-46, 1e-45, 3.5e38}) {
    SCOPED_TRACE(w);
    const Model m = affine(1, 1, {w}, {0.0});
    const CrownResult r = crown_f32(m, 1, 2);
    ASSERT_EQ(r.spec_lo.size(), 1u);
    EXPECT_FALSE(r.fallback.empty());
    const double f32_lo = static_cast<double>(static_cast<float>(w)), f32_hi = static_cast<double>(2 * static_cast<float>(w));
    EXPECT_LE(r.spec_lo[0], std::min(w, f32_lo));
    EXPECT_GE(r.spec_hi[0], std::max(2 * w, f32_hi));
  }
  // An exact binary32 subnormal weight is no gap: its rounding error is 0.
  EXPECT_TRUE(crown_f32(affine(1, 1, {0x1p-149}, {0.0}), 1, 2).fallback.empty());
  // verify: Y_0 <= 0 holds for the f32 network (weight 0) at every point: never unsat.
  const Model m = affine(1, 1, {1e-46}, {0.0});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 1))(assert (<= X_0 2))(assert (<= Y_0 0))");
  EXPECT_NE(decide(m, p, "f32").result, VerifyResult::Unsat);
}

TEST(VerifySoundness, CrownCountsAnUnderflowPerProduct) {
  // 1000 products of 2^-75 * 2^-75 = 2^-150 each: every one rounds to 0 in f32 (a tie to even), so
  // the f32 sum is 0 while the exact value is about 3.3e-43.
  const int64_t n = 1000;
  GraphBuilder b;
  const int64_t y = b.linear(b.input({n}), 1, std::vector<double>(n, 0x1p-75), {0.0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok());
  CrownOptions o;
  o.arith = ArithSpec::f32();
  const std::vector<DoubleBox> in = {DoubleBox{{n}, std::vector<double>(n, 0x1p-75), std::vector<double>(n, 0x1p-75)}};
  auto r = run_crown(m->graph, m->payload, in, y, nullptr, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_LE(r->spec_lo[0], 0.0);
  EXPECT_GE(r->spec_hi[0], static_cast<double>(n) * 0x1p-150);
}

// --- IBP's layernorm where the format's variance overflows

TEST(VerifySoundness, LayernormBoxHoldsTheFormatsOverflowedVariance) {
  GraphBuilder b;
  const int64_t y = b.unary(Op::Layernorm, b.input({2}), AxisAttrs{0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok());
  // binary16 at |x| = 300 (300^2 > 65504) and f32 at 1e20: the variance is inf, the output 0.
  for (auto [arith, v] : {std::pair<const char*, double>{"binary16", 300.0}, {"f32", 1e20}}) {
    SCOPED_TRACE(arith);
    const std::vector<DoubleBox> in = {DoubleBox{{2}, {v, -v}, {v, -v}}};
    auto r = run_ibp_double(m->graph, m->payload, in, arith);
    ASSERT_TRUE(r.ok()) << r.message();
    if (!r->boxes[y]) continue;  // no box is sound too
    EXPECT_LE(r->boxes[y]->lo[0], 0.0);
    EXPECT_GE(r->boxes[y]->hi[0], 0.0);
  }
}

// --- deadlines

TEST(VerifySoundness, DeadlinesOfAnySizeDoNotOverflow) {
  const auto now = std::chrono::steady_clock::now();
  for (double s : {1e10, 9.3e9, 1e30, static_cast<double>(INFINITY)}) EXPECT_GT(deadline_after(now, s), now + std::chrono::hours(24 * 365)) << s;
  EXPECT_EQ(deadline_after(now, 0), now);
  EXPECT_EQ(deadline_after(now, -1), now);
  EXPECT_EQ(deadline_after(now, NAN), now);
  const auto one = deadline_after(now, 1.5);
  EXPECT_EQ(std::chrono::duration_cast<std::chrono::milliseconds>(one - now).count(), 1500);
  // verify with a huge timeout decides (it used to answer timeout in 0 s).
  const Model m = affine(1, 1, {1.0}, {0.0});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 0))(assert (<= X_0 1))(assert (>= Y_0 2))");
  for (double t : {1e10, 1e30, static_cast<double>(INFINITY)}) EXPECT_EQ(decide(m, p, "f32", t).result, VerifyResult::Unsat) << t;
}

}  // namespace
}  // namespace denote
