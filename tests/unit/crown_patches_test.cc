// Windowed rows for conv nodes' and residual joins' intermediate bounds (src/bounds/crown_patches.cc)
// against the dense rules (crown_conv.cc, crown_rules.cc) on the same boxes: every conv node's and
// join's CROWN and one-step bounds
// equal up to the order of the sums, on strides, padding (also asymmetric), dilation, groups, a conv
// fed by a conv, a sigmoid between, an image with no leading axis, residual blocks (add, sub, a 1x1
// strided projection: two windows merged into their union); windows that would not stay small run
// dense. Then whole CROWN runs (windows on) whose bounds contain the f64 and f32 evaluations at
// the box's corners and random points. A permuted input (NHWC) is concretised where it is permuted.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "bounds/crown_engine.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

struct Layer {
  Op act;  // after the conv (and the join): Relu, Sigmoid, or Input for none
  int64_t cout, groups;
  std::vector<int64_t> kernel, stride, pad, pad_after, dilation;
  // A residual join before the activation: the output of layer `skip` (through a 1x1 conv of stride
  // `proj` where proj > 0) added to the conv's, or subtracted from it (join Sub).
  int skip = -1;
  Op join = Op::Add;
  int64_t proj = 0;
  // After the activation: an avg_pool of this window and stride (0: none); pool_stride 0 means the window.
  int64_t pool = 0, pool_stride = 0;
};
struct Net {
  const char* name;
  Shape in;  // [1, C, H, W] or [C, H, W]
  std::vector<Layer> layers;
  bool windows;       // whether the second conv's intermediate bounds run on windows
  bool nhwc = false;  // the input is [1, H, W, C], permuted to [1, C, H, W] (marabou-cifar10's nets)
};

std::vector<Net> nets() {
  return {
      {"cifar_like", {1, 3, 12, 12},
       {{Op::Relu, 4, 1, {3, 3}, {2, 2}, {1, 1}, {}, {}},
        {Op::Relu, 5, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Relu, 3, 1, {2, 2}, {2, 2}, {0, 0}, {}, {}}},
       true},
      {"dilation_groups_asym", {1, 4, 13, 12},
       {{Op::Relu, 6, 2, {3, 3}, {1, 1}, {2, 0}, {0, 1}, {2, 1}},
        {Op::Relu, 4, 2, {3, 2}, {2, 1}, {1, 1}, {}, {1, 2}}},
       true},
      {"conv_conv_sigmoid_no_lead", {4, 10, 10},
       {{Op::Input, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Sigmoid, 6, 1, {3, 3}, {1, 1}, {0, 0}, {}, {}},
        {Op::Relu, 3, 1, {3, 3}, {2, 2}, {1, 1}, {}, {}}},
       true},
      {"nhwc_input_permuted", {1, 9, 9, 3},
       {{Op::Relu, 4, 1, {3, 3}, {2, 2}, {0, 0}, {}, {}}, {Op::Relu, 5, 1, {2, 2}, {1, 1}, {0, 0}, {}, {}}},
       true, true},
      {"residual", {1, 3, 10, 10},
       {{Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}, 0},
        {Op::Relu, 2, 1, {3, 3}, {2, 2}, {1, 1}, {}, {}}},
       true},
      {"residual_downsample_sub", {1, 3, 9, 9},
       {{Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Relu, 6, 1, {3, 3}, {2, 2}, {1, 1}, {}, {}},
        {Op::Relu, 6, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}, 0, Op::Sub, 2}},
       true},
      // The windows pass an avg_pool of 2x2 (exact: a quarter of each entry to each input); through
      // one of 3x3 (not a power of two) and one whose windows overlap they go dense there.
      {"avg_pool_between_convs", {1, 3, 12, 12},
       {{Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}, -1, Op::Add, 0, 2},
        {Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}},
        {Op::Relu, 3, 1, {1, 1}, {1, 1}, {0, 0}, {}, {}}},
       true},
      {"avg_pool_odd_and_overlapping", {1, 3, 24, 24},
       {{Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}, -1, Op::Add, 0, 3},
        {Op::Relu, 4, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}, -1, Op::Add, 0, 2, 1},
        {Op::Relu, 3, 1, {1, 1}, {1, 1}, {0, 0}, {}, {}}},
       true},
      {"window_too_big", {1, 2, 4, 4},
       {{Op::Relu, 3, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}}, {Op::Relu, 2, 1, {3, 3}, {1, 1}, {1, 1}, {}, {}}},
       false},
  };
}

ConvConfig config_of(const Layer& l, int64_t cin, int64_t axis) {
  ConvConfig c;
  c.window = WindowConfig{2, l.kernel, l.stride, l.pad};
  c.padding_after = l.pad_after;
  c.dilation = l.dilation;
  c.groups = l.groups;
  c.channel_axis = axis;
  c.in_channels = cin;
  c.out_channels = l.cout;
  return c;
}

// The layers, then flatten -> linear 3.
Model build(const Net& net, uint64_t seed) {
  GraphBuilder b;
  int64_t x = b.input(net.in);
  if (net.nhwc) x = b.unary(Op::Permute, x, PermAttrs{{0, 3, 1, 2}});
  const int64_t axis = static_cast<int64_t>(net.in.size()) - 3;
  auto conv = [&](int64_t from, const Layer& l) {
    const int64_t cin = b.model().graph.nodes[static_cast<size_t>(from)].out_shape[static_cast<size_t>(axis)];
    const int64_t nw = l.cout * (cin / l.groups) * l.kernel[0] * l.kernel[1];
    const std::vector<double> w = lcg_values(nw, seed, 0.6), bias = lcg_values(l.cout, seed + 1, 0.2);
    seed += 2;
    return b.conv(from, config_of(l, cin, axis), w, bias);
  };
  std::vector<int64_t> outs;
  for (const Layer& l : net.layers) {
    x = conv(x, l);
    if (l.skip >= 0) {
      int64_t from = outs[static_cast<size_t>(l.skip)];
      if (l.proj > 0) from = conv(from, Layer{Op::Input, l.cout, 1, {1, 1}, {l.proj, l.proj}, {0, 0}, {}, {}});
      x = b.binary(l.join, x, from);
    }
    if (l.act != Op::Input) x = b.unary(l.act, x);
    if (l.pool > 0) {
      const Shape in = b.model().graph.nodes[static_cast<size_t>(x)].out_shape;
      const int64_t st = l.pool_stride > 0 ? l.pool_stride : l.pool, h = (in[2] - l.pool) / st + 1,
                    w = (in[3] - l.pool) / st + 1;
      x = b.add(Op::AvgPool, {x}, WindowConfig{2, {l.pool, l.pool}, {st, st}, {0, 0}}, Shape{in[0], in[1], h, w});
    }
    outs.push_back(x);
  }
  const Shape s = b.model().graph.nodes[static_cast<size_t>(x)].out_shape;
  const int64_t f = b.add(Op::Flatten, {x}, ValueShapeAttrs{s}, Shape{numel(s)});
  const int64_t out = b.linear(f, 3, lcg_values(3 * numel(s), seed), lcg_values(3, seed + 1, 0.1));
  auto m = b.build({out});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

DoubleBox box_of(const Shape& s, double eps) {
  DoubleBox box{s, {}, {}};
  for (double v : lcg_values(numel(s), 5, 1.0)) box.lo.push_back(v - eps), box.hi.push_back(v + eps);
  return box;
}

TEST(CrownPatches, EveryConvNodesBoundsEqualTheDenseRules) {
  for (const Net& net : nets())
    for (const char* arith : {"f64", "f32"}) {
      const Model m = build(net, 7);
      const std::vector<DoubleBox> in = {box_of(net.in, 0.08)};
      auto ibp = run_ibp_double(m.graph, m.payload, in, arith);
      ASSERT_TRUE(ibp.ok()) << ibp.message();
      const crown::EvalErr err = std::string(arith) == "f32" ? crown::EvalErr{0x1p-24, 0x1p-149, true} : crown::EvalErr{};
      crown::Engine win(m.graph, m.payload, crown::EngineSetup{.err = err}, ibp->boxes);
      crown::Engine dense(m.graph, m.payload, crown::EngineSetup{.err = err, .patches = false}, ibp->boxes);
      int convs = 0;
      for (const Node& n : m.graph.nodes) {
        const bool join = n.op == Op::Add || n.op == Op::Sub;  // a residual join: windows from one pixel
        if (n.op != Op::Conv && !join) continue;
        const int64_t k = numel(n.out_shape);
        std::vector<int64_t> elems;
        for (int64_t j = 0; j < k; j += 2) elems.push_back(j);
        for (bool one_step : {false, true}) {
          std::vector<double> lw, hw, ld, hd;
          const int64_t before = win.stats().patch_passes;
          win.bound_elements(n.id, elems, one_step, lw, hw);
          dense.bound_elements(n.id, elems, one_step, ld, hd);
          const std::string at = std::string(net.name) + " " + arith + " node " + std::to_string(n.id) +
                                 (one_step ? " one-step" : "");
          ASSERT_EQ(lw.size(), elems.size()) << at;
          if (net.windows) {
            EXPECT_GT(win.stats().patch_passes, before) << at;
          }
          for (size_t r = 0; r < elems.size(); ++r) {
            ASSERT_TRUE(std::isfinite(lw[r]) && std::isfinite(hw[r])) << at;
            EXPECT_LE(lw[r], hw[r]) << at;
            // The windows' sums bound their rounding by the window's term count, the dense rules' by the
            // node's (up_sum(s, n) grows with n): the windows are never looser, by up to about 1e-12 after
            // a residual block (every one of 2,371 differing elements here), equal up to that.
            EXPECT_NEAR(lw[r], ld[r], 3e-12 * (1 + std::fabs(ld[r]))) << at << " element " << elems[r];
            EXPECT_NEAR(hw[r], hd[r], 3e-12 * (1 + std::fabs(hd[r]))) << at << " element " << elems[r];
            EXPECT_GE(lw[r], ld[r] - 1e-14 * (1 + std::fabs(ld[r]))) << at << " element " << elems[r];
            EXPECT_LE(hw[r], hd[r] + 1e-14 * (1 + std::fabs(hd[r]))) << at << " element " << elems[r];
          }
        }
        ++convs;
      }
      int expected = 0;
      for (const Layer& l : net.layers) expected += (l.proj > 0 ? 2 : 1) + (l.skip >= 0 ? 1 : 0);
      EXPECT_EQ(convs, expected);
      EXPECT_EQ(dense.stats().patch_passes, 0);
      if (!net.windows) {
        EXPECT_EQ(win.stats().patch_passes, 0) << net.name << ": a 3x3 window is more than half a 4x4 image";
      }
    }
}

TEST(CrownPatches, CrownBoundsWithWindowsContainTheEvaluations) {
  for (const Net& net : nets())
    for (const char* arith : {"f64", "f32"}) {
      const Model m = build(net, 19);
      const DoubleBox box = box_of(net.in, 0.05);
      const std::vector<DoubleBox> in = {box};
      auto ibp = bound_with(m, in, arith, BoundMethod::Ibp);
      auto cr = bound_with(m, in, arith, BoundMethod::Crown);
      ASSERT_TRUE(ibp.ok() && cr.ok()) << net.name << cr.message();
      ASSERT_TRUE(cr->fallback.empty()) << cr->fallback;
      double w_ibp = 0, w_cr = 0;
      for (size_t k = 0; k < 3; ++k)
        w_ibp += ibp->spec_hi[k] - ibp->spec_lo[k], w_cr += cr->spec_hi[k] - cr->spec_lo[k];
      EXPECT_LT(w_cr, w_ibp) << net.name << " " << arith;
      const std::vector<double> centre = lcg_values(numel(net.in), 5, 1.0);
      for (int t = 0; t < 40; ++t) {
        std::vector<double> x = lcg_values(numel(net.in), static_cast<uint64_t>(t) + 500, 1.0);
        for (size_t i = 0; i < x.size(); ++i) x[i] = t < 2 ? (t == 0 ? box.lo[i] : box.hi[i]) : centre[i] + 0.05 * x[i];
        const std::vector<double> y = evaluate_at(m, net.in, x, std::string(arith) == "f32");
        ASSERT_EQ(y.size(), 3u);
        for (size_t k = 0; k < 3; ++k) {
          ASSERT_GE(y[k], cr->spec_lo[k]) << net.name << " " << arith << " sample " << t;
          ASSERT_LE(y[k], cr->spec_hi[k]) << net.name << " " << arith << " sample " << t;
        }
      }
    }
}

}  // namespace
}  // namespace denote
