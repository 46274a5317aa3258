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

}  // namespace
}  // namespace denote
