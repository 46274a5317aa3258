// Issue 18 (ONNX breadth): the new IR ops (gather, floor, ceil, round, sign) in every scalar
// context and in IBP, their ONNX export (libonnx's full check, import(export(m)) identical), the
// index-moving import mappers (Slice, Pad, Split, Where, ...), and the shared-data networks.
#include <cmath>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/real_context.h"
#include "onnx_test_util.h"
#include "onnx_full_check.h"

namespace denote {
namespace {

using testing::OnnxBuilder;

const std::vector<double> kSteps = {-2.5, -1.5, -0.5000000000000001, -0.5, -0.49999999999999994, -0.0, 0.0,
                                    0.3, 0.5, 1.5, 2.5, 2.75, 1e300, -INFINITY, INFINITY};

Model unary_model(Op op, size_t n) {
  GraphBuilder b;
  const int64_t x = b.input({static_cast<int64_t>(n)});
  b.model().output_ids = {b.unary(op, x)};
  return b.model();
}

std::vector<double> eval_f64(const Model& m, const std::vector<double>& in) {
  F64Context ctx;
  std::vector<Tensor<double>> inputs{Tensor<double>{{static_cast<int64_t>(in.size())}, in}};
  auto t = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx);
  EXPECT_TRUE(t.ok()) << t.message();
  return t.ok() ? (*t)[static_cast<size_t>(m.output_ids[0])].data : std::vector<double>{};
}

double reference(Op op, double x) {
  if (op == Op::Floor) return std::floor(x);
  if (op == Op::Ceil) return std::ceil(x);
  if (op == Op::Round) return std::nearbyint(x);
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : x);
}

TEST(OnnxBreadth, StepOpsMatchLibmInF64AndBinary64) {
  for (Op op : {Op::Floor, Op::Ceil, Op::Round, Op::Sign}) {
    const Model m = unary_model(op, kSteps.size());
    const auto got = eval_f64(m, kSteps);
    BinaryContext bctx(binary64_format(), Rounding::NearestEven);
    std::vector<Tensor<BinaryContext::Scalar>> in{Tensor<BinaryContext::Scalar>{{static_cast<int64_t>(kSteps.size())}, {}}};
    for (double v : kSteps) in[0].data.push_back(bctx.from_double(v));
    auto bt = denote_all(m.graph, convert_payload<BinaryContext::Scalar>(m.payload, [&](double v) { return bctx.from_double(v); }),
                         std::span<const Tensor<BinaryContext::Scalar>>(in), bctx);
    ASSERT_TRUE(bt.ok()) << bt.message();
    for (size_t i = 0; i < kSteps.size(); ++i) {
      const double want = reference(op, kSteps[i]);
      EXPECT_EQ(got[i], want) << op_tag(op) << "(" << kSteps[i] << ")";
      EXPECT_EQ(bctx.to_double((*bt)[1].data[i]), want) << op_tag(op) << " binary64 (" << kSteps[i] << ")";
    }
    EXPECT_TRUE(std::isnan(eval_f64(unary_model(op, 1), {NAN})[0])) << op_tag(op);
  }
}

TEST(OnnxBreadth, StepOpsInBinary16AreExact) {
  // binary16: 1025.5 is not representable (ulp 1 above 1024); 0.5 + ulp and the ties.
  const std::vector<double> v = {0.5, 1.5, 2.5, -2.5, 0.50048828125, 1023.5, 2050, -0.25};
  for (Op op : {Op::Floor, Op::Ceil, Op::Round, Op::Sign}) {
    const Model m = unary_model(op, v.size());
    BinaryContext ctx(*parse_format("binary16"), Rounding::NearestEven);
    std::vector<Tensor<BinaryContext::Scalar>> in{Tensor<BinaryContext::Scalar>{{static_cast<int64_t>(v.size())}, {}}};
    for (double x : v) in[0].data.push_back(ctx.from_double(x));
    auto t = denote_all(m.graph, Payload<BinaryContext::Scalar>{}, std::span<const Tensor<BinaryContext::Scalar>>(in), ctx);
    ASSERT_TRUE(t.ok()) << t.message();
    for (size_t i = 0; i < v.size(); ++i)
      EXPECT_EQ(ctx.to_double((*t)[1].data[i]), reference(op, v[i])) << op_tag(op) << "(" << v[i] << ")";
  }
}

TEST(OnnxBreadth, StepOpsIbpContainsEverySample) {
  for (Op op : {Op::Floor, Op::Ceil, Op::Round, Op::Sign}) {
    const Model m = unary_model(op, 3);
    DoubleBox box{{3}, {-1.5, 0.2, -3.0}, {0.5, 0.2, 2.5}};
    const std::vector<DoubleBox> boxes{box};
    auto r = run_ibp_double(m.graph, m.payload, std::span<const DoubleBox>(boxes), "f64");
    ASSERT_TRUE(r.ok()) << r.message();
    const auto& out = r->boxes[1];
    ASSERT_TRUE(out.has_value()) << op_tag(op) << ": " << r->notes[1];
    for (int k = 0; k <= 100; ++k) {
      std::vector<double> x;
      for (size_t j = 0; j < 3; ++j) x.push_back(box.lo[j] + (box.hi[j] - box.lo[j]) * k / 100.0);
      const auto y = eval_f64(m, x);
      for (size_t j = 0; j < 3; ++j) {
        EXPECT_LE(out->lo[j], y[j]) << op_tag(op);
        EXPECT_GE(out->hi[j], y[j]) << op_tag(op);
      }
    }
  }
}

TEST(OnnxBreadth, GatherEvaluatesAndItsShapeRuleChecksIndices) {
  GraphBuilder b;
  const int64_t x = b.input({2, 3});
  const int64_t g = b.add(Op::Gather, {x}, GatherAttrs{1, {2, 0, 2}});
  b.model().output_ids = {g};
  ASSERT_TRUE(check_shapes(b.model().graph).ok());
  EXPECT_EQ(b.model().graph.nodes[1].out_shape, (Shape{2, 3}));
  F64Context ctx;
  std::vector<Tensor<double>> in{Tensor<double>{{2, 3}, {1, 2, 3, 4, 5, 6}}};
  auto t = denote_all(b.model().graph, b.model().payload, std::span<const Tensor<double>>(in), ctx);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ((*t)[1].data, (std::vector<double>{3, 1, 3, 6, 4, 6}));
}

// CROWN and alpha-CROWN through gather (a repeated index: its VJP sums coefficients) and the step
// ops (no relaxation: cut at their IBP box): the bounds contain every sampled output.
TEST(OnnxBreadth, CrownThroughGatherAndStepOpsContainsSamples) {
  GraphBuilder b;
  const int64_t x = b.input({3});
  const int64_t l1 = b.linear(x, 4, {0.5, -0.2, 0.1, 0.3, 0.8, -0.5, -0.7, 0.2, 0.4, 0.1, 0.1, 0.9}, {0.1, -0.2, 0, 0.3});
  const int64_t g = b.add(Op::Gather, {l1}, GatherAttrs{0, {3, 0, 0, 2, 1}});
  const int64_t r = b.unary(Op::Relu, g);
  const int64_t f = b.unary(Op::Floor, b.unary(Op::Sign, r));
  const int64_t cat = b.add(Op::Concat, {r, f}, AxisAttrs{0});
  const int64_t y = b.linear(cat, 2, {0.3, -0.1, 0.2, 0.5, -0.4, 1, -1, 0.5, 0.25, 0.1,
                                      -0.2, 0.6, 0.1, -0.3, 0.2, 0.5, 0.5, -1, 0.3, 0.2}, {0, 0.1});
  b.model().output_ids = {y};
  const Model& m = b.model();
  const std::vector<DoubleBox> box{DoubleBox{{3}, {-0.5, -0.3, -0.2}, {0.4, 0.6, 0.3}}};
  for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
    CrownOptions o;
    o.method = method;
    auto res = run_crown(m.graph, m.payload, std::span<const DoubleBox>(box), y, nullptr, o);
    ASSERT_TRUE(res.ok()) << res.message();
    for (int k = 0; k < 400; ++k) {
      std::vector<double> in;
      for (size_t j = 0; j < 3; ++j) {
        const double t = static_cast<double>((k * 37 + static_cast<int>(j) * 101) % 400) / 399.0;
        in.push_back(box[0].lo[j] + (box[0].hi[j] - box[0].lo[j]) * t);
      }
      F64Context ctx;
      std::vector<Tensor<double>> tin{Tensor<double>{{3}, in}};
      auto t = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(tin), ctx);
      ASSERT_TRUE(t.ok());
      for (size_t o2 = 0; o2 < 2; ++o2) {
        const double v = (*t)[static_cast<size_t>(y)].data[o2];
        EXPECT_LE(res->spec_lo[o2], v);
        EXPECT_GE(res->spec_hi[o2], v);
      }
    }
  }
}

TEST(OnnxBreadth, NewOpsExportCheckAndRoundTripIdentically) {
  GraphBuilder b;
  const int64_t x = b.input({2, 3, 4});
  const int64_t g = b.add(Op::Gather, {x}, GatherAttrs{2, {3, 3, 0, 1, 2}});
  const int64_t g0 = b.add(Op::Gather, {g}, GatherAttrs{0, {}});
  const int64_t f = b.unary(Op::Floor, g);
  const int64_t c = b.unary(Op::Ceil, f);
  const int64_t r = b.unary(Op::Round, c);
  const int64_t s = b.unary(Op::Sign, r);
  b.model().output_ids = {s, g0};
  const Model& m = b.model();
  ASSERT_TRUE(check_shapes(m.graph).ok());
  auto bytes = write_model_onnx(m);
  ASSERT_TRUE(bytes.ok()) << bytes.message();
  EXPECT_EQ(onnx_full_check(*bytes), "");
  auto back = read_model_onnx(*bytes);
  ASSERT_TRUE(back.ok()) << back.message();
  ASSERT_EQ(back->graph.nodes.size(), m.graph.nodes.size());
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    EXPECT_EQ(back->graph.nodes[i].op, m.graph.nodes[i].op) << i;
    EXPECT_EQ(back->graph.nodes[i].attrs, m.graph.nodes[i].attrs) << i;
    EXPECT_EQ(back->graph.nodes[i].out_shape, m.graph.nodes[i].out_shape) << i;
    EXPECT_EQ(back->graph.nodes[i].parents, m.graph.nodes[i].parents) << i;
  }
  EXPECT_EQ(back->output_ids, m.output_ids);
}

// ---- import mappers
std::vector<double> run_onnx(const OnnxBuilder& b, const std::vector<Tensor<double>>& in, size_t out = 0) {
  auto m = read_model_onnx(b.bytes());
  EXPECT_TRUE(m.ok()) << m.message();
  if (!m.ok()) return {};
  EXPECT_TRUE(check_shapes(m->graph).ok());
  F64Context ctx;
  auto t = denote_all(m->graph, m->payload, std::span<const Tensor<double>>(in), ctx);
  EXPECT_TRUE(t.ok()) << t.message();
  return t.ok() ? (*t)[static_cast<size_t>(m->output_ids[out])].data : std::vector<double>{};
}

TEST(OnnxBreadth, SliceWithNegativeStepIsOneGather) {
  OnnxBuilder b;
  b.input("x", {2, 5});
  b.init_ints("s", {-1});
  b.init_ints("e", {-100});
  b.init_ints("a", {1});
  b.init_ints("st", {-2});
  b.node("Slice", {"x", "s", "e", "a", "st"}, {"y"});
  b.output("y");
  EXPECT_EQ(run_onnx(b, {Tensor<double>{{2, 5}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9}}}), (std::vector<double>{4, 2, 0, 9, 7, 5}));
  auto m = read_model_onnx(b.bytes());
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->graph.nodes.back().op, Op::Gather);
}

TEST(OnnxBreadth, PadModesAndSplit) {
  for (const std::string mode : {"constant", "reflect", "edge"}) {
    OnnxBuilder b;
    b.input("x", {1, 3});
    b.init_ints("p", {0, 2, 0, 1});
    b.init("v", {}, {9});
    auto* n = b.node("Pad", {"x", "p", "v"}, {"y"});
    auto* a = n->add_attribute();
    a->set_name("mode");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(mode);
    b.output("y");
    const auto y = run_onnx(b, {Tensor<double>{{1, 3}, {1, 2, 3}}});
    const std::vector<double> want = mode == "constant" ? std::vector<double>{9, 9, 1, 2, 3, 9}
                                     : mode == "reflect" ? std::vector<double>{3, 2, 1, 2, 3, 2}
                                                         : std::vector<double>{1, 1, 1, 2, 3, 3};
    EXPECT_EQ(y, want) << mode;
  }
  OnnxBuilder s;
  s.input("x", {5});
  s.init_ints("sizes", {2, 3});
  s.node("Split", {"x", "sizes"}, {"a", "b"});
  s.output("a");
  s.output("b");
  EXPECT_EQ(run_onnx(s, {Tensor<double>{{5}, {1, 2, 3, 4, 5}}}, 1), (std::vector<double>{3, 4, 5}));
}

TEST(OnnxBreadth, WhereWithAConstantConditionSelectsExactly) {
  OnnxBuilder b;
  b.input("x", {3});
  b.init("y", {1}, {7});
  auto* t = b.graph()->add_initializer();
  t->set_name("c");
  t->set_data_type(onnx::TensorProto::BOOL);
  t->add_dims(3);
  for (int v : {1, 0, 1}) t->add_int32_data(v);
  b.node("Where", {"c", "x", "y"}, {"z"});
  b.output("z");
  EXPECT_EQ(run_onnx(b, {Tensor<double>{{3}, {INFINITY, 2, -3}}}), (std::vector<double>{INFINITY, 7, -3}));
}

TEST(OnnxBreadth, ShapeArithmeticOnIntegersIsFolded) {
  OnnxBuilder b;
  b.input("x", {2, 6});
  b.node("Shape", {"x"}, {"s"});
  b.init_ints("div", {1, 3});
  b.node("Div", {"s", "div"}, {"h"});
  b.node("Neg", {"h"}, {"n"});
  b.node("Neg", {"n"}, {"h2"});
  b.init_ints("three", {3});
  auto* cat = b.node("Concat", {"h2", "three"}, {"shape"});
  auto* ax = cat->add_attribute();
  ax->set_name("axis");
  ax->set_type(onnx::AttributeProto::INT);
  ax->set_i(0);
  b.node("Reshape", {"x", "shape"}, {"y"});
  b.output("y");
  auto m = read_model_onnx(b.bytes());
  ASSERT_TRUE(m.ok()) << m.message();
  // input and one reshape: the shape arithmetic left no node behind
  EXPECT_EQ(m->graph.nodes.size(), 2u);
  EXPECT_EQ(m->graph.nodes.back().out_shape, (Shape{2, 2, 3}));
}

// ---- the shared-data networks: a small copy in tests/data/verivital (the Pad of Convnet_avgpool),
// golden outputs from tests/golden/check_shared_models.py's numpy reference.
TEST(OnnxBreadth, VerivitalConvnetAvgpoolMatchesTheNumpyReference) {
  const auto dir = std::filesystem::path(DENOTE_SOURCE_DIR) / "tests/data/verivital";
  std::ifstream f(dir / "golden.json");
  ASSERT_TRUE(f.good());
  const auto golden = nlohmann::json::parse(f);
  for (const auto& c : golden["cases"]) {
    auto m = load_model_onnx_file((dir / c["model"].get<std::string>()).string());
    ASSERT_TRUE(m.ok()) << m.message();
    ASSERT_TRUE(check_shapes(m->graph).ok());
    std::vector<Tensor<double>> in;
    const auto ids = m->graph.input_ids();
    for (size_t k = 0; k < ids.size(); ++k)
      in.emplace_back(m->graph.nodes[static_cast<size_t>(ids[k])].out_shape, c["inputs"][k].get<std::vector<double>>());
    F64Context ctx;
    auto t = denote_all(m->graph, m->payload, std::span<const Tensor<double>>(in), ctx);
    ASSERT_TRUE(t.ok()) << t.message();
    const auto want = c["outputs"][0].get<std::vector<double>>();
    const auto& got = (*t)[static_cast<size_t>(m->output_ids[0])].data;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-9 * (1 + std::fabs(want[i])));
  }
}

TEST(OnnxBreadth, EverySharedDataNetworkLoadsAndChecks) {
  const auto root = std::filesystem::path(DENOTE_SOURCE_DIR) / ".." / "shared" / "data";
  if (!std::filesystem::is_directory(root)) GTEST_SKIP() << root << " not found (a clean clone has no ../shared)";
  int count = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.path().extension() != ".onnx") continue;
    auto m = load_model_onnx_file(e.path().string());
    ASSERT_TRUE(m.ok()) << e.path() << ": " << m.message();
    EXPECT_TRUE(check_shapes(m->graph).ok()) << e.path();
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace denote
