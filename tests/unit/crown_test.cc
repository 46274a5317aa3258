// CROWN and alpha-CROWN (include/denote/bounds/crown.h): the seed graph and the ACAS Xu / mnistfc
// bounds against auto_LiRPA (tests/data/lirpa/crown_golden.json, tests/golden/gen_lirpa_golden.py),
// the relaxations' lines against MPFR, containment of exactly and f64/f32 evaluated points on random
// graphs, never looser than IBP, specifications, and errors.
#include <gtest/gtest.h>

#include <mpfr.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bounds/crown_relax.h"
#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/program/examples.h"
#include "ibp_random_graphs.h"
#include "relu_nets.h"

namespace denote {
namespace {

CrownOptions with(BoundMethod m, const std::string& arith = "f64") {
  CrownOptions o;
  o.method = m;
  o.arith = *parse_arith_name(arith);
  return o;
}

TEST(Crown, SixNodeGraphMatchesAutoLirpa) {
  const Model m = six_node_model();
  auto box = box_around(Tensor<double>({4}, six_node_x0()), 0.05);
  ASSERT_TRUE(box.ok());
  std::vector<DoubleBox> in = {*box};
  auto r = run_crown(m.graph, m.payload, in, 5, nullptr, with(BoundMethod::Crown));
  ASSERT_TRUE(r.ok()) << r.message();
  // auto_LiRPA 0.7.1, method="CROWN": y in [0.0247449476, 0.0312019108] (10 digits). The output is
  // tanh of node 4: IBP's step on node 4's CROWN box (below) puts the upper end at tanh(0.0312117391),
  // under CROWN's line (Engine::refresh_box).
  EXPECT_NEAR(r->spec_lo[0], 0.0247449476, 1e-10);
  EXPECT_NEAR(r->spec_hi[0], std::tanh(0.0312117391), 1e-9);
  EXPECT_LT(r->spec_hi[0], 0.0312019108);
  const auto& b = *r->boxes[5];  // the box and the rows agree up to the rounding of C at the box
  EXPECT_NEAR(b.lo[0], r->spec_lo[0], 1e-15);
  EXPECT_NEAR(b.hi[0], r->spec_hi[0], 1e-15);
  EXPECT_LE(r->spec_lo[0], b.lo[0]);
  EXPECT_GE(r->spec_hi[0], b.hi[0]);
  // Node 4 (the sum, a tanh input) got its intermediate bound by CROWN: [0.02475, 0.0312117391].
  EXPECT_NEAR(r->boxes[4]->hi[0], 0.0312117391, 1e-9);
  auto ibp = run_crown(m.graph, m.payload, in, 5, nullptr, with(BoundMethod::Ibp));
  ASSERT_TRUE(ibp.ok());
  EXPECT_NEAR(ibp->spec_lo[0], 0.0207720117, 1e-9);
  auto alpha = run_crown(m.graph, m.payload, in, 5, nullptr, with(BoundMethod::AlphaCrown));
  ASSERT_TRUE(alpha.ok());
  EXPECT_GE(alpha->spec_lo[0], r->spec_lo[0]);
  EXPECT_LE(alpha->spec_hi[0], r->spec_hi[0]);
}

struct GoldenCase {
  std::string name, network;
  std::vector<double> lo, hi;
  bool has_spec = false;
  SpecMatrix spec;
  nlohmann::json results;
};

std::vector<GoldenCase> golden_cases() {
  std::ifstream f(std::string(DENOTE_SOURCE_DIR) + "/tests/data/lirpa/crown_golden.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  std::vector<GoldenCase> out;
  for (const auto& c : g["cases"]) {
    if (c["name"].get<std::string>().rfind("six_node", 0) == 0) continue;
    GoldenCase k{c["name"], c["network"], c["input"]["lo"], c["input"]["hi"], !c["C_passed"].is_null(), {}, c["results"]};
    for (const auto& row : c["C"]) {
      for (double v : row) k.spec.c.push_back(v);
      ++k.spec.rows;
    }
    k.spec.cols = static_cast<int64_t>(c["C"][0].size());
    out.push_back(std::move(k));
  }
  return out;
}

const nlohmann::json* lirpa_result(const GoldenCase& c, const std::string& method) {
  for (const auto& r : c.results)
    if (r["method"] == method && r["dtype"] == "float64") return &r;
  return nullptr;
}

// Every golden case: IBP and CROWN in auto_LiRPA's mode equal auto_LiRPA's bounds up to outward
// rounding; the default CROWN and alpha-CROWN are at least as tight, alpha-CROWN at least as CROWN.
TEST(Crown, AcasXuAndMnistfcAgainstAutoLirpa) {
  const auto cases = golden_cases();
  ASSERT_EQ(cases.size(), 6u);
  for (const GoldenCase& c : cases) {
    SCOPED_TRACE(c.name);
    auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/" + c.network);
    ASSERT_TRUE(m.ok()) << m.message();
    const DoubleBox box{m->graph.nodes[static_cast<size_t>(m->graph.input_ids()[0])].out_shape, c.lo, c.hi};
    std::vector<DoubleBox> in = {box};
    const SpecMatrix* spec = c.has_spec ? &c.spec : nullptr;
    auto run = [&](BoundMethod method, bool lirpa) {
      CrownOptions o = with(method);
      o.lirpa_compatible = lirpa;
      auto r = run_crown(m->graph, m->payload, in, m->output_ids[0], spec, o);
      EXPECT_TRUE(r.ok()) << r.message();
      return *r;
    };
    const auto same = [&](const CrownResult& r, const nlohmann::json& want) {
      const auto lo = want["lo"].get<std::vector<double>>(), hi = want["hi"].get<std::vector<double>>();
      for (size_t k = 0; k < lo.size(); ++k) {
        const double tol = 1e-9 * (1 + std::fabs(lo[k])) + 1e-9 * (1 + std::fabs(hi[k]));
        EXPECT_LE(r.spec_lo[k], lo[k] + 1e-12 * (1 + std::fabs(lo[k]))) << "row " << k << " not outward";
        EXPECT_GE(r.spec_hi[k], hi[k] - 1e-12 * (1 + std::fabs(hi[k]))) << "row " << k << " not outward";
        EXPECT_NEAR(r.spec_lo[k], lo[k], tol) << "row " << k;
        EXPECT_NEAR(r.spec_hi[k], hi[k], tol) << "row " << k;
      }
    };
    const auto tighter = [&](const CrownResult& r, const std::vector<double>& lo, const std::vector<double>& hi) {
      for (size_t k = 0; k < lo.size(); ++k) {
        EXPECT_GE(r.spec_lo[k], lo[k] - 1e-9 * (1 + std::fabs(lo[k]))) << "row " << k;
        EXPECT_LE(r.spec_hi[k], hi[k] + 1e-9 * (1 + std::fabs(hi[k]))) << "row " << k;
      }
    };
    same(run(BoundMethod::Ibp, false), *lirpa_result(c, "IBP"));
    const CrownResult crown_lirpa = run(BoundMethod::Crown, true);
    same(crown_lirpa, *lirpa_result(c, "CROWN"));
    const CrownResult crown = run(BoundMethod::Crown, false);
    tighter(crown, crown_lirpa.spec_lo, crown_lirpa.spec_hi);
    const CrownResult alpha = run(BoundMethod::AlphaCrown, false);
    tighter(alpha, crown.spec_lo, crown.spec_hi);
    const auto& la = *lirpa_result(c, "alpha-CROWN");
    tighter(alpha, la["lo"].get<std::vector<double>>(), la["hi"].get<std::vector<double>>());
    EXPECT_GT(alpha.alpha_steps, 0);
    // An intermediate budget already spent (CrownOptions::alpha_intermediate_until): the final rows'
    // slopes alone, exactly as with alpha_intermediate off; an unlimited one: the default run.
    auto alpha_with = [&](bool intermediate, std::chrono::steady_clock::time_point until) {
      CrownOptions o = with(BoundMethod::AlphaCrown);
      o.alpha_intermediate = intermediate, o.alpha_intermediate_until = until;
      auto r = run_crown(m->graph, m->payload, in, m->output_ids[0], spec, o);
      EXPECT_TRUE(r.ok()) << r.message();
      return *r;
    };
    const auto forever = std::chrono::steady_clock::time_point::max();
    const CrownResult spent = alpha_with(true, std::chrono::steady_clock::now());
    const CrownResult off = alpha_with(false, forever);
    EXPECT_EQ(spent.spec_lo, off.spec_lo);
    EXPECT_EQ(spent.spec_hi, off.spec_hi);
    EXPECT_LT(spent.alpha_steps, alpha.alpha_steps);
    EXPECT_EQ(alpha_with(true, forever).spec_lo, alpha.spec_lo);
    // A stall threshold (CrownOptions::alpha_intermediate_stall) ends an intermediate node's steps early
    // and never the final rows': with 1 every intermediate optimisation takes exactly 4 of its 20 steps;
    // with verify's 0.02 at most 20, the bounds still at least CROWN's.
    auto stalled = [&](double stall) {
      CrownOptions o = with(BoundMethod::AlphaCrown);
      o.alpha_intermediate_stall = stall;
      auto r = run_crown(m->graph, m->payload, in, m->output_ids[0], spec, o);
      EXPECT_TRUE(r.ok()) << r.message();
      return *r;
    };
    const CrownResult four = stalled(1.0), some = stalled(0.02);
    EXPECT_EQ((four.alpha_steps - spent.alpha_steps) * 20, (alpha.alpha_steps - spent.alpha_steps) * 4);
    EXPECT_LE(some.alpha_steps, alpha.alpha_steps);
    EXPECT_GE(some.alpha_steps, four.alpha_steps);
    tighter(four, crown.spec_lo, crown.spec_hi);
    tighter(some, crown.spec_lo, crown.spec_hi);
  }
}

// The lines of every relaxation hold against MPFR's f at points of [l, u] (both ends included).
double mpfr_eval(int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), double x, bool inv = false) {
  mpfr_t a;
  mpfr_init2(a, 200);
  mpfr_set_d(a, x, MPFR_RNDN);
  if (inv)
    mpfr_ui_div(a, 1, a, MPFR_RNDN);
  else
    fn(a, a, MPFR_RNDN);
  const double v = mpfr_get_d(a, MPFR_RNDN);
  mpfr_clear(a);
  return v;
}

int mpfr_sigmoid(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  mpfr_neg(y, x, r);
  mpfr_exp(y, y, r);
  mpfr_add_ui(y, y, 1, r);
  return mpfr_ui_div(y, 1, y, r);
}
int mpfr_softplus(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  mpfr_exp(y, x, r);
  return mpfr_log1p(y, y, r);
}

TEST(Crown, RelaxationLinesHoldAgainstMpfr) {
  using namespace crown;
  struct Fn {
    const char* name;
    Relax (*relax)(double, double);
    int (*ref)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
    double lo_min;  // the domain's left end
  };
  const Fn fns[] = {
      {"tanh", [](double l, double u) { return relax_s_shaped(Smooth{[](double x) { return std::tanh(x); }, [](double x) { const double t = std::tanh(x); return 1 - t * t; }, 16 * kU, 8 * kU}, l, u); }, mpfr_tanh, -20},
      {"sigmoid", [](double l, double u) { return relax_s_shaped(Smooth{[](double x) { return 1 / (1 + std::exp(-x)); }, [](double x) { const double s = 1 / (1 + std::exp(-x)); return s * (1 - s); }, 16 * kU, 8 * kU}, l, u); }, mpfr_sigmoid, -20},
      {"exp", [](double l, double u) { return relax_convex(Smooth{[](double x) { return std::exp(x); }, [](double x) { return std::exp(x); }}, l, u); }, mpfr_exp, -20},
      {"softplus", [](double l, double u) { return relax_convex(Smooth{[](double x) { return std::log1p(std::exp(x)); }, [](double x) { return 1 / (1 + std::exp(-x)); }, 16 * kU, 8 * kU}, l, u); }, mpfr_softplus, -20},
      {"log", [](double l, double u) { return relax_concave(Smooth{[](double x) { return std::log(x); }, [](double x) { return 1 / x; }}, l, u); }, mpfr_log, 1e-3},
      {"sqrt", [](double l, double u) { return relax_concave(Smooth{[](double x) { return std::sqrt(x); }, [](double x) { return 0.5 / std::sqrt(x); }}, l, u); }, mpfr_sqrt, 0},
  };
  ibp_test::Rng rng(0xc40);
  int64_t checks = 0;
  for (const Fn& fn : fns) {
    for (int t = 0; t < 400; ++t) {
      double l = rng.real(fn.lo_min, 8), u = l + (rng.range(0, 4) == 0 ? 0 : rng.real(0, 12));
      if (fn.lo_min >= 0) l = std::max(l, fn.lo_min), u = std::max(u, l);
      const Relax r = fn.relax(l, u);
      ASSERT_TRUE(r.ok) << fn.name << " [" << l << ", " << u << "]";
      for (int k = 0; k <= 64; ++k) {
        const double x = k == 64 ? u : l + (u - l) * k / 64.0;
        if (x < l || x > u) continue;
        const double f = mpfr_eval(fn.ref, x);
        // The lines are compared in long double: their own rounding is far below the margins kept.
        const long double below = static_cast<long double>(r.lo.a) * x + r.lo.b;
        const long double above = static_cast<long double>(r.up.a) * x + r.up.b;
        ASSERT_LE(below, f) << fn.name << " lower line at x = " << x << " on [" << l << ", " << u << "]";
        ASSERT_GE(above, f) << fn.name << " upper line at x = " << x << " on [" << l << ", " << u << "]";
        ++checks;
      }
    }
  }
  // sin and cos: lines on every box within one sign of the function (widths up to 3), none across a zero.
  int64_t periodic = 0, cut = 0;
  for (int t = 0; t < 4000; ++t) {
    const bool is_sin = t % 2 == 0;
    const double l = rng.real(-10, 10), u = l + (rng.range(0, 4) == 0 ? 0 : rng.real(0, 3.2));
    const Relax r = is_sin ? relax_sin(l, u) : relax_cos(l, u);
    const double phase = is_sin ? 0 : 1.5707963267948966, pi = 3.141592653589793;
    const bool zero_inside = std::floor((l - phase) / pi) != std::floor((u - phase) / pi);
    if (zero_inside || u - l >= 3) {
      ASSERT_FALSE(r.ok) << (is_sin ? "sin" : "cos") << " [" << l << ", " << u << "]";
      ++cut;
      continue;
    }
    if (!r.ok) continue;  // within the 1e-9 margin of a zero
    ++periodic;
    for (int k = 0; k <= 64; ++k) {
      const double x = k == 64 ? u : l + (u - l) * k / 64.0;
      const double f = mpfr_eval(is_sin ? mpfr_sin : mpfr_cos, x);
      ASSERT_LE(static_cast<long double>(r.lo.a) * x + r.lo.b, f) << (is_sin ? "sin" : "cos") << " lower at " << x << " on [" << l << ", " << u << "]";
      ASSERT_GE(static_cast<long double>(r.up.a) * x + r.up.b, f) << (is_sin ? "sin" : "cos") << " upper at " << x << " on [" << l << ", " << u << "]";
      ++checks;
    }
  }
  EXPECT_GT(periodic, 1000);
  EXPECT_GT(cut, 1000);
  // relu and abs, and inv on both signs.
  for (int t = 0; t < 2000; ++t) {
    const double l = rng.real(-5, 5), u = l + rng.real(0, 6);
    const Relax rr = relax_relu(l, u, rng.range(0, 1) ? rng.unit() : -1), ra = relax_abs(l, u);
    for (int k = 0; k <= 16; ++k) {
      const double x = k == 16 ? u : l + (u - l) * k / 16.0;
      const long double relu = x > 0 ? x : 0, ab = std::fabs(x);
      ASSERT_LE(static_cast<long double>(rr.lo.a) * x + rr.lo.b, relu);
      ASSERT_GE(static_cast<long double>(rr.up.a) * x + rr.up.b, relu);
      ASSERT_LE(static_cast<long double>(ra.lo.a) * x + ra.lo.b, ab);
      ASSERT_GE(static_cast<long double>(ra.up.a) * x + ra.up.b, ab);
      checks += 2;
    }
  }
  EXPECT_GT(checks, 150000);
}

// Random graphs over every relaxation, cut op and affine op of the IBP soundness test: every node
// box and every spec row contains the exact (MPFR) value and the value computed in the arithmetic.
// Random graphs (tests/unit/ibp_random_graphs.h) and boxes: every node's box and both spec rows
// contain the exact (MPFR) and the evaluated (f64 / f32) values at points of the box, for CROWN and
// alpha-CROWN with the options `tweak` sets.
void contain_on_random_graphs(uint64_t seed, int count, const std::function<void(CrownOptions&)>& tweak,
                              int64_t& checks, int64_t& graphs) {
  ibp_test::Rng rng(seed);
  for (int gi = 0; gi < count; ++gi) {
    const int64_t n = rng.range(1, 4);
    const Model m = ibp_test::random_model(rng, n);
    DoubleBox box{{n}, {}, {}};
    for (int64_t i = 0; i < n; ++i) {
      const double c = rng.real(-2, 2), r = rng.range(0, 3) == 0 ? 0 : rng.real(0, 0.8);
      box.lo.push_back(c - r), box.hi.push_back(c + r);
    }
    std::vector<DoubleBox> in = {box};
    const int64_t out = m.output_ids[0];
    const int64_t k = numel(m.graph.nodes[static_cast<size_t>(out)].out_shape);
    SpecMatrix spec{2, k, {}};
    for (int64_t i = 0; i < 2 * k; ++i) spec.c.push_back(rng.real(-1, 1));
    for (const char* arith : {"f64", "f32"}) {
      for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
        CrownOptions o = with(method, arith);
        o.alpha_iters = 5;
        tweak(o);
        auto boxes = run_crown(m.graph, m.payload, in, out, nullptr, o);
        auto rows = run_crown(m.graph, m.payload, in, out, &spec, o);
        ASSERT_TRUE(boxes.ok() && rows.ok()) << (boxes.ok() ? rows.message() : boxes.message());
        ++graphs;
        for (int j = 0; j < 6; ++j) {
          const std::vector<double> x = ibp_test::box_point(rng, box, j);
          RealContext real(200);
          F64Context f64;
          F32Context f32;
          std::vector<std::pair<ValueTable<double>, std::string>> values;
          if (auto t = ibp_test::eval_at(real, m, x); t.ok()) {
            ValueTable<double> d;
            for (const auto& v : *t) {
              Tensor<double> w = Tensor<double>::filled(v.shape, 0.0);
              for (size_t i = 0; i < v.data.size(); ++i) w.data[i] = real.to_double(v.data[i]);
              d.push_back(std::move(w));
            }
            values.emplace_back(std::move(d), "exact");
          }
          if (std::string(arith) == "f64") {
            if (auto t = ibp_test::eval_at(f64, m, x); t.ok()) values.emplace_back(std::move(*t), "f64");
          } else if (auto t = ibp_test::eval_at(f32, m, x); t.ok()) {
            ValueTable<double> d;
            for (const auto& v : *t) {
              Tensor<double> w = Tensor<double>::filled(v.shape, 0.0);
              for (size_t i = 0; i < v.data.size(); ++i) w.data[i] = v.data[i];
              d.push_back(std::move(w));
            }
            values.emplace_back(std::move(d), "f32");
          }
          for (const auto& [table, what] : values) {
            for (size_t id = 0; id < boxes->boxes.size(); ++id) {
              const auto& b = boxes->boxes[id];
              if (!b) continue;
              for (size_t i = 0; i < b->lo.size(); ++i) {
                const double y = table[id].data[i];
                if (std::isnan(y)) continue;  // NaN values: see NUMERICS.md (a box says nothing about them)
                ASSERT_TRUE(y >= b->lo[i] && y <= b->hi[i])
                    << what << " " << arith << " " << bound_method_name(method) << " graph " << gi << " node " << id
                    << " element " << i << ": " << y << " not in [" << b->lo[i] << ", " << b->hi[i] << "]";
                ++checks;
              }
            }
            const auto& yv = table[static_cast<size_t>(out)].data;
            for (int64_t r = 0; r < 2; ++r) {
              long double cy = 0;
              bool nan = false;
              for (int64_t i = 0; i < k; ++i) {
                cy += static_cast<long double>(spec.c[static_cast<size_t>(r * k + i)]) * yv[static_cast<size_t>(i)];
                nan = nan || std::isnan(yv[static_cast<size_t>(i)]);
              }
              if (nan) continue;
              // The products in long double: 11 extra bits cover the rounding of this check.
              ASSERT_GE(cy * (1 + 1e-15L) + 1e-300L, rows->spec_lo[static_cast<size_t>(r)] - std::fabs(cy) * 1e-15L)
                  << what << " spec row " << r << " graph " << gi;
              ASSERT_LE(cy - std::fabs(cy) * 1e-15L, rows->spec_hi[static_cast<size_t>(r)] + std::fabs(cy) * 1e-15L)
                  << what << " spec row " << r << " graph " << gi;
              ++checks;
            }
          }
        }
      }
    }
  }
}

TEST(Crown, RandomGraphsContainExactAndEvaluatedValues) {
  int64_t checks = 0, graphs = 0;
  contain_on_random_graphs(0xc20, 150, [](CrownOptions&) {}, checks, graphs);
  EXPECT_GT(checks, 10000);
  EXPECT_EQ(graphs, 600);
}

// The same with forward linear intermediate bounds (src/bounds/crown_symbolic.h), alone and before
// CROWN's intermediate passes: their rules (const, linear, relu, add/sub, layout) and the nodes they
// leave to IBP.
TEST(Crown, ForwardIntermediateBoundsContainExactAndEvaluatedValues) {
  for (bool crown_too : {false, true}) {
    int64_t checks = 0, graphs = 0;
    contain_on_random_graphs(0xf0d + (crown_too ? 1 : 0), 100, [&](CrownOptions& o) {
      o.forward_intermediate = true;
      o.intermediate_crown = crown_too;
    }, checks, graphs);
    EXPECT_GT(checks, 6000);
    EXPECT_EQ(graphs, 400);
  }
}

// A random ReLU network n -> (linear, relu) x layers -> linear to 2 outputs, and a random box.
// On ReLU networks the default CROWN is never looser than IBP (the boxes are intersected).
TEST(Crown, NeverLooserThanIbpOnReluNetworks) {
  ibp_test::Rng rng(0x1b9);
  for (int t = 0; t < 40; ++t) {
    const int layers = static_cast<int>(rng.range(1, 4));
    const ReluNet net = random_relu_net(rng, layers);
    const Model* m = &net.m;
    const int64_t x = net.out;
    std::vector<DoubleBox> in = {net.box};
    auto ibp = run_crown(m->graph, m->payload, in, x, nullptr, with(BoundMethod::Ibp));
    auto cr = run_crown(m->graph, m->payload, in, x, nullptr, with(BoundMethod::Crown));
    ASSERT_TRUE(ibp.ok() && cr.ok());
    for (size_t id = 0; id < cr->boxes.size(); ++id)
      for (size_t i = 0; i < cr->boxes[id]->lo.size(); ++i) {
        EXPECT_GE(cr->boxes[id]->lo[i], ibp->boxes[id]->lo[i]) << "node " << id;
        EXPECT_LE(cr->boxes[id]->hi[i], ibp->boxes[id]->hi[i]) << "node " << id;
      }
  }
}

// CrownOptions::input_coefficients: row r's lower bound is min over the box of a_r . x + beta_r, and
// that linear function stays below the network at every point of the box (not only at its
// minimum). On a linear model a_r is the weight row itself.
TEST(Crown, InputCoefficientsGiveALowerBoundingLinearFunction) {
  ibp_test::Rng rng(0x5c0);
  CrownOptions o = with(BoundMethod::Crown);
  o.input_coefficients = true;
  for (int t = 0; t < 30; ++t) {
    const ReluNet net = random_relu_net(rng, static_cast<int>(rng.range(1, 3)));
    const Model* m = &net.m;
    const int64_t x = net.out, n = net.n;
    auto r = run_crown(m->graph, m->payload, std::vector<DoubleBox>{net.box}, x, nullptr, o);
    ASSERT_TRUE(r.ok()) << r.message();
    const size_t rows = r->spec_lo.size();
    ASSERT_EQ(r->input_coef.size(), rows * static_cast<size_t>(n));
    std::vector<double> beta(rows);
    for (size_t k = 0; k < rows; ++k) {
      double at_min = 0;
      for (int64_t i = 0; i < n; ++i) {
        const double a = r->input_coef[k * static_cast<size_t>(n) + static_cast<size_t>(i)];
        at_min += a >= 0 ? a * net.box.lo[static_cast<size_t>(i)] : a * net.box.hi[static_cast<size_t>(i)];
      }
      beta[k] = r->spec_lo[k] - at_min;
    }
    F64Context ctx;
    for (int s = 0; s < 50; ++s) {
      Tensor<double> in{{n}, {}};
      for (int64_t i = 0; i < n; ++i)
        in.data.push_back(rng.real(net.box.lo[static_cast<size_t>(i)], net.box.hi[static_cast<size_t>(i)]));
      auto y = denote(m->graph, m->payload, std::vector<Tensor<double>>{in}, x, ctx);
      ASSERT_TRUE(y.ok());
      for (size_t k = 0; k < rows; ++k) {
        double line = beta[k], mag = std::fabs(beta[k]);
        for (int64_t i = 0; i < n; ++i) {
          const double term = r->input_coef[k * static_cast<size_t>(n) + static_cast<size_t>(i)] * in.data[static_cast<size_t>(i)];
          line += term;
          mag += std::fabs(term);
        }
        EXPECT_GE(y->data[k], line - 1e-12 * (mag + 1)) << "row " << k << " point " << s;
      }
    }
  }
  // A linear model: the coefficients are the weight rows (spec = identity), exactly.
  GraphBuilder b;
  const int64_t xi = b.input({3});
  const std::vector<double> w = {1, -2, 0.5, 3, 0, -1};
  const int64_t y = b.linear(xi, 2, w, {0.25, -4});
  Result<Model> lin = b.build({y});
  ASSERT_TRUE(lin.ok()) << lin.message();
  const DoubleBox box{{3}, {-1, 0, 2}, {1, 3, 5}};
  auto r = run_crown(lin->graph, lin->payload, std::vector<DoubleBox>{box}, y, nullptr, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->input_coef, w);
  // Without the option, none.
  auto plain = run_crown(lin->graph, lin->payload, std::vector<DoubleBox>{box}, y, nullptr, with(BoundMethod::Crown));
  ASSERT_TRUE(plain.ok());
  EXPECT_TRUE(plain->input_coef.empty());
}

// alpha-CROWN with input coefficients (lower-only spec rows, auto_LiRPA's return_A on its optimised
// bound): each row's coefficients are those of the step that gave its best bound, so the line with the
// constant bound - min(line) lies below the network at evaluated points; many rows beat CROWN's.
TEST(Crown, AlphaInputCoefficientsBelongToEachRowsBestStep) {
  ibp_test::Rng rng(0xa1f);
  int tighter = 0;
  for (int t = 0; t < 20; ++t) {
    const ReluNet net = random_relu_net(rng, static_cast<int>(rng.range(2, 4)));
    const Model* m = &net.m;
    const int64_t n = net.n, ny = numel(m->graph.nodes[static_cast<size_t>(net.out)].out_shape);
    SpecMatrix spec{ny, ny, std::vector<double>(static_cast<size_t>(ny * ny), 0.0)};
    for (int64_t k = 0; k < ny; ++k) spec.c[static_cast<size_t>(k * ny + k)] = k % 2 ? -1.0 : 1.0;
    CrownOptions o = with(BoundMethod::AlphaCrown);
    o.input_coefficients = o.lower_only = true;
    CrownOptions c = with(BoundMethod::Crown);
    c.input_coefficients = c.lower_only = true;
    auto r = run_crown(m->graph, m->payload, std::vector<DoubleBox>{net.box}, net.out, &spec, o);
    auto cr = run_crown(m->graph, m->payload, std::vector<DoubleBox>{net.box}, net.out, &spec, c);
    ASSERT_TRUE(r.ok() && cr.ok()) << r.message();
    ASSERT_TRUE(r->input_linear);
    const size_t rows = static_cast<size_t>(ny), nx = static_cast<size_t>(n);
    ASSERT_EQ(r->input_coef.size(), rows * nx);
    std::vector<double> beta(rows);
    for (size_t k = 0; k < rows; ++k) {
      tighter += r->spec_lo[k] > cr->spec_lo[k] + 1e-9;  // (not every row: its intermediate boxes differ)
      double at_min = 0;
      for (size_t i = 0; i < nx; ++i) {
        const double a = r->input_coef[k * nx + i];
        at_min += a >= 0 ? a * net.box.lo[i] : a * net.box.hi[i];
      }
      beta[k] = r->spec_lo[k] - at_min;
    }
    F64Context ctx;
    for (int s = 0; s < 40; ++s) {
      Tensor<double> in{{n}, {}};
      for (size_t i = 0; i < nx; ++i) in.data.push_back(rng.real(net.box.lo[i], net.box.hi[i]));
      auto y = denote(m->graph, m->payload, std::vector<Tensor<double>>{in}, net.out, ctx);
      ASSERT_TRUE(y.ok());
      for (size_t k = 0; k < rows; ++k) {
        double line = beta[k], mag = std::fabs(beta[k]);
        for (size_t i = 0; i < nx; ++i) line += r->input_coef[k * nx + i] * in.data[i], mag += std::fabs(line);
        const double cy = (k % 2 ? -1.0 : 1.0) * y->data[k];
        EXPECT_GE(cy, line - 1e-12 * (mag + 1)) << "net " << t << " row " << k << " point " << s;
      }
    }
  }
  EXPECT_GT(tighter, 5);  // the optimised steps did beat CROWN, so their own coefficients were kept
}

// Branch and bound passes a parent box's node boxes as the prior of a sub-box: the child's bounds
// still hold at evaluated points of the sub-box, and they are tighter more often than looser
// (CROWN is not monotone in its intermediate boxes: a tighter box can flip a relu's adaptive lower
// slope or move its upper line).
TEST(Crown, PriorBoxesOfASuperBoxHoldAndHelp) {
  ibp_test::Rng rng(0x9a1);
  int tighter = 0, looser = 0;
  for (int t = 0; t < 40; ++t) {
    const ReluNet net = random_relu_net(rng, 3);
    const Model* m = &net.m;
    const int64_t x = net.out, n = net.n;
    const DoubleBox& box = net.box;
    auto parent = run_crown(m->graph, m->payload, std::vector<DoubleBox>{box}, x, nullptr, with(BoundMethod::Crown));
    ASSERT_TRUE(parent.ok());
    DoubleBox sub = box;
    const size_t k = static_cast<size_t>(rng.range(0, n - 1));
    sub.hi[k] = sub.lo[k] + (sub.hi[k] - sub.lo[k]) / 2;
    Subdomain with_prior;
    with_prior.prior = std::make_shared<const NodeBoxes>(parent->boxes);
    auto plain = run_crown(m->graph, m->payload, std::vector<DoubleBox>{sub}, x, nullptr, with(BoundMethod::Crown));
    auto child =
        run_crown(m->graph, m->payload, std::vector<DoubleBox>{sub}, x, nullptr, with(BoundMethod::Crown), with_prior);
    ASSERT_TRUE(plain.ok() && child.ok());
    for (size_t j = 0; j < 2; ++j) {
      const double w_child = child->spec_hi[j] - child->spec_lo[j], w_plain = plain->spec_hi[j] - plain->spec_lo[j];
      tighter += w_child < w_plain * (1 - 1e-9);
      looser += w_child > w_plain * (1 + 1e-9);
    }
    F64Context ctx;
    for (int s = 0; s < 50; ++s) {
      Tensor<double> in{{n}, {}};
      for (int64_t i = 0; i < n; ++i) in.data.push_back(rng.real(sub.lo[static_cast<size_t>(i)], sub.hi[static_cast<size_t>(i)]));
      auto y = denote(m->graph, m->payload, std::vector<Tensor<double>>{in}, x, ctx);
      ASSERT_TRUE(y.ok());
      for (size_t j = 0; j < 2; ++j) {
        EXPECT_GE(y->data[j], child->spec_lo[j]);
        EXPECT_LE(y->data[j], child->spec_hi[j]);
      }
    }
  }
  EXPECT_GT(tighter, looser) << tighter << " tighter, " << looser << " looser";
}

TEST(Crown, ErrorsNameWhatIsWrong) {
  const Model m = six_node_model();
  std::vector<DoubleBox> in = {*box_around(Tensor<double>({4}, six_node_x0()), 0.05)};
  SpecMatrix bad{1, 3, {1, 2, 3}};
  auto r = run_crown(m.graph, m.payload, in, 5, &bad, with(BoundMethod::Crown));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "spec");
  EXPECT_NE(r.message().find("columns"), std::string::npos) << r.message();
  SpecMatrix inf{1, 1, {INFINITY}};
  EXPECT_FALSE(run_crown(m.graph, m.payload, in, 5, &inf, with(BoundMethod::Crown)).ok());
  auto a = run_crown(m.graph, m.payload, in, 5, nullptr, with(BoundMethod::Crown, "bfloat16"));
  ASSERT_FALSE(a.ok());
  EXPECT_EQ(a.status().field(), "arith");
  EXPECT_FALSE(run_crown(m.graph, m.payload, in, 9, nullptr, with(BoundMethod::Crown)).ok());
  EXPECT_EQ(parse_bound_method("alpha-crown"), BoundMethod::AlphaCrown);
  EXPECT_FALSE(parse_bound_method("beta-crown").has_value());
  // auto_LiRPA's spellings (issue 51): any case, and its name for alpha-CROWN.
  EXPECT_EQ(parse_bound_method("IBP"), BoundMethod::Ibp);
  EXPECT_EQ(parse_bound_method("CROWN"), BoundMethod::Crown);
  EXPECT_EQ(parse_bound_method("alpha-CROWN"), BoundMethod::AlphaCrown);
  EXPECT_EQ(parse_bound_method("CROWN-Optimized"), BoundMethod::AlphaCrown);
  EXPECT_FALSE(parse_bound_method("CROWN-IBP").has_value());
  EXPECT_FALSE(parse_bound_method("").has_value());
}

}  // namespace
}  // namespace denote
