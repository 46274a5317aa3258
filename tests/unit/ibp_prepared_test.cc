// IbpPrepared / CrownOptions::ibp (include/denote/bounds/ibp.h, crown.h): the
// prepared boxes are sound at sampled f32 evaluations of mnistfc and ACAS Xu, agree with the
// interval rule's, and a model prepared for something else is refused.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "bounds/crown_state.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/ir/model.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "denote/scalar/native.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

struct Net {
  const char* path;
  double eps;
};

Model load(const std::string& rel) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

const char* kMnist = "tests/data/mnistfc/mnist-net_256x2.onnx";
const char* kAcas = "tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx";

// The box x +- eps around a random x in [0, 1]^n.
DoubleBox box_of(const Model& m, uint64_t seed, double eps) {
  const Shape s = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  DoubleBox b{s, {}, {}};
  for (int64_t i = 0; i < numel(s); ++i) {
    const double x = u(rng);
    b.lo.push_back(x - eps);
    b.hi.push_back(x + eps);
  }
  return b;
}

TEST(IbpPrepared, BoxesContainF32EvaluationsAndMatchTheIntervalRule) {
  for (const Net& net : {Net{kMnist, 0.03}, Net{kAcas, 0.05}}) {
    SCOPED_TRACE(net.path);
    const Model m = load(net.path);
    if (m.graph.nodes.empty()) continue;
    auto prep = IbpPrepared::prepare(m.graph, m.payload, "f32");
    ASSERT_TRUE(prep.ok()) << prep.message();
    EXPECT_GE(prep->dense_linear_nodes(), 3);
    const Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
    std::mt19937_64 rng(7);
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      const DoubleBox box = box_of(m, seed, net.eps);
      auto fast = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
      ASSERT_TRUE(fast.ok()) << fast.message();
      // The interval rule alone: run_ibp over f32 endpoints, no dense path.
      std::vector<Interval<float>> iv;
      for (size_t i = 0; i < box.lo.size(); ++i)
        iv.push_back(Interval<float>{std::nextafter(static_cast<float>(box.lo[i]), -INFINITY),
                                     std::nextafter(static_cast<float>(box.hi[i]), INFINITY)});
      const auto pi = convert_payload<Interval<float>>(m.payload, [](double v) {
        const float f = static_cast<float>(v);
        return Interval<float>{f, f};
      });
      IntervalContext<NativeEndpoints<float>> ctx;
      const std::vector<Tensor<Interval<float>>> in = {Tensor<Interval<float>>(box.shape, iv)};
      auto slow = run_ibp(m.graph, pi, std::span<const Tensor<Interval<float>>>(in), ctx);
      ASSERT_TRUE(slow.ok()) << slow.message();
      const int64_t out = m.output_ids[0];
      const auto& fb = fast->boxes[static_cast<size_t>(out)];
      const auto& sb = slow->boxes[static_cast<size_t>(out)];
      ASSERT_TRUE(fb && sb);
      ASSERT_EQ(fb->lo.size(), sb->data.size());
      for (size_t j = 0; j < fb->lo.size(); ++j) {  // the same sums in another order: equal to ~f32 ulps
        const double lo = sb->data[j].lo, hi = sb->data[j].hi, tol = 1e-5 * (1 + std::fabs(lo) + std::fabs(hi));
        EXPECT_NEAR(fb->lo[j], lo, tol) << "elem " << j;
        EXPECT_NEAR(fb->hi[j], hi, tol) << "elem " << j;
      }
      // Sampled points, evaluated in f32, lie in every node's prepared box.
      std::uniform_real_distribution<double> t(0, 1);
      for (int k = 0; k < 20; ++k) {
        std::vector<float> x;
        for (size_t i = 0; i < box.lo.size(); ++i)
          x.push_back(static_cast<float>(box.lo[i] + t(rng) * (box.hi[i] - box.lo[i])));
        F32Context f;
        const std::vector<Tensor<float>> xin = {Tensor<float>(box.shape, x)};
        auto vals = denote_all(m.graph, p32, std::span<const Tensor<float>>(xin), f);
        ASSERT_TRUE(vals.ok()) << vals.message();
        for (size_t id = 0; id < m.graph.nodes.size(); ++id) {
          const auto& b = fast->boxes[id];
          if (!b) continue;
          const auto& v = (*vals)[id];
          for (size_t j = 0; j < v.data.size(); ++j) {
            ASSERT_LE(b->lo[j], v.data[j]) << "node " << id << " elem " << j;
            ASSERT_GE(b->hi[j], v.data[j]) << "node " << id << " elem " << j;
          }
        }
      }
    }
  }
}

// The double-array pass (src/bounds/ibp_boxes.h) against the interval tensors with the same dense
// products: the graph with one more node the pass does not have (tanh of the output) runs on the
// interval tensors, and every other node's box is the same to the bit, in f32 and f64, also when
// the boxes are not finite (the pass hands over to the tensors) and for an input box that is
// refused.
Graph with_tanh(const Graph& g, int64_t out) {
  Graph h = g;
  Node t;
  t.id = static_cast<int64_t>(h.nodes.size());
  t.parents = {out};
  t.op = Op::Tanh;
  t.out_shape = g.nodes[static_cast<size_t>(out)].out_shape;
  h.nodes.push_back(t);
  return h;
}

void expect_same_boxes(const Model& m, const std::string& arith, const DoubleBox& box) {
  SCOPED_TRACE(arith);
  const Graph h = with_tanh(m.graph, m.output_ids[0]);
  auto arrays = IbpPrepared::prepare(m.graph, m.payload, arith);
  auto tensors = IbpPrepared::prepare(h, m.payload, arith);
  ASSERT_TRUE(arrays.ok() && tensors.ok());
  EXPECT_TRUE(arrays->array_pass());
  EXPECT_FALSE(tensors->array_pass());
  auto a = run_ibp_double(*arrays, std::span<const DoubleBox>(&box, 1));
  auto t = run_ibp_double(*tensors, std::span<const DoubleBox>(&box, 1));
  ASSERT_EQ(a.ok(), t.ok());
  if (!a.ok()) {
    EXPECT_EQ(a.message(), t.message());
    return;
  }
  for (size_t id = 0; id < m.graph.nodes.size(); ++id) {
    ASSERT_EQ(a->boxes[id].has_value(), t->boxes[id].has_value()) << "node " << id;
    EXPECT_EQ(a->notes[id], t->notes[id]) << "node " << id;
    if (a->boxes[id]) EXPECT_TRUE(*a->boxes[id] == *t->boxes[id]) << "node " << id;
  }
}

TEST(IbpPrepared, DoubleArrayPassEqualsTheIntervalTensorsBitForBit) {
  for (const Net& net : {Net{kMnist, 0.03}, Net{kAcas, 0.05}}) {
    SCOPED_TRACE(net.path);
    const Model m = load(net.path);
    ASSERT_FALSE(m.graph.nodes.empty());
    for (uint64_t seed = 11; seed <= 13; ++seed)
      for (const char* arith : {"f32", "f64"}) expect_same_boxes(m, arith, box_of(m, seed, net.eps));
    DoubleBox huge = box_of(m, 14, net.eps);  // beyond f32's range: not finite after the first layer
    huge.lo[0] = -1e300, huge.hi[0] = 1e300;
    for (const char* arith : {"f32", "f64"}) expect_same_boxes(m, arith, huge);
    DoubleBox crossed = box_of(m, 15, net.eps);  // refused with the same message
    std::swap(crossed.lo[1], crossed.hi[1]);
    expect_same_boxes(m, "f32", crossed);
  }
}

// Random MLPs with every op the double-array pass has: an input behind reshape and flatten, a
// normalisation (input - const, then const + x, / const, * and - a one-element const behind
// broadcast_to), detach between layers, relus, f32-exact weights
// (dense in f32 and f64) and decimal ones (dense in f64 only: in f32 the pass is not used). The
// boxes equal the interval tensors' to the bit and hold the exact (MPFR) value and the arithmetic's
// own evaluation at the box's corners, midpoint and random points.
Model random_mlp(uint64_t seed, bool f32_exact) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  auto value = [&] { return f32_exact ? static_cast<double>(static_cast<float>(u(rng))) : u(rng) + 1e-9; };
  GraphBuilder b;
  const int64_t x = b.input({6});
  const int64_t r2 = b.add(Op::Reshape, {x}, ReshapeAttrs{{6}, {2, 3}}, Shape{2, 3});
  const int64_t r = b.add(Op::Flatten, {r2}, ValueShapeAttrs{{2, 3}}, Shape{6});
  std::vector<double> c1(6), c2(6);
  for (auto& v : c1) v = value();
  for (auto& v : c2) v = value();
  int64_t h = b.binary(Op::Add, b.constant({6}, c2), b.binary(Op::Sub, r, b.constant({6}, c1)));
  // A scaling: / std (per element, both signs, away from 0), then * a one-element constant broadcast
  // (ONNX import's form), then - another.
  std::vector<double> sd(6);
  for (auto& v : sd) v = (rng() % 2 ? 1 : -1) * (0.25 + std::fabs(value()));
  h = b.binary(Op::Div, h, b.constant({6}, sd));
  auto spread = [&](double v) { return b.add(Op::BroadcastTo, {b.constant({1}, {v})}, BroadcastAttrs{{1}, {6}}); };
  h = b.binary(Op::MulElem, h, spread(value()));
  h = b.binary(Op::Sub, h, spread(value()));
  int64_t width = 6;
  for (int layer = 0; layer < 3; ++layer) {
    const int64_t out = layer == 2 ? 3 : 5 + static_cast<int64_t>(rng() % 6);
    std::vector<double> w(static_cast<size_t>(out * width)), bias(static_cast<size_t>(out));
    for (auto& v : w) v = value();
    for (auto& v : bias) v = value();
    h = b.linear(h, out, w, bias);
    if (layer < 2) h = b.unary(layer == 0 ? Op::Detach : Op::Relu, b.unary(Op::Relu, h));
    width = out;
  }
  auto m = b.build({h});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

TEST(IbpPrepared, DoubleArrayPassOnRandomMlps) {
  int array_runs = 0;
  int64_t checks = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed)
    for (bool exact : {true, false})
      for (const char* arith : {"f32", "f64"}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " exact " << exact << " " << arith);
        const Model m = random_mlp(seed, exact);
        ASSERT_FALSE(m.graph.nodes.empty());
        std::mt19937_64 rng(seed * 31);
        std::uniform_real_distribution<double> u(-1, 1), e(0, 0.3);
        DoubleBox box{Shape{6}, {}, {}};
        for (int i = 0; i < 6; ++i) {
          const double c = u(rng), r = e(rng);
          box.lo.push_back(c - r), box.hi.push_back(c + r);
        }
        auto prep = IbpPrepared::prepare(m.graph, m.payload, arith);
        ASSERT_TRUE(prep.ok()) << prep.message();
        if (!prep->array_pass()) {
          EXPECT_TRUE(!exact && std::string(arith) == "f32");  // decimal weights are no f32 points
          continue;
        }
        expect_same_boxes(m, arith, box);
        auto boxes = run_ibp_double(*prep, std::span<const DoubleBox>(&box, 1));
        ASSERT_TRUE(boxes.ok()) << boxes.message();
        ibp_test::Rng points(seed);
        RealContext real(200);
        F64Context f64;
        F32Context f32;
        for (int j = 0; j < 12; ++j) {
          const std::vector<double> xs = ibp_test::box_point(points, box, j);
          auto exact = ibp_test::eval_at(real, m, xs);
          ASSERT_TRUE(exact.ok()) << exact.message();
          ibp_test::expect_inside(real, *exact, *boxes, "mpfr", checks);
          if (std::string(arith) == "f64") {
            auto v = ibp_test::eval_at(f64, m, xs);
            ASSERT_TRUE(v.ok());
            ibp_test::expect_inside(f64, *v, *boxes, "f64", checks);
          } else {
            auto v = ibp_test::eval_at(f32, m, xs);
            ASSERT_TRUE(v.ok());
            ibp_test::expect_inside(f32, *v, *boxes, "f32", checks);
          }
          if (HasFatalFailure()) return;
        }
        ++array_runs;
      }
  EXPECT_EQ(array_runs, 36);
  EXPECT_GT(checks, 36 * 12 * 20);
}

// Only weights that are points of the endpoint format go dense: the six-node model's decimal
// weights (0.1, ...) are points in f64 but intervals in f32, where the interval rule keeps them;
// both give boxes that contain the f64 evaluation at the box's center.
TEST(IbpPrepared, OnlyPointWeightsGoDense) {
  const Model m = six_node_model();
  int64_t linear = 0;
  for (const Node& n : m.graph.nodes) linear += n.op == Op::Linear;
  ASSERT_GT(linear, 0);
  auto p64 = IbpPrepared::prepare(m.graph, m.payload, "f64");
  auto p32 = IbpPrepared::prepare(m.graph, m.payload, "f32");
  ASSERT_TRUE(p64.ok() && p32.ok());
  EXPECT_EQ(p64->dense_linear_nodes(), linear);
  EXPECT_EQ(p32->dense_linear_nodes(), 0);
  auto box = box_around(Tensor<double>({4}, six_node_x0()), 0.05);
  ASSERT_TRUE(box.ok());
  F64Context f;
  const std::vector<Tensor<double>> x = {Tensor<double>({4}, six_node_x0())};
  auto v = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(x), f);
  ASSERT_TRUE(v.ok()) << v.message();
  for (const IbpPrepared* p : {&*p64, &*p32}) {
    auto r = run_ibp_double(*p, std::span<const DoubleBox>(&*box, 1));
    ASSERT_TRUE(r.ok()) << r.message();
    for (size_t id = 0; id < m.graph.nodes.size(); ++id) {
      ASSERT_TRUE(r->boxes[id]) << p->arith().name << " node " << id;
      for (size_t j = 0; j < (*v)[id].data.size(); ++j) {
        EXPECT_LE(r->boxes[id]->lo[j], (*v)[id].data[j]) << p->arith().name << " node " << id;
        EXPECT_GE(r->boxes[id]->hi[j], (*v)[id].data[j]) << p->arith().name << " node " << id;
      }
    }
  }
}

// The float weights a prepared f32 model hands to CROWN's one-step boxes are the payload's doubles
// exactly, and exist only then (f32 preparation, every weight a float).
TEST(IbpPrepared, ExactF32WeightsEqualThePayload) {
  const Model acas = load(kAcas);
  if (acas.graph.nodes.empty()) return;
  auto p32 = IbpPrepared::prepare(acas.graph, acas.payload, "f32");
  auto p64 = IbpPrepared::prepare(acas.graph, acas.payload, "f64");
  ASSERT_TRUE(p32.ok() && p64.ok());
  int64_t checked = 0;
  for (const auto& [id, rec] : acas.payload.linear) {
    const float* w = p32->exact_f32_weights(id);
    ASSERT_NE(w, nullptr) << "node " << id;
    for (size_t i = 0; i < rec.weight.size(); ++i) ASSERT_EQ(static_cast<double>(w[i]), rec.weight[i]) << "node " << id;
    EXPECT_EQ(p64->exact_f32_weights(id), nullptr);
    ++checked;
  }
  EXPECT_GT(checked, 0);
  EXPECT_EQ(p32->exact_f32_weights(-1), nullptr);
  const Model six = six_node_model();  // weights that are not floats
  auto s32 = IbpPrepared::prepare(six.graph, six.payload, "f32");
  ASSERT_TRUE(s32.ok());
  for (const auto& [id, rec] : six.payload.linear) EXPECT_EQ(s32->exact_f32_weights(id), nullptr) << "node " << id;
}

// run_crown with a prepared model: the same bounds (up to the order of sums) as without, and a
// model prepared for another payload, graph or arith is an error, not a silent mix.
TEST(IbpPrepared, CrownUsesOnlyAMatchingPreparedModel) {
  const Model m = load(kAcas);
  if (m.graph.nodes.empty()) return;
  const DoubleBox box = box_of(m, 3, 0.02);
  const std::vector<DoubleBox> in = {box};
  auto prep = IbpPrepared::prepare(m.graph, m.payload, "f32");
  ASSERT_TRUE(prep.ok()) << prep.message();
  for (BoundMethod method : {BoundMethod::Ibp, BoundMethod::Crown}) {
    CrownOptions o;
    o.method = method;
    o.arith = ArithSpec::f32();
    auto plain = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
    Subdomain where;
    where.prepared = *prep;
    auto fast = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o, where);
    ASSERT_TRUE(plain.ok() && fast.ok()) << plain.message() << fast.message();
    for (size_t k = 0; k < plain->spec_lo.size(); ++k) {
      const double tol = 1e-5 * (1 + std::fabs(plain->spec_lo[k]) + std::fabs(plain->spec_hi[k]));
      EXPECT_NEAR(fast->spec_lo[k], plain->spec_lo[k], tol) << "row " << k;
      EXPECT_NEAR(fast->spec_hi[k], plain->spec_hi[k], tol) << "row " << k;
    }
  }
  CrownOptions o;
  o.arith = ArithSpec::f64();
  Subdomain where;
  where.prepared = *prep;
  auto wrong_arith = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o, where);
  ASSERT_FALSE(wrong_arith.ok());
  EXPECT_NE(wrong_arith.message().find("arith 'f32'"), std::string::npos) << wrong_arith.message();
  o.arith = ArithSpec::f32();
  const Model copy = m;  // equal, but not the object prepared
  auto wrong_model = run_crown(copy.graph, copy.payload, in, copy.output_ids[0], nullptr, o, where);
  ASSERT_FALSE(wrong_model.ok());
  EXPECT_NE(wrong_model.message().find("another graph or payload"), std::string::npos) << wrong_model.message();
}

// CROWN and alpha-CROWN on mnistfc (sparse coefficient rows behind its mostly stable relus, the
// branch-free concretisation, cached scales, a prepared model) contain the f32 evaluation at sampled
// points of the box, output by output.
TEST(IbpPrepared, CrownOnMnistfcContainsSampledF32Outputs) {
  const Model m = load(kMnist);
  if (m.graph.nodes.empty()) return;
  const DoubleBox box = box_of(m, 11, 0.03);
  const std::vector<DoubleBox> in = {box};
  auto prep = IbpPrepared::prepare(m.graph, m.payload, "f32");
  ASSERT_TRUE(prep.ok()) << prep.message();
  const Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
    CrownOptions o;
    o.method = method;
    o.arith = ArithSpec::f32();
    o.alpha_iters = 5;
    Subdomain where;
    where.prepared = *prep;
    auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o, where);
    ASSERT_TRUE(r.ok()) << r.message();
    std::mt19937_64 rng(method == BoundMethod::Crown ? 1 : 2);
    std::uniform_real_distribution<double> t(0, 1);
    for (int k = 0; k < 30; ++k) {
      std::vector<float> x;
      for (size_t i = 0; i < box.lo.size(); ++i)
        x.push_back(static_cast<float>(box.lo[i] + t(rng) * (box.hi[i] - box.lo[i])));
      F32Context f;
      const std::vector<Tensor<float>> xin = {Tensor<float>(box.shape, x)};
      auto y = denote(m.graph, p32, std::span<const Tensor<float>>(xin), m.output_ids[0], f);
      ASSERT_TRUE(y.ok()) << y.message();
      ASSERT_EQ(y->data.size(), r->spec_lo.size());
      for (size_t j = 0; j < y->data.size(); ++j) {
        EXPECT_LE(r->spec_lo[j], y->data[j]) << bound_method_name(method) << " output " << j;
        EXPECT_GE(r->spec_hi[j], y->data[j]) << bound_method_name(method) << " output " << j;
      }
    }
  }
}

// CROWN's per-engine caches (src/bounds/crown_state.h): a linear node's error scale is reused only
// for an equal parent box; the workspace hands back buffers of the asked size.
TEST(CrownCaches, ScaleReusedOnlyForTheSameParentBox) {
  crown::ScaleCache cache;
  const DoubleBox b{{2}, {0, 1}, {1, 2}};
  cache.store(3, b, {5, 6});
  ASSERT_NE(cache.find(3, b), nullptr);
  EXPECT_EQ(*cache.find(3, b), (std::vector<double>{5, 6}));
  DoubleBox tighter = b;
  tighter.hi[1] = 1.5;
  EXPECT_EQ(cache.find(3, tighter), nullptr);
  EXPECT_EQ(cache.find(2, b), nullptr);
  EXPECT_EQ(cache.find(99, b), nullptr);
  EXPECT_EQ(cache.find(-1, b), nullptr);
  cache.store(3, tighter, {7, 8});  // replaced, the old box no longer matches
  EXPECT_EQ(cache.find(3, b), nullptr);
  ASSERT_NE(cache.find(3, tighter), nullptr);
  EXPECT_EQ((*cache.find(3, tighter))[0], 7);
  // Keyed by two boxes (the elementwise lines: the parent's and the node's own): both must be equal.
  crown::BoxCache<std::vector<double>> two;
  two.store(4, b, tighter, {9});
  ASSERT_NE(two.find(4, b, tighter), nullptr);
  EXPECT_EQ(two.find(4, b, b), nullptr);
  EXPECT_EQ(two.find(4, tighter, tighter), nullptr);
  EXPECT_EQ(two.find(4, b), nullptr);  // another key length
}

TEST(CrownCaches, WorkspaceReusesLargeBuffers) {
  crown::Workspace ws;
  std::vector<double> a = ws.take(10000);
  EXPECT_EQ(a.size(), 10000u);
  const double* storage = a.data();
  ws.give(std::move(a));
  EXPECT_TRUE(a.empty());
  std::vector<double> b = ws.take(5000);  // fits in the kept buffer
  EXPECT_EQ(b.size(), 5000u);
  EXPECT_EQ(b.data(), storage);
  const std::vector<double> src(6000, 2.5);
  ws.give(std::move(b));
  const std::vector<double> c = ws.copy(src);
  EXPECT_EQ(c, src);
  std::vector<double> small(10);
  ws.give(std::move(small));  // too small to keep
  EXPECT_TRUE(ws.spare.empty());
}

// take() prefers a spare that already holds n elements (nothing to zero) over a larger capacity.
TEST(CrownCaches, WorkspacePrefersABufferThatNeedsNoZeroing) {
  crown::Workspace ws;
  std::vector<double> roomy;
  roomy.reserve(20000);
  roomy.resize(5000);
  std::vector<double> full(8000, 1.0);
  const double* full_storage = full.data();
  ws.give(std::move(roomy));
  ws.give(std::move(full));
  std::vector<double> t = ws.take(7000);
  EXPECT_EQ(t.size(), 7000u);
  EXPECT_EQ(t.data(), full_storage);
  EXPECT_EQ(ws.spare.size(), 1u);
  EXPECT_EQ(ws.kept_bytes, ws.spare[0].capacity() * sizeof(double));
}

}  // namespace
}  // namespace denote
