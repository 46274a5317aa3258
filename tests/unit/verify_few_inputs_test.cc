// verify over one input on a network where CROWN's pass costs far more than IBP's (src/verify/bounder.h,
// Bounder::ibp_domains): subdomains bounded by IBP, no whole-box alpha-CROWN, the answers those of the
// real network. The network sums a telescope of 600 differences z_i = relu(h_i - h_(i+1)), h_i =
// relu(x - i/600) (z_599 = h_599), so y = h_0 = x on [0, 1]; IBP's box of y on [0, 1] reaches about
// 300 (each z_i up to 1 - i/600) and narrows only as the input is split.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <fmt/format.h>

#include "denote/program/builder.h"
#include "denote/verify/verify.h"

namespace denote {
namespace {

Model telescope() {
  constexpr int64_t n = 600;
  GraphBuilder b;
  const int64_t x = b.input({1});
  std::vector<double> w1(n, 1.0), b1(n);
  for (int64_t i = 0; i < n; ++i) b1[static_cast<size_t>(i)] = -static_cast<double>(i) / n;
  const int64_t h = b.unary(Op::Relu, b.linear(x, n, w1, b1));
  std::vector<double> w2(static_cast<size_t>(n * n), 0.0), b2(n, 0.0);  // z_i = h_i - h_(i+1): 2 nonzeros a row
  for (int64_t i = 0; i < n; ++i) {
    w2[static_cast<size_t>(i * n + i)] = 1.0;
    if (i + 1 < n) w2[static_cast<size_t>(i * n + i + 1)] = -1.0;
  }
  const int64_t z = b.unary(Op::Relu, b.linear(h, n, w2, b2));
  auto m = b.build({b.linear(z, 1, std::vector<double>(n, 1.0), {0.0})});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

VnnProperty property(double lo, double hi, const std::string& atom) {
  auto p = parse_vnnlib(fmt::format("(declare-const X_0 Real)(declare-const Y_0 Real)(assert (>= X_0 {}))"
                                    "(assert (<= X_0 {}))(assert {})",
                                    lo, hi, atom));
  EXPECT_TRUE(p.ok()) << p.message();
  return p.ok() ? std::move(*p) : VnnProperty{};
}

TEST(VerifyFewInputs, IbpBoundedSubdomainsProveWhatHolds) {
  const Model m = telescope();
  VerifyOptions o;
  o.timeout_s = 60;
  o.arith = ArithSpec::f64();
  o.samples = 64;
  auto r = verify(m, property(0, 1, "(>= Y_0 1.05)"), o);  // y <= 1 + rounding: unsat
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->result, VerifyResult::Unsat) << r->note;
  EXPECT_EQ(r->stats.alpha_calls, 0);  // CROWN's pass costs hundreds of IBP passes here: no alpha-CROWN
  EXPECT_GT(r->stats.domains, 1);       // IBP's whole box says about y <= 300: split
  o.arith = ArithSpec::f32();
  auto r32 = verify(m, property(0, 1, "(>= Y_0 1.05)"), o);
  ASSERT_TRUE(r32.ok()) << r32.message();
  EXPECT_EQ(r32->result, VerifyResult::Unsat) << r32->note;
}

TEST(VerifyFewInputs, WitnessOfWhatFails) {
  const Model m = telescope();
  VerifyOptions o;
  o.timeout_s = 60;
  o.arith = ArithSpec::f64();
  o.samples = 0;  // no random points: branch and bound's midpoints find it
  auto r = verify(m, property(0, 1, "(>= Y_0 0.999)"), o);  // y = x on [0, 1]: sat near x = 1
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->result, VerifyResult::Sat) << r->note;
  ASSERT_TRUE(r->witness.has_value());
  EXPECT_GE(r->witness->y[0], 0.999);
  EXPECT_GE(r->witness->x[0], 0.999 - 1e-9);
  EXPECT_LE(r->witness->x[0], 1.0);
}

}  // namespace
}  // namespace denote
