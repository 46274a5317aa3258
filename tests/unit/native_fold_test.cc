// The tiled folds of linear, matmul and conv for native scalars (src/ops/native_fold.h) give the plain
// loops' values bit for bit. The plain loops run under a context whose scalar is a double in a box
// (not a floating-point type, so the rules take their untiled branch) with the same operations; both
// see the same operands, including -0, infinities and NaNs, over shapes that leave every remainder
// of the tiles (rows, columns, channels of a group). A NaN result only has to be a NaN on both sides:
// its sign and payload follow the hardware's operand order, which C++ leaves to the compiler for the
// commutative + and * (the plain loop compiled twice may differ there too).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <random>

#include "denote/program/builder.h"
#include "ops/contraction_eval.h"
#include "ops/window_eval.h"

namespace denote {
namespace {

struct Boxed {
  double v = 0;
};

// The operations of F64Context that the three rules use, on boxed doubles.
struct BoxedContext {
  using Scalar = Boxed;
  Boxed zero() const { return {0.0}; }
  Boxed add(Boxed a, Boxed b) const { return {a.v + b.v}; }
  Boxed mul(Boxed a, Boxed b) const { return {a.v * b.v}; }
};

// Mostly small values; some -0, +-inf and NaN when `specials`.
std::vector<double> values(std::mt19937& rng, int64_t n, bool specials) {
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::uniform_int_distribution<int> pick(0, 40);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    const int p = specials ? pick(rng) : 40;
    x = p == 0 ? -0.0 : p == 1 ? std::numeric_limits<double>::infinity() : p == 2 ? std::nan("") : u(rng);
  }
  return v;
}

template <class S>
Payload<S> convert(const Payload<double>& p) {
  return convert_payload<S>(p, [](double v) { return S{v}; });
}

// Node `id` of m under F64Context (tiled) and BoxedContext (plain), compared bit for bit.
void expect_same(const Model& m, int64_t id, const std::vector<std::vector<double>>& inputs) {
  const Node& n = m.graph.nodes[static_cast<size_t>(id)];
  std::vector<Tensor<double>> xd;
  std::vector<Tensor<Boxed>> xb;
  for (size_t k = 0; k < n.parents.size(); ++k) {
    const Shape& s = m.graph.nodes[static_cast<size_t>(n.parents[k])].out_shape;
    xd.emplace_back(s, inputs[k]);
    std::vector<Boxed> b;
    for (double v : inputs[k]) b.push_back({v});
    xb.emplace_back(s, std::move(b));
  }
  std::vector<const Tensor<double>*> pd;
  std::vector<const Tensor<Boxed>*> pb;
  for (size_t k = 0; k < xd.size(); ++k) {
    pd.push_back(&xd[k]);
    pb.push_back(&xb[k]);
  }
  const EvalOptions options;
  const Payload<double> payload_d = m.payload;
  const Payload<Boxed> payload_b = convert<Boxed>(m.payload);
  const rules::EvalArgs<double> ad{n, pd, payload_d, n.out_shape, nullptr, options};
  const rules::EvalArgs<Boxed> ab{n, pb, payload_b, n.out_shape, nullptr, options};
  F64Context fc;
  BoxedContext bc;
  Result<Tensor<double>> tiled = error_status("not run");
  Result<Tensor<Boxed>> plain = error_status("not run");
  if (n.op == Op::Linear) {
    tiled = rules::eval_Linear(fc, ad);
    plain = rules::eval_Linear(bc, ab);
  } else if (n.op == Op::Matmul) {
    tiled = rules::eval_Matmul(fc, ad);
    plain = rules::eval_Matmul(bc, ab);
  } else {
    tiled = rules::eval_Conv(fc, ad);
    plain = rules::eval_Conv(bc, ab);
  }
  ASSERT_TRUE(tiled.ok()) << tiled.message();
  ASSERT_TRUE(plain.ok()) << plain.message();
  ASSERT_EQ(tiled->shape, plain->shape);
  ASSERT_EQ(tiled->data.size(), plain->data.size());
  for (size_t i = 0; i < tiled->data.size(); ++i) {
    if (std::isnan(tiled->data[i]) && std::isnan(plain->data[i].v)) continue;  // the sign of a NaN: see the top
    ASSERT_EQ(std::bit_cast<uint64_t>(tiled->data[i]), std::bit_cast<uint64_t>(plain->data[i].v))
        << summary(n) << " at flat index " << i << ": " << tiled->data[i] << " vs " << plain->data[i].v;
  }
}

TEST(NativeFold, LinearEqualsThePlainFold) {
  std::mt19937 rng(11);
  for (int64_t lead : {1, 2, 3, 5})
    for (int64_t in : {0, 1, 7, 33})
      for (int64_t out : {1, 3, 4, 9, 17})
        for (bool specials : {false, true}) {
          GraphBuilder b;
          const int64_t x = b.input({lead, in});
          const int64_t y = b.linear(x, out, values(rng, out * in, specials), values(rng, out, specials));
          auto m = b.build({y});
          ASSERT_TRUE(m.ok()) << m.message();
          expect_same(*m, y, {values(rng, lead * in, specials)});
        }
}

TEST(NativeFold, MatmulEqualsThePlainFold) {
  std::mt19937 rng(12);
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{1, 5}, {5, 9}}, {{3, 4}, {4, 17}}, {{2, 3, 8}, {8, 8}}, {{2, 1, 2, 6}, {3, 6, 11}}, {{7}, {7, 3}}, {{4, 0}, {0, 9}}};
  for (const auto& [sa, sb] : cases)
    for (bool specials : {false, true}) {
      GraphBuilder b;
      const int64_t x = b.input(sa);
      const int64_t w = b.input(sb);
      const int64_t y = b.binary(Op::Matmul, x, w);
      auto m = b.build({y});
      ASSERT_TRUE(m.ok()) << m.message();
      expect_same(*m, y, {values(rng, numel(sa), specials), values(rng, numel(sb), specials)});
    }
}

TEST(NativeFold, ConvEqualsThePlainFold) {
  std::mt19937 rng(13);
  struct Case {
    int64_t cin, cout, groups, k, stride, pad, dilation;
  };
  for (const Case& c : std::vector<Case>{{1, 1, 1, 3, 1, 0, 1}, {3, 8, 1, 3, 1, 1, 1}, {4, 6, 2, 3, 2, 1, 1},
                                         {6, 9, 3, 2, 1, 0, 2}, {2, 5, 1, 1, 1, 0, 1}, {4, 12, 4, 3, 1, 2, 1}})
    for (bool specials : {false, true}) {
      ConvConfig cfg;
      cfg.window.spatial_rank = 2;
      cfg.window.kernel = {c.k, c.k};
      cfg.window.stride = {c.stride, c.stride};
      cfg.window.padding = {c.pad, c.pad};
      cfg.dilation = {c.dilation, c.dilation};
      cfg.groups = c.groups;
      cfg.channel_axis = 1;
      cfg.in_channels = c.cin;
      cfg.out_channels = c.cout;
      GraphBuilder b;
      const Shape xs{2, c.cin, 7, 6};
      const int64_t x = b.input(xs);
      const int64_t y = b.conv(x, cfg, values(rng, c.cout * (c.cin / c.groups) * c.k * c.k, specials),
                               values(rng, c.cout, specials));
      auto m = b.build({y});
      ASSERT_TRUE(m.ok()) << m.message();
      expect_same(*m, y, {values(rng, numel(xs), specials)});
    }
}

}  // namespace
}  // namespace denote
