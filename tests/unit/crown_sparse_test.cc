// CROWN's sparse products (src/bounds/crown_rules.cc): a linear node skips the columns of its
// coefficients that are known to be 0 (PassRows::support) and the parent elements whose box is the
// point 0 (dead relus), and concretises its input's coefficients as it makes them when nothing
// else feeds the input. Networks with mostly dead relus, an input behind reshape and flatten, and
// an input with two consumers: the bounds contain exact and evaluated values, do not depend on the
// weights of dead neurons, and equal the pass that stores the input's coefficients; alpha-CROWN's
// forward values made in that fused pass equal the forward rules' on the stored coefficients.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bounds/crown_engine.h"
#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

struct DeadNet {
  Model m;
  int64_t out = -1;
  DoubleBox box;
  std::vector<int64_t> dead;  // first hidden layer: neurons whose pre-activation is < 0 on the box
};

// input [8] -> reshape [2, 4] -> flatten [8] -> linear 24 (two thirds dead) -> relu -> linear 16 ->
// relu -> linear 3; with `fan_out`, the flattened input also feeds a linear 3 added to the output.
// `dead_weight`: the second layer's weights out of the dead neurons (their value is irrelevant).
DeadNet dead_net(uint64_t seed, bool fan_out, double dead_weight) {
  ibp_test::Rng rng(seed);
  DeadNet d;
  d.box = DoubleBox{{8}, {}, {}};
  for (int i = 0; i < 8; ++i) {
    const double c = rng.real(-1, 1), r = rng.real(0.05, 0.5);
    d.box.lo.push_back(c - r), d.box.hi.push_back(c + r);
  }
  GraphBuilder b;
  const int64_t x = b.input({8});
  const int64_t r = b.add(Op::Reshape, {x}, ReshapeAttrs{{8}, {2, 4}}, Shape{2, 4});
  const int64_t f = b.add(Op::Flatten, {r}, ValueShapeAttrs{{2, 4}}, Shape{8});
  std::vector<double> w1, b1;
  for (int o = 0; o < 24; ++o) {
    double reach = 0;
    for (int i = 0; i < 8; ++i) {
      w1.push_back(rng.real(-1, 1));
      reach += std::fabs(w1.back()) *
               std::max(std::fabs(d.box.lo[static_cast<size_t>(i)]), std::fabs(d.box.hi[static_cast<size_t>(i)]));
    }
    const bool dead = o % 3 != 0;
    if (dead) d.dead.push_back(o);
    b1.push_back(dead ? -reach - 0.5 : rng.real(-0.3, 0.3));
  }
  const int64_t h1 = b.unary(Op::Relu, b.linear(f, 24, w1, b1));
  std::vector<double> w2, b2;
  for (int o = 0; o < 16; ++o) {
    for (int i = 0; i < 24; ++i) w2.push_back(i % 3 != 0 ? dead_weight * rng.real(-1, 1) : rng.real(-1, 1));
    b2.push_back(rng.real(-0.5, 0.2));
  }
  const int64_t h2 = b.unary(Op::Relu, b.linear(h1, 16, w2, b2));
  std::vector<double> w3, b3(3, 0.1);
  for (int i = 0; i < 48; ++i) w3.push_back(rng.real(-1, 1));
  d.out = b.linear(h2, 3, w3, b3);
  if (fan_out) {
    std::vector<double> w4;
    for (int i = 0; i < 24; ++i) w4.push_back(rng.real(-1, 1));
    d.out = b.binary(Op::Add, d.out, b.linear(f, 3, w4, std::vector<double>(3, 0.0)));
  }
  auto m = b.build({d.out});
  EXPECT_TRUE(m.ok()) << m.message();
  if (m.ok()) d.m = std::move(*m);
  return d;
}

CrownOptions with(BoundMethod method, const char* arith) {
  CrownOptions o;
  o.method = method;
  o.arith = *parse_arith_name(arith);
  o.alpha_iters = 8;
  return o;
}

const SpecMatrix kSpec{2, 3, {1, -1, 0, 0.5, 0.25, -1}};

// Every node box and spec row holds the exact (MPFR) value and the value the arithmetic computes,
// at the box's corners, its midpoint and random points.
void expect_contains(const DeadNet& d, const CrownResult& boxes, const CrownResult& rows, const char* arith) {
  ibp_test::Rng rng(0x5ba);
  RealContext real(200);
  F64Context f64;
  F32Context f32;
  for (int j = 0; j < 40; ++j) {
    const std::vector<double> x = ibp_test::box_point(rng, d.box, j);
    std::vector<ValueTable<double>> tables;
    auto exact = ibp_test::eval_at(real, d.m, x);
    ASSERT_TRUE(exact.ok());
    tables.emplace_back();
    for (const auto& v : *exact) {
      Tensor<double> w = Tensor<double>::filled(v.shape, 0.0);
      for (size_t i = 0; i < v.data.size(); ++i) w.data[i] = real.to_double(v.data[i]);
      tables.back().push_back(std::move(w));
    }
    if (std::string(arith) == "f64") {
      auto t = ibp_test::eval_at(f64, d.m, x);
      ASSERT_TRUE(t.ok());
      tables.push_back(std::move(*t));
    } else {
      auto t = ibp_test::eval_at(f32, d.m, x);
      ASSERT_TRUE(t.ok());
      tables.emplace_back();
      for (const auto& v : *t) {
        Tensor<double> w = Tensor<double>::filled(v.shape, 0.0);
        for (size_t i = 0; i < v.data.size(); ++i) w.data[i] = v.data[i];
        tables.back().push_back(std::move(w));
      }
    }
    for (const ValueTable<double>& t : tables) {
      for (size_t id = 0; id < boxes.boxes.size(); ++id) {
        if (!boxes.boxes[id]) continue;
        for (size_t i = 0; i < boxes.boxes[id]->lo.size(); ++i)
          ASSERT_TRUE(t[id].data[i] >= boxes.boxes[id]->lo[i] && t[id].data[i] <= boxes.boxes[id]->hi[i])
              << arith << " node " << id << " element " << i << " point " << j;
      }
      const auto& y = t[static_cast<size_t>(d.out)].data;
      for (int64_t r = 0; r < kSpec.rows; ++r) {
        long double cy = 0;
        for (int64_t i = 0; i < 3; ++i)
          cy += static_cast<long double>(kSpec.c[static_cast<size_t>(r * 3 + i)]) * y[static_cast<size_t>(i)];
        ASSERT_GE(cy + std::fabs(cy) * 1e-15L, rows.spec_lo[static_cast<size_t>(r)]) << arith << " row " << r;
        ASSERT_LE(cy - std::fabs(cy) * 1e-15L, rows.spec_hi[static_cast<size_t>(r)]) << arith << " row " << r;
      }
    }
  }
}

TEST(CrownSparse, DeadReluNetworksContainExactAndEvaluatedValues) {
  int runs = 0;
  for (uint64_t seed : {0x51u, 0x52u, 0x53u})
    for (bool fan_out : {false, true}) {
      const DeadNet d = dead_net(seed, fan_out, 1.0);
      std::vector<DoubleBox> in = {d.box};
      // The dead neurons are dead on the box, as built (the products skip them).
      auto ibp = run_crown(d.m.graph, d.m.payload, in, d.out, nullptr, with(BoundMethod::Ibp, "f64"));
      ASSERT_TRUE(ibp.ok()) << ibp.message();
      for (int64_t o : d.dead) EXPECT_LT(ibp->boxes[3]->hi[static_cast<size_t>(o)], 0) << "neuron " << o;
      for (const char* arith : {"f64", "f32"})
        for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
          SCOPED_TRACE(testing::Message() << "seed " << seed << " fan_out " << fan_out << " " << arith << " "
                                          << bound_method_name(method));
          auto boxes = run_crown(d.m.graph, d.m.payload, in, d.out, nullptr, with(method, arith));
          auto rows = run_crown(d.m.graph, d.m.payload, in, d.out, &kSpec, with(method, arith));
          ASSERT_TRUE(boxes.ok() && rows.ok());
          expect_contains(d, *boxes, *rows, arith);
          if (HasFatalFailure()) return;
          ++runs;
        }
    }
  EXPECT_EQ(runs, 24);
}

// A dead neuron's value is 0 on the whole box: what it is multiplied by changes no bound.
TEST(CrownSparse, DeadNeuronsWeightsChangeNoBound) {
  for (bool fan_out : {false, true}) {
    const DeadNet small = dead_net(0x77, fan_out, 1.0), huge = dead_net(0x77, fan_out, 1e6);
    std::vector<DoubleBox> in = {small.box};
    for (BoundMethod method : {BoundMethod::Ibp, BoundMethod::Crown, BoundMethod::AlphaCrown}) {
      auto a = run_crown(small.m.graph, small.m.payload, in, small.out, &kSpec, with(method, "f32"));
      auto b = run_crown(huge.m.graph, huge.m.payload, in, huge.out, &kSpec, with(method, "f32"));
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(a->spec_lo, b->spec_lo) << bound_method_name(method) << " fan_out " << fan_out;
      EXPECT_EQ(a->spec_hi, b->spec_hi) << bound_method_name(method) << " fan_out " << fan_out;
    }
  }
}

// mnistfc 256x2 on prop_0_0.03 (250 of the first layer's 256 relus dead): the pass that keeps the
// input's coefficients (CrownOptions::input_coefficients) and the one that concretises them as they
// are made give the same bounds, up to the products' summation order.
TEST(CrownSparse, StoredAndFusedInputCoefficientsAgreeOnMnistfc) {
  std::ifstream f(std::string(DENOTE_SOURCE_DIR) + "/tests/data/lirpa/crown_golden.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  int cases = 0;
  for (const auto& c : g["cases"]) {
    if (c["name"].get<std::string>().rfind("mnistfc", 0) != 0) continue;
    auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/" + c["network"].get<std::string>());
    ASSERT_TRUE(m.ok()) << m.message();
    const Shape shape = m->graph.nodes[static_cast<size_t>(m->graph.input_ids()[0])].out_shape;
    std::vector<DoubleBox> in = {DoubleBox{shape, c["input"]["lo"], c["input"]["hi"]}};
    SpecMatrix spec{0, 10, {}};
    for (const auto& row : c["C"]) {
      for (double v : row) spec.c.push_back(v);
      ++spec.rows;
    }
    CrownOptions o = with(BoundMethod::Crown, "f32");
    auto fused = run_crown(m->graph, m->payload, in, m->output_ids[0], &spec, o);
    o.input_coefficients = true;
    auto stored = run_crown(m->graph, m->payload, in, m->output_ids[0], &spec, o);
    ASSERT_TRUE(fused.ok() && stored.ok());
    ASSERT_FALSE(stored->input_coef.empty());
    for (size_t r = 0; r < fused->spec_lo.size(); ++r) {
      EXPECT_NEAR(fused->spec_lo[r], stored->spec_lo[r], 1e-12 * (1 + std::fabs(stored->spec_lo[r]))) << "row " << r;
      EXPECT_NEAR(fused->spec_hi[r], stored->spec_hi[r], 1e-12 * (1 + std::fabs(stored->spec_hi[r]))) << "row " << r;
    }
    ++cases;
  }
  EXPECT_GE(cases, 1);
}

// alpha-CROWN with the first layer's forward values made in the fused pass (EngineSetup::fuse_forward)
// and with the input's coefficients stored and the forward rules run: the same slopes up to the
// products' summation order, so the same bounds (the mnistfc goldens' nets and dead-relu nets).
std::vector<double> alpha_rows(const Model& m, std::vector<std::optional<DoubleBox>> boxes, int64_t out,
                               const SpecMatrix& spec, bool fuse) {
  crown::EngineSetup setup{.err = crown::EvalErr{0x1p-24, 0x1p-149, true}};
  setup.fuse_forward = fuse;
  crown::Engine eng(m.graph, m.payload, std::move(setup), std::move(boxes));
  std::vector<double> C;
  for (double sign : {1.0, -1.0})
    for (double v : spec.c) C.push_back(sign * v);
  CrownOptions o = with(BoundMethod::AlphaCrown, "f32");
  o.alpha_iters = 20;
  const int64_t rows = 2 * spec.rows;
  return eng.optimise(out, C, rows, std::vector<double>(static_cast<size_t>(rows), -INFINITY), o);
}

void expect_fused_forward_agrees(const Model& m, const std::vector<DoubleBox>& in, int64_t out,
                                 const SpecMatrix& spec) {
  auto crown = run_crown(m.graph, m.payload, in, out, &spec, with(BoundMethod::Crown, "f32"));
  ASSERT_TRUE(crown.ok()) << crown.message();
  const std::vector<double> fused = alpha_rows(m, crown->boxes, out, spec, true);
  const std::vector<double> stored = alpha_rows(m, crown->boxes, out, spec, false);
  ASSERT_EQ(fused.size(), stored.size());
  for (size_t r = 0; r < fused.size(); ++r) {
    EXPECT_TRUE(std::isfinite(fused[r])) << "row " << r;
    EXPECT_NEAR(fused[r], stored[r], 1e-9 * (1 + std::fabs(stored[r]))) << "row " << r;
  }
}

TEST(CrownSparse, FusedForwardValuesAgreeWithTheForwardRules) {
  for (uint64_t seed : {0x61u, 0x62u, 0x63u}) {
    SCOPED_TRACE(testing::Message() << "seed " << seed);
    const DeadNet d = dead_net(seed, false, 1.0);
    expect_fused_forward_agrees(d.m, {d.box}, d.out, kSpec);
  }
  std::ifstream f(std::string(DENOTE_SOURCE_DIR) + "/tests/data/lirpa/crown_golden.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  int cases = 0;
  for (const auto& c : g["cases"]) {
    if (c["name"].get<std::string>().rfind("mnistfc", 0) != 0) continue;
    SCOPED_TRACE(c["name"].get<std::string>());
    auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/" + c["network"].get<std::string>());
    ASSERT_TRUE(m.ok()) << m.message();
    const Shape shape = m->graph.nodes[static_cast<size_t>(m->graph.input_ids()[0])].out_shape;
    SpecMatrix spec{0, 10, {}};
    for (const auto& row : c["C"]) {
      for (double v : row) spec.c.push_back(v);
      ++spec.rows;
    }
    expect_fused_forward_agrees(*m, {DoubleBox{shape, c["input"]["lo"], c["input"]["hi"]}}, m->output_ids[0], spec);
    ++cases;
  }
  EXPECT_GE(cases, 1);
}

// Unit rows are recognised only when every row is +-1 at one support column and 0 elsewhere.
TEST(CrownSparse, UnitRowsOnlyWhenEveryRowIsASignedUnitVector) {
  const std::vector<int64_t> support = {1, 3};
  auto u = crown::find_unit_rows({0, 1, 0, 0, 0, 0, 0, -1}, 2, support);
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->col, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(u->sign, (std::vector<double>{1, -1}));
  EXPECT_FALSE(crown::find_unit_rows({0, 1, 0, 1, 0, 0, 0, -1}, 2, support));   // two nonzeros in a row
  EXPECT_FALSE(crown::find_unit_rows({0, 0.5, 0, 0, 0, 0, 0, -1}, 2, support));  // not +-1
  EXPECT_FALSE(crown::find_unit_rows({0, 0, 0, 0, 0, 0, 0, -1}, 2, support));    // an empty row
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// One lower-bound row (relu branch and bound's subdomains) takes the linear rule's whole product with the
// dead columns zeroed, eight rows the product on the gathered support (src/bounds/crown_linear.cc,
// product_on_support): the same bound for the shared row, and it holds for exact and evaluated values.
TEST(CrownSparse, FewRowsWholeProductEqualsTheGatheredOne) {
  int compared = 0;
  for (uint64_t seed : {0x61u, 0x62u, 0x63u}) {
    const DeadNet d = dead_net(seed, false, 1.0);
    std::vector<DoubleBox> in = {d.box};
    SpecMatrix one{1, 3, {1, -1, 0}}, eight{8, 3, {}};
    ibp_test::Rng rng(seed);
    for (int r = 0; r < 8; ++r)
      for (int i = 0; i < 3; ++i) eight.c.push_back(r == 0 ? one.c[static_cast<size_t>(i)] : rng.real(-1, 1));
    for (const char* arith : {"f64", "f32"})
      for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
        SCOPED_TRACE(testing::Message() << "seed " << seed << " " << arith << " " << bound_method_name(method));
        CrownOptions o = with(method, arith);
        o.lower_only = true;
        auto a = run_crown(d.m.graph, d.m.payload, in, d.out, &one, o);
        auto b = run_crown(d.m.graph, d.m.payload, in, d.out, &eight, o);
        ASSERT_TRUE(a.ok() && b.ok());
        EXPECT_NEAR(a->spec_lo[0], b->spec_lo[0], 1e-12 * (1 + std::fabs(b->spec_lo[0])));
        CrownResult rows = *a;  // kSpec's first row is `one`; its second has no bound here
        rows.spec_lo = {a->spec_lo[0], -INFINITY};
        rows.spec_hi = {INFINITY, INFINITY};
        expect_contains(d, *a, rows, arith);
        if (HasFatalFailure()) return;
        ++compared;
      }
  }
  EXPECT_EQ(compared, 12);
}

}  // namespace
}  // namespace denote
