// CROWN through the nonlinear ops of VNN-COMP 2023's ml4acopf (src/bounds/crown_rules.cc): products of two
// variables (bilinear_lines: McCormick's planes), pow by the constant 2 (convex lines; other exponents cut)
// and sin/cos (concave/convex lines on boxes without a zero), each behind linear layers. On random boxes the
// output boxes of CROWN (and alpha-CROWN) hold the exact (MPFR), f64 and f32 values at sampled points
// (corners first), and are narrower than IBP's in sum (a mutant without the lines fails that).
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"

namespace denote {
namespace {

// The model's output at pt: exactly (MPFR, 200 bits), in f64 and in f32.
struct Values {
  std::vector<double> exact, f64, f32;
};
Values values_at(const Model& m, const std::vector<double>& pt) {
  const int64_t out = m.output_ids[0];
  const Shape s{static_cast<int64_t>(pt.size())};
  Values v;
  RealContext real(200);
  std::vector<RealScalar> rx;
  for (double x : pt) rx.push_back(real.from_double(x));
  const Payload<RealScalar> pr = convert_payload<RealScalar>(m.payload, [&](double x) { return real.from_double(x); });
  std::vector<Tensor<RealScalar>> rin = {Tensor<RealScalar>(s, rx)};
  auto vr = denote(m.graph, pr, std::span<const Tensor<RealScalar>>(rin), out, real);
  F64Context c64;
  std::vector<Tensor<double>> din = {Tensor<double>(s, pt)};
  auto v64 = denote(m.graph, m.payload, std::span<const Tensor<double>>(din), out, c64);
  F32Context c32;
  const Payload<float> pf = convert_payload<float>(m.payload, [](double x) { return static_cast<float>(x); });
  std::vector<Tensor<float>> fin = {Tensor<float>(s, std::vector<float>(pt.begin(), pt.end()))};
  auto v32 = denote(m.graph, pf, std::span<const Tensor<float>>(fin), out, c32);
  EXPECT_TRUE(vr.ok() && v64.ok() && v32.ok());
  if (!vr.ok() || !v64.ok() || !v32.ok()) return v;
  for (size_t k = 0; k < v64->data.size(); ++k) {
    v.exact.push_back(real.to_double(vr->data[k]));
    v.f64.push_back(v64->data[k]);
    v.f32.push_back(static_cast<double>(v32->data[k]));
  }
  return v;
}

struct Totals {
  double crown = 0, ibp = 0;  // output widths summed
  int64_t checks = 0;
};

// Bounds m's output on `box` by each method in each arithmetic; every box must hold the exact value and
// the arithmetic's evaluation at 24 points of the box (its corners of the first two inputs first).
void check_methods(std::mt19937_64& rng, const Model& m, const DoubleBox& box, std::vector<BoundMethod> methods,
                   Totals& tot, const std::string& what) {
  std::uniform_real_distribution<double> u01(0, 1);
  for (const char* arith : {"f64", "f32"})
    for (BoundMethod method : methods) {
      CrownOptions o;
      o.method = method;
      o.arith = *parse_arith_name(arith);
      auto res = run_crown(m.graph, m.payload, std::vector<DoubleBox>{box}, m.output_ids[0], nullptr, o);
      ASSERT_TRUE(res.ok()) << res.message();
      const DoubleBox& out = *res->boxes[static_cast<size_t>(m.output_ids[0])];
      for (size_t k = 0; k < out.lo.size(); ++k) {
        if (method == BoundMethod::Ibp) tot.ibp += out.hi[k] - out.lo[k];
        if (method == BoundMethod::Crown) tot.crown += out.hi[k] - out.lo[k];
      }
      for (int j = 0; j < 24; ++j) {
        std::vector<double> pt;
        for (size_t i = 0; i < box.lo.size(); ++i)
          pt.push_back(j < 4 && i < 2 ? ((j >> i) & 1 ? box.hi[i] : box.lo[i]) : box.lo[i] + (box.hi[i] - box.lo[i]) * u01(rng));
        const Values v = values_at(m, pt);
        ASSERT_EQ(v.exact.size(), out.lo.size());
        for (size_t k = 0; k < out.lo.size(); ++k) {
          const double e = v.exact[k], f = std::string(arith) == "f64" ? v.f64[k] : v.f32[k];
          EXPECT_TRUE(out.lo[k] <= e && e <= out.hi[k]) << what << " " << arith << " exact " << e;
          EXPECT_TRUE(out.lo[k] <= f && f <= out.hi[k]) << what << " " << arith << " evaluated " << f;
          tot.checks += 2;
        }
      }
    }
}

std::vector<double> draw(std::mt19937_64& rng, size_t n, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = d(rng);
  return v;
}

DoubleBox random_box(std::mt19937_64& rng, int64_t n, double rmin, double rmax) {
  DoubleBox box{{n}, {}, {}};
  const std::vector<double> c = draw(rng, static_cast<size_t>(n), -1, 1), r = draw(rng, static_cast<size_t>(n), rmin, rmax);
  for (size_t i = 0; i < c.size(); ++i) box.lo.push_back(c[i] - r[i]), box.hi.push_back(c[i] + r[i]);
  return box;
}

// Products of two variables behind linear layers of a narrow box (ml4acopf's power flows v_i v_j cos(.),
// a transformer's attention), and a product with a relu: the planes keep the layers' correlation, IBP's
// interval products lose it.
TEST(CrownNonlinear, ProductsOfTwoVariablesHoldEvaluationsAndBeatIbp) {
  std::mt19937_64 rng(0xb11);
  Totals tot;
  for (int t = 0; t < 12; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({3});
    auto layer = [&](int64_t v, int64_t out) { return b.linear(v, out, draw(rng, static_cast<size_t>(3 * out), -1, 1), draw(rng, static_cast<size_t>(out), -1, 1)); };
    const int64_t p = b.binary(Op::MulElem, layer(x, 3), layer(x, 3));
    const int64_t q = b.binary(Op::MulElem, p, b.unary(Op::Relu, layer(x, 3)));
    auto m = b.build({layer(q, 2)});
    ASSERT_TRUE(m.ok()) << m.message();
    check_methods(rng, *m, random_box(rng, 3, 0.01, 0.2), {BoundMethod::Crown, BoundMethod::AlphaCrown, BoundMethod::Ibp}, tot,
                  "products " + std::to_string(t));
    ASSERT_FALSE(HasFatalFailure());
  }
  EXPECT_GT(tot.checks, 2000);
  EXPECT_LT(tot.crown, 0.9 * tot.ibp) << "CROWN " << tot.crown << " IBP " << tot.ibp;
}

// y = W2 [f(h); g(h)] + b2 with h = W1 x + b1 and (f, g) = (pow 2, pow 3) (the exponents behind broadcast_to,
// as the ONNX importer writes them; pow 3 is cut) or (sin, cos) on boxes of widths 0.02-1, some across a zero.
Model two_branch(std::mt19937_64& rng, bool periodic) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t h = b.linear(x, 4, draw(rng, 8, -2, 2), draw(rng, 4, -2, 2));
  auto power = [&](double e) {
    return b.binary(Op::Pow, h, b.add(Op::BroadcastTo, {b.constant({}, {e})}, BroadcastAttrs{{}, {4}}));
  };
  const int64_t f = periodic ? b.unary(Op::Sin, h) : power(2), g = periodic ? b.unary(Op::Cos, h) : power(3);
  const int64_t cat = b.add(Op::Concat, {f, g}, AxisAttrs{0});
  auto m = b.build({b.linear(cat, 2, draw(rng, 16, -1, 1), draw(rng, 2, -1, 1))});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(CrownNonlinear, SquaresBetweenLinesOtherPowersCut) {
  std::mt19937_64 rng(0x5a2);
  Totals tot;
  for (int t = 0; t < 12; ++t) {
    const Model m = two_branch(rng, false);
    const DoubleBox box = random_box(rng, 2, 0.01, 0.3);
    // CrownResult::cut names the cube (cut at its box), not the square (between lines).
    auto r = run_crown(m.graph, m.payload, std::vector<DoubleBox>{box}, m.output_ids[0], nullptr, CrownOptions{});
    ASSERT_TRUE(r.ok()) << r.message();
    ASSERT_EQ(r->cut.size(), 1u);
    const Node& cube = m.graph.nodes[static_cast<size_t>(r->cut[0])];
    EXPECT_EQ(op_tag(cube.op), "pow");
    EXPECT_EQ(m.payload.consts.at(m.graph.nodes[static_cast<size_t>(cube.parents[1])].parents[0]).values,
              std::vector<double>{3});
    check_methods(rng, m, box, {BoundMethod::Crown, BoundMethod::Ibp}, tot, "powers " + std::to_string(t));
    ASSERT_FALSE(HasFatalFailure());
  }
  EXPECT_GT(tot.checks, 4000);
  EXPECT_LT(tot.crown, 0.95 * tot.ibp) << "CROWN " << tot.crown << " IBP " << tot.ibp;
}

TEST(CrownNonlinear, SinAndCosBetweenLinesHoldEvaluations) {
  std::mt19937_64 rng(0x51c);
  Totals tot;
  for (int t = 0; t < 16; ++t) {
    const Model m = two_branch(rng, true);
    check_methods(rng, m, random_box(rng, 2, 0.01, t % 2 ? 0.05 : 0.5), {BoundMethod::Crown, BoundMethod::Ibp}, tot,
                  "periodic " + std::to_string(t));
    ASSERT_FALSE(HasFatalFailure());
  }
  EXPECT_GT(tot.checks, 5000);
  EXPECT_LT(tot.crown, 0.9 * tot.ibp) << "CROWN " << tot.crown << " IBP " << tot.ibp;
}

}  // namespace
}  // namespace denote
