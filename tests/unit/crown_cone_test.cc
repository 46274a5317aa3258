// Intermediate bounds only in the final rows' cone (src/bounds/crown_strategy.cc restrict_to_cone): a
// spec that reads a few cells of a large convolutional output (a detection head) gets the same bounds
// as when every element of every relu input has its intermediate rows, from fewer rows, and they
// contain the f64 and f32 evaluations at random points of the box.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/program/builder.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

ConvConfig conv3(int64_t cin, int64_t cout) {
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
  c.channel_axis = 1;
  c.in_channels = cin;
  c.out_channels = cout;
  return c;
}

// [1, 3, 14, 14] -> conv 3x3 (4) -> relu -> conv 3x3 (4) -> relu -> conv 3x3 (3): a 588-element map,
// no dense layer, so a cell reads a 7x7 window of the input.
Model head_net() {
  GraphBuilder b;
  int64_t x = b.input(Shape{1, 3, 14, 14});
  uint64_t seed = 31;
  const int64_t widths[] = {3, 4, 4, 3};
  for (int i = 0; i < 3; ++i) {
    const int64_t cin = widths[i], cout = widths[i + 1];
    x = b.conv(x, conv3(cin, cout), lcg_values(cout * cin * 9, seed, 0.5), lcg_values(cout, seed + 1, 0.2));
    seed += 2;
    if (i < 2) x = b.unary(Op::Relu, x);
  }
  auto m = b.build({x});
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(*m);
}

// Two rows reading output cells (channel 0 and 2 at row 7, column 6); with `every`, a third row with a
// small coefficient on every output element (then the rows read all of it: no cone).
SpecMatrix cells(int64_t m, bool every) {
  SpecMatrix s{every ? 3 : 2, m, std::vector<double>(static_cast<size_t>((every ? 3 : 2) * m), 0.0)};
  s.c[static_cast<size_t>(0 * 196 + 7 * 14 + 6)] = 1;
  s.c[static_cast<size_t>(m + 2 * 196 + 7 * 14 + 6)] = -1;
  if (every)
    for (int64_t j = 0; j < m; ++j) s.c[static_cast<size_t>(2 * m + j)] = 1e-3;
  return s;
}

TEST(CrownCone, FewCellsOfALargeOutputGetTheFullBoundsFromFewerRows) {
  const Model m = head_net();
  const int64_t out = m.output_ids[0], n_out = 3 * 14 * 14;
  const std::vector<double> centre = lcg_values(3 * 14 * 14, 5, 1.0);
  DoubleBox box{Shape{1, 3, 14, 14}, {}, {}};
  for (double v : centre) box.lo.push_back(v - 0.15), box.hi.push_back(v + 0.15);
  const std::vector<DoubleBox> in = {box};
  for (const char* arith : {"f64", "f32"}) {
    for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
      CrownOptions o;
      o.arith = *parse_arith_name(arith);
      o.method = method;
      o.alpha_iters = 5;
      const SpecMatrix few = cells(n_out, false), all = cells(n_out, true);
      auto a = run_crown(m.graph, m.payload, in, out, &few, o);
      auto b = run_crown(m.graph, m.payload, in, out, &all, o);
      ASSERT_TRUE(a.ok() && b.ok()) << a.status().message() << b.status().message();
      EXPECT_LT(a->rows, b->rows * 3 / 4) << arith << ": the cone's intermediate rows are fewer";
      for (size_t r = 0; r < 2; ++r) {
        const double tol = 1e-9 * (1 + std::fabs(b->spec_lo[r]));
        EXPECT_NEAR(a->spec_lo[r], b->spec_lo[r], tol) << arith << " row " << r;
        EXPECT_NEAR(a->spec_hi[r], b->spec_hi[r], 1e-9 * (1 + std::fabs(b->spec_hi[r]))) << arith << " row " << r;
      }
      for (int t = 0; t < 40; ++t) {  // the evaluation at random points of the box lies inside
        std::vector<double> x = lcg_values(numel(box.shape), static_cast<uint64_t>(t) + 900, 1.0);
        for (size_t i = 0; i < x.size(); ++i) x[i] = centre[i] + 0.15 * x[i];
        const std::vector<double> y = evaluate_at(m, box.shape, x, std::string(arith) == "f32");
        ASSERT_EQ(static_cast<int64_t>(y.size()), n_out);
        for (int64_t r = 0; r < 2; ++r) {
          double v = 0;
          for (int64_t j = 0; j < n_out; ++j) v += few.c[static_cast<size_t>(r * n_out + j)] * y[static_cast<size_t>(j)];
          EXPECT_LE(a->spec_lo[static_cast<size_t>(r)], v) << arith << " row " << r << " point " << t;
          EXPECT_GE(a->spec_hi[static_cast<size_t>(r)], v) << arith << " row " << r << " point " << t;
        }
      }
    }
  }
}

}  // namespace
}  // namespace denote
