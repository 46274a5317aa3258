// The falsification descents' loss (src/verify/falsify.h, descent_atom): the sum of the violated atoms'
// margins (alpha-beta-CROWN's hinge loss), the worst atom where none is violated; and that a signed step
// on its gradient (atom_gradient) lowers that sum on a network where the worst atom alone would not.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/program/builder.h"
#include "verify/falsify.h"

namespace denote {
namespace {

using verify_detail::atom_gradient;
using verify_detail::descent_atom;
using verify_detail::step_window;

VnnAtom atom(std::vector<double> coef, double rhs) {
  VnnAtom a;
  a.coef = std::move(coef);
  a.rhs_down = a.rhs_up = rhs;
  return a;
}

// The property "y2 >= y0 and y2 >= y1" (a targeted class) as atoms c . y <= 0.
std::vector<VnnAtom> target_two() { return {atom({1, 0, -1}, 0), atom({0, 1, -1}, 0)}; }

double hinge(const std::vector<VnnAtom>& conj, const std::vector<double>& y) {
  double sum = 0;
  for (const VnnAtom& a : conj) {
    double s = -a.rhs_down;
    for (size_t j = 0; j < y.size(); ++j) s += a.coef[j] * y[j];
    sum += std::max(s, 0.0);
  }
  return sum;
}

TEST(VerifyDescent, TheLossSumsTheViolatedAtoms) {
  const std::vector<VnnAtom> conj = target_two();
  // Both violated: the two atoms' coefficients added.
  EXPECT_EQ(descent_atom(conj, {3, 2, 1}, 0).coef, (std::vector<double>{1, 1, -2}));
  // One violated: that atom alone, whichever is the worst index passed.
  EXPECT_EQ(descent_atom(conj, {3, 0, 1}, 1).coef, (std::vector<double>{1, 0, -1}));
  // None violated (a witness up to rounding): the worst atom.
  EXPECT_EQ(descent_atom(conj, {0, 0, 1}, 1).coef, conj[1].coef);
  // An atom exactly at its right-hand side is not violated.
  EXPECT_EQ(descent_atom(conj, {1, 3, 1}, 0).coef, (std::vector<double>{0, 1, -1}));
}

// y = W x with y0 = x0 + x1, y1 = x0 - x1, y2 = 0: from x = (1, 0.1) both atoms are violated; the worst
// atom's gradient (atom 0's: (1, 1)) moves x1 too, which trades y0 against y1; the sum's is (2, 0), and a
// signed step on it lowers the summed violation.
TEST(VerifyDescent, AStepOnTheLossLowersTheSummedViolation) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.linear(x, 3, {1, 1, 1, -1, 0, 0}, {0, 0, 0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<VnnAtom> conj = target_two();
  const std::vector<double> x0 = {1, 0.1};
  const std::vector<double> y0 = {1.1, 0.9, 0};
  const std::vector<double> g = atom_gradient(*m, descent_atom(conj, y0, 0), x0, step_window(m->graph));
  ASSERT_EQ(g.size(), 2u);
  EXPECT_DOUBLE_EQ(g[0], 2);  // d (y0 + y1 - 2 y2) / dx = (2, 0)
  EXPECT_DOUBLE_EQ(g[1], 0);
  const std::vector<double> worst = atom_gradient(*m, conj[0], x0, step_window(m->graph));
  EXPECT_DOUBLE_EQ(worst[1], 1);  // the worst atom alone would move x1, which trades y0 against y1
  const double eta = 0.4;
  std::vector<double> x1 = x0;
  for (size_t i = 0; i < 2; ++i)
    if (g[i] != 0) x1[i] -= eta * (g[i] > 0 ? 1 : -1);
  const std::vector<double> y1 = {x1[0] + x1[1], x1[0] - x1[1], 0};
  EXPECT_LT(hinge(conj, y1), hinge(conj, y0));
}

// The restarts' stall rule (RestartStall): window 2 stops once two restarts in a row missed a 1% gain,
// never before restart 4; a gain of 1% or more restarts the count; window 4 waits for 8 restarts.
TEST(VerifyDescent, RestartsStopOnceTheyStall) {
  using verify_detail::RestartStall;
  RestartStall a;
  EXPECT_FALSE(a.stop(1.0));    // 1: the first value
  EXPECT_FALSE(a.stop(0.995));  // 2: under 1% better: a miss
  EXPECT_FALSE(a.stop(0.999));  // 3: a second miss, but fewer than 4 restarts
  EXPECT_TRUE(a.stop(1.2));     // 4: a third miss
  RestartStall b;
  const double values[] = {1.0, 0.98, 0.97, 0.96, 0.955, 0.955};  // 2-4: each 1% or more better
  for (int k = 0; k < 5; ++k) EXPECT_FALSE(b.stop(values[k])) << k;
  EXPECT_TRUE(b.stop(values[5]));  // 6: the second miss in a row (5 missed 0.96 - 1% too)
  RestartStall c{4};
  for (int k = 0; k < 7; ++k) EXPECT_FALSE(c.stop(-0.5)) << k;  // negative values too; 8 restarts first
  EXPECT_TRUE(c.stop(-0.5));
  RestartStall d;
  EXPECT_FALSE(d.stop(INFINITY));  // a restart that saw no value (deadline) sets no best
  EXPECT_FALSE(d.stop(2.0));
  EXPECT_FALSE(d.stop(2.0));
  EXPECT_TRUE(d.stop(2.0));
}

}  // namespace
}  // namespace denote
