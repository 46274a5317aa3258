// CROWN through an input normalisation as ONNX import writes it ((x - mean) / std with one-element
// constants behind broadcast_to, then per-element products and quotients of both signs): mul_elem and
// div by a constant are linear rules (src/bounds/crown_rules.cc), so the pass reaches the input as one
// linear function (CrownResult::input_linear), the linear functions stay below the network at every
// point, and CROWN and alpha-CROWN contain the f64 and f32 evaluations. A divisor that is not constant
// (or holds 0) is still cut at its box.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/relu_nets.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"

namespace denote {
namespace {

Model normalised_net(bool constant_divisor) {
  GraphBuilder b;
  const int64_t x = b.input({1, 4});
  auto spread = [&](double v) { return b.add(Op::BroadcastTo, {b.constant({1, 1}, {v})}, BroadcastAttrs{{1, 1}, {1, 4}}); };
  int64_t h = b.add(Op::Sub, {x, spread(0.1307)});
  h = b.add(Op::Div, {h, constant_divisor ? spread(0.3081) : b.unary(Op::Exp, x)});
  h = b.add(Op::MulElem, {h, b.constant({1, 4}, {2, -0.5, 1.25, 3})});
  h = b.add(Op::Div, {h, b.constant({1, 4}, {-4, 0.75, 2, -1.5})});
  const int64_t f = b.unary(Op::Reshape, h, ReshapeAttrs{{1, 4}, {4}});
  auto m = b.build({fixed_relu_tail(b, f)});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

std::vector<double> eval(const Model& m, const std::vector<double>& x, bool f32) {
  if (f32) {
    const Payload<float> p = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
    F32Context ctx;
    const std::vector<Tensor<float>> in = {Tensor<float>({1, 4}, std::vector<float>(x.begin(), x.end()))};
    auto y = denote(m.graph, p, std::span<const Tensor<float>>(in), m.output_ids[0], ctx);
    EXPECT_TRUE(y.ok()) << y.message();
    return y.ok() ? std::vector<double>(y->data.begin(), y->data.end()) : std::vector<double>{};
  }
  F64Context ctx;
  const std::vector<Tensor<double>> in = {Tensor<double>({1, 4}, x)};
  auto y = denote(m.graph, m.payload, std::span<const Tensor<double>>(in), m.output_ids[0], ctx);
  EXPECT_TRUE(y.ok()) << y.message();
  return y.ok() ? y->data : std::vector<double>{};
}

TEST(CrownScale, NormalisedInputsStayLinearAndHold) {
  const Model m = normalised_net(true);
  ASSERT_FALSE(m.graph.nodes.empty());
  const DoubleBox box{{1, 4}, {0.1, 0.2, 0.0, 0.5}, {0.4, 0.3, 0.6, 0.7}};
  const std::vector<DoubleBox> in = {box};
  const SpecMatrix spec{2, 2, {1, 0, 0, 1}};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> t(0, 1);
  for (const char* arith : {"f64", "f32"}) {
    SCOPED_TRACE(arith);
    const bool f32 = std::string(arith) == "f32";
    CrownOptions o;
    o.arith = *parse_arith_name(arith);
    o.input_coefficients = true;
    auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], &spec, o);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(r->input_linear);  // mul_elem and div by constants are linear: nothing cut on the way
    ASSERT_EQ(r->input_coef.size(), 8u);
    o.method = BoundMethod::AlphaCrown;
    o.input_coefficients = false;
    auto a = run_crown(m.graph, m.payload, in, m.output_ids[0], &spec, o);
    ASSERT_TRUE(a.ok()) << a.message();
    for (int s = 0; s < 64; ++s) {
      std::vector<double> x;
      for (size_t i = 0; i < 4; ++i) x.push_back(box.lo[i] + (s < 16 ? (s >> (i % 4)) & 1 : t(rng)) * (box.hi[i] - box.lo[i]));
      const std::vector<double> y = eval(m, x, f32);
      ASSERT_EQ(y.size(), 2u);
      for (size_t k = 0; k < 2; ++k) {
        EXPECT_LE(r->spec_lo[k], y[k]) << "crown row " << k;
        EXPECT_GE(r->spec_hi[k], y[k]) << "crown row " << k;
        EXPECT_LE(a->spec_lo[k], y[k]) << "alpha-crown row " << k;
        EXPECT_GE(a->spec_hi[k], y[k]) << "alpha-crown row " << k;
        if (f32) continue;  // the linear function bounds the exact network (checked in f64 at the point)
        double at_min = 0, line = 0;
        for (size_t i = 0; i < 4; ++i) {
          const double c = r->input_coef[k * 4 + i];
          at_min += c >= 0 ? c * box.lo[i] : c * box.hi[i];
          line += c * x[i];
        }
        EXPECT_GE(y[k], line + (r->spec_lo[k] - at_min) - 1e-12) << "row " << k;
      }
    }
  }
}

TEST(CrownScale, AVariableDivisorIsCutAtItsBox) {
  const Model m = normalised_net(false);
  ASSERT_FALSE(m.graph.nodes.empty());
  const std::vector<DoubleBox> in = {DoubleBox{{1, 4}, {0.1, 0.2, 0.0, 0.5}, {0.4, 0.3, 0.6, 0.7}}};
  const SpecMatrix spec{2, 2, {1, 0, 0, 1}};
  CrownOptions o;
  o.input_coefficients = true;
  auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], &spec, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_FALSE(r->input_linear);
  const std::vector<double> y = eval(m, {0.25, 0.25, 0.3, 0.6}, false);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_LE(r->spec_lo[k], y[k]);
    EXPECT_GE(r->spec_hi[k], y[k]);
  }
}

// CrownResult::cut names what the linear bounds took at its IBP box: an op without a rule (gelu), a
// product of two variables; not a product or quotient with a constant, not relu.
TEST(CrownScale, CutNodesAreNamed) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t l = b.linear(x, 3, {1, 0.5, -1, 0.25, 2, 0, -0.5, 1, 1}, {0, 0.1, -0.1});
  const int64_t g = b.unary(Op::Gelu, l);
  const int64_t p = b.binary(Op::MulElem, g, b.unary(Op::Relu, l));
  const int64_t q = b.binary(Op::Div, p, b.constant({3}, {2, -4, 0.5}));
  auto m = b.build({b.linear(q, 2, {1, -1, 0.5, 0.25, 1, -2}, {0, 0})});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<DoubleBox> in = {DoubleBox{{3}, {-0.5, -0.5, -0.5}, {0.5, 0.5, 0.5}}};
  CrownOptions o;
  auto r = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->cut, (std::vector<int64_t>{g}));  // the product of two variables: McCormick's planes, no cut
  o.method = BoundMethod::Ibp;
  auto ibp = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
  ASSERT_TRUE(ibp.ok());
  EXPECT_TRUE(ibp->cut.empty());  // no linear passes: nothing to report
  const Model net = normalised_net(true);
  auto n = run_crown(net.graph, net.payload, std::vector<DoubleBox>{DoubleBox{{1, 4}, {0, 0, 0, 0}, {1, 1, 1, 1}}},
                     net.output_ids[0], nullptr, CrownOptions{});
  ASSERT_TRUE(n.ok()) << n.message();
  EXPECT_TRUE(n->cut.empty());
}

// Products of two variables (bilinear_lines: McCormick's planes) behind linear layers of a narrow box,
// as ml4acopf's power flows (v_i v_j cos(.)) and a transformer's attention: CROWN's boxes hold the exact
// (MPFR), f64 and f32 evaluations at sampled points, alpha-CROWN's too, and the output boxes are narrower
// than IBP's in sum (the planes keep the linear layers' correlation; IBP's products lose it).
TEST(CrownScale, ProductsOfTwoVariablesHoldEvaluationsAndBeatIbp) {
  std::mt19937_64 rng(0xb11);
  std::uniform_real_distribution<double> w(-1, 1), r(0.01, 0.2);
  double width_crown = 0, width_ibp = 0;
  int64_t checks = 0;
  for (int t = 0; t < 12; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({3});
    auto layer = [&](int64_t v, int64_t out) {
      std::vector<double> wt(static_cast<size_t>(3 * out)), bias(static_cast<size_t>(out));
      for (double& a : wt) a = w(rng);
      for (double& a : bias) a = w(rng);
      return b.linear(v, out, wt, bias);
    };
    const int64_t p = b.binary(Op::MulElem, layer(x, 3), layer(x, 3));
    const int64_t q = b.binary(Op::MulElem, p, b.unary(Op::Relu, layer(x, 3)));
    auto m = b.build({layer(q, 2)});
    ASSERT_TRUE(m.ok()) << m.message();
    DoubleBox box{{3}, {}, {}};
    for (int i = 0; i < 3; ++i) {
      const double c = w(rng), rad = r(rng);
      box.lo.push_back(c - rad), box.hi.push_back(c + rad);
    }
    const std::vector<DoubleBox> in = {box};
    for (const char* arith : {"f64", "f32"}) {
      for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown, BoundMethod::Ibp}) {
        CrownOptions o;
        o.method = method;
        o.arith = *parse_arith_name(arith);
        auto res = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
        ASSERT_TRUE(res.ok()) << res.message();
        const DoubleBox& out = *res->boxes[static_cast<size_t>(m->output_ids[0])];
        for (size_t k = 0; k < 2; ++k) (method == BoundMethod::Ibp ? width_ibp : width_crown) += out.hi[k] - out.lo[k];
        if (method == BoundMethod::AlphaCrown) width_crown -= out.hi[0] - out.lo[0] + out.hi[1] - out.lo[1];
        for (int j = 0; j < 16; ++j) {
          std::vector<double> pt;
          for (int i = 0; i < 3; ++i) pt.push_back(j == 0 ? box.lo[i] : j == 1 ? box.hi[i] : box.lo[i] + (box.hi[i] - box.lo[i]) * std::uniform_real_distribution<double>(0, 1)(rng));
          std::vector<Tensor<double>> xin = {Tensor<double>({3}, pt)};
          F64Context c64;
          RealContext real(200);
          auto v64 = denote(m->graph, m->payload, std::span<const Tensor<double>>(xin), m->output_ids[0], c64);
          ASSERT_TRUE(v64.ok()) << v64.message();
          std::vector<RealScalar> rx;
          for (double v : pt) rx.push_back(real.from_double(v));
          const Payload<RealScalar> pr = convert_payload<RealScalar>(m->payload, [&](double v) { return real.from_double(v); });
          std::vector<Tensor<RealScalar>> rin = {Tensor<RealScalar>({3}, rx)};
          auto vr = denote(m->graph, pr, std::span<const Tensor<RealScalar>>(rin), m->output_ids[0], real);
          ASSERT_TRUE(vr.ok()) << vr.message();
          F32Context c32;
          std::vector<float> fx(pt.begin(), pt.end());
          const Payload<float> pf = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
          std::vector<Tensor<float>> fin = {Tensor<float>({3}, fx)};
          auto v32 = denote(m->graph, pf, std::span<const Tensor<float>>(fin), m->output_ids[0], c32);
          ASSERT_TRUE(v32.ok()) << v32.message();
          for (size_t k = 0; k < 2; ++k) {
            const double e = real.to_double(vr->data[k]);
            const double f = std::string(arith) == "f64" ? v64->data[k] : static_cast<double>(v32->data[k]);
            EXPECT_TRUE(out.lo[k] <= e && e <= out.hi[k]) << arith << " trial " << t << " exact " << e;
            EXPECT_TRUE(out.lo[k] <= f && f <= out.hi[k]) << arith << " trial " << t << " evaluated " << f;
            checks += 2;
          }
        }
      }
    }
  }
  EXPECT_GT(checks, 2000);
  EXPECT_LT(width_crown, 0.9 * width_ibp) << "CROWN " << width_crown << " IBP " << width_ibp;
}

// pow by the constant 2 (the exponent behind broadcast_to, as the ONNX importer writes it) between
// relax_convex's lines, pow by 3 cut at its box, behind linear layers: the exact, f64 and f32 values at
// sampled points inside CROWN's output boxes, narrower than IBP's in sum.
TEST(CrownScale, SquaresBetweenLinesOtherPowersCut) {
  std::mt19937_64 rng(0x5a2);
  std::uniform_real_distribution<double> w(-1, 1), r(0.01, 0.3), u01(0, 1);
  double width_crown = 0, width_ibp = 0;
  int64_t checks = 0;
  for (int t = 0; t < 12; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({2});
    std::vector<double> w1(8), b1(4), w2(16), b2(2);
    for (double& a : w1) a = w(rng);
    for (double& a : b1) a = w(rng);
    for (double& a : w2) a = w(rng);
    for (double& a : b2) a = w(rng);
    const int64_t h = b.linear(x, 4, w1, b1);
    auto power = [&](double e) {
      return b.binary(Op::Pow, h, b.add(Op::BroadcastTo, {b.constant({}, {e})}, BroadcastAttrs{{}, {4}}));
    };
    const int64_t cat = b.add(Op::Concat, {power(2), power(3)}, AxisAttrs{0});
    auto m = b.build({b.linear(cat, 2, w2, b2)});
    ASSERT_TRUE(m.ok()) << m.message();
    DoubleBox bx{{2}, {}, {}};
    for (int i = 0; i < 2; ++i) {
      const double c = w(rng), rad = r(rng);
      bx.lo.push_back(c - rad), bx.hi.push_back(c + rad);
    }
    const std::vector<DoubleBox> in = {bx};
    for (const char* arith : {"f64", "f32"}) {
      for (BoundMethod method : {BoundMethod::Crown, BoundMethod::Ibp}) {
        CrownOptions o;
        o.method = method;
        o.arith = *parse_arith_name(arith);
        auto res = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
        ASSERT_TRUE(res.ok()) << res.message();
        const DoubleBox& out = *res->boxes[static_cast<size_t>(m->output_ids[0])];
        for (size_t k = 0; k < 2; ++k) (method == BoundMethod::Ibp ? width_ibp : width_crown) += out.hi[k] - out.lo[k];
        for (int j = 0; j < 24; ++j) {
          std::vector<double> pt;
          for (int i = 0; i < 2; ++i) pt.push_back(j < 4 ? ((j >> i) & 1 ? bx.hi[i] : bx.lo[i]) : bx.lo[i] + (bx.hi[i] - bx.lo[i]) * u01(rng));
          RealContext real(200);
          std::vector<RealScalar> rx;
          for (double v : pt) rx.push_back(real.from_double(v));
          const Payload<RealScalar> pr = convert_payload<RealScalar>(m->payload, [&](double v) { return real.from_double(v); });
          std::vector<Tensor<RealScalar>> rin = {Tensor<RealScalar>({2}, rx)};
          auto vr = denote(m->graph, pr, std::span<const Tensor<RealScalar>>(rin), m->output_ids[0], real);
          F64Context c64;
          std::vector<Tensor<double>> din = {Tensor<double>({2}, pt)};
          auto v64 = denote(m->graph, m->payload, std::span<const Tensor<double>>(din), m->output_ids[0], c64);
          F32Context c32;
          const Payload<float> pf = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
          std::vector<Tensor<float>> fin = {Tensor<float>({2}, std::vector<float>(pt.begin(), pt.end()))};
          auto v32 = denote(m->graph, pf, std::span<const Tensor<float>>(fin), m->output_ids[0], c32);
          ASSERT_TRUE(vr.ok() && v64.ok() && v32.ok());
          for (size_t k = 0; k < 2; ++k) {
            const double e = real.to_double(vr->data[k]);
            const double f = std::string(arith) == "f64" ? v64->data[k] : static_cast<double>(v32->data[k]);
            EXPECT_TRUE(out.lo[k] <= e && e <= out.hi[k]) << arith << " trial " << t << " exact " << e;
            EXPECT_TRUE(out.lo[k] <= f && f <= out.hi[k]) << arith << " trial " << t << " evaluated " << f;
            checks += 2;
          }
        }
      }
    }
  }
  EXPECT_GT(checks, 4000);
  EXPECT_LT(width_crown, 0.95 * width_ibp) << "CROWN " << width_crown << " IBP " << width_ibp;
}

// sin and cos between lines (r_periodic: concave where positive, convex where negative, on a box with no
// zero inside; cut otherwise), behind a linear layer: y = W2 [sin(W1 x + b1); cos(W1 x + b1)] + b2 on boxes
// of widths 0.02-1, some across a zero. CROWN's output boxes hold the exact (MPFR), f64 and f32 values at
// sampled points and are narrower than IBP's in sum.
TEST(CrownScale, SinAndCosBetweenLinesHoldEvaluations) {
  std::mt19937_64 rng(0x51c);
  std::uniform_real_distribution<double> w(-2, 2), r(0.01, 0.5), u01(0, 1);
  double width_crown = 0, width_ibp = 0;
  int64_t checks = 0;
  for (int t = 0; t < 16; ++t) {
    GraphBuilder b;
    const int64_t x = b.input({2});
    std::vector<double> w1(8), b1(4), w2(16), b2(2);
    for (double& a : w1) a = w(rng);
    for (double& a : b1) a = 2 * w(rng);
    for (double& a : w2) a = w(rng);
    for (double& a : b2) a = w(rng);
    const int64_t h = b.linear(x, 4, w1, b1);
    const int64_t cat = b.add(Op::Concat, {b.unary(Op::Sin, h), b.unary(Op::Cos, h)}, AxisAttrs{0});
    auto m = b.build({b.linear(cat, 2, w2, b2)});
    ASSERT_TRUE(m.ok()) << m.message();
    const DoubleBox box{{2}, {}, {}};
    DoubleBox bx = box;
    for (int i = 0; i < 2; ++i) {
      const double c = w(rng), rad = r(rng) * (t % 2 ? 0.1 : 1);
      bx.lo.push_back(c - rad), bx.hi.push_back(c + rad);
    }
    const std::vector<DoubleBox> in = {bx};
    for (const char* arith : {"f64", "f32"}) {
      for (BoundMethod method : {BoundMethod::Crown, BoundMethod::Ibp}) {
        CrownOptions o;
        o.method = method;
        o.arith = *parse_arith_name(arith);
        auto res = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
        ASSERT_TRUE(res.ok()) << res.message();
        const DoubleBox& out = *res->boxes[static_cast<size_t>(m->output_ids[0])];
        for (size_t k = 0; k < 2; ++k) (method == BoundMethod::Ibp ? width_ibp : width_crown) += out.hi[k] - out.lo[k];
        for (int j = 0; j < 24; ++j) {
          std::vector<double> pt;
          for (int i = 0; i < 2; ++i) pt.push_back(j < 4 ? ((j >> i) & 1 ? bx.hi[i] : bx.lo[i]) : bx.lo[i] + (bx.hi[i] - bx.lo[i]) * u01(rng));
          RealContext real(200);
          std::vector<RealScalar> rx;
          for (double v : pt) rx.push_back(real.from_double(v));
          const Payload<RealScalar> pr = convert_payload<RealScalar>(m->payload, [&](double v) { return real.from_double(v); });
          std::vector<Tensor<RealScalar>> rin = {Tensor<RealScalar>({2}, rx)};
          auto vr = denote(m->graph, pr, std::span<const Tensor<RealScalar>>(rin), m->output_ids[0], real);
          F64Context c64;
          std::vector<Tensor<double>> din = {Tensor<double>({2}, pt)};
          auto v64 = denote(m->graph, m->payload, std::span<const Tensor<double>>(din), m->output_ids[0], c64);
          F32Context c32;
          const Payload<float> pf = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
          std::vector<Tensor<float>> fin = {Tensor<float>({2}, std::vector<float>(pt.begin(), pt.end()))};
          auto v32 = denote(m->graph, pf, std::span<const Tensor<float>>(fin), m->output_ids[0], c32);
          ASSERT_TRUE(vr.ok() && v64.ok() && v32.ok());
          for (size_t k = 0; k < 2; ++k) {
            const double e = real.to_double(vr->data[k]);
            const double f = std::string(arith) == "f64" ? v64->data[k] : static_cast<double>(v32->data[k]);
            EXPECT_TRUE(out.lo[k] <= e && e <= out.hi[k]) << arith << " trial " << t << " exact " << e;
            EXPECT_TRUE(out.lo[k] <= f && f <= out.hi[k]) << arith << " trial " << t << " evaluated " << f;
            checks += 2;
          }
        }
      }
    }
  }
  EXPECT_GT(checks, 5000);
  EXPECT_LT(width_crown, 0.9 * width_ibp) << "CROWN " << width_crown << " IBP " << width_ibp;
}

}  // namespace
}  // namespace denote
