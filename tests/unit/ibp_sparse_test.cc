// IbpPrepared's sparse linear layers (src/bounds/ibp_dense.h: a matrix of at least 2^16 weights with at
// most one in eight nonzero kept by row, its a-priori error over a row's nonzero terms): on a learned-
// index-like network (one input, wide sparse layers, gains from 1e-3 to 1e6) the prepared boxes hold
// the f64 and f32 evaluations at sampled points and the exact (long double) interval sums; a point
// box is narrow (the error terms count a row's nonzeros, not the layer's width); a non-finite box
// falls back to the interval rule; CROWN's IBP screen (Subdomain::stop_above) answers a box that IBP
// decides with IBP's bound, and a box it leaves open gets CROWN's.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/native.h"

namespace denote {
namespace {

struct SparseNet {
  Model m;
  int64_t out = -1;
};

// 1 -> 512 (relu) -> 256 (relu) -> 1: each row of the wide layers holds `per_row` nonzeros (of 512 and
// 256 columns: 1/128 and 1/64 of the weights), magnitudes 1e-3 to 1e6.
SparseNet sparse_net(uint64_t seed, int per_row) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> ex(-3, 6);
  GraphBuilder b;
  int64_t h = b.input({1});
  std::vector<double> w0(512), b0(512);
  for (size_t i = 0; i < w0.size(); ++i) w0[i] = u(rng), b0[i] = u(rng);
  h = b.unary(Op::Relu, b.linear(h, 512, w0, b0));
  std::vector<double> w1(256 * 512, 0.0), b1(256);
  for (int o = 0; o < 256; ++o) {
    for (int k = 0; k < per_row; ++k)
      w1[static_cast<size_t>(o * 512 + static_cast<int>(rng() % 512))] = u(rng) * std::pow(10.0, ex(rng));
    b1[static_cast<size_t>(o)] = u(rng);
  }
  h = b.unary(Op::Relu, b.linear(h, 256, w1, b1));
  std::vector<double> w2(256);
  for (auto& v : w2) v = u(rng) * 1e-3;
  SparseNet n;
  n.out = b.linear(h, 1, w2, {0.5});
  auto m = b.build({n.out});
  EXPECT_TRUE(m.ok()) << m.message();
  if (m.ok()) n.m = std::move(*m);
  return n;
}

double eval_f64(const SparseNet& n, double x) {
  F64Context ctx;
  std::vector<Tensor<double>> in = {Tensor<double>(Shape{1}, {x})};
  auto y = denote(n.m.graph, n.m.payload, std::span<const Tensor<double>>(in), n.out, ctx);
  EXPECT_TRUE(y.ok());
  return y.ok() ? y->data[0] : NAN;
}

double eval_f32(const SparseNet& n, float x) {
  F32Context ctx;
  const Payload<float> p = convert_payload<float>(n.m.payload, [](double v) { return static_cast<float>(v); });
  std::vector<Tensor<float>> in = {Tensor<float>(Shape{1}, {x})};
  auto y = denote(n.m.graph, p, std::span<const Tensor<float>>(in), n.out, ctx);
  EXPECT_TRUE(y.ok());
  return y.ok() ? static_cast<double>(y->data[0]) : NAN;
}

// The exact interval image of [lo, hi] (long double, no rounding terms: the real network's range is
// inside it, and so must be inside every sound box).
std::pair<long double, long double> exact_ibp(const SparseNet& n, double lo, double hi) {
  std::vector<long double> l = {lo}, u = {hi};
  for (const Node& node : n.m.graph.nodes) {
    if (node.op != Op::Linear) continue;
    const auto& rec = n.m.payload.linear.at(node.id);
    std::vector<long double> nl(static_cast<size_t>(rec.out_dim)), nu(nl.size());
    for (int64_t o = 0; o < rec.out_dim; ++o) {
      long double a = rec.bias[static_cast<size_t>(o)], c = a;
      for (int64_t i = 0; i < rec.in_dim; ++i) {
        const long double w = rec.weight[static_cast<size_t>(o * rec.in_dim + i)];
        a += w > 0 ? w * l[static_cast<size_t>(i)] : w * u[static_cast<size_t>(i)];
        c += w > 0 ? w * u[static_cast<size_t>(i)] : w * l[static_cast<size_t>(i)];
      }
      const bool relu = node.id + 1 < static_cast<int64_t>(n.m.graph.nodes.size());
      nl[static_cast<size_t>(o)] = relu ? std::max(a, 0.0L) : a;
      nu[static_cast<size_t>(o)] = relu ? std::max(c, 0.0L) : c;
    }
    l = std::move(nl), u = std::move(nu);
  }
  return {l[0], u[0]};
}

TEST(IbpSparse, BoxesHoldTheEvaluationsAndTheExactImage) {
  int64_t checks = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed)
    for (const char* arith : {"f64", "f32"}) {
      SCOPED_TRACE(testing::Message() << "seed " << seed << " " << arith);
      const SparseNet n = sparse_net(seed, 3);
      auto prep = IbpPrepared::prepare(n.m.graph, n.m.payload, arith);
      ASSERT_TRUE(prep.ok()) << prep.message();
      std::mt19937_64 rng(seed * 7);
      std::uniform_real_distribution<double> u(-2, 2), w(0, 0.05);
      for (int t = 0; t < 20; ++t) {
        const double c = u(rng), r = t == 0 ? 0.0 : w(rng);
        const DoubleBox box{Shape{1}, {c - r}, {c + r}};
        auto res = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
        ASSERT_TRUE(res.ok()) << res.message();
        const auto& y = res->boxes[static_cast<size_t>(n.out)];
        ASSERT_TRUE(y.has_value());
        const auto [el, eu] = exact_ibp(n, box.lo[0], box.hi[0]);
        EXPECT_LE(static_cast<long double>(y->lo[0]), el);
        EXPECT_GE(static_cast<long double>(y->hi[0]), eu);
        for (int k = 0; k <= 8; ++k) {
          const double x = box.lo[0] + (box.hi[0] - box.lo[0]) * k / 8;
          const double v = std::string(arith) == "f64" ? eval_f64(n, x) : eval_f32(n, static_cast<float>(x));
          if (std::string(arith) == "f32" && static_cast<double>(static_cast<float>(x)) != x) continue;
          EXPECT_LE(y->lo[0], v) << "x " << x;
          EXPECT_GE(y->hi[0], v) << "x " << x;
          ++checks;
        }
      }
    }
  EXPECT_GT(checks, 600);
}

TEST(IbpSparse, PointBoxIsNarrowInF64) {
  // The error terms count a row's 3 nonzeros: at a point the box is within a few units of roundoff
  // of the value times the row magnitudes (with the layer's 512 columns it would be ~100x wider).
  const SparseNet n = sparse_net(3, 3);
  auto prep = IbpPrepared::prepare(n.m.graph, n.m.payload, "f64");
  ASSERT_TRUE(prep.ok());
  for (double x : {-1.5, -0.25, 0.0, 0.7, 1.9}) {
    const DoubleBox box{Shape{1}, {x}, {x}};
    auto res = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
    ASSERT_TRUE(res.ok());
    const auto& y = *res->boxes[static_cast<size_t>(n.out)];
    const double v = eval_f64(n, x);
    EXPECT_LE(y.lo[0], v);
    EXPECT_GE(y.hi[0], v);
    EXPECT_LT(y.hi[0] - y.lo[0], 1e-9 * (1 + std::fabs(v))) << "x " << x;
  }
}

TEST(IbpSparse, NonFiniteBoxFallsBackToTheIntervalRule) {
  const SparseNet n = sparse_net(5, 3);
  auto prep = IbpPrepared::prepare(n.m.graph, n.m.payload, "f64");
  ASSERT_TRUE(prep.ok());
  const DoubleBox box{Shape{1}, {-INFINITY}, {1.0}};
  auto res = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
  ASSERT_TRUE(res.ok()) << res.message();
  // As x -> -inf some first-layer relus grow without bound and reach the output through nonzero
  // weights: a finite output box would be unsound (the sparse product skips 0 * inf, which is NaN in
  // the evaluation, so it must hand the box to the interval rule).
  EXPECT_FALSE(std::isfinite(eval_f64(n, -1e300)) && std::fabs(eval_f64(n, -1e300)) < 1e200);
  const auto& y = res->boxes[static_cast<size_t>(n.out)];
  if (y) EXPECT_TRUE(!std::isfinite(y->lo[0]) || !std::isfinite(y->hi[0]));
}

TEST(IbpSparse, CrownScreenAnswersWhatIbpDecides) {
  const SparseNet n = sparse_net(2, 3);
  auto prep = IbpPrepared::prepare(n.m.graph, n.m.payload, "f64");
  ASSERT_TRUE(prep.ok());
  const DoubleBox box{Shape{1}, {0.3}, {0.31}};
  SpecMatrix spec{1, 1, {1.0}};
  CrownOptions o;
  o.method = BoundMethod::Crown;
  o.arith = ArithSpec::f64();
  o.lower_only = true;
  auto ibp = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
  ASSERT_TRUE(ibp.ok());
  const double ibp_lo = ibp->boxes[static_cast<size_t>(n.out)]->lo[0];
  // A threshold below IBP's lower bound: the screen answers (no linear pass: zero passes, IBP's bound).
  Subdomain decided{nullptr, false, {}, {ibp_lo - 1.0}, *prep};
  auto a = run_crown(n.m.graph, n.m.payload, std::span<const DoubleBox>(&box, 1), n.out, &spec, o, decided);
  ASSERT_TRUE(a.ok()) << a.message();
  EXPECT_EQ(a->passes, 0);
  EXPECT_GT(a->spec_lo[0], ibp_lo - 1.0);
  EXPECT_LE(a->spec_lo[0], eval_f64(n, 0.305));
  // A threshold above it: CROWN runs (passes > 0) and its bound is at least IBP's.
  Subdomain open{nullptr, false, {}, {ibp_lo + 1e6}, *prep};
  auto b = run_crown(n.m.graph, n.m.payload, std::span<const DoubleBox>(&box, 1), n.out, &spec, o, open);
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_GT(b->passes, 0);
  EXPECT_GE(b->spec_lo[0], a->spec_lo[0] - 1e-9 * (1 + std::fabs(a->spec_lo[0])));
  EXPECT_LE(b->spec_lo[0], eval_f64(n, 0.305));
}

}  // namespace
}  // namespace denote
