// Issue 54: inputs pinned to a decimal that no value of the arithmetic reaches (lo = hi = 0.1, as
// VNN-COMP 2023's collins_rul_cnn, cgan, dist_shift properties do). The box holds no f32/f64 point, so
// a witness is searched at the nearest value and confirmed for the exact real network at the decimal
// itself (an MPFR enclosure of the decimal, never its rounding); the answer says in which semantics
// it holds. A tolerance (VNN-COMP's scoring) accepts the arithmetic alone, and says so.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "denote/program/builder.h"
#include "denote/verify/verify.h"
#include "unit/verify_models.h"

namespace denote {
namespace {

using testing::affine;
using testing::prop;

VerifyOutcome decide(const Model& m, const VnnProperty& p, const char* arith, double tolerance = 0, double timeout = 5) {
  VerifyOptions o;
  o.arith = *parse_arith_name(arith);
  o.timeout_s = timeout;
  o.samples = 64;
  o.witness_tolerance = tolerance;
  auto r = verify(m, p, o);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : VerifyOutcome{};
}

const char* kTwoInputs = "(declare-const X_0 Real)(declare-const X_1 Real)(declare-const Y_0 Real)";

TEST(VerifyPinned, APinnedDecimalIsSatForTheRealNetworkAtTheDecimal) {
  // Y_0 = X_0 + X_1 with X_0 = 0.1 exactly and X_1 in [0, 1]: Y_0 >= 0.6 at X_1 >= 0.5.
  const Model m = affine(2, 1, {1.0, 1.0}, {0.0});
  const VnnProperty p = prop(std::string(kTwoInputs) +
                             "(assert (>= X_0 0.1))(assert (<= X_0 0.1))(assert (>= X_1 0))(assert (<= X_1 1))"
                             "(assert (>= Y_0 0.6))");
  ASSERT_GT(p.cases[0].lo_in[0], p.cases[0].hi_in[0]);  // no double is 0.1
  for (const char* arith : {"f32", "f64"}) {
    const VerifyOutcome r = decide(m, p, arith);
    ASSERT_EQ(r.result, VerifyResult::Sat) << arith << ": " << r.note;
    const Witness& w = *r.witness;
    ASSERT_EQ(w.x_exact.size(), 2u);
    EXPECT_EQ(w.x_exact[0], "0.1");
    EXPECT_EQ(w.x_exact[1], "");  // X_1's value lies in the box
    const double near = std::string(arith) == "f32" ? static_cast<double>(0.1f) : 0.1;
    EXPECT_EQ(w.x[0], near) << arith;
    EXPECT_EQ(w.semantics.rfind("real at the exact decimal inputs", 0), 0u) << w.semantics;
    EXPECT_GT(w.outside, 0);
    EXPECT_LT(w.outside, std::string(arith) == "f32" ? 2e-9 : 2e-17) << arith;
    // The check alone (as an MPI rank or a user re-checks a witness) confirms it the same way.
    const WitnessCheck c = check_witness(m, p.cases[0], p.cases[0].output[0], w.x, *parse_arith_name(arith));
    EXPECT_FALSE(c.in_box);
    EXPECT_TRUE(c.confirmed());
    EXPECT_EQ(c.x_exact, w.x_exact);
  }
}

TEST(VerifyPinned, TheRealNetworkDecidesAtTheDecimalNotAtItsRounding) {
  // Y_0 = X_0 at X_0 = 0.1: Y_0 >= 0.0999999999 holds exactly (and for the float above 0.1);
  // Y_0 >= 0.1000000001 holds for the float 0.100000001490116 only, so it is no witness unless a
  // tolerance is asked for.
  const Model m = affine(1, 1, {1.0}, {0.0});
  const std::string box = "(declare-const X_0 Real)(declare-const Y_0 Real)(assert (>= X_0 0.1))(assert (<= X_0 0.1))";
  const VerifyOutcome ge = decide(m, prop(box + "(assert (>= Y_0 0.0999999999))"), "f32");
  EXPECT_EQ(ge.result, VerifyResult::Sat) << ge.note;
  const VnnProperty strict = prop(box + "(assert (>= Y_0 0.1000000001))");
  const VerifyOutcome gt = decide(m, strict, "f32", 0, 0.5);
  EXPECT_NE(gt.result, VerifyResult::Sat);
  EXPECT_NE(gt.result, VerifyResult::Unsat);  // the f32 network satisfies it at the nearest float
  EXPECT_GT(gt.stats.disagreements, 0);
  const WitnessCheck c = check_witness(m, strict.cases[0], strict.cases[0].output[0], {static_cast<double>(0.1f)}, ArithSpec::f32());
  EXPECT_TRUE(c.holds_arith);
  EXPECT_FALSE(c.holds_exact);
  EXPECT_FALSE(c.confirmed());
  // VNN-COMP's tolerance accepts the float, and the answer says in which semantics.
  const VerifyOutcome tol = decide(m, strict, "f32", 1e-4);
  ASSERT_EQ(tol.result, VerifyResult::Sat) << tol.note;
  EXPECT_NE(tol.witness->semantics.find("within the tolerance"), std::string::npos) << tol.witness->semantics;
  EXPECT_TRUE(tol.witness->x_exact.empty());
  // A tolerance smaller than the float's distance from 0.1 accepts nothing.
  EXPECT_NE(decide(m, strict, "f32", 1e-10, 0.5).result, VerifyResult::Sat);
}

TEST(VerifyPinned, PinnedBoxesAreStillProvenUnsat) {
  // Y_0 = X_0 + X_1 <= 1.1 everywhere on X_0 = 0.1, X_1 in [0, 1]: Y_0 >= 1.2 is impossible.
  const Model m = affine(2, 1, {1.0, 1.0}, {0.0});
  const VnnProperty p = prop(std::string(kTwoInputs) +
                             "(assert (>= X_0 0.1))(assert (<= X_0 0.1))(assert (>= X_1 0))(assert (<= X_1 1))"
                             "(assert (>= Y_0 1.2))");
  for (const char* arith : {"f32", "f64"}) EXPECT_EQ(decide(m, p, arith).result, VerifyResult::Unsat) << arith;
}

TEST(VerifyPinned, OnlyOffGridInputsMayLeaveTheBox) {
  // X_1 outside its box is never excused by X_0's pinned decimal, whatever the outputs.
  const Model m = affine(2, 1, {1.0, 1.0}, {0.0});
  const VnnProperty p = prop(std::string(kTwoInputs) +
                             "(assert (>= X_0 0.1))(assert (<= X_0 0.1))(assert (>= X_1 0))(assert (<= X_1 1))"
                             "(assert (>= Y_0 0))");
  const VnnCase& c = p.cases[0];
  EXPECT_TRUE(check_witness(m, c, c.output[0], {static_cast<double>(0.1f), 0.5}, ArithSpec::f32()).confirmed());
  EXPECT_FALSE(check_witness(m, c, c.output[0], {static_cast<double>(0.1f), 1.5}, ArithSpec::f32()).confirmed());
  EXPECT_FALSE(check_witness(m, c, c.output[0], {0.25, 0.5}, ArithSpec::f32()).confirmed());  // not the value nearest 0.1
}

TEST(VerifyPinned, ABoxNarrowerThanAFloatsSpacingIsOffGridForF32Only) {
  // [0.1, 0.1 + 1e-12] holds doubles but no float: f64 finds a witness inside, f32 at the decimal 0.1.
  const Model m = affine(1, 1, {1.0}, {0.0});
  const VnnProperty p = prop("(declare-const X_0 Real)(declare-const Y_0 Real)"
                             "(assert (>= X_0 0.1))(assert (<= X_0 0.100000000001))(assert (>= Y_0 0))");
  const VerifyOutcome r64 = decide(m, p, "f64");
  ASSERT_EQ(r64.result, VerifyResult::Sat);
  EXPECT_TRUE(r64.witness->x_exact.empty());
  EXPECT_EQ(r64.witness->semantics, "f64 and real");
  const VerifyOutcome r32 = decide(m, p, "f32");
  ASSERT_EQ(r32.result, VerifyResult::Sat);
  ASSERT_EQ(r32.witness->x_exact.size(), 1u);
  EXPECT_EQ(r32.witness->x_exact[0], "0.1");
  EXPECT_EQ(r32.witness->x[0], static_cast<double>(0.1f));
}

}  // namespace
}  // namespace denote
