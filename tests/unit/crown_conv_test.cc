// CROWN's conv rule (src/bounds/crown_conv.cc): all rows back through one transposed conv (dgemm +
// col2im). Against the generic affine rule (the op's VJP, row by row: src/bounds/crown_affine.cc) on
// strides, padding, dilation, groups, a leading axis and several row counts: the same coefficients
// (up to the a-priori rounding bound the slack carries), the same bias, a slack that covers the
// difference; the batched forward conv against the evaluator; and whole CROWN / alpha-CROWN runs
// whose bounds contain the network evaluated in f64 and f32 at random points of the box.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "bounds/crown_affine.h"
#include "bounds/crown_conv.h"
#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) {
  return lcg_values(n, seed * 0x9e3779b97f4a7c15ull + 1, scale);
}

struct ConvCase {
  const char* name;
  Shape in;  // [lead..., cin, spatial...]
  int64_t axis, cout, groups;
  std::vector<int64_t> kernel, stride, pad, pad_after, dilation;
};

std::vector<ConvCase> cases() {
  return {
      {"plain", {2, 6, 6}, 0, 3, 1, {3, 3}, {1, 1}, {0, 0}, {}, {}},
      {"stride2_pad1", {3, 7, 7}, 0, 4, 1, {4, 4}, {2, 2}, {1, 1}, {}, {}},
      {"asym_pad_dilation", {2, 7, 6}, 0, 3, 1, {3, 2}, {1, 2}, {2, 0}, {0, 1}, {2, 1}},
      {"groups", {4, 5, 5}, 0, 6, 2, {3, 3}, {1, 1}, {1, 1}, {}, {}},
      {"depthwise_stride", {3, 8, 8}, 0, 3, 3, {3, 3}, {2, 2}, {1, 1}, {}, {1, 1}},
      {"lead_axis_1d", {2, 2, 9}, 1, 3, 1, {3}, {2}, {1}, {}, {2}},
      {"conv3d_groups", {2, 4, 4, 3}, 0, 4, 2, {2, 2, 2}, {1, 2, 1}, {1, 0, 1}, {}, {}},
      // Unit strides with dilation, asymmetric padding, groups, a lead axis, three dims, padding past
      // the kernel's reach.
      {"stride1_asym_pad_dilation", {2, 7, 6}, 0, 3, 1, {3, 2}, {1, 1}, {2, 0}, {0, 1}, {2, 1}},
      {"stride1_lead_axis_1d", {2, 2, 9}, 1, 3, 1, {3}, {1}, {1}, {2}, {2}},
      {"stride1_conv3d_groups", {4, 4, 4, 3}, 0, 6, 2, {2, 3, 2}, {1, 1, 1}, {1, 1, 0}, {0, 1, 1}, {}},
      {"stride1_pad_beyond_reach", {2, 5, 5}, 0, 2, 1, {2, 2}, {1, 1}, {2, 2}, {}, {}},
  };
}

ConvConfig config_of(const ConvCase& cc) {
  ConvConfig c;
  c.window = WindowConfig{static_cast<int64_t>(cc.kernel.size()), cc.kernel, cc.stride, cc.pad};
  c.padding_after = cc.pad_after;
  c.dilation = cc.dilation;
  c.groups = cc.groups;
  c.channel_axis = cc.axis;
  c.in_channels = cc.in[static_cast<size_t>(cc.axis)];
  c.out_channels = cc.cout;
  return c;
}

int64_t weight_count(const ConvCase& cc) {
  int64_t k = 1;
  for (int64_t e : cc.kernel) k *= e;
  return cc.cout * (cc.in[static_cast<size_t>(cc.axis)] / cc.groups) * k;
}

// input -> conv (the rule tests' graph), optionally -> relu -> flatten -> linear 5 -> relu -> linear 3;
// with second: a relu and a second conv of the same geometry (cout -> cout channels) before the tail.
Model conv_model(const ConvCase& cc, bool tail, uint64_t seed, bool second = false) {
  GraphBuilder b;
  const int64_t x = b.input(cc.in);
  int64_t cv = b.conv(x, config_of(cc), values(weight_count(cc), seed), values(cc.cout, seed + 1, 0.2));
  if (second) {
    ConvCase c2 = cc;
    c2.in = b.model().graph.nodes[static_cast<size_t>(cv)].out_shape;
    c2.stride.assign(cc.stride.size(), 1);
    c2.pad = c2.pad_after = {};
    c2.pad.assign(cc.kernel.size(), 1);
    c2.dilation = {};
    c2.kernel.assign(cc.kernel.size(), 2);
    const int64_t r = b.unary(Op::Relu, cv);
    cv = b.conv(r, config_of(c2), values(weight_count(c2), seed + 7), values(c2.cout, seed + 8, 0.2));
  }
  int64_t out = cv;
  if (tail) {
    const Shape s = b.model().graph.nodes[static_cast<size_t>(cv)].out_shape;
    const int64_t r = b.unary(Op::Relu, cv);
    const int64_t f = b.add(Op::Flatten, {r}, ValueShapeAttrs{s}, Shape{numel(s)});
    const int64_t h = b.unary(Op::Relu, b.linear(f, 5, values(5 * numel(s), seed + 2), values(5, seed + 3, 0.1)));
    out = b.linear(h, 3, values(15, seed + 4), values(3, seed + 5, 0.1));
  }
  auto m = b.build({out});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

DoubleBox input_box(const Shape& s, uint64_t seed, double eps) {
  DoubleBox box{s, {}, {}};
  for (double v : values(numel(s), seed, 1.0)) box.lo.push_back(v - eps), box.hi.push_back(v + eps);
  return box;
}

struct RuleRun {
  crown::PassRows st;
  std::vector<double> parent_a;
  std::vector<double> values;  // alpha-CROWN's vertex values of the conv, when asked for
};

// One backward step through the conv node (id 1, parent the input 0) with coefficients A.
RuleRun run_rule(const Model& m, const DoubleBox& xb, const std::vector<double>& A, int64_t rows, bool fast,
                 const crown::UnitRows* unit = nullptr, bool fuse = false, bool values = false) {
  RuleRun out;
  const std::vector<int32_t> uses = {1, 0};
  const std::vector<std::vector<char>> need = {{}, std::vector<char>(numel(m.graph.nodes[1].out_shape), 1)};
  std::vector<std::vector<double>> vertex(2);
  if (values) out.st.vertex_need = &need, out.st.vertex_values = &vertex;
  const size_t nodes = m.graph.nodes.size();
  out.st.rows = rows;
  out.st.A.resize(nodes);
  out.st.support.resize(nodes);
  for (auto* v : {&out.st.bias, &out.st.mag, &out.st.terms, &out.st.slack}) v->assign(static_cast<size_t>(rows), 0.0);
  std::vector<const DoubleBox*> box(nodes, nullptr);
  box[0] = &xb;
  crown::EvalErr err;
  out.st.unit = unit;
  out.st.unit_node = unit ? 1 : -1;
  out.st.fuse_input = fuse;
  out.st.uses = fuse ? &uses : nullptr;
  crown::RuleCtx c{m.graph, m.payload, box, err, out.st};
  const Node& n = m.graph.nodes[1];
  std::vector<double> a = A;
  const bool ok = fast ? crown::rule_conv(c, n, std::move(a)) : crown::rule_affine(c, n, std::move(a));
  EXPECT_TRUE(ok) << out.st.failure;
  if (out.st.A[0]) out.parent_a = *out.st.A[0];
  out.values = vertex[1];
  if (!fast && fuse) EXPECT_TRUE(c.concretize(0, out.parent_a));  // the input's rule, on stored coefficients
  return out;
}

TEST(CrownConv, TransposedConvMatchesTheVjpRuleForEveryGeometryAndRowCount) {
  for (const ConvCase& cc : cases()) {
    const Model m = conv_model(cc, false, 11);
    ASSERT_EQ(m.graph.nodes[1].op, Op::Conv);
    crown::ConvBackward cb;
    ASSERT_TRUE(crown::conv_backward_plan(m.graph, m.payload, m.graph.nodes[1], cb)) << cc.name;
    const DoubleBox xb = input_box(cc.in, 5, 0.25);
    const int64_t om = numel(m.graph.nodes[1].out_shape), im = numel(cc.in);
    for (int64_t rows : {1, 3, 17}) {
      std::vector<double> A = values(rows * om, static_cast<uint64_t>(rows) + 40, 2.0);
      A[0] = 0;  // zero coefficients are ordinary entries
      const RuleRun fast = run_rule(m, xb, A, rows, true), slow = run_rule(m, xb, A, rows, false);
      ASSERT_EQ(fast.parent_a.size(), static_cast<size_t>(rows * im)) << cc.name;
      ASSERT_EQ(slow.parent_a.size(), fast.parent_a.size()) << cc.name;
      for (int64_t r = 0; r < rows; ++r) {
        // The two coefficient vectors differ by rounding only; that difference, weighted by |x|,
        // is covered by the fast rule's slack (which also holds the evaluation's error terms).
        double diff = 0, mag = 0;
        for (int64_t j = 0; j < im; ++j) {
          const size_t i = static_cast<size_t>(r * im + j);
          const size_t e = static_cast<size_t>(j);
          const double xm = std::max(std::fabs(xb.lo[e]), std::fabs(xb.hi[e]));
          diff += std::fabs(fast.parent_a[i] - slow.parent_a[i]) * xm;
          mag += std::fabs(slow.parent_a[i]);
          EXPECT_NEAR(fast.parent_a[i], slow.parent_a[i], 1e-12 * (1 + std::fabs(slow.parent_a[i]))) << cc.name;
        }
        EXPECT_GT(mag, 0) << cc.name;
        const size_t ri = static_cast<size_t>(r);
        EXPECT_LE(diff, fast.st.slack[ri]) << cc.name << " row " << r;
        EXPECT_EQ(fast.st.bias[ri], slow.st.bias[ri]) << cc.name;  // the same A . f(0)
        EXPECT_EQ(fast.st.mag[ri], slow.st.mag[ri]) << cc.name;
        EXPECT_GT(fast.st.slack[ri], 0) << cc.name;
        // The tighter contraction length (group_out + k_vol, not the output size) only shrinks it.
        EXPECT_LE(fast.st.slack[ri], slow.st.slack[ri] * 1.0000001 + 1e-300) << cc.name;
        EXPECT_LT(fast.st.slack[ri], 1e-9 * (1 + mag)) << cc.name;
      }
    }
  }
}

TEST(CrownConv, UnitStartRowsGoBackExactlyAndConcretiseLikeTheStoredCoefficients) {
  for (const ConvCase& cc : cases()) {
    const Model m = conv_model(cc, false, 13);
    const DoubleBox xb = input_box(cc.in, 6, 0.25);
    const int64_t om = numel(m.graph.nodes[1].out_shape), im = numel(cc.in);
    std::vector<int64_t> elems;
    for (int64_t o = 0; o < om; o += 3) elems.push_back(o);
    const crown::UnitRows unit = crown::UnitRows::plus_minus(elems);
    const int64_t rows = static_cast<int64_t>(unit.col.size());
    std::vector<double> A(static_cast<size_t>(rows * om));
    unit.fill(om, A.data());
    const RuleRun fast = run_rule(m, xb, A, rows, true, &unit), slow = run_rule(m, xb, A, rows, false, &unit);
    ASSERT_EQ(fast.parent_a.size(), static_cast<size_t>(rows * im)) << cc.name;
    EXPECT_EQ(fast.parent_a, slow.parent_a) << cc.name;  // +-weights, no rounding either way
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
      EXPECT_EQ(fast.st.bias[r], slow.st.bias[r]) << cc.name;
      EXPECT_GT(fast.st.slack[r], 0) << cc.name;  // the evaluation's error terms stay
      EXPECT_LE(fast.st.slack[r], slow.st.slack[r]) << cc.name;
    }
    // Fused with the input: the same concretisation as the input's rule on the stored rows.
    const RuleRun ff = run_rule(m, xb, A, rows, true, &unit, true), sf = run_rule(m, xb, A, rows, false, &unit, true);
    EXPECT_TRUE(ff.parent_a.empty()) << cc.name << ": fused coefficients are not stored";
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
      EXPECT_NEAR(ff.st.bias[r], sf.st.bias[r], 1e-13 * (1 + sf.st.mag[r])) << cc.name;
      EXPECT_NEAR(ff.st.mag[r], sf.st.mag[r], 1e-13 * (1 + sf.st.mag[r])) << cc.name;
      EXPECT_GT(ff.st.mag[r], 0) << cc.name;
      EXPECT_LE(ff.st.terms[r], sf.st.terms[r]) << cc.name;  // the generic rule also counts its zero f(0) terms
    }
    // alpha-CROWN's vertex values: the unit rows' sparse update equals the general rows' full conv.
    const RuleRun uv = run_rule(m, xb, A, rows, true, &unit, true, true);
    const RuleRun gv = run_rule(m, xb, A, rows, true, nullptr, true, true);
    ASSERT_EQ(uv.values.size(), static_cast<size_t>(rows * om)) << cc.name;
    ASSERT_EQ(gv.values.size(), uv.values.size()) << cc.name;
    for (size_t i = 0; i < uv.values.size(); ++i) EXPECT_NEAR(uv.values[i], gv.values[i], 1e-12) << cc.name << " " << i;
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) EXPECT_EQ(uv.st.bias[r], ff.st.bias[r]) << cc.name;
    // General rows, fused: the same as concretising the stored transposed conv.
    const std::vector<double> G = values(5 * om, 8, 1.0);
    const RuleRun gf = run_rule(m, xb, G, 5, true, nullptr, true), gs = run_rule(m, xb, G, 5, false, nullptr, true);
    for (size_t r = 0; r < 5; ++r) EXPECT_NEAR(gf.st.bias[r], gs.st.bias[r], 1e-12 * (1 + gs.st.mag[r])) << cc.name;
  }
}

TEST(CrownConv, BatchedForwardConvEqualsTheEvaluator) {
  for (const ConvCase& cc : cases()) {
    const Model m = conv_model(cc, false, 21);
    crown::ConvBackward cb;
    ASSERT_TRUE(crown::conv_backward_plan(m.graph, m.payload, m.graph.nodes[1], cb)) << cc.name;
    const int64_t batch = 3, im = numel(cc.in), om = numel(m.graph.nodes[1].out_shape);
    const std::vector<double> x = values(batch * im, 77, 1.0);
    std::vector<double> y(static_cast<size_t>(batch * om));
    crown::conv_forward(cb, x.data(), batch * cb.lead, y.data());
    for (int64_t b = 0; b < batch; ++b) {
      const std::vector<double> xb(x.begin() + b * im, x.begin() + (b + 1) * im);
      std::vector<Tensor<double>> xin = {Tensor<double>(cc.in, xb)};
      F64Context ctx;
      auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xin), 1, ctx);
      ASSERT_TRUE(v.ok()) << v.message();
      for (int64_t o = 0; o < om; ++o) {
        const int64_t co = (o / cb.out_vol) % cb.cout;
        EXPECT_NEAR(y[static_cast<size_t>(b * om + o)] + m.payload.conv.at(1).bias[static_cast<size_t>(co)],
                    v->data[static_cast<size_t>(o)], 1e-12)
            << cc.name;
      }
    }
  }
}

TEST(CrownConv, ForwardRuleEqualsTheJvpRule) {
  for (const ConvCase& cc : cases()) {
    const Model m = conv_model(cc, false, 17);
    const DoubleBox xb = input_box(cc.in, 6, 0.25);
    const int64_t rows = 4, im = numel(cc.in), om = numel(m.graph.nodes[1].out_shape);
    crown::PassRows st;
    st.rows = rows;
    std::vector<const DoubleBox*> box = {&xb, nullptr};
    crown::EvalErr err;
    crown::RuleCtx c{m.graph, m.payload, box, err, st};
    const std::vector<std::vector<double>> A(2);
    std::vector<std::vector<double>> fast(2), slow(2);
    fast[0] = slow[0] = values(rows * im, 3, 1.0);
    crown::ForwardCtx ff{c, A, fast}, fs{c, A, slow};
    ASSERT_TRUE(crown::fwd_conv(ff, m.graph.nodes[1])) << cc.name;
    ASSERT_TRUE(crown::fwd_affine(fs, m.graph.nodes[1])) << cc.name;
    ASSERT_EQ(fast[1].size(), static_cast<size_t>(rows * om)) << cc.name;
    ASSERT_EQ(slow[1].size(), fast[1].size()) << cc.name;
    for (size_t i = 0; i < fast[1].size(); ++i) EXPECT_NEAR(fast[1][i], slow[1][i], 1e-12) << cc.name;
  }
}

// The conv's error scales on the batched product (conv_scale, kept per parent box) against the generic
// affine_scale (the evaluator on the magnitudes); the plans kept by ConvPlans, once per node. The
// magnitudes agree (no evaluation error: equal); the evaluation's error counts only the products that
// can be nonzero (taps inside the image), where the generic scale counts the whole kernel: equal
// without padding, else never larger.
void expect_conv_scale(const ConvCase& cc, double u) {
  {
    const Model m = conv_model(cc, false, 23);
    const DoubleBox xb = input_box(cc.in, 4, 0.3);
    crown::PassRows st;
    std::vector<const DoubleBox*> box = {&xb, nullptr};
    const crown::EvalErr err{u, 0x1p-149, true};
    const auto positive = [](int64_t p) { return p > 0; };
    const bool padded = std::any_of(cc.pad.begin(), cc.pad.end(), positive) ||
                        std::any_of(cc.pad_after.begin(), cc.pad_after.end(), positive);
    crown::ScaleCache cache;
    crown::ConvPlans plans(m.graph.nodes.size());
    crown::RuleCtx c{m.graph, m.payload, box, err, st};
    c.scale_cache = &cache;
    c.conv_plans = &plans;
    const Node& n = m.graph.nodes[1];
    crown::ConvBackward scratch;
    const crown::ConvBackward* cb = crown::conv_plan_for(c, n, scratch);
    ASSERT_NE(cb, nullptr) << cc.name;
    EXPECT_EQ(cb, plans.get(m.graph, m.payload, n)) << cc.name << ": built once";
    EXPECT_EQ(plans.get(m.graph, m.payload, m.graph.nodes[0]), nullptr) << "the input has no conv plan";
    for (double g : {0.0, 1e-10}) {
      std::vector<double> fast, f0, slow, g0;
      crown::conv_scale(c, n, *cb, g, fast, f0);
      ASSERT_TRUE(crown::affine_scale(c, n, g, slow, g0)) << cc.name;
      ASSERT_EQ(fast.size(), slow.size()) << cc.name;
      EXPECT_EQ(f0, g0) << cc.name << ": f(0) = the bias, exactly";
      for (size_t o = 0; o < fast.size(); ++o) {
        EXPECT_GT(fast[o], 0) << cc.name;
        if (u == 0 || !padded)
          EXPECT_NEAR(fast[o], slow[o], 1e-12 * slow[o]) << cc.name << " output " << o;
        else
          EXPECT_LE(fast[o], slow[o] * (1 + 1e-12)) << cc.name << " output " << o;
      }
      std::vector<double> again, a0;
      crown::conv_scale(c, n, *cb, g, again, a0);  // from the cache: the same values
      EXPECT_EQ(again, fast) << cc.name;
    }
  }
}

TEST(CrownConv, ConvScaleEqualsTheGenericScaleAndPlansAreKept) {
  for (const ConvCase& cc : cases())
    for (const double u : {0.0, 0x1p-24}) expect_conv_scale(cc, u);
}

// A channel whose box is the point 0 (a dead relu's output) adds no product to the evaluation's sums:
// on the plain case (2 input channels, 3x3, no padding: 18 products and the bias per output), zeroing
// channel 1 leaves 9 + 1, and the evaluation's error term (live + 4) u shrinks from 23 u to 14 u.
TEST(CrownConv, DeadInputsAddNoEvaluationError) {
  const ConvCase cc = cases()[0];
  const Model m = conv_model(cc, false, 23);
  // Channel 1 the point 0, or the point 2^-1000 (live, its products negligible next to channel 0's).
  DoubleBox dead = input_box(cc.in, 4, 0.3), live = dead;
  for (size_t j = dead.lo.size() / 2; j < dead.lo.size(); ++j) dead.lo[j] = dead.hi[j] = 0;
  for (size_t j = live.lo.size() / 2; j < live.lo.size(); ++j) live.lo[j] = live.hi[j] = 0x1p-1000;
  crown::ConvBackward cb;
  ASSERT_TRUE(crown::conv_backward_plan(m.graph, m.payload, m.graph.nodes[1], cb));
  auto scale_at = [&](const DoubleBox& xb) {
    crown::PassRows st;
    std::vector<const DoubleBox*> box = {&xb, nullptr};
    const crown::EvalErr err{0x1p-24, 0, true};  // the evaluation's error only (no underflow term)
    crown::RuleCtx c{m.graph, m.payload, box, err, st};
    std::vector<double> scale, f0;
    crown::conv_scale(c, m.graph.nodes[1], cb, 0.0, scale, f0);
    return scale;
  };
  const std::vector<double> a = scale_at(dead), b = scale_at(live);
  ASSERT_EQ(a.size(), b.size());
  for (size_t o = 0; o < a.size(); ++o) EXPECT_NEAR(a[o] / b[o], 14.0 / 23.0, 1e-12) << "output " << o;
}

// CROWN and alpha-CROWN on the case's network (with a second conv: its coefficients go to a relu, not
// the input, and alpha-CROWN's forward rule runs through it): bounds within IBP's, alpha-CROWN's
// within CROWN's, and the f64/f32 evaluation at corners and random points inside.
void check_network(const ConvCase& cc, bool second) {
  {
    const Model m = conv_model(cc, true, 31, second);
    const DoubleBox box = input_box(cc.in, 9, 0.05);
    std::vector<DoubleBox> in = {box};
    for (const char* arith : {"f64", "f32"}) {
      auto ibp = bound_with(m, in, arith, BoundMethod::Ibp);
      auto cr = bound_with(m, in, arith, BoundMethod::Crown);
      auto al = bound_with(m, in, arith, BoundMethod::AlphaCrown, 5);
      ASSERT_TRUE(ibp.ok() && cr.ok() && al.ok()) << cc.name << cr.message() << al.message();
      ASSERT_TRUE(cr->fallback.empty()) << cc.name << ": " << cr->fallback;
      double w_ibp = 0, w_cr = 0;
      for (size_t k = 0; k < 3; ++k) {
        EXPECT_LE(al->spec_lo[k], al->spec_hi[k]);
        // alpha-CROWN starts at CROWN's slopes and keeps the best bound, but on its own (optimised)
        // intermediate boxes, and CROWN's final pass is not monotone in them: equal up to rounding at
        // worst (depthwise_stride f64 on a Zen 5 VM of 2026-12-07: -0.315299 against -0.315299, a few ulps).
        const double slack = 1e-12 * (1 + std::fabs(cr->spec_lo[k]) + std::fabs(cr->spec_hi[k]));
        EXPECT_GE(al->spec_lo[k], cr->spec_lo[k] - slack) << cc.name << (second ? "+conv" : "") << " " << arith;
        EXPECT_LE(al->spec_hi[k], cr->spec_hi[k] + slack) << cc.name << (second ? "+conv" : "") << " " << arith;
        w_ibp += ibp->spec_hi[k] - ibp->spec_lo[k];
        w_cr += cr->spec_hi[k] - cr->spec_lo[k];
      }
      EXPECT_LT(w_cr, w_ibp) << cc.name << (second ? "+conv" : "") << " " << arith;
      const std::vector<double> centre = values(numel(cc.in), 9, 1.0);
      for (int t = 0; t < 60; ++t) {
        std::vector<double> x = values(numel(cc.in), static_cast<uint64_t>(t) + 1000, 1.0);
        for (size_t i = 0; i < x.size(); ++i)  // a point of the box (its corners for t < 2)
          x[i] = t < 2 ? (t == 0 ? box.lo[i] : box.hi[i]) : centre[i] + 0.05 * x[i];
        const std::vector<double> y = evaluate_at(m, cc.in, x, std::string(arith) == "f32");
        ASSERT_EQ(y.size(), 3u);
        for (size_t k = 0; k < 3; ++k) {
          for (const auto* r : {&*cr, &*al}) {
            ASSERT_GE(y[k], r->spec_lo[k]) << cc.name << " " << arith << " sample " << t;
            ASSERT_LE(y[k], r->spec_hi[k]) << cc.name << " " << arith << " sample " << t;
          }
        }
      }
    }
  }
}

TEST(CrownConv, CrownAndAlphaCrownThroughConvContainSamples) {
  for (const ConvCase& cc : cases())
    for (bool second : {false, true}) check_network(cc, second);
}

}  // namespace
}  // namespace denote
