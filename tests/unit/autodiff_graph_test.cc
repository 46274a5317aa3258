// Graph-level derivatives (include/denote/autodiff/grad.h): reverse mode against central finite
// differences in MPFR at 200 bits on random graphs, forward mode against reverse mode, parameter
// gradients, the diff column's stop/none/leaf behaviour, and the errors.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "denote/autodiff/grad.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

using ibp_test::Rng;

template <class Ctx>
std::vector<Tensor<typename Ctx::Scalar>> lift(Ctx& ctx, const std::vector<Tensor<double>>& ts) {
  std::vector<Tensor<typename Ctx::Scalar>> out;
  for (const auto& t : ts) {
    Tensor<typename Ctx::Scalar> r;
    r.shape = t.shape;
    for (double v : t.data) r.data.push_back(ctx.from_double(v));
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<double> random_values(Rng& rng, int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(rng.real(-1, 1));
  return v;
}

// <a, b> in the context.
template <class Ctx>
typename Ctx::Scalar dot(Ctx& ctx, const Tensor<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& b) {
  auto acc = ctx.zero();
  for (size_t i = 0; i < a.data.size(); ++i) acc = ctx.add(acc, ctx.mul(a.data[i], b.data[i]));
  return acc;
}

// The op sequence of a graph, for failure messages.
std::string ops_of(const Graph& g) {
  std::string s;
  for (const auto& node : g.nodes) s += std::string(op_info(node.op).tag) + " ";
  return s;
}

// Reverse mode at 200 bits against (f(x + h u) - f(x - h u)) / 2h, h = 2^-60, both dotted with v:
// the truncation error is O(h^2) ~ 1e-36, the rounding error 2^-200 / h ~ 1e-42.
TEST(AutodiffGraph, ReverseModeMatchesMpfrFiniteDifferencesOnRandomGraphs) {
  RealContext ctx(200);
  Rng rng(0xad0001);
  int checked = 0;
  for (int graph = 0; graph < 150; ++graph) {
    const int64_t n = rng.range(2, 4);
    const Model m = ibp_test::random_model(rng, n);
    const int64_t out = m.output_ids[0];
    const auto x = lift(ctx, {Tensor<double>({n}, random_values(rng, n))});
    const auto u = lift(ctx, {Tensor<double>({n}, random_values(rng, n))});
    const Payload<RealScalar> p = convert_payload<RealScalar>(m.payload, [&](double v) { return ctx.from_double(v); });
    auto value = denote(m.graph, p, std::span<const Tensor<RealScalar>>(x), out, ctx);
    if (!value.ok()) continue;  // a log domain error at this point: nothing to differentiate
    const auto v = lift(ctx, {Tensor<double>(value->shape, random_values(rng, numel(value->shape)))});
    auto g = vjp(m.graph, p, std::span<const Tensor<RealScalar>>(x), out, &v[0], ctx);
    ASSERT_TRUE(g.ok()) << g.message();
    const RealScalar h = ctx.from_double(0x1p-60);
    auto shifted = [&](bool plus) {
      std::vector<Tensor<RealScalar>> xs = x;
      for (size_t i = 0; i < xs[0].data.size(); ++i) {
        const RealScalar d = ctx.mul(h, u[0].data[i]);
        xs[0].data[i] = plus ? ctx.add(xs[0].data[i], d) : ctx.sub(xs[0].data[i], d);
      }
      return denote(m.graph, p, std::span<const Tensor<RealScalar>>(xs), out, ctx);
    };
    auto fp = shifted(true), fm = shifted(false);
    ASSERT_TRUE(fp.ok() && fm.ok());
    const RealScalar fd = ctx.div(ctx.sub(dot(ctx, v[0], *fp), dot(ctx, v[0], *fm)), ctx.add(h, h));
    const RealScalar ad = dot(ctx, g->inputs[0], u[0]);
    // sqrt(abs(relu(x))) at relu's plateau: sqrt's derivative at 0 is +inf, and inf * 0 is NaN, as in
    // PyTorch. A singular point, not a rule to check against differences.
    if (!std::isfinite(ctx.to_double(ad))) continue;
    const double err = std::fabs(ctx.to_double(ctx.sub(fd, ad)));
    EXPECT_LE(err, 1e-24 * (1 + std::fabs(ctx.to_double(ad)))) << "graph " << graph << ": fd " << ctx.to_double(fd)
                                                               << " ad " << ctx.to_double(ad) << " ops " << ops_of(m.graph);
    ++checked;
  }
  EXPECT_GT(checked, 120);
}

// Forward mode and reverse mode are the same linear map: <v, J u> = <J^T v, u>.
TEST(AutodiffGraph, ForwardAndReverseModeAgreeOnRandomGraphs) {
  F64Context ctx;
  Rng rng(0xad0002);
  int checked = 0, singular = 0;
  for (int graph = 0; graph < 300; ++graph) {
    const int64_t n = rng.range(2, 6);
    const Model m = ibp_test::random_model(rng, n);
    const int64_t out = m.output_ids[0];
    const std::vector<Tensor<double>> x{Tensor<double>({n}, random_values(rng, n))};
    const std::vector<Tensor<double>> u{Tensor<double>({n}, random_values(rng, n))};
    auto t = jvp(m.graph, m.payload, std::span<const Tensor<double>>(x), std::span<const Tensor<double>>(u), out, ctx);
    if (!t.ok()) continue;
    const Tensor<double> v(t->value.shape, random_values(rng, numel(t->value.shape)));
    auto g = vjp(m.graph, m.payload, std::span<const Tensor<double>>(x), out, &v, ctx);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->value, t->value);
    const double lhs = dot(ctx, v, t->tangent), rhs = dot(ctx, g->inputs[0], u[0]);
    // At a singular point (sqrt of an exact 0 from relu's plateau) forward mode multiplies the +inf
    // derivative by a zero tangent (NaN) while reverse mode's masks (max_elem) may drop the branch.
    if (!std::isfinite(lhs) || !std::isfinite(rhs)) {
      ++singular;
      continue;
    }
    ++checked;
    EXPECT_NEAR(lhs, rhs, 1e-9 * (1 + std::fabs(lhs))) << "graph " << graph << " ops " << ops_of(m.graph);
  }
  EXPECT_GT(checked, 250);
  EXPECT_LT(singular, 10);
}

// y = sum(tanh(W x + b)): d/dW, d/db and d/dx against central differences in f64.
TEST(AutodiffGraph, LinearParameterGradientsMatchFiniteDifferences) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const std::vector<double> w{0.5, -0.25, 0.75, 0.1, 0.2, -0.3}, bias{0.05, -0.1};
  const int64_t y = b.sum(b.unary(Op::Tanh, b.linear(x, 2, w, bias)));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  F64Context ctx;
  const std::vector<Tensor<double>> in{Tensor<double>({3}, {0.3, -0.7, 0.9})};
  GradOptions all;
  all.wrt = GradWrt::All;
  auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx, all);
  ASSERT_TRUE(g.ok()) << g.message();
  ASSERT_EQ(g->params.size(), 2u);
  EXPECT_EQ(g->params[0].field, "weight");
  EXPECT_EQ(g->params[0].shape, (Shape{2, 3}));
  EXPECT_EQ(g->params[1].field, "bias");
  auto f = [&](const Payload<double>& p, const std::vector<Tensor<double>>& xs) {
    return denote(m->graph, p, std::span<const Tensor<double>>(xs), y, ctx)->data[0];
  };
  const double h = 1e-6;
  for (size_t k = 0; k < w.size(); ++k) {
    Payload<double> plus = m->payload, minus = m->payload;
    plus.linear[1].weight[k] += h;
    minus.linear[1].weight[k] -= h;
    EXPECT_NEAR(g->params[0].values[k], (f(plus, in) - f(minus, in)) / (2 * h), 1e-8) << "weight " << k;
  }
  for (size_t k = 0; k < bias.size(); ++k) {
    Payload<double> plus = m->payload, minus = m->payload;
    plus.linear[1].bias[k] += h;
    minus.linear[1].bias[k] -= h;
    EXPECT_NEAR(g->params[1].values[k], (f(plus, in) - f(minus, in)) / (2 * h), 1e-8) << "bias " << k;
  }
  for (size_t k = 0; k < 3; ++k) {
    auto plus = in, minus = in;
    plus[0].data[k] += h;
    minus[0].data[k] -= h;
    EXPECT_NEAR(g->inputs[0].data[k], (f(m->payload, plus) - f(m->payload, minus)) / (2 * h), 1e-8) << "x " << k;
  }
}

// detach stops the gradient; a node without a derivative is an error only when a gradient must
// flow through it; a const is a parameter.
TEST(AutodiffGraph, DiffColumnStopsErrsOnlyWhenNeededAndReadsConsts) {
  F64Context ctx;
  const std::vector<Tensor<double>> in{Tensor<double>({2}, {0.5, -1.5})};
  {
    GraphBuilder b;
    const int64_t x = b.input({2});
    const int64_t y = b.sum(b.binary(Op::MulElem, x, b.unary(Op::Detach, x)));  // d/dx = detach(x)
    auto m = b.build({y});
    auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->inputs[0].data, (std::vector<double>{0.5, -1.5}));
  }
  {
    GraphBuilder b;
    const int64_t x = b.input({2});
    const int64_t keep = b.constant({}, {0.5});
    const int64_t mask = b.add(Op::BernoulliMask, {keep}, SeedAttrs{7}, Shape{2});
    const int64_t y = b.sum(b.binary(Op::MulElem, x, mask));
    auto m = b.build({y});
    ASSERT_TRUE(m.ok()) << m.message();
    auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx);
    ASSERT_TRUE(g.ok()) << g.message();  // wrt inputs: nothing flows into the mask's parent
    auto mv = denote(m->graph, m->payload, std::span<const Tensor<double>>(in), mask, ctx);
    EXPECT_EQ(g->inputs[0].data, mv->data);
    GradOptions params;
    params.wrt = GradWrt::Params;  // the const keep-probability now needs a gradient through the mask
    auto e = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx, params);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.status().node(), mask);
    EXPECT_NE(e.message().find("IR grad: node 2: bernoulli_mask has no derivative"), std::string::npos) << e.message();
  }
  {
    GraphBuilder b;
    const int64_t x = b.input({2});
    const int64_t c = b.constant({2}, {3.0, -2.0});
    const int64_t y = b.sum(b.binary(Op::MulElem, x, c));
    auto m = b.build({y});
    GradOptions all;
    all.wrt = GradWrt::All;
    auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx, all);
    ASSERT_TRUE(g.ok()) << g.message();
    EXPECT_EQ(g->inputs[0].data, (std::vector<double>{3.0, -2.0}));
    ASSERT_EQ(g->params.size(), 1u);
    EXPECT_EQ(g->params[0].node, c);
    EXPECT_EQ(g->params[0].field, "value");
    EXPECT_EQ(g->params[0].values, (std::vector<double>{0.5, -1.5}));
  }
}

TEST(AutodiffGraph, PyTorchConventionsAtKinks) {
  F64Context ctx;
  GraphBuilder b;
  const int64_t x = b.input({4});
  const int64_t z = b.input({4});
  const int64_t r = b.unary(Op::Relu, x);
  const int64_t a = b.unary(Op::Abs, x);
  const int64_t mx = b.binary(Op::MaxElem, x, z);
  const int64_t y = b.sum(b.binary(Op::Add, b.binary(Op::Add, r, a), mx));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<Tensor<double>> in{Tensor<double>({4}, {0.0, 1.0, -1.0, 2.0}),
                                       Tensor<double>({4}, {0.0, 3.0, -2.0, 2.0})};
  auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx);
  ASSERT_TRUE(g.ok()) << g.message();
  // relu'(0) = 0, |x|'(0) = 0, max tie: 1/2 each.
  EXPECT_EQ(g->inputs[0].data, (std::vector<double>{0.5, 2.0, -1.0 + 1.0, 2.5}));
  EXPECT_EQ(g->inputs[1].data, (std::vector<double>{0.5, 1.0, 0.0, 0.5}));
}

// GradOptions::step_window: sign(sign(x) + 0.1) (a binarized layer as traffic_signs_recognition writes it)
// times weights, summed: its derivative is 0; with window 5 each sign passes cot / 5 where its input is
// inside (-5, 5): the outer sign's inputs (-0.9, 1.1, 0.1) always are, the inner one's x here except 7.
// A detach (a storage-only gradient stop, not a step) still stops it, in f32 as in f64.
TEST(AutodiffGraph, StepWindowIsAStraightThroughSurrogate) {
  GraphBuilder b;
  const int64_t x = b.input({4});
  const int64_t inner = b.unary(Op::Sign, x);
  const int64_t outer = b.unary(Op::Sign, b.binary(Op::Add, inner, b.constant({4}, {0.1, 0.1, 0.1, 0.1})));
  const int64_t w = b.constant({4}, {2.0, -3.0, 4.0, 5.0});
  const int64_t y = b.sum(b.binary(Op::MulElem, outer, w));
  const int64_t stopped = b.sum(b.binary(Op::MulElem, b.unary(Op::Detach, outer), w));
  auto m = b.build({y, stopped});
  ASSERT_TRUE(m.ok()) << m.message();
  F64Context ctx;
  const std::vector<Tensor<double>> in{Tensor<double>({4}, {-0.5, 0.0, 2.0, 7.0})};
  auto exact = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx);
  ASSERT_TRUE(exact.ok()) << exact.message();
  EXPECT_EQ(exact->inputs[0].data, (std::vector<double>{0, 0, 0, 0}));
  GradOptions ste;
  ste.step_window = 5;
  auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx, ste);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g->inputs[0].data, (std::vector<double>{2.0 / 25, -3.0 / 25, 4.0 / 25, 0.0}));
  auto s = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), stopped, nullptr, ctx, ste);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(s->inputs[0].data, (std::vector<double>{0, 0, 0, 0}));
  ste.step_window = 1;  // the outer sign's input 1.1 (x > 0) is outside now; -0.9 (x < 0) and 0.1 (x = 0) inside
  auto narrow = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, ctx, ste);
  ASSERT_TRUE(narrow.ok()) << narrow.message();
  EXPECT_EQ(narrow->inputs[0].data, (std::vector<double>{2.0, -3.0, 0.0, 0.0}));
  F32Context c32;
  const std::vector<Tensor<float>> in32{Tensor<float>({4}, {-0.5f, 0.0f, 2.0f, 7.0f})};
  const Payload<float> p32 = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
  ste.step_window = 5;
  auto f = vjp(m->graph, p32, std::span<const Tensor<float>>(in32), y, nullptr, c32, ste);
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f->inputs[0].data, (std::vector<float>{2.0f / 5 / 5, -3.0f / 5 / 5, 4.0f / 5 / 5, 0.0f}));
}

TEST(AutodiffGraph, ErrorsNameTheirCulprit) {
  F64Context ctx;
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.unary(Op::Tanh, x);
  auto m = b.build({y});
  const std::vector<Tensor<double>> in{Tensor<double>({2}, {0.5, -1.5})};
  const Tensor<double> bad({3}, {1, 1, 1});
  auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, &bad, ctx);
  ASSERT_FALSE(g.ok());
  EXPECT_EQ(g.status().field(), "cotangent");
  EXPECT_NE(g.message().find("expected [2]"), std::string::npos) << g.message();
  const std::vector<Tensor<double>> tan{bad};
  auto t = jvp(m->graph, m->payload, std::span<const Tensor<double>>(in), std::span<const Tensor<double>>(tan), y, ctx);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().node(), x);
  EXPECT_EQ(t.status().field(), "tangent");
  auto o = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), 9, nullptr, ctx);
  EXPECT_FALSE(o.ok());
}

// The same gradient in bfloat16 rounds every step: close to f64's, not equal to it in general.
TEST(AutodiffGraph, RunsInBinaryFormatsAndRoundsThere) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t y = b.sum(b.unary(Op::Sigmoid, b.linear(x, 2, {0.5, -0.25, 0.75, 0.1, 0.2, -0.3}, {0.05, -0.1})));
  auto m = b.build({y});
  const std::vector<Tensor<double>> in{Tensor<double>({3}, {0.3, -0.7, 0.9})};
  F64Context f64;
  auto ref = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), y, nullptr, f64);
  ASSERT_TRUE(ref.ok());
  BinaryContext bf(*parse_format("bfloat16"), Rounding::NearestEven);
  const auto xin = lift(bf, in);
  const Payload<FpWord> p = convert_payload<FpWord>(m->payload, [&](double v) { return bf.from_double(v); });
  auto g = vjp(m->graph, p, std::span<const Tensor<FpWord>>(xin), y, nullptr, bf);
  ASSERT_TRUE(g.ok()) << g.message();
  for (size_t k = 0; k < 3; ++k) {
    const double v = bf.to_double(g->inputs[0].data[k]);
    EXPECT_NEAR(v, ref->inputs[0].data[k], 0.02) << k;
    EXPECT_EQ(bf.to_double(bf.from_double(v)), v);  // a bfloat16 value
  }
}

}  // namespace
}  // namespace denote
