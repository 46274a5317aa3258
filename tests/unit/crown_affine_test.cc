// CROWN through the affine ops that go back through their VJP rules (src/bounds/crown_affine.cc):
// conv, avg_pool, flatten, permute, concat, batch_norm_eval, matmul with a constant operand. Each
// network's node boxes must contain sampled f64 and f32 values, be no looser than IBP's, and a
// matmul by a constant must bound exactly like the same product written as a linear node.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "unit/evaluate_at.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) { return lcg_values(n, seed, scale); }

// input [1, 2, 4, 4] -> conv 2->3 k3 pad1 -> relu -> avg_pool 2 -> permute -> flatten -> concat with
// itself -> linear 24->4 -> relu -> batch_norm -> linear 4->2.
Model conv_net() {
  GraphBuilder b;
  const int64_t x = b.input({1, 2, 4, 4});
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
  c.padding_after = {1, 1};
  c.dilation = {1, 1};
  c.channel_axis = 1;
  c.in_channels = 2;
  c.out_channels = 3;
  const int64_t cv = b.conv(x, c, values(3 * 2 * 9, 1), values(3, 2, 0.1));
  const int64_t r = b.unary(Op::Relu, cv);
  const int64_t p = b.unary(Op::AvgPool, r, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  const int64_t pe = b.unary(Op::Permute, p, PermAttrs{{0, 2, 3, 1}});
  const int64_t f = b.add(Op::Flatten, {pe}, ValueShapeAttrs{{1, 2, 2, 3}}, Shape{12});
  const int64_t cat = b.add(Op::Concat, {f, f}, AxisAttrs{0});
  const int64_t l1 = b.unary(Op::Relu, b.linear(cat, 4, values(4 * 24, 3), values(4, 4, 0.1)));
  const int64_t bn = b.unary(Op::BatchNormEval, l1, BatchNormAttrs{0, 4});
  b.model().payload.batch_norm[bn] = BatchNormRecord<double>{values(4, 5), values(4, 6), values(4, 7), {0.5, 1, 1.5, 2}, 1e-5};
  const int64_t out = b.linear(bn, 2, values(8, 8), values(2, 9, 0.1));
  auto m = b.build({out});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TEST(CrownAffine, ConvPoolLayoutNetworkContainsSamplesAndBeatsIbp) {
  const Model m = conv_net();
  const int64_t out = m.output_ids[0];
  DoubleBox box{{1, 2, 4, 4}, {}, {}};
  const std::vector<double> c = values(32, 10, 1.0);
  for (double v : c) box.lo.push_back(v - 0.1), box.hi.push_back(v + 0.1);
  std::vector<DoubleBox> in = {box};
  for (const char* arith : {"f64", "f32"}) {
    CrownOptions o;
    o.arith = *parse_arith_name(arith);
    o.method = BoundMethod::Ibp;
    auto ibp = run_crown(m.graph, m.payload, in, out, nullptr, o);
    o.method = BoundMethod::Crown;
    auto cr = run_crown(m.graph, m.payload, in, out, nullptr, o);
    o.method = BoundMethod::AlphaCrown;
    auto al = run_crown(m.graph, m.payload, in, out, nullptr, o);
    ASSERT_TRUE(ibp.ok() && cr.ok() && al.ok()) << cr.message() << al.message();
    double w_ibp = 0, w_cr = 0;
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_GE(cr->spec_lo[k], ibp->spec_lo[k]);
      EXPECT_LE(cr->spec_hi[k], ibp->spec_hi[k]);
      EXPECT_GE(al->spec_lo[k], cr->spec_lo[k]);
      EXPECT_LE(al->spec_hi[k], cr->spec_hi[k]);
      w_ibp += ibp->spec_hi[k] - ibp->spec_lo[k];
      w_cr += cr->spec_hi[k] - cr->spec_lo[k];
    }
    EXPECT_LT(w_cr, w_ibp) << "CROWN through the affine ops should be strictly tighter here";
    uint64_t s = 99;
    for (int t = 0; t < 200; ++t) {
      std::vector<double> x(32);
      for (size_t i = 0; i < 32; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        const double u = t < 2 ? t : static_cast<double>(s >> 11) * 0x1p-53;
        x[i] = box.lo[i] + u * (box.hi[i] - box.lo[i]);
      }
      std::vector<Tensor<double>> xin = {Tensor<double>({1, 2, 4, 4}, x)};
      std::vector<double> y;
      if (std::string(arith) == "f64") {
        F64Context ctx;
        auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xin), out, ctx);
        ASSERT_TRUE(v.ok());
        y = v->data;
      } else {
        F32Context ctx;
        std::vector<Tensor<float>> xf = {Tensor<float>({1, 2, 4, 4}, std::vector<float>(x.begin(), x.end()))};
        const Payload<float> pf = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
        auto v = denote(m.graph, pf, std::span<const Tensor<float>>(xf), out, ctx);
        ASSERT_TRUE(v.ok());
        y.assign(v->data.begin(), v->data.end());
      }
      for (size_t k = 0; k < 2; ++k) {
        ASSERT_GE(y[k], al->spec_lo[k]) << arith << " sample " << t;
        ASSERT_LE(y[k], al->spec_hi[k]) << arith << " sample " << t;
      }
    }
  }
}

TEST(CrownAffine, MatmulByAConstantBoundsLikeTheLinearNode) {
  const std::vector<double> B = values(3 * 4, 21), W2 = values(2 * 4, 22);
  std::vector<double> Bt(12);  // linear weight [out = 4, in = 3] = B^T
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) Bt[static_cast<size_t>(j * 3 + i)] = B[static_cast<size_t>(i * 4 + j)];
  GraphBuilder a;
  const int64_t xa = a.input({2, 3});
  const int64_t ma = a.unary(Op::Relu, a.binary(Op::Matmul, xa, a.constant({3, 4}, B)));
  const int64_t oa = a.binary(Op::Matmul, ma, a.constant({4, 2}, W2));
  GraphBuilder l;
  const int64_t xl = l.input({2, 3});
  const int64_t ml = l.unary(Op::Relu, l.linear(xl, 4, Bt, std::vector<double>(4, 0.0)));
  std::vector<double> W2t(8);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j) W2t[static_cast<size_t>(j * 4 + i)] = W2[static_cast<size_t>(i * 2 + j)];
  const int64_t ol = l.linear(ml, 2, W2t, std::vector<double>(2, 0.0));
  auto mm = a.build({oa});
  auto lm = l.build({ol});
  ASSERT_TRUE(mm.ok() && lm.ok()) << mm.message() << lm.message();
  DoubleBox box{{2, 3}, {}, {}};
  for (double v : values(6, 23, 1.0)) box.lo.push_back(v - 0.3), box.hi.push_back(v + 0.3);
  std::vector<DoubleBox> in = {box};
  for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
    CrownOptions o;
    o.method = method;
    auto rm = run_crown(mm->graph, mm->payload, in, oa, nullptr, o);
    auto rl = run_crown(lm->graph, lm->payload, in, ol, nullptr, o);
    ASSERT_TRUE(rm.ok() && rl.ok()) << rm.message() << rl.message();
    for (size_t k = 0; k < 4; ++k) {
      EXPECT_NEAR(rm->spec_lo[k], rl->spec_lo[k], 1e-9) << bound_method_name(method) << " row " << k;
      EXPECT_NEAR(rm->spec_hi[k], rl->spec_hi[k], 1e-9) << bound_method_name(method) << " row " << k;
    }
  }
}

// avg_pool's f32 evaluation error is bounded over its window (K + 1 terms: crown_affine.cc
// affine_fan_in): an 8x8 window of 2^24 and 63 ones sums to 2^24 in f32 (each +1 a tie to even), 63 below
// the exact sum, so the f32 output is 63/64 below the exact one; on a point box CROWN's box of the
// output must hold both. Two windows side by side (the node's input is twice the window: the old fan,
// the whole input, was larger than needed; a fan of 1 misses this value).
TEST(CrownAffine, AvgPoolErrorIsBoundedOverItsWindow) {
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 8, 16});
  const int64_t p = b.unary(Op::AvgPool, x, WindowConfig{2, {8, 8}, {8, 8}, {0, 0}});
  auto m = b.build({p});
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<double> v(128, 1.0);
  v[0] = v[8] = 0x1p24;  // the first element of each window
  const DoubleBox box{{1, 1, 8, 16}, v, v};
  CrownOptions o;
  o.arith = *parse_arith_name("f32");
  o.method = BoundMethod::Crown;
  auto r = run_crown(m->graph, m->payload, std::vector<DoubleBox>{box}, p, nullptr, o);
  ASSERT_TRUE(r.ok()) << r.message();
  const std::vector<double> y = evaluate_at(*m, box.shape, v, /*f32=*/true);
  ASSERT_EQ(y.size(), 2u);
  const double exact = (0x1p24 + 63) / 64;
  for (size_t j = 0; j < 2; ++j) {
    const double f = y[j];
    EXPECT_GT(std::fabs(f - exact), 0.5) << "the f32 evaluation rounds here";
    EXPECT_TRUE(r->spec_lo[j] <= f && f <= r->spec_hi[j]) << f << " in [" << r->spec_lo[j] << ", " << r->spec_hi[j] << "]";
    EXPECT_TRUE(r->spec_lo[j] <= exact && exact <= r->spec_hi[j]);
  }
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// max_elem / min_elem of two variable branches: relaxed through relu(x - y), not cut.
TEST(CrownAffine, MaxAndMinOfTwoBranchesContainSamples) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t p = b.linear(x, 4, values(12, 31, 1.0), values(4, 32, 0.2));
  const int64_t q = b.linear(x, 4, values(12, 33, 1.0), values(4, 34, 0.2));
  const int64_t mx = b.binary(Op::MaxElem, p, q), mn = b.binary(Op::MinElem, p, q);
  const int64_t cat = b.add(Op::Concat, {mx, mn}, AxisAttrs{0});
  const int64_t out = b.linear(cat, 2, values(16, 35, 1.0), values(2, 36, 0.1));
  auto m = b.build({out});
  ASSERT_TRUE(m.ok()) << m.message();
  DoubleBox box{{3}, {-0.4, 0.1, -0.2}, {0.3, 0.5, 0.6}};
  std::vector<DoubleBox> in = {box};
  CrownOptions o;
  o.method = BoundMethod::Ibp;
  auto ibp = run_crown(m->graph, m->payload, in, out, nullptr, o);
  o.method = BoundMethod::Crown;
  auto cr = run_crown(m->graph, m->payload, in, out, nullptr, o);
  ASSERT_TRUE(ibp.ok() && cr.ok());
  double w_ibp = 0, w_cr = 0;
  for (size_t k = 0; k < 2; ++k) {
    w_ibp += ibp->spec_hi[k] - ibp->spec_lo[k];
    w_cr += cr->spec_hi[k] - cr->spec_lo[k];
  }
  EXPECT_LT(w_cr, w_ibp);
  F64Context ctx;
  for (int t = 0; t < 2000; ++t) {
    std::vector<double> xs(3);
    const std::vector<double> u = values(3, 100 + static_cast<uint64_t>(t), 1.0);
    for (size_t i = 0; i < 3; ++i) xs[i] = box.lo[i] + (u[i] + 1) / 2 * (box.hi[i] - box.lo[i]);
    std::vector<Tensor<double>> xin = {Tensor<double>({3}, xs)};
    auto y = denote(m->graph, m->payload, std::span<const Tensor<double>>(xin), out, ctx);
    ASSERT_TRUE(y.ok());
    for (size_t k = 0; k < 2; ++k) {
      ASSERT_GE(y->data[k], cr->spec_lo[k]) << "sample " << t;
      ASSERT_LE(y->data[k], cr->spec_hi[k]) << "sample " << t;
    }
  }
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// A batch-norm whose mean and shift cancel (y = (x - 1000) / 1 * 1 + 1000 = x) on inputs near 0: its f32
// evaluation rounds x - mean at |mean| = 1000 (an error of 2^-24 * 1000 = 6e-5, far above |x| u), so the
// error bound must count |mean| and |beta|, not only |x| and the output at 0 (which is 0 here). The CROWN
// boxes of the batch-norm and of the linear layer after it hold the f32 evaluations at sampled points.
TEST(CrownAffine, BatchNormErrorCountsTheMeanAndTheShift) {
  GraphBuilder b;
  const int64_t x = b.input({1, 2});
  const int64_t bn = b.unary(Op::BatchNormEval, x, BatchNormAttrs{1, 2});
  b.payload().batch_norm[bn] = BatchNormRecord<double>{{1, -1}, {1000, -1000}, {1000, 1000}, {1, 1}, 0};
  const int64_t y = b.linear(bn, 1, {1, 1}, {0});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const DoubleBox box{{1, 2}, {-1.01e-3, -1.01e-3}, {1.01e-3, 1.01e-3}};  // f32 rounds these corners outward
  CrownOptions o;
  o.arith = *parse_arith_name("f32");
  o.method = BoundMethod::Crown;
  auto r = run_crown(m->graph, m->payload, std::vector<DoubleBox>{box}, y, nullptr, o);
  ASSERT_TRUE(r.ok()) << r.message();
  F32Context ctx;
  const Payload<float> p = convert_payload<float>(m->payload, [](double v) { return static_cast<float>(v); });
  int outside_exact = 0;
  for (int k = 0; k <= 40; ++k) {
    const float a = static_cast<float>(-1.01e-3 + 5.05e-5 * k), c = static_cast<float>(1.01e-3 - 5.05e-5 * k);
    std::vector<Tensor<float>> in = {Tensor<float>({1, 2}, {a, c})};
    auto t = denote_all(m->graph, p, std::span<const Tensor<float>>(in), ctx);
    ASSERT_TRUE(t.ok()) << t.message();
    for (int64_t id : {bn, y})
      for (size_t j = 0; j < t->at(static_cast<size_t>(id)).data.size(); ++j) {
        const double v = t->at(static_cast<size_t>(id)).data[j];
        const DoubleBox& bx = *r->boxes[static_cast<size_t>(id)];
        EXPECT_TRUE(v >= bx.lo[j] && v <= bx.hi[j]) << "node " << id << " element " << j << " value " << v << " box ["
                                                    << bx.lo[j] << ", " << bx.hi[j] << "]";
      }
    // The f32 batch-norm is off the exact x there: the test exercises the rounding it is about.
    outside_exact += t->at(static_cast<size_t>(bn)).data[0] != a;
  }
  EXPECT_GT(outside_exact, 10);
}

}  // namespace
}  // namespace denote
