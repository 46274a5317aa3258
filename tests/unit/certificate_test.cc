// Certificates (include/denote/certify/certificate.h, docs/CERTIFICATES.md): verify's certificates of
// unsat answers check valid with the separate checker; mutated certificates, models and properties
// are rejected; and on properties that a sampled point satisfies (sat: nothing can refute them) no
// certificate, however its splits and multipliers are chosen, is ever valid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>

#include "denote/certify/certificate.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/verify/verify.h"
#include "unit/eval_ctx_util.h"

namespace denote {
namespace {

using certify::Certificate;
using certify::Leaf;
using certify::Split;
using certify::TreeNode;

const std::string kData = std::string(DENOTE_SOURCE_DIR) + "/tests/data";

certify::Property one_atom(std::vector<double> lo, std::vector<double> hi, std::vector<double> coef, double rhs) {
  certify::Property p;
  p.inputs = static_cast<int64_t>(lo.size()), p.outputs = static_cast<int64_t>(coef.size());
  certify::Case c;
  c.lo = std::move(lo), c.hi = std::move(hi);
  c.conjunctions = {{certify::Atom{std::move(coef), rhs, false}}};
  p.cases.push_back(std::move(c));
  return p;
}

TreeNode leaf(std::vector<double> lambda, std::map<int64_t, certify::Multipliers> mu = {}) {
  TreeNode t;
  t.is_leaf = true;
  t.leaf = Leaf{std::move(lambda), std::move(mu)};
  return t;
}
TreeNode input_split(int64_t i, double at) {
  TreeNode t;
  t.is_leaf = false;
  t.split = Split{Split::Kind::Input, i, 0, at};
  return t;
}
TreeNode relu_split(int64_t relu, int64_t elem) {
  TreeNode t;
  t.is_leaf = false;
  t.split = Split{Split::Kind::Relu, relu, elem, 0};
  return t;
}
Certificate cert_of(std::vector<TreeNode> tree) {
  Certificate c;
  c.jobs.push_back(certify::Job{0, 0, std::move(tree)});
  return c;
}

certify::CheckReport check(const Model& m, const certify::Property& p, const Certificate& c) {
  auto r = certify::check_certificate(m, p, c);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : certify::CheckReport{};
}

// A random network over 2 inputs: (x - c) / s, linear 2->4, relu, linear 4->4 plus a residual of the
// first relu, relu, linear 4->1; ids of the relus returned through `relus`.
Model random_net(std::mt19937_64& rng, std::vector<int64_t>& relus) {
  std::normal_distribution<double> w(0, 0.8);
  auto vec = [&](size_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = w(rng);
    return v;
  };
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t xs = b.binary(Op::Div, b.binary(Op::Sub, x, b.constant({2}, {0.1, -0.2})), b.constant({2}, {0.5, 0.5}));
  const int64_t h1 = b.unary(Op::Relu, b.linear(xs, 4, vec(8), vec(4)));
  const int64_t h2 = b.unary(Op::Relu, b.binary(Op::Add, b.linear(h1, 4, vec(16), vec(4)), h1));
  const int64_t y = b.linear(h2, 1, vec(4), vec(1));
  relus = {h1, h2};
  return eval_ctx::build_or_die(b, {y});
}

double eval_at(const Model& m, double a, double c) {
  auto y = eval_ctx::run<F64Context>(m, {Tensor<double>({2}, {a, c})}, m.output_ids[0]);
  EXPECT_TRUE(y.ok()) << y.message();
  return y.ok() ? y->data[0] : NAN;
}

TEST(Certificate, JsonRoundTripKeepsEveryBit) {
  Certificate c = cert_of({input_split(1, 0.1 + 0.2), leaf({1, 0}, {{3, {{0, 1.0 / 3}, {4, -0.0}, {7, 5e-324}}}}),
                           relu_split(2, 1), leaf({0, 2.5}), leaf({1e-300, 1})});
  const std::string text = certificate_json(c);
  auto back = certify::parse_certificate(text);
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(certificate_json(*back), text);
  ASSERT_EQ(back->jobs[0].tree.size(), 5u);
  EXPECT_EQ(back->jobs[0].tree[0].split.at, 0.1 + 0.2);
  EXPECT_EQ(back->jobs[0].tree[1].leaf.mu.at(3)[2].second, 5e-324);
  EXPECT_EQ(back->jobs[0].tree[1].leaf.mu.at(3)[2].first, 7);
  EXPECT_TRUE(std::signbit(back->jobs[0].tree[1].leaf.mu.at(3)[1].second));
}

TEST(Certificate, ParseErrorsNameThePath) {
  auto r = certify::parse_certificate(
      R"({"format": "denote.certificate", "version": 1, "jobs": [{"case": 0, "conjunction": 0, "tree": [{"leaf": {"lambda": [1, "x"]}}]}]})",
      "c.json");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("c.json: jobs[0].tree[0].leaf.lambda"), std::string::npos) << r.message();
  EXPECT_FALSE(certify::parse_certificate("{\"format\": \"other\"}").ok());
  EXPECT_FALSE(certify::parse_certificate("[1, 2").ok());
  auto mu = certify::parse_certificate(
      R"({"format": "denote.certificate", "version": 1, "jobs": [{"case": 0, "conjunction": 0, "tree": [{"leaf": {"lambda": [1], "mu": {"x1": [[0, 1]]}}}]}]})");
  ASSERT_FALSE(mu.ok());
  EXPECT_NE(mu.message().find("expected a node id"), std::string::npos) << mu.message();
}

// The leaves must cover the box: a missing branch, a node after the last leaf, a split outside the
// domain, a split of something that is not a relu the output reads, and jobs missing or repeated.
TEST(Certificate, TheTreeMustCoverTheBoxExactly) {
  std::mt19937_64 rng(7);
  std::vector<int64_t> relus;
  const Model m = random_net(rng, relus);
  const certify::Property p = one_atom({-1, -1}, {1, 1}, {1}, -1e6);  // far below any output: provable
  EXPECT_TRUE(check(m, p, cert_of({leaf({1})})).valid);
  EXPECT_TRUE(check(m, p, cert_of({input_split(0, 0.25), leaf({1}), input_split(1, -1), leaf({1}), leaf({1})})).valid);
  EXPECT_TRUE(check(m, p, cert_of({relu_split(relus[0], 3), leaf({1}), leaf({1})})).valid);
  const auto missing = check(m, p, cert_of({input_split(0, 0.25), leaf({1})}));
  EXPECT_FALSE(missing.valid);
  EXPECT_NE(missing.failure.find("the tree ends"), std::string::npos) << missing.failure;
  EXPECT_FALSE(check(m, p, cert_of({leaf({1}), leaf({1})})).valid);
  const auto outside = check(m, p, cert_of({input_split(0, 1.5), leaf({1}), leaf({1})}));
  EXPECT_FALSE(outside.valid);
  EXPECT_NE(outside.failure.find("outside the box"), std::string::npos) << outside.failure;
  EXPECT_FALSE(check(m, p, cert_of({input_split(2, 0), leaf({1}), leaf({1})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({relu_split(relus[0] - 1, 0), leaf({1}), leaf({1})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({relu_split(relus[0], 4), leaf({1}), leaf({1})})).valid);
  Certificate twice = cert_of({leaf({1})});
  twice.jobs.push_back(twice.jobs[0]);
  EXPECT_FALSE(check(m, p, twice).valid);
  EXPECT_FALSE(check(m, p, Certificate{}).valid);  // no job covers the conjunction
  Certificate v2 = cert_of({leaf({1})});
  v2.version = 2;
  EXPECT_FALSE(check(m, p, v2).valid);
}

TEST(Certificate, MultipliersOutsideTheirDomainAreRejected) {
  std::mt19937_64 rng(8);
  std::vector<int64_t> relus;
  const Model m = random_net(rng, relus);
  const certify::Property p = one_atom({-1, -1}, {1, 1}, {1}, -1e6);
  EXPECT_FALSE(check(m, p, cert_of({leaf({-1})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({leaf({0})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({leaf({NAN})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({leaf({1, 1})})).valid);  // one multiplier per atom
  EXPECT_FALSE(check(m, p, cert_of({leaf({1}, {{relus[0], {{4, 1.0}}}})})).valid);             // no element 4
  EXPECT_FALSE(check(m, p, cert_of({leaf({1}, {{relus[0], {{1, 1.0}, {1, 2.0}}}})})).valid);   // given twice
  EXPECT_FALSE(check(m, p, cert_of({leaf({1}, {{relus[0], {{0, INFINITY}}}})})).valid);
  EXPECT_FALSE(check(m, p, cert_of({leaf({1}, {{relus[0] - 1, {{0, 1.0}}}})})).valid);  // not a relu
  // Any finite multiplier of a relu's input is in its domain (a Lagrangian bound holds for every one).
  EXPECT_TRUE(check(m, p, cert_of({leaf({1}, {{relus[0], {{0, 1.0}, {1, -2.0}, {2, 3.0}, {3, 0.0}}}})})).valid);
}

// Soundness against sampling: where a sampled point x has y(x) <= t, no certificate of "y <= t is
// impossible" may be valid, whatever its tree and multipliers (random splits, random lambda and mu).
TEST(Certificate, NothingRefutesAPropertyASampledPointSatisfies) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  int valid = 0, checked = 0;
  for (int net = 0; net < 40; ++net) {
    std::vector<int64_t> relus;
    const Model m = random_net(rng, relus);
    double best = INFINITY;
    for (int i = 0; i < 400; ++i) best = std::min(best, eval_at(m, u(rng), u(rng)));
    const certify::Property p = one_atom({-1, -1}, {1, 1}, {1}, best);  // the sampled minimum: sat
    for (int k = 0; k < 8; ++k) {
      std::vector<TreeNode> tree;
      const int depth = static_cast<int>(rng() % 4);
      for (int d = 0; d < depth; ++d) {  // a left spine of splits, each closed by one leaf on the right
        if (rng() % 2) tree.push_back(input_split(static_cast<int64_t>(rng() % 2), 0.5 * u(rng)));
        else tree.push_back(relu_split(relus[rng() % 2], static_cast<int64_t>(rng() % 4)));
      }
      std::map<int64_t, certify::Multipliers> mu;
      if (rng() % 2) mu[relus[rng() % 2]] = {{0, 3 * u(rng)}, {1, 3 * u(rng)}, {2, 3 * u(rng)}, {3, 3 * u(rng)}};
      tree.push_back(leaf({1 + u(rng)}, mu));
      for (int d = 0; d < depth; ++d) tree.push_back(leaf({1}, mu));
      const auto r = check(m, p, cert_of(tree));
      ++checked;
      valid += r.valid;
      if (r.valid) ADD_FAILURE() << "net " << net << " certificate " << k << ": valid for a satisfiable property";
    }
  }
  EXPECT_EQ(valid, 0);
  EXPECT_EQ(checked, 320);
}

// The largest threshold t for which the checker certifies "y <= t is impossible" on the box, by bisection.
double certified_threshold(const Model& m, const std::vector<double>& lo, const std::vector<double>& hi) {
  double a = -100, z = 100;
  for (int i = 0; i < 60; ++i) {
    const double t = 0.5 * (a + z);
    (check(m, one_atom(lo, hi, {1}, t), cert_of({leaf({1})})).valid ? a : z) = t;
  }
  return a;
}

// Node `node`'s affine map from the input (shape `in`) as a dense matrix [outs, ins] and a bias, from the
// evaluator on 0 and on unit inputs.
void dense_form(const Model& m, int64_t node, const Shape& in, std::vector<double>& dense, std::vector<double>& bias) {
  const size_t ins = static_cast<size_t>(numel(in));
  auto at = [&](std::vector<double> x) {
    auto r = eval_ctx::run<F64Context>(m, {Tensor<double>(in, std::move(x))}, node);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r->data : std::vector<double>{};
  };
  bias = at(std::vector<double>(ins, 0.0));
  dense.assign(bias.size() * ins, 0.0);
  for (size_t i = 0; i < ins; ++i) {
    std::vector<double> e(ins, 0.0);
    e[i] = 1;
    const auto col = at(e);
    for (size_t o = 0; o < bias.size() && o < col.size(); ++o) dense[o * ins + i] = col[o] - bias[o];
  }
}

// A convolutional network (conv with padding before and after, relu, flatten, linear): the checker's
// bound holds at sampled points, and equals its bound on the same network with the convolution written
// as a dense linear layer (its columns from the evaluator on unit inputs).
TEST(Certificate, ConvolutionalNetworkMatchesItsDenseForm) {
  ConvConfig c;
  c.window = WindowConfig{2, {2, 2}, {1, 1}, {1, 0}};
  c.padding_after = {0, 1};
  c.channel_axis = 1;
  c.in_channels = 1, c.out_channels = 2;
  std::mt19937_64 rng(3);
  std::normal_distribution<double> w(0, 1);
  std::vector<double> k(8), fc(32);
  for (double& v : k) v = w(rng);
  for (double& v : fc) v = w(rng);
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 4, 4});
  const int64_t cv = b.conv(x, c, k, {0.1, -0.2});
  const int64_t h = b.unary(Op::Relu, cv);
  const int64_t y = b.linear(b.unary(Op::Flatten, h, ValueShapeAttrs{{1, 2, 4, 4}}), 1, fc, {0.3});
  const Model m = eval_ctx::build_or_die(b, {y, cv});
  Model single = m;
  single.output_ids = {y};
  std::vector<double> dense, bias;
  dense_form(m, cv, {1, 1, 4, 4}, dense, bias);
  GraphBuilder d;
  const int64_t dx = d.input({1, 1, 4, 4});
  const int64_t dh = d.unary(Op::Relu, d.linear(d.unary(Op::Flatten, dx, ValueShapeAttrs{{1, 1, 4, 4}}), 32, dense, bias));
  const Model dm = eval_ctx::build_or_die(d, {d.linear(dh, 1, fc, {0.3})});
  const std::vector<double> lo(16, -0.2), hi(16, 0.3);
  const double t = certified_threshold(single, lo, hi), td = certified_threshold(dm, lo, hi);
  EXPECT_GT(t, -100);
  EXPECT_NEAR(t, td, 1e-9 * (1 + std::fabs(t)));
  std::uniform_real_distribution<double> u(-0.2, 0.3);
  for (int s = 0; s < 500; ++s) {
    std::vector<double> xs(16);
    for (double& v : xs) v = u(rng);
    auto r = eval_ctx::run<F64Context>(m, {Tensor<double>({1, 1, 4, 4}, xs)}, y);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_GT(r->data[0], t) << "a point below the certified threshold";
  }
}

// An average pool (2x2, stride 2, padding 1: the divisor counts the padding) behind a relu: the same
// certified threshold as its dense form; a 3x3 window (1/9 inexact) is refused, naming the node.
TEST(Certificate, AveragePoolMatchesItsDenseForm) {
  GraphBuilder b;
  const int64_t x = b.input({1, 2, 4, 4});
  const int64_t h = b.unary(Op::Relu, b.binary(Op::Sub, x, b.constant({1, 2, 4, 4}, std::vector<double>(32, 0.25))));
  const int64_t pool = b.unary(Op::AvgPool, h, WindowConfig{2, {2, 2}, {2, 2}, {1, 1}});
  std::vector<double> fc(18);
  for (size_t i = 0; i < fc.size(); ++i) fc[i] = std::sin(1.0 + static_cast<double>(i));
  const int64_t y = b.linear(b.unary(Op::Flatten, pool, ValueShapeAttrs{{1, 2, 3, 3}}), 1, fc, {0.1});
  const Model m = eval_ctx::build_or_die(b, {y});
  GraphBuilder alone;  // the pool alone, to read its matrix off the evaluator
  const int64_t ap = alone.unary(Op::AvgPool, alone.input({1, 2, 4, 4}), WindowConfig{2, {2, 2}, {2, 2}, {1, 1}});
  std::vector<double> dense, bias;
  dense_form(eval_ctx::build_or_die(alone, {ap}), ap, {1, 2, 4, 4}, dense, bias);
  GraphBuilder d;
  const int64_t dx = d.input({1, 2, 4, 4});
  const int64_t dh = d.unary(Op::Relu, d.binary(Op::Sub, dx, d.constant({1, 2, 4, 4}, std::vector<double>(32, 0.25))));
  const int64_t dp = d.linear(d.unary(Op::Flatten, dh, ValueShapeAttrs{{1, 2, 4, 4}}), 18, dense, bias);
  const Model dm = eval_ctx::build_or_die(d, {d.linear(dp, 1, fc, {0.1})});
  const std::vector<double> lo(32, 0.0), hi(32, 1.0);
  const double t = certified_threshold(m, lo, hi);
  EXPECT_GT(t, -100);
  EXPECT_NEAR(t, certified_threshold(dm, lo, hi), 1e-9 * (1 + std::fabs(t)));
  GraphBuilder n9;
  const int64_t p9 = n9.unary(Op::AvgPool, n9.input({1, 1, 3, 3}), WindowConfig{2, {3, 3}, {1, 1}, {0, 0}});
  const Model m9 = eval_ctx::build_or_die(n9, {p9});
  EXPECT_EQ(certify::covers(m9).node(), p9);
}

// A leaf's Lagrangian bound takes every vertex of a relu's hull: y = relu(x) + x / 2 on [-1, 1] has its
// minimum -1/2 at x = -1, the vertex (l, 0). With mu = -1/2 the bound is exactly that minimum: a
// threshold just below it is certified, the minimum itself (a satisfiable property) is not.
TEST(Certificate, LagrangianBoundTakesEveryVertexOfTheHull) {
  GraphBuilder b;
  const int64_t x = b.input({1});
  const int64_t z = b.linear(x, 1, {1}, {0});
  const int64_t h = b.unary(Op::Relu, z);
  const int64_t y = b.binary(Op::Add, b.linear(h, 1, {1}, {0}), b.linear(z, 1, {0.5}, {0}));
  const Model m = eval_ctx::build_or_die(b, {y});
  const Certificate c = cert_of({leaf({1}, {{h, {{0, -0.5}}}})});
  EXPECT_TRUE(check(m, one_atom({-1}, {1}, {1}, -0.5 - 1e-9), c).valid);
  EXPECT_FALSE(check(m, one_atom({-1}, {1}, {1}, -0.5), c).valid);
  EXPECT_FALSE(check(m, one_atom({-1}, {1}, {1}, -0.5), cert_of({leaf({1})})).valid);
}

// Rounding is bounded, not ignored: y = 1 - 1023 * 2^-54 (one weight 1, 1023 weights -2^-54, inputs 1)
// sums to exactly 1 in round to nearest (each tiny term is a tie that rounds back to 1), so "y <= 1 - 1e-14"
// (true at the point: satisfiable) must not be certified; a threshold below the exact value is.
TEST(Certificate, RoundingErrorsAreBoundedNotIgnored) {
  GraphBuilder b;
  std::vector<double> wts(1024, -0x1p-54);
  wts[0] = 1;
  const int64_t y = b.linear(b.input({1024}), 1, wts, {0});
  const Model m = eval_ctx::build_or_die(b, {y});
  const std::vector<double> ones(1024, 1.0);
  EXPECT_FALSE(check(m, one_atom(ones, ones, {1}, 1 - 1e-14), cert_of({leaf({1})})).valid);
  EXPECT_TRUE(check(m, one_atom(ones, ones, {1}, 1 - 1e-12), cert_of({leaf({1})})).valid);
}

// The f32 evaluation: y = (1 + 2^-30) x at x = 1 exceeds 1 exactly, but the weight rounds to 1 in f32,
// where y = 1: "y <= 1" is refuted for the exact network only; a margin above the f32 error bounds is
// refuted for both. Batch norm in f32: its error counts |mean| and |beta| (a mean and shift of 1000 that
// cancel, y = x on [0, 1]: "y0 <= -1e-3" holds exactly and is beyond the f32 check's 12 u32 (|a| (|x| +
// 2 |mean|) + |beta|) = 2.2e-3; "y0 <= -0.01" is refuted in both).
TEST(Certificate, TheF32EvaluationIsCheckedOnRequest) {
  GraphBuilder b;
  const int64_t y = b.linear(b.input({1}), 1, {1 + 0x1p-30}, {0});
  const Model m = eval_ctx::build_or_die(b, {y});
  certify::CheckOptions f32;
  f32.f32 = true;
  const Certificate c = cert_of({leaf({1})});
  auto exact = certify::check_certificate(m, one_atom({1}, {1}, {1}, 1.0), c);
  auto rounded = certify::check_certificate(m, one_atom({1}, {1}, {1}, 1.0), c, f32);
  ASSERT_TRUE(exact.ok() && rounded.ok());
  EXPECT_TRUE(exact->valid) << exact->failure;
  EXPECT_FALSE(rounded->valid);
  auto margin = certify::check_certificate(m, one_atom({1}, {1}, {1}, 1 - 1e-6), c, f32);
  ASSERT_TRUE(margin.ok());
  EXPECT_TRUE(margin->valid) << margin->failure;
  GraphBuilder bn;
  const int64_t x = bn.input({1, 2, 1});
  const int64_t n = bn.add(Op::BatchNormEval, {x}, BatchNormAttrs{1, 2});
  bn.payload().batch_norm[n] = BatchNormRecord<double>{{1, 2}, {0, 0}, {0, 0}, {1, 1}, 1e-5};
  const Model mb = eval_ctx::build_or_die(bn, {n});
  auto scaled = certify::check_certificate(mb, one_atom({0, 0}, {1, 1}, {1, 0}, -5), c, f32);
  ASSERT_TRUE(scaled.ok()) << scaled.message();
  EXPECT_TRUE(scaled->valid) << scaled->failure;
  GraphBuilder shift;
  const int64_t xs = shift.input({1, 2, 1});
  const int64_t ns = shift.add(Op::BatchNormEval, {xs}, BatchNormAttrs{1, 2});
  shift.payload().batch_norm[ns] = BatchNormRecord<double>{{1, 1}, {1000, 1000}, {1000, 1000}, {1, 1}, 0};
  const Model ms = eval_ctx::build_or_die(shift, {ns});
  for (const auto& [rhs, exact_ok, f32_ok] : {std::tuple{-1e-3, true, false}, std::tuple{-0.01, true, true}}) {
    auto e = certify::check_certificate(ms, one_atom({0, 0}, {1, 1}, {1, 0}, rhs), c);
    auto r = certify::check_certificate(ms, one_atom({0, 0}, {1, 1}, {1, 0}, rhs), c, f32);
    ASSERT_TRUE(e.ok() && r.ok()) << e.message() << r.message();
    EXPECT_EQ(e->valid, exact_ok) << rhs << ": " << e->failure;
    EXPECT_EQ(r->valid, f32_ok) << rhs << ": " << r->failure;
  }
}

// verify() with a certificate on tests/data's MODEL and PROP, which must be unsat.
struct Certified {
  Model model;
  VnnProperty property;
  Certificate certificate;
};
std::optional<Certified> certified(const std::string& model, const std::string& prop, SplitMode split) {
  auto m = load_model_onnx_file(kData + "/" + model);
  auto vp = load_vnnlib_file(kData + "/" + prop);
  EXPECT_TRUE(m.ok() && vp.ok()) << m.message() << vp.message();
  if (!m.ok() || !vp.ok()) return std::nullopt;
  VerifyOptions o;
  o.timeout_s = 60;
  o.certificate = true;
  o.split = split;
  auto r = verify(*m, *vp, o);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return std::nullopt;
  EXPECT_EQ(r->result, VerifyResult::Unsat);
  EXPECT_TRUE(r->certificate.has_value()) << r->certificate_error;
  if (!r->certificate) return std::nullopt;
  return Certified{std::move(*m), std::move(*vp), std::move(*r->certificate)};
}

// verify()'s certificates of unsat ACAS Xu instances check valid, and every mutation the issue names is
// caught: a leaf removed, a split point moved out of its box (a leaf's box changed), a multiplier out of
// its domain, a weight changed against the proof, the property's threshold moved against it.
TEST(Certificate, VerifysCertificatesCheckAndMutationsFail) {
  const auto run = certified("acasxu/ACASXU_run2a_1_1_batch_2000.onnx", "acasxu/prop_4.vnnlib", SplitMode::Auto);
  ASSERT_TRUE(run.has_value());
  const Model* m = &run->model;
  const Certificate& c = run->certificate;
  const certify::Property p = certificate_property(run->property);
  const auto ok = check(*m, p, c);
  EXPECT_TRUE(ok.valid) << ok.failure;
  EXPECT_GT(ok.leaves, 2);
  const auto& tree = c.jobs[0].tree;
  size_t first_leaf = 0, first_split = 0;
  while (!tree[first_leaf].is_leaf) ++first_leaf;
  while (tree[first_split].is_leaf) ++first_split;
  Certificate no_leaf = c;
  no_leaf.jobs[0].tree.erase(no_leaf.jobs[0].tree.begin() + static_cast<std::ptrdiff_t>(first_leaf));
  EXPECT_FALSE(check(*m, p, no_leaf).valid);
  Certificate moved = c;
  Split& s = moved.jobs[0].tree[first_split].split;
  s.at = p.cases[0].hi[static_cast<size_t>(s.index)] + 1;
  EXPECT_FALSE(check(*m, p, moved).valid);
  Certificate negative = c;
  negative.jobs[0].tree[first_leaf].leaf.lambda.assign(negative.jobs[0].tree[first_leaf].leaf.lambda.size(), -1.0);
  EXPECT_FALSE(check(*m, p, negative).valid);
  // The property's thresholds moved against the proof (every atom's right-hand side up by 10).
  certify::Property looser = p;
  for (auto& conj : looser.cases[0].conjunctions)
    for (auto& a : conj) a.rhs_up += 10;
  EXPECT_FALSE(check(*m, looser, c).valid);
  // The output layer's weights negated: the same certificate proves nothing about that network.
  Model flipped = *m;
  auto& last = flipped.payload.linear.rbegin()->second;
  for (double& v : last.weight) v = -v;
  for (double& v : last.bias) v = -v;
  EXPECT_FALSE(check(flipped, p, c).valid);
}

// Relu splitting (mnistfc's 784 inputs): the certificate's relu splits, beta-CROWN's multipliers and the
// root's slopes check valid, for the exact network and the f32 evaluation; a relu split's leaf removed fails.
TEST(Certificate, ReluSplittingCertificatesCheck) {
  const auto run = certified("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib", SplitMode::Relu);
  ASSERT_TRUE(run.has_value());
  const Model* m = &run->model;
  const Certificate* cert = &run->certificate;
  const certify::Property p = certificate_property(run->property);
  int64_t relu_splits = 0, with_mu = 0;
  for (const auto& job : cert->jobs)
    for (const TreeNode& t : job.tree) {
      relu_splits += !t.is_leaf && t.split.kind == Split::Kind::Relu;
      with_mu += t.is_leaf && !t.leaf.mu.empty();
    }
  EXPECT_GT(relu_splits, 0);
  EXPECT_GT(with_mu, 0);
  const auto ok = check(*m, p, *cert);
  EXPECT_TRUE(ok.valid) << ok.failure;
  certify::CheckOptions f32;
  f32.f32 = true;
  auto both = certify::check_certificate(*m, p, *cert, f32);
  ASSERT_TRUE(both.ok()) << both.message();
  EXPECT_TRUE(both->valid) << both->failure;
  Certificate cut = *cert;
  for (auto& job : cut.jobs) {
    auto it = std::find_if(job.tree.begin(), job.tree.end(), [](const TreeNode& t) { return !t.is_leaf; });
    if (it == job.tree.end()) continue;
    job.tree.pop_back();  // the last leaf of a tree with a split
    break;
  }
  EXPECT_FALSE(check(*m, p, cut).valid);
}

TEST(Certificate, ModelsOutsideTheCheckersOpsAreErrorsNamingTheNode) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.unary(Op::Tanh, b.linear(x, 1, {1, 1}, {0}));
  const Model m = eval_ctx::build_or_die(b, {y});
  auto r = certify::check_certificate(m, one_atom({0, 0}, {1, 1}, {1}, -5), cert_of({leaf({1})}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().node(), y);
  EXPECT_NE(r.message().find("tanh"), std::string::npos) << r.message();
  EXPECT_EQ(certify::covers(m).node(), y);
  // verify answers unsat (tanh <= 1 < 5) and says why it makes no certificate.
  auto vp = parse_vnnlib("(declare-const X_0 Real)\n(declare-const X_1 Real)\n(declare-const Y_0 Real)\n"
                         "(assert (>= X_0 0))\n(assert (<= X_0 1))\n(assert (>= X_1 0))\n(assert (<= X_1 1))\n"
                         "(assert (>= Y_0 5))\n");
  ASSERT_TRUE(vp.ok()) << vp.message();
  VerifyOptions o;
  o.certificate = true;
  o.arith = ArithSpec::f64();
  auto v = verify(m, *vp, o);
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(v->result, VerifyResult::Unsat);
  EXPECT_FALSE(v->certificate.has_value());
  EXPECT_NE(v->certificate_error.find("does not cover"), std::string::npos) << v->certificate_error;
}

}  // namespace
}  // namespace denote
