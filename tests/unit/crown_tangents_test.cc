// The S-shaped ops' lines (tanh, sigmoid, erf: src/bounds/crown_relax.h, crown_tangents.h): CROWN's
// default in the mixed case is the tangent through the other end (auto_LiRPA's choice), every tangent
// parameter alpha-CROWN may take gives lines that hold against MPFR, and alpha-CROWN on sigmoid and tanh
// networks contains the f64 and f32 evaluations, is never looser than CROWN, tightens it, and is at least
// as tight as auto_LiRPA's alpha-CROWN on a small network (numbers measured with auto_LiRPA here).
#include <gtest/gtest.h>

#include <mpfr.h>

#include <cmath>
#include <string>
#include <vector>

#include "bounds/crown_relax.h"
#include "bounds/crown_tangents.h"
#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/scalar/native.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

using crown::Line;
using crown::Smooth;

double sigmoid(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double sigmoid_d(double x) { return sigmoid(x) * (1 - sigmoid(x)); }
double tanh_d(double x) { return 1 - std::tanh(x) * std::tanh(x); }
double erf_f(double x) { return std::erf(x); }
double erf_d(double x) { return 1.1283791670955126 * std::exp(-x * x); }

int mpfr_sigmoid(mpfr_ptr y, mpfr_srcptr x, mpfr_rnd_t r) {
  mpfr_neg(y, x, r);
  mpfr_exp(y, y, r);
  mpfr_add_ui(y, y, 1, r);
  return mpfr_ui_div(y, 1, y, r);
}
double mpfr_at(int (*fn)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t), double x) {
  mpfr_t a;
  mpfr_init2(a, 200);
  mpfr_set_d(a, x, MPFR_RNDN);
  fn(a, a, MPFR_RNDN);
  const double v = mpfr_get_d(a, MPFR_RNDN);
  mpfr_clear(a);
  return v;
}

struct Fn {
  const char* name;
  Smooth s;
  int (*ref)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
};
const Fn kFns[] = {{"tanh", Smooth{[](double x) { return std::tanh(x); }, tanh_d, 16 * crown::kU, 8 * crown::kU}, mpfr_tanh},
                   {"sigmoid", Smooth{sigmoid, sigmoid_d, 16 * crown::kU, 8 * crown::kU}, mpfr_sigmoid},
                   {"erf", Smooth{erf_f, erf_d}, mpfr_erf}};

// The lines of every tangent parameter (drawn beyond the range too: clamped) hold against MPFR's f at
// 65 points of [l, u], in convex, concave and mixed intervals.
TEST(CrownTangents, EveryParameterGivesLinesThatHoldAgainstMpfr) {
  ibp_test::Rng rng(0x7a9);
  int64_t checks = 0, lines = 0;
  for (const Fn& fn : kFns) {
    for (int t = 0; t < 300; ++t) {
      const double l = rng.real(-9, 6), u = l + rng.real(1e-3, 12);
      const crown::TangentBox e = crown::tangent_box(fn.s, l, u);
      std::vector<double> xs, fs;  // MPFR's f at the points, once per interval
      for (int i = 0; i <= 64; ++i) {
        xs.push_back(i == 64 ? u : l + (u - l) * i / 64.0);
        fs.push_back(mpfr_at(fn.ref, xs.back()));
      }
      for (int k = 0; k < 6; ++k) {
        const double d = rng.real(l - 2, u + 2);
        Line lo, up;
        const bool has_lo = crown::tangent_lower(fn.s, e, d, lo), has_up = crown::tangent_upper(fn.s, e, d, up);
        lines += has_lo + has_up;
        for (size_t i = 0; i < xs.size(); ++i) {
          const double x = xs[i], f = fs[i];
          if (has_lo) ASSERT_LE(static_cast<long double>(lo.a) * x + lo.b, f) << fn.name << " lower, d " << d << " on [" << l << ", " << u << "] at " << x;
          if (has_up) ASSERT_GE(static_cast<long double>(up.a) * x + up.b, f) << fn.name << " upper, d " << d << " on [" << l << ", " << u << "] at " << x;
          ++checks;
        }
      }
    }
  }
  EXPECT_GT(lines, 3 * 300 * 6);  // most elements have a parameter on at least one side
  EXPECT_GT(checks, 100000);
}

// Mixed intervals: CROWN's lower line is the tangent at d* (through (u, f(u))) or at the midpoint when
// that is left of d*; its upper line mirrors it; where no d* exists, the chord.
TEST(CrownTangents, MixedLinesAreTheTangentsThroughTheOtherEnd) {
  for (const Fn& fn : kFns) {
    SCOPED_TRACE(fn.name);
    const double l = -2, u = 1;  // lopsided to the left: the lower tangent point is d*, right of the midpoint
    const double d = crown::s_lower_point(fn.s, l, u);
    ASSERT_FALSE(std::isnan(d));
    EXPECT_GT(d, l + (u - l) / 2);
    EXPECT_LT(d, 0);
    const crown::Relax r = crown::relax_s_shaped(fn.s, l, u);
    EXPECT_NEAR(r.lo.a, fn.s.df(l + (u - l) / 2), 1e-12);  // the midpoint's tangent
    const double du = crown::s_upper_point(fn.s, l, u);
    ASSERT_FALSE(std::isnan(du));
    EXPECT_NEAR(r.up.a, fn.s.df(du), 1e-12);  // d* of the upper side is right of the midpoint
    EXPECT_NEAR(r.up.a * l + r.up.b, fn.s.f(l), 1e-9);  // and its tangent passes through (l, f(l))
    // Symmetric: the lower tangent touches f at u.
    const crown::Relax w = crown::relax_s_shaped(fn.s, -1, 2);
    EXPECT_NEAR(w.lo.a * 2 + w.lo.b, fn.s.f(2), 1e-9);
  }
}

Model s_net(ibp_test::Rng& rng, Op act, int64_t n, int layers) {
  GraphBuilder b;
  int64_t x = b.input({n});
  for (int l = 0; l < layers; ++l) {
    std::vector<double> w, bias;
    for (int64_t i = 0; i < n * n; ++i) w.push_back(rng.real(-2, 2));
    for (int64_t i = 0; i < n; ++i) bias.push_back(rng.real(-1, 1));
    x = b.unary(act, b.linear(x, n, w, bias));
  }
  std::vector<double> w(static_cast<size_t>(2 * n)), bias(2, 0.0);
  for (double& v : w) v = rng.real(-1, 1);
  auto m = b.build({b.linear(x, 2, w, bias)});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

TEST(CrownTangents, AlphaCrownOnSigmoidAndTanhNetsHoldsAndTightens) {
  ibp_test::Rng rng(0x5e);
  double gained = 0;
  int runs = 0;
  for (Op act : {Op::Sigmoid, Op::Tanh}) {
    for (int t = 0; t < 6; ++t) {
      const int64_t n = rng.range(3, 6);
      const Model m = s_net(rng, act, n, static_cast<int>(rng.range(1, 3)));
      ASSERT_FALSE(m.graph.nodes.empty());
      DoubleBox box{{n}, {}, {}};
      for (int64_t i = 0; i < n; ++i) {
        const double c = rng.real(-1, 1), r = rng.real(0.2, 1.5);
        box.lo.push_back(c - r), box.hi.push_back(c + r);
      }
      const std::vector<DoubleBox> in = {box};
      for (const char* arith : {"f64", "f32"}) {
        SCOPED_TRACE(::testing::Message() << op_tag(act) << " net " << t << " " << arith);
        CrownOptions o;
        o.arith = *parse_arith_name(arith);
        o.method = BoundMethod::Crown;
        auto crown = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
        o.method = BoundMethod::AlphaCrown;
        auto alpha = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
        ASSERT_TRUE(crown.ok() && alpha.ok()) << crown.message() << alpha.message();
        for (size_t k = 0; k < 2; ++k) {
          EXPECT_GE(alpha->spec_lo[k], crown->spec_lo[k]);
          EXPECT_LE(alpha->spec_hi[k], crown->spec_hi[k]);
          gained += (alpha->spec_lo[k] - crown->spec_lo[k]) + (crown->spec_hi[k] - alpha->spec_hi[k]);
        }
        // The evaluations at the corners' neighbourhood and inside.
        const Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
        for (int s = 0; s < 48; ++s) {
          std::vector<double> x;
          for (int64_t i = 0; i < n; ++i)
            x.push_back(s < 16 ? (rng.range(0, 1) ? box.lo[i] : box.hi[i]) : rng.real(box.lo[i], box.hi[i]));
          std::vector<double> y;
          if (std::string(arith) == "f32") {
            F32Context f;
            const std::vector<Tensor<float>> xi = {Tensor<float>({n}, std::vector<float>(x.begin(), x.end()))};
            auto v = denote(m.graph, p32, std::span<const Tensor<float>>(xi), m.output_ids[0], f);
            ASSERT_TRUE(v.ok());
            y.assign(v->data.begin(), v->data.end());
          } else {
            F64Context f;
            const std::vector<Tensor<double>> xi = {Tensor<double>({n}, x)};
            auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xi), m.output_ids[0], f);
            ASSERT_TRUE(v.ok());
            y = v->data;
          }
          for (size_t k = 0; k < 2; ++k) {
            EXPECT_LE(alpha->spec_lo[k], y[k]) << "output " << k;
            EXPECT_GE(alpha->spec_hi[k], y[k]) << "output " << k;
          }
        }
        ++runs;
      }
    }
  }
  EXPECT_EQ(runs, 24);
  EXPECT_GT(gained, 0.01);  // the tangent points are optimised, not left at CROWN's
}

// y = [1, -1] . sigmoid(W x + b), x in [-3.3, 3.3] x [-2, 2.5]. auto_LiRPA (1 thread, float32, this
// machine): CROWN [-0.50188386, 0.65076041]; alpha-CROWN with 5 steps [-0.43716037, 0.50743371], with 20
// steps [-0.42288017, 0.49781501]. The true range (a 201 x 201 grid) is about [-0.3582, 0.4688].
TEST(CrownTangents, SmallSigmoidNetAgainstAutoLirpa) {
  GraphBuilder b;
  const int64_t x = b.input({1, 2});
  const int64_t h = b.unary(Op::Sigmoid, b.linear(x, 2, {1, 0, 0.5, 0.5}, {0.3, -0.2}));
  auto m = b.build({b.linear(h, 1, {1, -1}, {0})});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<DoubleBox> in = {DoubleBox{{1, 2}, {-3.3, -2}, {3.3, 2.5}}};
  CrownOptions o;
  o.method = BoundMethod::Crown;
  auto crown = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
  ASSERT_TRUE(crown.ok()) << crown.message();
  EXPECT_NEAR(crown->spec_lo[0], -0.50188386, 2e-3);
  EXPECT_NEAR(crown->spec_hi[0], 0.65076041, 2e-3);
  for (int iters : {5, 20}) {
    o.method = BoundMethod::AlphaCrown;
    o.alpha_iters = iters;
    auto alpha = run_crown(m->graph, m->payload, in, m->output_ids[0], nullptr, o);
    ASSERT_TRUE(alpha.ok()) << alpha.message();
    const double lirpa_lo = iters == 5 ? -0.43716037 : -0.42288017, lirpa_hi = iters == 5 ? 0.50743371 : 0.49781501;
    EXPECT_GE(alpha->spec_lo[0], lirpa_lo - 1e-4) << iters << " steps";
    EXPECT_LE(alpha->spec_hi[0], lirpa_hi + 1e-4) << iters << " steps";
    EXPECT_LE(alpha->spec_lo[0], -0.3581);  // and sound
    EXPECT_GE(alpha->spec_hi[0], 0.4688);
  }
}

}  // namespace
}  // namespace denote
