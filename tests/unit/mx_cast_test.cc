// The mx_cast op (OCP MX quantize-dequantize in the IR, include/denote/ir/ops.def): its value in the
// f64, f32 and bfloat16 contexts is mx_dequantize(mx_quantize(x)) of include/denote/tensor/mx.h for every
// format, along either axis and on a scalar; IBP's boxes (src/bounds/ibp_mx.cc) hold the value at
// corners and random points of random boxes and are the exact value on a point box; a block whose
// exponent can take too many values gets no box; the derivative is straight-through.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/autodiff/grad.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/arith.h"
#include "denote/tensor/mx.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

const std::vector<std::string> kFormats = {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1",
                                           "mxint8"};

Model mx_model(const Shape& in, const MxCastAttrs& a) {
  GraphBuilder b;
  const int64_t x = b.input(in);
  auto m = b.build({b.add(Op::MxCast, {x}, a, in)});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

// Values of several magnitudes, some exactly 0, some large enough to saturate nothing (MX scales adapt).
std::vector<double> spread(int64_t n, uint64_t seed) {
  std::vector<double> v = lcg_values(n, seed, 1.0);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 7 == 3 ? 0.0 : std::ldexp(v[i], static_cast<int>(i % 9) - 4);
  return v;
}

std::vector<double> reference(const std::string& format, const Tensor<double>& x, int64_t axis, int64_t block) {
  auto f = parse_mx_format(format);
  Tensor<double> t = x;
  if (t.shape.empty()) t.shape = Shape{1};
  auto q = mx_quantize(*f, t, x.shape.empty() ? 0 : axis, block);
  EXPECT_TRUE(q.ok()) << q.message();
  auto y = mx_dequantize(q->q);
  EXPECT_TRUE(y.ok());
  return y->data;
}

TEST(MxCast, ValueIsTheMxRoundTripInEveryContext) {
  for (const std::string& format : kFormats)
    for (const auto& [shape, axis, block] :
         {std::tuple{Shape{3, 40}, int64_t{-1}, int64_t{32}}, std::tuple{Shape{5, 3}, int64_t{0}, int64_t{2}},
          std::tuple{Shape{}, int64_t{0}, int64_t{4}}}) {
      SCOPED_TRACE(format + " " + to_string(shape));
      const Model m = mx_model(shape, MxCastAttrs{format, block, axis});
      const Tensor<double> x(shape, spread(numel(shape), 5));
      const std::vector<double> want = reference(format, x, axis, block);
      F64Context c64;
      auto y64 = denote(m.graph, m.payload, std::span<const Tensor<double>>(&x, 1), m.output_ids[0], c64);
      ASSERT_TRUE(y64.ok()) << y64.message();
      EXPECT_EQ(y64->data, want);
      // f32: the inputs rounded to binary32 first (the f32 evaluation's input).
      Tensor<float> xf(shape, std::vector<float>(x.data.begin(), x.data.end()));
      const Payload<float> pf = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
      F32Context c32;
      auto y32 = denote(m.graph, pf, std::span<const Tensor<float>>(&xf, 1), m.output_ids[0], c32);
      ASSERT_TRUE(y32.ok());
      const Tensor<double> x32(shape, std::vector<double>(xf.data.begin(), xf.data.end()));
      const std::vector<double> want32 = reference(format, x32, axis, block);
      for (size_t i = 0; i < want32.size(); ++i) EXPECT_EQ(static_cast<double>(y32->data[i]), want32[i]) << i;
    }
}

TEST(MxCast, BfloatContextGivesTheSameExactValues) {
  const Model m = mx_model(Shape{2, 8}, MxCastAttrs{"mxfp8_e4m3", 4, -1});
  auto spec = parse_arith_name("bfloat16");
  ASSERT_TRUE(spec.ok());
  std::vector<double> v = spread(16, 9);
  for (double& e : v) e = static_cast<double>(static_cast<float>(e));  // exact below: bfloat16 inputs next
  BinaryContext ctx(spec->format, spec->rounding);
  std::vector<FpWord> words;
  for (double e : v) words.push_back(ctx.from_double(e));
  std::vector<double> xs;
  for (const FpWord& w : words) xs.push_back(ctx.to_double(w));
  const Payload<FpWord> pw = convert_payload<FpWord>(m.payload, [&](double d) { return ctx.from_double(d); });
  Tensor<FpWord> xw(Shape{2, 8}, words);
  ctx.clear_flags();
  auto y = denote(m.graph, pw, std::span<const Tensor<FpWord>>(&xw, 1), m.output_ids[0], ctx);
  ASSERT_TRUE(y.ok()) << y.message();
  EXPECT_TRUE(ctx.flags() & kFpInexact) << "the E4M3 conversion rounds these values";
  // Values E4M3 holds exactly: no flag.
  const std::vector<double> exact = {1, 0.5, -2, 0.25, 1.5, -1, 0, 3, 1, 2, 4, -0.5, 1.75, 0.125, -3, 2};
  std::vector<FpWord> ew;
  for (double e : exact) ew.push_back(ctx.from_double(e));
  Tensor<FpWord> xe(Shape{2, 8}, ew);
  ctx.clear_flags();
  ASSERT_TRUE(denote(m.graph, pw, std::span<const Tensor<FpWord>>(&xe, 1), m.output_ids[0], ctx).ok());
  EXPECT_EQ(ctx.flags(), 0u);
  const std::vector<double> want = reference("mxfp8_e4m3", Tensor<double>(Shape{2, 8}, xs), -1, 4);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(ctx.to_double(y->data[i]), want[i]) << i;
}

TEST(MxCast, IbpBoxesHoldTheValueAndArePointsOnPoints) {
  for (const std::string& format : kFormats) {
    SCOPED_TRACE(format);
    const Shape shape{4, 12};
    const Model m = mx_model(shape, MxCastAttrs{format, 5, -1});
    const std::vector<double> c = spread(48, 11);
    for (const char* arith : {"f64", "f32"}) {
      DoubleBox point{shape, c, c};
      for (double& e : point.lo) e = static_cast<double>(static_cast<float>(e));
      point.hi = point.lo;
      auto p = run_ibp_double(m.graph, m.payload, std::span<const DoubleBox>(&point, 1), arith);
      ASSERT_TRUE(p.ok()) << p.message();
      const DoubleBox& pb = *p->boxes[1];
      EXPECT_EQ(pb.lo, pb.hi) << arith;
      EXPECT_EQ(pb.lo, reference(format, Tensor<double>(shape, point.lo), -1, 5)) << arith;
      DoubleBox box{shape, c, c};
      for (size_t i = 0; i < c.size(); ++i) {
        const double r = std::fabs(c[i]) * (i % 3 == 0 ? 0.3 : 0.02) + (i % 5 == 0 ? 0.01 : 0.0);
        box.lo[i] -= r, box.hi[i] += r;
      }
      auto ib = run_ibp_double(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), arith);
      ASSERT_TRUE(ib.ok() && ib->boxes[1]) << ib.message();
      const DoubleBox& b = *ib->boxes[1];
      std::vector<double> u = lcg_values(48 * 40, 17, 1.0);
      for (int t = 0; t < 40; ++t) {
        std::vector<double> x(48);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = t == 0 ? box.lo[i] : t == 1 ? box.hi[i] : box.lo[i] + (u[t * 48 + i] + 1) / 2 * (box.hi[i] - box.lo[i]);
        const std::vector<double> y = reference(format, Tensor<double>(shape, x), -1, 5);
        for (size_t i = 0; i < y.size(); ++i) {
          ASSERT_LE(b.lo[i], y[i]) << arith << " point " << t << " elem " << i;
          ASSERT_GE(b.hi[i], y[i]) << arith << " point " << t << " elem " << i;
        }
      }
    }
  }
}

TEST(MxCast, ABlockOfTooManyExponentsHasNoBox) {
  const Model m = mx_model(Shape{4}, MxCastAttrs{"mxfp8_e4m3", 4, 0});
  DoubleBox box{Shape{4}, {-1e-30, 0.5, 0.5, 0.5}, {1e30, 0.6, 0.6, 0.6}};
  auto r = run_ibp_double(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), "f64");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->boxes[1].has_value());
  EXPECT_NE(r->notes[1].find("shared exponent ranges over"), std::string::npos) << r->notes[1];
}

TEST(MxCast, DerivativeIsStraightThrough) {
  GraphBuilder b;
  const int64_t x = b.input({1, 6});
  const int64_t q = b.add(Op::MxCast, {x}, MxCastAttrs{"mxfp4_e2m1", 3, -1}, Shape{1, 6});
  const std::vector<double> w = lcg_values(12, 3, 1.0);
  auto m = b.build({b.linear(q, 2, w, {0.0, 0.0})});
  ASSERT_TRUE(m.ok());
  const Tensor<double> xin(Shape{1, 6}, spread(6, 2));
  F64Context ctx;
  const Tensor<double> cot(Shape{1, 2}, {1.0, -2.0});
  auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(&xin, 1), m->output_ids[0], &cot, ctx);
  ASSERT_TRUE(g.ok()) << g.message();
  for (int64_t i = 0; i < 6; ++i) EXPECT_DOUBLE_EQ(g->inputs[0].data[static_cast<size_t>(i)], w[i] - 2 * w[6 + i]);
}

}  // namespace
}  // namespace denote
