// max_pool's linear relaxation (src/bounds/crown_maxpool.h, issue 50): on conv -> relu -> max_pool
// networks (windows apart, overlapping with padding, 1-D) CROWN and alpha-CROWN contain sampled f64
// and f32 evaluations, are never looser than IBP and tighter in total, and alpha-CROWN is never
// looser than CROWN; a window whose element dominates passes its coefficients on exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) { return lcg_values(n, seed, scale); }

struct Net {
  Model m;
  Shape in;
};

// input [1, 2, H, W] -> conv 2->3 k3 pad1 -> relu -> max_pool(pool) -> flatten -> linear -> relu -> linear 2.
Net pool_net(int64_t h, int64_t w, WindowConfig pool, int64_t pooled) {
  GraphBuilder b;
  const Shape in{1, 2, h, w};
  const int64_t x = b.input(in);
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
  c.padding_after = {1, 1};
  c.dilation = {1, 1};
  c.channel_axis = 1;
  c.in_channels = 2;
  c.out_channels = 3;
  const int64_t r = b.unary(Op::Relu, b.conv(x, c, values(54, 1), values(3, 2, 0.1)));
  const int64_t mp = b.unary(Op::MaxPool, r, pool);
  const int64_t f = b.add(Op::Flatten, {mp}, ValueShapeAttrs{b.model().graph.nodes[static_cast<size_t>(mp)].out_shape}, Shape{pooled});
  const int64_t l1 = b.unary(Op::Relu, b.linear(f, 6, values(6 * pooled, 3), values(6, 4, 0.1)));
  auto m = b.build({b.linear(l1, 2, values(12, 5), values(2, 6, 0.1))});
  EXPECT_TRUE(m.ok()) << m.message();
  return {*m, in};
}

void check_net(const Net& net, double eps) {
  const int64_t n = numel(net.in);
  DoubleBox box{net.in, {}, {}};
  // Inputs whose box is exactly representable in f32 (the f32 evaluation reads the same box).
  for (double v : values(n, 10, 1.0)) {
    const double c = static_cast<float>(v);
    box.lo.push_back(static_cast<float>(c - eps)), box.hi.push_back(static_cast<float>(c + eps));
  }
  std::vector<DoubleBox> in = {box};
  const int64_t out = net.m.output_ids[0];
  for (const char* arith : {"f64", "f32"}) {
    SCOPED_TRACE(arith);
    CrownOptions o;
    o.arith = *parse_arith_name(arith);
    o.method = BoundMethod::Ibp;
    auto ibp = run_crown(net.m.graph, net.m.payload, in, out, nullptr, o);
    o.method = BoundMethod::Crown;
    auto cr = run_crown(net.m.graph, net.m.payload, in, out, nullptr, o);
    o.method = BoundMethod::AlphaCrown;
    auto al = run_crown(net.m.graph, net.m.payload, in, out, nullptr, o);
    ASSERT_TRUE(ibp.ok() && cr.ok() && al.ok()) << ibp.message() << cr.message() << al.message();
    double w_ibp = 0, w_cr = 0;
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_GE(cr->spec_lo[k], ibp->spec_lo[k]);
      EXPECT_LE(cr->spec_hi[k], ibp->spec_hi[k]);
      EXPECT_GE(al->spec_lo[k], cr->spec_lo[k]);
      EXPECT_LE(al->spec_hi[k], cr->spec_hi[k]);
      w_ibp += ibp->spec_hi[k] - ibp->spec_lo[k];
      w_cr += cr->spec_hi[k] - cr->spec_lo[k];
    }
    EXPECT_LT(w_cr, w_ibp);
    uint64_t s = 77;
    for (int t = 0; t < 300; ++t) {
      std::vector<double> x(static_cast<size_t>(n));
      for (size_t i = 0; i < x.size(); ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = t < 2 ? t : static_cast<double>(s >> 11) * 0x1p-53;
        x[i] = box.lo[i] + u * (box.hi[i] - box.lo[i]);
        if (std::string(arith) == "f32") x[i] = std::clamp<double>(static_cast<float>(x[i]), box.lo[i], box.hi[i]);
      }
      const std::vector<double> y = evaluate_at(net.m, net.in, x, std::string(arith) == "f32");
      ASSERT_EQ(y.size(), 2u);
      for (size_t k = 0; k < 2; ++k) {
        ASSERT_GE(y[k], al->spec_lo[k]) << "sample " << t;
        ASSERT_LE(y[k], al->spec_hi[k]) << "sample " << t;
        ASSERT_GE(y[k], cr->spec_lo[k]) << "sample " << t;
        ASSERT_LE(y[k], cr->spec_hi[k]) << "sample " << t;
      }
    }
  }
}

TEST(CrownMaxPool, WindowsApartContainSamplesAndBeatIbp) {
  check_net(pool_net(6, 6, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}}, 27), 0.1);
}

TEST(CrownMaxPool, OverlappingPaddedWindowsContainSamplesAndBeatIbp) {
  // k3 s1 pad1: every input element is in up to 9 windows (coefficients summed onto it).
  check_net(pool_net(4, 4, WindowConfig{2, {3, 3}, {1, 1}, {1, 1}}, 48), 0.05);
}

TEST(CrownMaxPool, ADominantElementPassesItsCoefficientExactly) {
  // max_pool over 4 elements, the first far above the others: y = x_0 on the whole box, so CROWN's bound
  // of y is x_0's box up to the final rounding, where IBP's is the same here but CROWN must not be
  // looser; a 2 x - y head shows the correlation: 2 x_0 - y = x_0 exactly.
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 2, 2});
  const int64_t mp = b.unary(Op::MaxPool, x, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  const int64_t f = b.add(Op::Flatten, {mp}, ValueShapeAttrs{{1, 1, 1, 1}}, Shape{1});
  const int64_t first = b.add(Op::Flatten, {x}, ValueShapeAttrs{{1, 1, 2, 2}}, Shape{4});
  const int64_t cat = b.add(Op::Concat, {f, first}, AxisAttrs{0});
  auto m = b.build({b.linear(cat, 1, {-1, 2, 0, 0, 0}, {0})});
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<DoubleBox> in = {DoubleBox{{1, 1, 2, 2}, {5, -1, -1, -1}, {6, 1, 1, 1}}};
  CrownOptions o;
  auto cr = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
  ASSERT_TRUE(cr.ok()) << cr.message();
  EXPECT_NEAR(cr->spec_lo[0], 5, 1e-12);  // -y + 2 x_0 = x_0 in [5, 6]
  EXPECT_NEAR(cr->spec_hi[0], 6, 1e-12);
  o.method = BoundMethod::Ibp;
  auto ibp = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
  ASSERT_TRUE(ibp.ok());
  EXPECT_LT(ibp->spec_lo[0], 4.5);  // IBP loses the correlation: 2 [5, 6] - [5, 6] = [4, 7]
}

}  // namespace
}  // namespace denote
