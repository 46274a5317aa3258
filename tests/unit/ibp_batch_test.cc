// IBP of a batch of samples as one pass (run_ibp_batch, include/denote/bounds/ibp.h) and the conv
// and storage-only steps of the double-array pass (src/bounds/ibp_boxes.h): a dense network's batch gives every
// sample's boxes of its own run_ibp_double call bit for bit, a CNN's within the order of the conv
// sums (both enclose the f64 and f32 evaluations at sampled points), a graph the pass does not have
// goes sample by sample with the same results, and the errors name the sample, node or input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/native.h"
#include "unit/conv2d_config.h"
#include "unit/lcg_values.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) {
  return lcg_values(n, seed * 0x9e3779b97f4a7c15ull + 7, scale);
}
std::vector<double> f32_values(int64_t n, uint64_t seed, double scale = 0.5) {
  std::vector<double> v = values(n, seed, scale);
  for (double& x : v) x = static_cast<double>(static_cast<float>(x));
  return v;
}

// (input - const) -> linear 6->9 -> relu -> linear 9->4, or with `tanh` a tanh at the end (not in the pass).
Model dense_model(bool tanh) {
  GraphBuilder b;
  const int64_t x = b.input({1, 6});
  int64_t h = b.binary(Op::Sub, x, b.constant({1, 6}, f32_values(6, 1)));
  h = b.add(Op::Relu, {b.linear(h, 9, f32_values(54, 2), f32_values(9, 3))}, {}, Shape{1, 9});
  h = b.linear(h, 4, f32_values(36, 4), f32_values(4, 5));
  if (tanh) h = b.add(Op::Tanh, {h}, {}, Shape{1, 4});
  auto m = b.build({h});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

// A channels-last input permuted to NCHW, conv(2->3, k3, s2, p1) -> relu -> conv(3->4, k2) -> relu, that
// and its transpose concatenated along the channels, reshape -> linear 72->5.
Model conv_model() {
  const auto conv = conv2d_config;
  GraphBuilder b;
  const int64_t in = b.input({1, 8, 8, 2});
  const int64_t x = b.add(Op::Permute, {in}, PermAttrs{{0, 3, 1, 2}}, Shape{1, 2, 8, 8});
  int64_t h = b.conv(x, conv(2, 3, 3, 2, 1), f32_values(54, 11), f32_values(3, 12, 0.2));
  h = b.add(Op::Relu, {h}, {}, Shape{1, 3, 4, 4});
  h = b.conv(h, conv(3, 4, 2, 1, 0), f32_values(48, 13), f32_values(4, 14, 0.2));
  h = b.add(Op::Relu, {h}, {}, Shape{1, 4, 3, 3});
  const int64_t t = b.add(Op::Transpose, {h}, TransposeAttrs{2, 3}, Shape{1, 4, 3, 3});
  h = b.add(Op::Concat, {h, t}, AxisAttrs{1}, Shape{1, 8, 3, 3});
  h = b.add(Op::Reshape, {h}, ReshapeAttrs{{1, 8, 3, 3}, {1, 72}}, Shape{1, 72});
  h = b.linear(h, 5, f32_values(360, 15), f32_values(5, 16));
  auto m = b.build({h});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

std::vector<DoubleBox> samples(const Shape& in, int n, double eps) {
  std::vector<DoubleBox> out;
  for (int s = 0; s < n; ++s) {
    const std::vector<double> c = values(numel(in), 100 + static_cast<uint64_t>(s), 1.0);
    DoubleBox b{in, {}, {}};
    for (size_t i = 0; i < c.size(); ++i) {  // every fourth element a point
      const double e = i % 4 == 3 ? 0.0 : eps * static_cast<double>(s + 1);
      b.lo.push_back(c[i] - e), b.hi.push_back(c[i] + e);
    }
    out.push_back(std::move(b));
  }
  return out;
}

// Every node on the way, and the output: the batch's box of each sample against its own call's.
void expect_batch_equals_singles(const Model& m, const std::string& arith, double rel) {
  SCOPED_TRACE(arith);
  auto prep = IbpPrepared::prepare(m.graph, m.payload, arith);
  ASSERT_TRUE(prep.ok()) << prep.message();
  const std::vector<DoubleBox> xs = samples(m.graph.nodes[0].out_shape, 5, 0.05);
  for (int64_t node = 1; node < static_cast<int64_t>(m.graph.nodes.size()); ++node) {
    auto batch = run_ibp_batch(*prep, xs, node);
    ASSERT_TRUE(batch.ok()) << batch.message();
    ASSERT_EQ(batch->size(), xs.size());
    for (size_t s = 0; s < xs.size(); ++s) {
      auto one = run_ibp_double(*prep, std::span<const DoubleBox>(&xs[s], 1));
      ASSERT_TRUE(one.ok());
      const auto& want = one->boxes[static_cast<size_t>(node)];
      const auto& got = (*batch)[s];
      ASSERT_EQ(want.has_value(), got.has_value()) << "node " << node << " sample " << s;
      if (!want) continue;
      ASSERT_EQ(got->shape, want->shape);
      for (size_t j = 0; j < want->lo.size(); ++j) {
        const double tol = rel * (std::fabs(want->lo[j]) + std::fabs(want->hi[j]));
        EXPECT_NEAR(got->lo[j], want->lo[j], tol) << "node " << node << " sample " << s << " elem " << j;
        EXPECT_NEAR(got->hi[j], want->hi[j], tol) << "node " << node << " sample " << s << " elem " << j;
      }
    }
  }
}

TEST(IbpBatch, DenseBatchEqualsEachSamplesOwnCallBitForBit) {
  const Model m = dense_model(false);
  for (const char* arith : {"f32", "f64"}) {
    auto prep = IbpPrepared::prepare(m.graph, m.payload, arith);
    ASSERT_TRUE(prep.ok());
    EXPECT_TRUE(prep->array_pass());
    expect_batch_equals_singles(m, arith, 0.0);
  }
}

TEST(IbpBatch, GraphsOutsideThePassGoSampleBySample) {
  const Model m = dense_model(true);
  auto prep = IbpPrepared::prepare(m.graph, m.payload, "f32");
  ASSERT_TRUE(prep.ok());
  EXPECT_FALSE(prep->array_pass());
  expect_batch_equals_singles(m, "f32", 0.0);
}

// The conv sums run as one product over the batch (BLAS may order them by the column count): equal
// up to that order; and every sample's output box holds the evaluation at its corners and random points.
TEST(IbpBatch, ConvBatchMatchesEachSampleAndHoldsTheEvaluations) {
  const Model m = conv_model();
  for (const char* arith : {"f32", "f64"}) {
    auto prep = IbpPrepared::prepare(m.graph, m.payload, arith);
    ASSERT_TRUE(prep.ok());
    EXPECT_TRUE(prep->array_pass()) << "conv nodes with point weights are in the double-array pass";
    expect_batch_equals_singles(m, arith, 1e-12);
  }
  const int64_t out = m.output_ids[0];
  const std::vector<DoubleBox> xs = samples(m.graph.nodes[0].out_shape, 4, 0.05);
  const Payload<float> pf = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  for (const bool f32 : {true, false}) {
    auto prep = IbpPrepared::prepare(m.graph, m.payload, f32 ? "f32" : "f64");
    auto batch = run_ibp_batch(*prep, xs, out);
    ASSERT_TRUE(batch.ok());
    for (size_t s = 0; s < xs.size(); ++s) {
      const DoubleBox& box = *(*batch)[s];
      for (int t = 0; t < 12; ++t) {
        std::vector<double> x = values(numel(xs[s].shape), 500 + static_cast<uint64_t>(t), 1.0);
        for (size_t i = 0; i < x.size(); ++i)
          x[i] = t < 2 ? (t == 0 ? xs[s].lo[i] : xs[s].hi[i])
                       : xs[s].lo[i] + (x[i] + 1) / 2 * (xs[s].hi[i] - xs[s].lo[i]);
        std::vector<double> y;
        if (f32) {
          std::vector<Tensor<float>> xf = {Tensor<float>(xs[s].shape, std::vector<float>(x.begin(), x.end()))};
          F32Context ctx;
          auto v = denote(m.graph, pf, std::span<const Tensor<float>>(xf), out, ctx);
          ASSERT_TRUE(v.ok());
          y.assign(v->data.begin(), v->data.end());
        } else {
          std::vector<Tensor<double>> xd = {Tensor<double>(xs[s].shape, x)};
          F64Context ctx;
          auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xd), out, ctx);
          ASSERT_TRUE(v.ok());
          y = v->data;
        }
        for (size_t o = 0; o < y.size(); ++o) {
          ASSERT_GE(y[o], box.lo[o]) << "sample " << s << " point " << t;
          ASSERT_LE(y[o], box.hi[o]) << "sample " << s << " point " << t;
        }
      }
    }
  }
}

// The conv, permute, transpose and concat steps of the double-array pass against the interval tensors
// (the same graph with a tanh after the output runs on them, its conv on the same prepared plan): the
// same boxes to the bit.
TEST(IbpBatch, ConvStepOfTheArrayPassEqualsTheIntervalTensors) {
  const Model m = conv_model();
  Graph h = m.graph;
  Node t;
  t.id = static_cast<int64_t>(h.nodes.size());
  t.parents = {m.output_ids[0]};
  t.op = Op::Tanh;
  t.out_shape = h.nodes.back().out_shape;
  h.nodes.push_back(t);
  const DoubleBox box = samples(m.graph.nodes[0].out_shape, 1, 0.1)[0];
  for (const char* arith : {"f32", "f64"}) {
    auto arrays = IbpPrepared::prepare(m.graph, m.payload, arith);
    auto tensors = IbpPrepared::prepare(h, m.payload, arith);
    ASSERT_TRUE(arrays.ok() && tensors.ok());
    ASSERT_TRUE(arrays->array_pass());
    ASSERT_FALSE(tensors->array_pass());
    auto a = run_ibp_double(*arrays, std::span<const DoubleBox>(&box, 1));
    auto b = run_ibp_double(*tensors, std::span<const DoubleBox>(&box, 1));
    ASSERT_TRUE(a.ok() && b.ok());
    for (size_t id = 0; id < m.graph.nodes.size(); ++id) {
      ASSERT_TRUE(a->boxes[id] && b->boxes[id]) << arith << " node " << id;
      EXPECT_TRUE(*a->boxes[id] == *b->boxes[id]) << arith << " node " << id;
    }
  }
}

TEST(IbpBatch, ErrorsNameTheSampleNodeOrInput) {
  const Model m = dense_model(false);
  auto prep = IbpPrepared::prepare(m.graph, m.payload, "f32");
  ASSERT_TRUE(prep.ok());
  std::vector<DoubleBox> xs = samples(m.graph.nodes[0].out_shape, 3, 0.05);
  auto no_node = run_ibp_batch(*prep, xs, 99);
  ASSERT_FALSE(no_node.ok());
  EXPECT_EQ(no_node.status().field(), "node");
  std::vector<DoubleBox> crossed = xs;
  std::swap(crossed[2].lo[1], crossed[2].hi[1]);
  auto bad = run_ibp_batch(*prep, crossed, m.output_ids[0]);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("input box 2"), std::string::npos) << bad.message();
  std::vector<DoubleBox> shaped = xs;
  shaped[1].shape = Shape{6};
  auto wrong = run_ibp_batch(*prep, shaped, m.output_ids[0]);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("sample 1 has shape [6]"), std::string::npos) << wrong.message();
  auto none = run_ibp_batch(*prep, std::span<const DoubleBox>(), m.output_ids[0]);
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

}  // namespace
}  // namespace denote
