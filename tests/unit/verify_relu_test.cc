// Branch and bound over relu phases (src/verify/relu_bab.h): mnistfc image 0 at 0.03, which input
// splitting over 784 dimensions cannot decide, is unsat by relu splits, the same search on one and two
// threads; the forward error margins bound |f32 evaluation - exact| at every node on sampled points
// (ACAS Xu, mnistfc), and a network outside their ops gets none (verify() then splits inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include <fmt/format.h>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/verify/verify.h"
#include "denote/verify/vnnlib.h"
#include "bounds/crown_conv.h"
#include "verify/relu_bab.h"
#include "sanitized.h"

namespace denote {
namespace {

const std::string kData = std::string(DENOTE_SOURCE_DIR) + "/tests/data";

struct Loaded {
  Model m;
  VnnProperty p;
};
Loaded load(const std::string& onnx, const std::string& vnnlib) {
  auto m = load_model_onnx_file(kData + "/" + onnx);
  EXPECT_TRUE(m.ok()) << m.message();
  auto p = load_vnnlib_file(kData + "/" + vnnlib);
  EXPECT_TRUE(p.ok()) << p.message();
  return {m.ok() ? std::move(*m) : Model{}, p.ok() ? std::move(*p) : VnnProperty{}};
}

VerifyOutcome run(const Loaded& l, SplitMode split, double timeout, int threads, int candidates = 0) {
  VerifyOptions o;
  o.bab_candidates = candidates;
  o.timeout_s = timeout;
  o.threads = threads;
  o.split = split;
  o.samples = 256;  // the random points are not what this tests
  auto r = verify(l.m, l.p, o);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : VerifyOutcome{};
}

TEST(VerifyRelu, SplittingRelusProvesWhatInputSplittingCannot) {
  const Loaded l = load("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib");
  const VerifyOutcome one = run(l, SplitMode::Relu, 60, 1);
  EXPECT_EQ(one.result, VerifyResult::Unsat) << one.note;
  EXPECT_EQ(one.stats.decided_by, "bab");
  EXPECT_GT(one.stats.domains, 9);  // nine conjunctions' roots, then subdomains
  // The same search again on two threads and by Auto's choice: logic the release pass checks; under the
  // sanitizers (about 10x slower) the one search above is the instrumented run.
  if (!denote::testing::sanitized_build()) {
    const VerifyOutcome two = run(l, SplitMode::Relu, 60, 2);
    EXPECT_EQ(two.result, one.result);
    EXPECT_EQ(two.stats.domains, one.stats.domains);
    EXPECT_EQ(two.stats.crown_calls, one.stats.crown_calls);
    const VerifyOutcome chosen = run(l, SplitMode::Auto, 60, 1);  // 784 open inputs: relus
    EXPECT_EQ(chosen.stats.domains, one.stats.domains);
  }
  const VerifyOutcome inputs = run(l, SplitMode::Input, denote::testing::sanitized_build() ? 1 : 3, 1);
  EXPECT_EQ(inputs.result, VerifyResult::Timeout);
  // The split candidates per subdomain (48 by default on this dense network) change the search, not the answer.
  if (!denote::testing::sanitized_build()) {
    const VerifyOutcome dflt = run(l, SplitMode::Relu, 60, 1, 48), single = run(l, SplitMode::Relu, 60, 1, 1);
    EXPECT_EQ(dflt.stats.domains, one.stats.domains);
    EXPECT_EQ(single.result, VerifyResult::Unsat);
    EXPECT_NE(single.stats.domains, one.stats.domains);
    // The worse half's score instead of the better half's: another search, the same answer.
    VerifyOptions o;
    o.timeout_s = 60;
    o.threads = 1;
    o.split = SplitMode::Relu;
    o.samples = 256;
    // Without the refreshed boxes after a split (bab_refresh 0; both scores then find the proof in the
    // same 16 subdomains with them).
    o.bab_refresh = 0;
    auto better = verify(l.m, l.p, o);
    o.bab_score = SplitScore::Worse;
    auto worse = verify(l.m, l.p, o);
    ASSERT_TRUE(worse.ok() && better.ok()) << worse.message() << better.message();
    EXPECT_EQ(better->result, VerifyResult::Unsat);
    EXPECT_EQ(worse->result, VerifyResult::Unsat);
    EXPECT_NE(worse->stats.domains, better->stats.domains);
  }
}

// A sat property whose witness the descents before branch and bound missed with the worst atom's loss
// (8 restarts; marabou-cifar10's cifar10_small, image 1783, eps 0.012; before the interleaved restarts: a
// timeout). With no restarts before branch and bound (pgd_restarts 0) the restarts interleaved with relu
// branch and bound find it; with the default 8 on the violated atoms' sum (descent_atom) the first stage
// does. Each witness is re-checked as every witness is (try_point). Release pass only: under the
// sanitizers the search takes minutes.
TEST(VerifyRelu, DescentsInterleavedWithTheSearchFindAWitnessTheFirstStageMissed) {
  if (denote::testing::sanitized_build()) GTEST_SKIP() << "minutes under the sanitizers";
  const Loaded l = load("marabou/cifar10_small.onnx", "marabou/cifar10_small_index1783_eps0.012_target9_orig8.vnnlib.gz");
  for (const int restarts : {0, 8}) {
    VerifyOptions o;
    o.timeout_s = 120;
    o.threads = 1;
    o.pgd_restarts = restarts;
    auto r = verify(l.m, l.p, o);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->result, VerifyResult::Sat) << r->note;
    EXPECT_EQ(r->stats.decided_by, "pgd");
    if (restarts == 0) EXPECT_GT(r->stats.domains, 1) << "found during branch and bound, not before";
    ASSERT_TRUE(r->witness.has_value());
  }
}

// The margins against f32 evaluations of the network next to f64 ones at the same f32 points (f64 is
// within about 1e-13 of the exact value here, far below the f32 margins).
void expect_margins_hold(const Loaded& l, int points) {
  const VnnCase& c = l.p.cases[0];
  const DoubleBox box{verify_detail::input_shape(l.m), c.lo_out, c.hi_out};
  CrownOptions co;
  co.arith = ArithSpec::f32();
  auto r = run_crown(l.m.graph, l.m.payload, std::span<const DoubleBox>(&box, 1), l.m.output_ids[0], nullptr, co);
  ASSERT_TRUE(r.ok()) << r.message();
  const auto margins = verify_detail::eval_margins(l.m, r->boxes, l.m.output_ids[0], ArithSpec::f32());
  ASSERT_TRUE(margins.has_value());
  const auto m64 = verify_detail::eval_margins(l.m, r->boxes, l.m.output_ids[0], ArithSpec::f64());
  ASSERT_TRUE(m64.has_value());
  const Payload<float> p32 = convert_payload<float>(l.m.payload, [](double v) { return static_cast<float>(v); });
  std::mt19937_64 rng(7);
  F32Context c32;
  F64Context c64;
  double worst = 0;  // the largest observed error over its margin
  for (int t = 0; t < points; ++t) {
    Tensor<float> x32(box.shape, {});
    Tensor<double> x64(box.shape, {});
    for (size_t i = 0; i < box.lo.size(); ++i) {
      const float v = static_cast<float>(std::uniform_real_distribution<double>(box.lo[i], box.hi[i])(rng));
      x32.data.push_back(v), x64.data.push_back(static_cast<double>(v));
    }
    auto a = denote_all(l.m.graph, p32, std::span<const Tensor<float>>(&x32, 1), c32);
    auto b = denote_all(l.m.graph, l.m.payload, std::span<const Tensor<double>>(&x64, 1), c64);
    ASSERT_TRUE(a.ok() && b.ok());
    for (size_t id = 0; id < margins->size(); ++id) {
      const auto& e = (*margins)[id];
      for (size_t j = 0; j < e.size(); ++j) {
        const double err = std::fabs(static_cast<double>((*a)[id].data[j]) - (*b)[id].data[j]);
        ASSERT_LE(err, e[j] + 1e-12) << "node " << id << " element " << j;
        ASSERT_LE((*m64)[id][j], e[j] * 1e-7 + 1e-300) << "node " << id << " element " << j;
        if (e[j] > 0) worst = std::max(worst, err / e[j]);
      }
    }
  }
  EXPECT_GT(worst, 0.0);  // the evaluations differ somewhere: the check is not vacuous
}

TEST(VerifyRelu, MarginsBoundTheF32EvaluationError) {
  expect_margins_hold(load("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib"), 20);
  expect_margins_hold(load("acasxu/ACASXU_run2a_2_1_batch_2000.onnx", "acasxu/prop_2.vnnlib"), 200);
}

// A relu passes on no more error than its input's box lets both values differ by after the clamp:
// nothing where the box is at most 0, at most max(hi, 0) - max(lo, 0) elsewhere (resnet_2b's fc
// relu input: margins of up to 0.52 before, 0.038 after, which let relu splits there decide prop_31).
TEST(VerifyRelu, ReluMarginsStopAtTheClampedBox) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  std::vector<double> w(3 * 64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 40 * std::sin(1.3 * static_cast<double>(i) + 0.2);
  const int64_t h1 = b.linear(x, 64, w, std::vector<double>(64, 0.0));  // large values: large rounding errors
  std::vector<double> w2(64 * 3, 0.01), b2 = {-1000, -0.5, 0};
  const int64_t h2 = b.linear(b.unary(Op::Relu, h1), 3, w2, b2);
  const int64_t r2 = b.unary(Op::Relu, h2);
  auto m = b.build({b.linear(r2, 1, {1, 1, 1}, {0})});
  ASSERT_TRUE(m.ok()) << m.message();
  const DoubleBox box{{3}, {0.1, 0.2, 0.3}, {0.2, 0.3, 0.4}};
  CrownOptions co;
  co.arith = ArithSpec::f32();
  auto r = run_crown(m->graph, m->payload, std::span<const DoubleBox>(&box, 1), m->output_ids[0], nullptr, co);
  ASSERT_TRUE(r.ok()) << r.message();
  const auto e = verify_detail::eval_margins(*m, r->boxes, m->output_ids[0], ArithSpec::f32());
  ASSERT_TRUE(e.has_value());
  const DoubleBox& hb = *r->boxes[static_cast<size_t>(h2)];
  const auto& eh = (*e)[static_cast<size_t>(h2)];
  const auto& er = (*e)[static_cast<size_t>(r2)];
  ASSERT_LE(hb.hi[0], 0.0);  // element 0: always off
  EXPECT_GT(eh[0], 0.0);
  EXPECT_EQ(er[0], 0.0);
  for (size_t j = 0; j < 3; ++j)  // the width rounded up
    EXPECT_LE(er[j], std::min(eh[j], std::nextafter(std::max(hb.hi[j], 0.0) - std::max(hb.lo[j], 0.0), 1.0))) << j;
  EXPECT_EQ(er[2], eh[2]);  // element 2 on across its box: the whole input error
}

// A 3x3 conv of padding 1 over NCHW: in -> out channels, the given stride and groups.
ConvConfig conv3x3(int64_t in, int64_t out, int64_t stride = 1, int64_t groups = 1) {
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {stride, stride}, {1, 1}};
  c.padding_after = {1, 1};
  c.dilation = {1, 1};
  c.in_channels = in, c.out_channels = out, c.channel_axis = 1, c.groups = groups;
  return c;
}

// A box of n inputs c +- r and a one-atom output condition, as VNN-LIB text.
VnnProperty box_property(int64_t n, double c, double r, int64_t outputs) {
  std::string t;
  for (int64_t i = 0; i < n; ++i) t += fmt::format("(declare-const X_{} Real)\n", i);
  for (int64_t j = 0; j < outputs; ++j) t += fmt::format("(declare-const Y_{} Real)\n", j);
  for (int64_t i = 0; i < n; ++i) t += fmt::format("(assert (>= X_{} {}))\n(assert (<= X_{} {}))\n", i, c - r, i, c + r);
  t += "(assert (>= Y_0 Y_1))\n";
  auto p = parse_vnnlib(t);
  EXPECT_TRUE(p.ok()) << p.message();
  return p.ok() ? std::move(*p) : VnnProperty{};
}

// Convolutional networks (conv, avg_pool, max_pool, batch_norm_eval, reshape, a residual add): their margins exist (so
// relu splitting is open to them) and bound the f32 evaluation's error.
TEST(VerifyRelu, MarginsOfConvolutionalNetworks) {
  auto pool = load_model_onnx_file(kData + "/verivital/Convnet_avgpool.onnx");
  ASSERT_TRUE(pool.ok()) << pool.message();
  expect_margins_hold(Loaded{std::move(*pool), box_property(784, 0.5, 0.02, 10)}, 8);
  GraphBuilder b;  // conv -> relu -> conv, + the first relu (residual) -> relu -> max_pool -> flatten -> linear
  const int64_t x = b.input({1, 2, 6, 6});
  const ConvConfig c = conv3x3(2, 2);
  std::vector<double> w(36), bias = {0.1, -0.2};
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(1.7 * static_cast<double>(i) + 0.3) * 0.6;
  const int64_t r1 = b.unary(Op::Relu, b.conv(x, c, w, bias));
  for (double& v : w) v = -v * 0.9;
  const int64_t s = b.unary(Op::Relu, b.binary(Op::Add, b.conv(r1, c, w, {0.05, 0.0}), r1));
  WindowConfig pw{2, {2, 2}, {2, 2}, {0, 0}};
  const int64_t pooled = b.add(Op::MaxPool, {s}, pw);
  const int64_t f = b.unary(Op::Reshape, pooled, ReshapeAttrs{{1, 2, 3, 3}, {1, 18}});
  std::vector<double> w2(36);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(0.9 * static_cast<double>(i));
  auto m = b.build({b.linear(f, 2, w2, {0, 0.5})});
  ASSERT_TRUE(m.ok()) << m.message();
  expect_margins_hold(Loaded{std::move(*m), box_property(72, 0.3, 0.5, 2)}, 40);
  // conv -> batch_norm_eval -> relu -> reshape -> linear (a mean far from 0: the subtraction's rounding).
  GraphBuilder n;
  const int64_t xn = n.input({1, 2, 6, 6});
  const int64_t bn = n.add(Op::BatchNormEval, {n.conv(xn, c, w, bias)}, BatchNormAttrs{1, 2});
  n.model().payload.batch_norm[bn] = BatchNormRecord<double>{{1.3, -0.7}, {0.2, -0.4}, {3.1, -2.6}, {0.8, 2.5}, 1e-5};
  const int64_t fr = n.unary(Op::Reshape, n.unary(Op::Relu, bn), ReshapeAttrs{{1, 2, 6, 6}, {1, 72}});
  std::vector<double> w3(144);
  for (size_t i = 0; i < w3.size(); ++i) w3[i] = std::sin(0.37 * static_cast<double>(i));
  auto mb = n.build({n.linear(fr, 2, w3, {0.1, 0})});
  ASSERT_TRUE(mb.ok()) << mb.message();
  expect_margins_hold(Loaded{std::move(*mb), box_property(72, 0.3, 0.5, 2)}, 40);
}

// Splits widened by their margins, as the relu search bounds a subdomain (parent boxes only, lower
// bounds only, alpha-beta steps): the bounds hold for the f32 evaluation and the f64 one at sampled f32
// points whose split values (f64, a stand-in for exact) have the splits' signs.
// mnistfc 256x2 image 0 at 0.03: the whole box's f32 CROWN boxes, the first three unstable elements of
// each relu input split by the signs they have at the center (with their margins), and points of the
// box (floats of it, near the center first) on which the f64 evaluation satisfies the splits.
struct SplitSetup {
  Loaded l = load("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib");
  DoubleBox box;
  int64_t out = -1;
  NodeBoxes root;
  std::vector<ReluSplit> splits;
  Tensor<double> mid;
  SplitSetup() {
    const VnnCase& c = l.p.cases[0];
    box = DoubleBox{verify_detail::input_shape(l.m), c.lo_out, c.hi_out};
    out = l.m.output_ids[0];
    CrownOptions co;
    co.arith = ArithSpec::f32();
    auto r = run_crown(l.m.graph, l.m.payload, std::span<const DoubleBox>(&box, 1), out, nullptr, co);
    EXPECT_TRUE(r.ok()) << r.message();
    if (!r.ok()) return;
    root = r->boxes;
    const auto margins = verify_detail::eval_margins(l.m, root, out, ArithSpec::f32());
    EXPECT_TRUE(margins.has_value());
    mid = Tensor<double>(box.shape, {});
    for (size_t i = 0; i < box.lo.size(); ++i) mid.data.push_back(box.lo[i] + (box.hi[i] - box.lo[i]) / 2);
    F64Context c64;
    auto at_mid = denote_all(l.m.graph, l.m.payload, std::span<const Tensor<double>>(&mid, 1), c64);
    if (!margins || !at_mid.ok()) return;
    for (const Node& n : l.m.graph.nodes) {
      if (n.op != Op::Relu) continue;
      const size_t p = static_cast<size_t>(n.parents[0]);
      const DoubleBox& b = *root[p];
      for (size_t j = 0, k = 0; j < b.lo.size() && k < 3; ++j)
        if (b.lo[j] < 0 && b.hi[j] > 0)
          k++, splits.push_back({n.parents[0], static_cast<int64_t>(j), (*at_mid)[p].data[j] >= 0, (*margins)[p][j]});
    }
  }
  // alpha-CROWN's lower bounds of the ten outputs on the subdomain, from the root's boxes.
  Result<CrownResult> bound(const Subdomain& extra, bool intermediate) const {
    SpecMatrix spec{10, 10, std::vector<double>(100, 0.0)};
    for (int64_t i = 0; i < 10; ++i) spec.c[static_cast<size_t>(i * 11)] = 1;
    CrownOptions so;
    so.arith = ArithSpec::f32();
    so.method = BoundMethod::AlphaCrown;
    so.alpha_intermediate = false;
    so.intermediate_crown = intermediate;
    so.lower_only = true;
    Subdomain where = extra;
    where.prior = std::make_shared<const NodeBoxes>(root);
    where.prior_only = true;
    where.splits = splits;
    return run_crown(l.m.graph, l.m.payload, std::span<const DoubleBox>(&box, 1), out, &spec, so, where);
  }
  // Calls each(f32 values, f64 values) of every node on sampled points that satisfy the splits; how many.
  template <class F>
  int sample(F&& each) const {
    const Payload<float> p32 = convert_payload<float>(l.m.payload, [](double v) { return static_cast<float>(v); });
    std::mt19937_64 rng(11);
    F32Context c32;
    F64Context c64;
    int checked = 0;
    for (int t = 0; t < 3000; ++t) {
      Tensor<float> x32(box.shape, {});
      Tensor<double> x64(box.shape, {});
      for (size_t i = 0; i < box.lo.size(); ++i) {
        const double r = (box.hi[i] - box.lo[i]) / 2 * (t < 1000 ? 0.1 : 1.0);  // near the center first
        const float v = static_cast<float>(std::uniform_real_distribution<double>(mid.data[i] - r, mid.data[i] + r)(rng));
        x32.data.push_back(v), x64.data.push_back(std::clamp(static_cast<double>(v), box.lo[i], box.hi[i]));
        x32.data.back() = static_cast<float>(x64.data.back());
        if (static_cast<double>(x32.data.back()) != x64.data.back()) x64.data.back() = NAN;  // not a float of the box
      }
      if (std::any_of(x64.data.begin(), x64.data.end(), [](double v) { return std::isnan(v); })) continue;
      auto b = denote_all(l.m.graph, l.m.payload, std::span<const Tensor<double>>(&x64, 1), c64);
      EXPECT_TRUE(b.ok());
      if (!b.ok()) return checked;
      bool inside = true;
      for (const auto& sp : splits) {
        const double v = (*b)[static_cast<size_t>(sp.node)].data[static_cast<size_t>(sp.elem)];
        inside = inside && (sp.active ? v >= 0 : v <= 0);
      }
      if (!inside) continue;
      auto a = denote_all(l.m.graph, p32, std::span<const Tensor<float>>(&x32, 1), c32);
      EXPECT_TRUE(a.ok());
      if (!a.ok()) return checked;
      ++checked;
      each(*a, *b);
    }
    return checked;
  }
};

TEST(VerifyRelu, SplitBoundsHoldForTheF32Evaluation) {
  const SplitSetup s;
  ASSERT_GE(s.splits.size(), 4u);
  auto r = s.bound(Subdomain{}, false);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_FALSE(r->infeasible);
  const size_t out = static_cast<size_t>(s.out);
  const int checked = s.sample([&](const auto& a, const auto& b) {
    for (size_t j = 0; j < 10; ++j) {
      EXPECT_GE(static_cast<double>(a[out].data[j]), r->spec_lo[j]) << "row " << j;
      EXPECT_GE(b[out].data[j], r->spec_lo[j]) << "row " << j;
    }
  });
  EXPECT_GT(checked, 10);
}

// Subdomain::refresh_after / refresh_nodes (VerifyOptions::bab_refresh): CROWN's passes for the first node
// after the first relu's splits only. Nodes up to the split keep the root's boxes (clamped), the second
// relu's input narrows where the first layer's splits fixed its relus, and the boxes and bounds hold for
// the exact and the f32 evaluation on the sampled points; with no node allowed nothing is refreshed.
TEST(VerifyRelu, BoxesRefreshedAfterTheNewestSplitNarrowAndHold) {
  const SplitSetup s;
  ASSERT_GE(s.splits.size(), 4u);
  const int64_t first = s.splits.front().node, second = s.splits.back().node;
  ASSERT_LT(first, second);  // relu inputs of the two hidden layers
  Subdomain fresh;
  fresh.refresh_after = first;
  fresh.refresh_nodes = 1;
  auto kept = s.bound(Subdomain{}, false), r = s.bound(fresh, true);
  ASSERT_TRUE(kept.ok() && r.ok());
  Subdomain none = fresh;
  none.refresh_nodes = 0;
  auto zero = s.bound(none, true);
  ASSERT_TRUE(zero.ok());
  const size_t f = static_cast<size_t>(first), g = static_cast<size_t>(second);
  EXPECT_EQ(r->boxes[f]->lo, kept->boxes[f]->lo);
  EXPECT_EQ(r->boxes[f]->hi, kept->boxes[f]->hi);
  EXPECT_EQ(zero->boxes[g]->lo, kept->boxes[g]->lo);
  EXPECT_EQ(zero->spec_lo, kept->spec_lo);
  double narrowed = 0;
  for (size_t j = 0; j < r->boxes[g]->lo.size(); ++j) {
    EXPECT_GE(r->boxes[g]->lo[j], kept->boxes[g]->lo[j]);
    EXPECT_LE(r->boxes[g]->hi[j], kept->boxes[g]->hi[j]);
    narrowed += (kept->boxes[g]->hi[j] - kept->boxes[g]->lo[j]) - (r->boxes[g]->hi[j] - r->boxes[g]->lo[j]);
  }
  EXPECT_GT(narrowed, 0);
  const size_t out = static_cast<size_t>(s.out);
  const int checked = s.sample([&](const auto& a, const auto& b) {
    for (size_t j = 0; j < r->boxes[g]->lo.size(); ++j) {
      EXPECT_GE(b[g].data[j], r->boxes[g]->lo[j]);
      EXPECT_LE(b[g].data[j], r->boxes[g]->hi[j]);
      EXPECT_GE(static_cast<double>(a[g].data[j]), r->boxes[g]->lo[j]);
      EXPECT_LE(static_cast<double>(a[g].data[j]), r->boxes[g]->hi[j]);
    }
    for (size_t j = 0; j < 10; ++j) {
      EXPECT_GE(static_cast<double>(a[out].data[j]), r->spec_lo[j]) << "row " << j;
      EXPECT_GE(b[out].data[j], r->spec_lo[j]) << "row " << j;
    }
  });
  EXPECT_GT(checked, 10);
}

TEST(VerifyRelu, NoMarginsOutsideTheirOps) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.linear(b.unary(Op::Sigmoid, b.linear(x, 2, {1, 0, 0, 1}, {0, 0})), 1, {1, -1}, {0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const DoubleBox box{{2}, {-1, -1}, {1, 1}};
  auto r = run_crown(m->graph, m->payload, std::span<const DoubleBox>(&box, 1), y, nullptr, CrownOptions{});
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(verify_detail::eval_margins(*m, r->boxes, y, ArithSpec::f32()).has_value());
}

// The split choice's scores (verify_detail::half_gains: one pass per relu from its input, on rows that
// differ from the parent's in one element) against each half bounded on its own by the search's CROWN
// pass from the output: per candidate and half, its bound minus the parent's. Both arithmetics'
// error terms, a dense network and a convolutional one with a residual join and max-pooling, several
// rows of the spec.
void expect_gains_are_the_halves(const Model& m, const VnnProperty& p, const ArithSpec& arith, bool cone_expected) {
  const VnnCase& c = p.cases[0];
  const DoubleBox box{verify_detail::input_shape(m), c.lo_out, c.hi_out};
  const int64_t out = m.output_ids[0];
  const int64_t k = numel(m.graph.nodes[static_cast<size_t>(out)].out_shape);
  SpecMatrix spec{k, k, std::vector<double>(static_cast<size_t>(k * k), 0.0)};
  for (int64_t i = 0; i < k; ++i) spec.c[static_cast<size_t>(i * k + (i + 1) % k)] = 1, spec.c[static_cast<size_t>(i * k)] -= 1;
  CrownOptions co;
  co.arith = arith;
  auto root = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), out, nullptr, co);
  ASSERT_TRUE(root.ok()) << root.message();
  Subdomain parent;  // as the search bounds a subdomain: the root's boxes, no intermediate passes
  parent.prior = std::make_shared<const NodeBoxes>(root->boxes);
  parent.prior_only = true;
  co.intermediate_crown = false;
  co.lower_only = co.relu_coefficients = true;
  auto at = [&](const Subdomain& d) {
    auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), out, &spec, co, d);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? std::move(*r) : CrownResult{};
  };
  const CrownResult par = at(parent);
  ASSERT_EQ(par.relu_coef.size(), m.graph.nodes.size());
  std::vector<verify_detail::Candidate> cands;  // up to 8 unstable elements of each relu's input
  for (const Node& n : m.graph.nodes) {
    if (n.op != Op::Relu) continue;
    const DoubleBox& b = *root->boxes[static_cast<size_t>(n.parents[0])];
    for (size_t j = 0, q = 0; j < b.lo.size() && q < 8; j += 3)
      if (b.lo[j] < 0 && b.hi[j] > 0) q++, cands.push_back({ReluSplit{n.parents[0], static_cast<int64_t>(j), true, 0}, n.id});
  }
  ASSERT_GE(cands.size(), 8u);
  // f32: a split also narrows the box its relu's output has, which the evaluation error terms of the
  // layers after it read (an inactive half's own pass has them up to about 1e-5 of the bound smaller),
  // and the closed form of a first layer leaves them out; f64's terms are 1e-16 of it.
  const double tol = arith.name == "f32" ? 5e-5 : 1e-9;
  // With and without the convolutional cones (sparse changes instead of a pass per relu).
  crown::ConvPlans plans(m.graph.nodes.size());
  const verify_detail::GainCones cones = verify_detail::gain_cones(m, plans);
  const bool has_cone = std::any_of(cones.begin(), cones.end(), [](const auto& c) { return c.has_value(); });
  EXPECT_EQ(has_cone, cone_expected) << "the network's cones";
  int compared = 0;
  for (const verify_detail::GainCones* ch : {static_cast<const verify_detail::GainCones*>(nullptr), &cones})
    for (size_t w : {size_t{0}, static_cast<size_t>(k / 2)}) {
      int64_t passes = 0;
      const std::vector<verify_detail::HalfGain> gain = verify_detail::half_gains(
          m, box, co, parent, par.relu_coef, w, cands, verify_detail::affine_in_input(m.graph), ch, &passes);
      ASSERT_EQ(gain.size(), cands.size());
      EXPECT_LT(passes, static_cast<int64_t>(cands.size()));  // one per relu
      for (size_t q = 0; q < cands.size(); ++q)
        for (const bool active : {true, false}) {
          Subdomain half = parent;
          half.splits.push_back(cands[q].sp);
          half.splits.back().active = active;
          const double want = at(half).spec_lo[w] - par.spec_lo[w];
          EXPECT_NEAR(active ? gain[q].active : gain[q].inactive, want, tol * (1 + std::fabs(par.spec_lo[w])))
              << "candidate " << q << (active ? " active" : " inactive") << ", row " << w << ", " << arith.name
              << (ch ? ", cones" : "");
          compared += std::isfinite(want);
        }
    }
  EXPECT_GE(compared, 32);
}

// conv(2 -> 4, k3, s1, p1) -> relu -> conv(4 -> 4, k3, s1, p1) + the relu (a residual join) -> relu ->
// conv(4 -> 4, k3, s2, p1, 2 groups) -> relu -> reshape -> linear -> relu -> linear: the second and third
// relus' inputs reach the input through a cone of convs, relus and the join; the fourth's through a
// linear layer (a pass).
Model conv_cone_net() {
  GraphBuilder b;
  const int64_t x = b.input({1, 2, 8, 8});
  const ConvConfig c1 = conv3x3(2, 4), c2 = conv3x3(4, 4), c3 = conv3x3(4, 4, 2, 2);
  std::vector<double> w1(72), w2(144), w3(72), w4(64 * 6), w5(18);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(1.3 * static_cast<double>(i) + 0.2) * 0.5;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::sin(0.9 * static_cast<double>(i) + 0.4) * 0.3;
  for (size_t i = 0; i < w3.size(); ++i) w3[i] = std::cos(0.7 * static_cast<double>(i) + 0.1) * 0.4;
  for (size_t i = 0; i < w4.size(); ++i) w4[i] = std::sin(0.31 * static_cast<double>(i)) * 0.3;
  for (size_t i = 0; i < w5.size(); ++i) w5[i] = std::cos(1.1 * static_cast<double>(i));
  const int64_t r1 = b.unary(Op::Relu, b.conv(x, c1, w1, {0.1, -0.1, 0.05, 0}));
  const int64_t r2 = b.unary(Op::Relu, b.binary(Op::Add, b.conv(r1, c2, w2, {0, 0.05, -0.05, 0.1}), r1));
  const int64_t r3 = b.unary(Op::Relu, b.conv(r2, c3, w3, {0.02, -0.03, 0.1, -0.05}));
  const int64_t f = b.unary(Op::Reshape, r3, ReshapeAttrs{{1, 4, 4, 4}, {1, 64}});
  const int64_t r4 = b.unary(Op::Relu, b.linear(f, 6, w4, {0.1, 0, -0.1, 0.2, 0, 0.05}));
  auto m = b.build({b.linear(r4, 3, w5, {0, 0.1, -0.1})});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

TEST(VerifyRelu, SplitScoresAreTheHalvesBounds) {
  const Loaded l = load("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib");
  expect_gains_are_the_halves(l.m, l.p, ArithSpec::f32(), false);
  expect_gains_are_the_halves(l.m, l.p, ArithSpec::f64(), false);
  auto pool = load_model_onnx_file(kData + "/verivital/Convnet_avgpool.onnx");
  ASSERT_TRUE(pool.ok()) << pool.message();
  expect_gains_are_the_halves(*pool, box_property(784, 0.5, 0.05, 10), ArithSpec::f32(), false);
  const Model net = conv_cone_net();
  expect_gains_are_the_halves(net, box_property(128, 0.2, 0.4, 3), ArithSpec::f64(), true);
  expect_gains_are_the_halves(net, box_property(128, 0.2, 0.4, 3), ArithSpec::f32(), true);
}

}  // namespace
}  // namespace denote
