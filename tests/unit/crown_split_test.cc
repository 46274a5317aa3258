// CROWN with relu splits (CrownOptions::splits, beta-CROWN's multipliers under alpha-CROWN): the
// bounds hold at every sampled point that satisfies the splits, a split its box contradicts makes
// the subdomain empty, a multiplier reaches what clamping cannot, and bad splits are errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "relu_nets.h"

namespace denote {
namespace {

using Split = ReluSplit;

CrownOptions with(BoundMethod m) {
  CrownOptions o;
  o.method = m;
  o.alpha_intermediate = false;
  return o;
}

Subdomain at(const std::vector<Split>& splits, const NodeBoxes* prior = nullptr) {
  Subdomain w;
  w.splits = splits;
  if (prior) w.prior = std::make_shared<const NodeBoxes>(*prior);
  return w;
}

// The unstable elements (box across 0) of the nodes a relu reads, first to last.
std::vector<Split> unstable(const Model& m, const CrownResult& r) {
  std::vector<Split> out;
  for (const Node& n : m.graph.nodes) {
    if (n.op != Op::Relu) continue;
    const DoubleBox& b = *r.boxes[static_cast<size_t>(n.parents[0])];
    for (size_t j = 0; j < b.lo.size(); ++j)
      if (b.lo[j] < 0 && b.hi[j] > 0) out.push_back(Split{n.parents[0], static_cast<int64_t>(j), true, 0});
  }
  return out;
}

// 200 random points of the net's box (f64 evaluation): at those whose split values have the splits'
// signs, r's bounds hold; how many such points there were.
int64_t sampled_points_hold(const ReluNet& net, const std::vector<Split>& splits, const CrownResult& r,
                            ibp_test::Rng& rng, int t) {
  const Model& m = net.m;
  F64Context ctx;
  int64_t checked = 0;
  for (int s = 0; s < 200; ++s) {
    Tensor<double> x{{net.n}, {}};
    for (int64_t i = 0; i < net.n; ++i)
      x.data.push_back(rng.real(net.box.lo[static_cast<size_t>(i)], net.box.hi[static_cast<size_t>(i)]));
    auto all = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(&x, 1), ctx);
    EXPECT_TRUE(all.ok()) << all.message();
    if (!all.ok()) return checked;
    bool inside = true;
    for (const Split& sp : splits) {
      const double v = (*all)[static_cast<size_t>(sp.node)].data[static_cast<size_t>(sp.elem)];
      inside = inside && (sp.active ? v >= 0 : v <= 0);
    }
    if (!inside) continue;
    EXPECT_FALSE(r.infeasible) << "a point satisfies the splits the bounds call empty";
    ++checked;
    const auto& y = (*all)[static_cast<size_t>(net.out)].data;
    for (size_t j = 0; j < y.size(); ++j) {
      EXPECT_GE(y[j], r.spec_lo[j]) << "net " << t << " row " << j;
      EXPECT_LE(y[j], r.spec_hi[j]) << "net " << t << " row " << j;
    }
  }
  return checked;
}

// Random networks, one or two splits of random signs: CROWN and alpha-beta-CROWN bounds hold at the
// sampled points (f64 evaluation) whose split values have the split's sign.
TEST(CrownSplits, BoundsHoldWhereTheSplitsHold) {
  ibp_test::Rng rng(0x5b17);
  int64_t checked = 0, empty = 0;
  for (int t = 0; t < 60; ++t) {
    const ReluNet net = random_relu_net(rng, static_cast<int>(rng.range(2, 3)));
    const Model& m = net.m;
    const std::vector<DoubleBox> in = {net.box};
    auto root = run_crown(m.graph, m.payload, in, net.out, nullptr, with(BoundMethod::Crown));
    ASSERT_TRUE(root.ok()) << root.message();
    std::vector<Split> cand = unstable(m, *root), splits;
    for (size_t k = 0; k < 2 && !cand.empty(); ++k) {
      const size_t pick = static_cast<size_t>(rng.range(0, static_cast<int64_t>(cand.size()) - 1));
      Split sp = cand[pick];
      sp.active = rng.real(0, 1) < 0.5;
      sp.margin = 1e-12;
      splits.push_back(sp);
      cand.erase(cand.begin() + static_cast<std::ptrdiff_t>(pick));
    }
    if (splits.empty()) continue;
    for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
      auto r = run_crown(m.graph, m.payload, in, net.out, nullptr, with(method), at(splits, &root->boxes));
      ASSERT_TRUE(r.ok()) << r.message();
      empty += r->infeasible;
      checked += sampled_points_hold(net, splits, *r, rng, t);
    }
  }
  EXPECT_GT(checked, 3000);
  (void)empty;
}

// x in [-1, 1]^2, h = x0 + x1 (a relu reads it), y = -(x0 + x1) + 0 relu(h). With h <= 0 the true
// minimum of y is 0; clamping h's box cannot see that (y does not pass the relu), the constraint's
// multiplier can: the bound approaches 0 as beta approaches 1. A split that h's box contradicts
// (h >= 0 on x in [-1, -0.5]^2) is an empty subdomain.
TEST(CrownSplits, TheMultiplierReachesBehindTheRelu) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t h = b.linear(x, 1, {1, 1}, {0});
  const int64_t r = b.unary(Op::Relu, h);
  const int64_t y = b.binary(Op::Add, b.linear(x, 1, {-1, -1}, {0}), b.linear(r, 1, {0}, {0}));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<DoubleBox> in = {DoubleBox{{2}, {-1, -1}, {1, 1}}};
  const std::vector<Split> off = {Split{h, 0, false, 0}};
  auto crown = run_crown(m->graph, m->payload, in, y, nullptr, with(BoundMethod::Crown), at(off));
  ASSERT_TRUE(crown.ok()) << crown.message();
  EXPECT_NEAR(crown->spec_lo[0], -2, 1e-9);
  CrownOptions o = with(BoundMethod::AlphaCrown);
  o.alpha_iters = 60;
  auto beta = run_crown(m->graph, m->payload, in, y, nullptr, o, at(off));
  ASSERT_TRUE(beta.ok()) << beta.message();
  EXPECT_GT(beta->spec_lo[0], -0.5);
  EXPECT_LE(beta->spec_lo[0], 0.0);
  // The upper bound (row -y) gains nothing: max y = 2 at x = (-1, -1), where h <= 0 holds.
  EXPECT_GE(beta->spec_hi[0], 2.0);

  const std::vector<DoubleBox> neg = {DoubleBox{{2}, {-1, -1}, {-0.5, -0.5}}};
  const std::vector<Split> on = {Split{h, 0, true, 1e-9}};
  auto e = run_crown(m->graph, m->payload, neg, y, nullptr, with(BoundMethod::Crown), at(on));
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_TRUE(e->infeasible);
  EXPECT_EQ(e->spec_lo[0], INFINITY);
  auto f = run_crown(m->graph, m->payload, neg, y, nullptr, with(BoundMethod::Crown), at(off));
  ASSERT_TRUE(f.ok());
  EXPECT_FALSE(f->infeasible);
}

// alpha-beta-CROWN started from a parent's slopes and multipliers (Subdomain::warm) resumes there: on
// the network above one step from an 8-step state beats one step from CROWN's slopes and zero
// multipliers; a state of another row count is ignored. Any state (slopes outside [0, 1], negative
// multipliers) gives bounds that hold at sampled points of random networks.
TEST(CrownSplits, WarmStartsResumeAndHold) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t h = b.linear(x, 1, {1, 1}, {0});
  const int64_t y = b.binary(Op::Add, b.linear(x, 1, {-1, -1}, {0}), b.linear(b.unary(Op::Relu, h), 1, {0}, {0}));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<DoubleBox> in = {DoubleBox{{2}, {-1, -1}, {1, 1}}};
  const std::vector<Split> off = {Split{h, 0, false, 0}};
  CrownOptions o = with(BoundMethod::AlphaCrown);
  o.alpha_iters = 8;
  auto eight = run_crown(m->graph, m->payload, in, y, nullptr, o, at(off));
  ASSERT_TRUE(eight.ok()) << eight.message();
  ASSERT_TRUE(eight->slopes);
  o.alpha_iters = 1;
  auto cold = run_crown(m->graph, m->payload, in, y, nullptr, o, at(off));
  Subdomain warm = at(off);
  warm.warm = eight->slopes;
  auto resumed = run_crown(m->graph, m->payload, in, y, nullptr, o, warm);
  ASSERT_TRUE(cold.ok() && resumed.ok());
  EXPECT_NEAR(cold->spec_lo[0], -2, 1e-9);
  EXPECT_GT(resumed->spec_lo[0], cold->spec_lo[0] + 0.1);
  EXPECT_LE(resumed->spec_lo[0], 0.0);
  SlopeState other = *eight->slopes;
  other.rows = 1;
  warm.warm = std::make_shared<const SlopeState>(other);
  auto ignored = run_crown(m->graph, m->payload, in, y, nullptr, o, warm);
  ASSERT_TRUE(ignored.ok());
  EXPECT_EQ(ignored->spec_lo[0], cold->spec_lo[0]);

  ibp_test::Rng rng(0x3a7e);
  int64_t checked = 0;
  for (int t = 0; t < 30; ++t) {
    const ReluNet net = random_relu_net(rng, 3);
    const std::vector<DoubleBox> box = {net.box};
    auto root = run_crown(net.m.graph, net.m.payload, box, net.out, nullptr, with(BoundMethod::Crown));
    ASSERT_TRUE(root.ok()) << root.message();
    std::vector<Split> splits = unstable(net.m, *root);
    if (splits.size() > 2) splits.resize(2);
    for (Split& sp : splits) sp.active = rng.real(0, 1) < 0.5, sp.margin = 1e-12;
    CrownOptions a = with(BoundMethod::AlphaCrown);
    a.alpha_iters = 3;
    auto first = run_crown(net.m.graph, net.m.payload, box, net.out, nullptr, a, at(splits, &root->boxes));
    ASSERT_TRUE(first.ok()) << first.message();
    if (first->infeasible) continue;  // no pass ran: no state
    ASSERT_TRUE(first->slopes);
    SlopeState junk = *first->slopes;
    for (auto& v : junk.alpha)
      for (double& e : v) e = rng.real(-1, 2);
    for (double& e : junk.beta) e = rng.real(-1, 3);
    Subdomain w = at(splits, &root->boxes);
    w.warm = std::make_shared<const SlopeState>(junk);
    auto r = run_crown(net.m.graph, net.m.payload, box, net.out, nullptr, a, w);
    ASSERT_TRUE(r.ok()) << r.message();
    checked += sampled_points_hold(net, splits, *r, rng, t);
    // The state is read as its projection onto the valid slopes and multipliers: the same bounds.
    for (auto& v : junk.alpha)
      for (double& e : v) e = std::clamp(e, 0.0, 1.0);
    for (double& e : junk.beta) e = std::max(e, 0.0);
    w.warm = std::make_shared<const SlopeState>(junk);
    auto projected = run_crown(net.m.graph, net.m.payload, box, net.out, nullptr, a, w);
    ASSERT_TRUE(projected.ok());
    EXPECT_EQ(projected->spec_lo, r->spec_lo) << "net " << t;
    EXPECT_EQ(projected->spec_hi, r->spec_hi) << "net " << t;
  }
  EXPECT_GT(checked, 1000);
}

// CrownResult::slopes are each row's best step, not the last: a warm start from them, one pass with no
// step, gives every row at least its best bound again, also with steps large enough to overshoot; and
// slope_rows cuts one row out of a joint state (verify's joint alpha-CROWN hands each conjunction its
// rows as the first subdomain's start).
TEST(CrownSplits, SlopesAreEachRowsBestStep) {
  ibp_test::Rng rng(0x51ce);
  int64_t compared = 0;
  for (int t = 0; t < 30; ++t) {
    const ReluNet net = random_relu_net(rng, 3);
    const std::vector<DoubleBox> box = {net.box};
    const int64_t outs = numel(net.m.graph.nodes[static_cast<size_t>(net.out)].out_shape);
    SpecMatrix spec{3, outs, std::vector<double>(static_cast<size_t>(3 * outs))};
    for (double& c : spec.c) c = rng.real(-1, 1);
    CrownOptions a = with(BoundMethod::AlphaCrown);
    a.alpha_iters = 12;
    a.alpha_lr = 3;  // steps that overshoot: the last step is often not the best
    a.lower_only = true;  // the rows as verify runs them (else the state holds the upper rows' slopes too)
    auto full = run_crown(net.m.graph, net.m.payload, box, net.out, &spec, a);
    ASSERT_TRUE(full.ok()) << full.message();
    if (!full->slopes) continue;
    CrownOptions one = a;
    one.alpha_iters = 1;
    Subdomain w;
    w.warm = full->slopes;
    auto again = run_crown(net.m.graph, net.m.payload, box, net.out, &spec, one, w);
    ASSERT_TRUE(again.ok()) << again.message();
    for (size_t r = 0; r < 3; ++r) EXPECT_GE(again->spec_lo[r], full->spec_lo[r] - 1e-9) << "net " << t << " row " << r;
    SpecMatrix row1{1, outs, std::vector<double>(spec.c.begin() + outs, spec.c.begin() + 2 * outs)};
    w.warm = std::make_shared<const SlopeState>(slope_rows(*full->slopes, 1, 1));
    auto sliced = run_crown(net.m.graph, net.m.payload, box, net.out, &row1, one, w);
    ASSERT_TRUE(sliced.ok()) << sliced.message();
    EXPECT_GE(sliced->spec_lo[0], full->spec_lo[1] - 1e-9) << "net " << t;
    compared += full->spec_lo[1] > -INFINITY;
  }
  EXPECT_GT(compared, 20);
  EXPECT_EQ(slope_rows(SlopeState{0, 2, {}, {}, {}}, 1, 2).rows, 0);  // out of range: an empty state
}

TEST(CrownSplits, BadSplitsAreErrors) {
  GraphBuilder b;
  const int64_t x = b.input({2});
  const int64_t y = b.unary(Op::Relu, b.linear(x, 2, {1, 0, 0, 1}, {0, 0}));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok());
  const std::vector<DoubleBox> in = {DoubleBox{{2}, {-1, -1}, {1, 1}}};
  for (const Split& sp : {Split{7, 0, true, 0}, Split{1, 2, true, 0}, Split{1, 0, true, -1}, Split{1, 0, false, NAN}}) {
    const std::vector<Split> v = {sp};
    auto r = run_crown(m->graph, m->payload, in, y, nullptr, with(BoundMethod::Crown), at(v));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find("split 0"), std::string::npos) << r.message();
    EXPECT_EQ(r.status().field(), "splits") << r.message();
  }
}

}  // namespace
}  // namespace denote
