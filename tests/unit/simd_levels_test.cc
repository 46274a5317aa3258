// The one SIMD level switch (src/base/cpu.h) that every kernel follows, and every kernel copy run on
// this machine: CROWN, alpha-CROWN, CROWN with forward intermediate bounds and prepared IBP on the
// mnistfc and ACAS Xu networks, in f64 and f32, at each level the CPU has (0: the baseline copies of
// the kernels layer, src/kernels/, and of crown_rules, with no BLAS, which an AVX machine never runs
// otherwise; tests/unit/kernels_test.cc checks each kernel alone). Each level's bounds contain the arithmetic's own evaluation at
// sampled points of the box, and the levels agree to within rounding (their sums differ in order only).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"
#include "denote/scalar/native.h"


namespace denote {
namespace {

struct LevelGuard {
  ~LevelGuard() { set_simd_level(-1); }
};

TEST(SimdLevels, TheSwitchIsClampedToTheCpu) {
  LevelGuard guard;
  const int best = cpu_simd_level();
  EXPECT_EQ(simd_level(), best);
  EXPECT_EQ(set_simd_level(0), 0);
  EXPECT_FALSE(have_avx2());
  EXPECT_FALSE(have_avx2_fma());
  EXPECT_FALSE(have_avx512f());
  EXPECT_EQ(set_simd_level(1), std::min(1, best));
  EXPECT_FALSE(have_avx512f());
  EXPECT_EQ(have_avx2(), best >= 1);
  EXPECT_EQ(set_simd_level(7), best);
  EXPECT_EQ(set_simd_level(-1), best);
  EXPECT_EQ(have_avx512f(), cpu_avx512f());
}

struct Net {
  const char* path;
  double eps;
  double lo, hi;  // the input range the box's center is drawn from
};

Model load(const std::string& rel) {
  auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + rel);
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? std::move(*m) : Model{};
}

DoubleBox box_of(const Model& m, const Net& net, uint64_t seed) {
  const Shape& s = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(net.lo, net.hi);
  DoubleBox b{s, {}, {}};
  for (int64_t i = 0; i < numel(s); ++i) {
    const double c = u(rng);
    b.lo.push_back(c - net.eps), b.hi.push_back(c + net.eps);
  }
  return b;
}

// The arithmetic's own evaluation at sampled points of the box lies in [lo, hi] output by output.
void expect_contains(const Model& m, const std::string& arith, const DoubleBox& box, const std::vector<double>& lo,
                     const std::vector<double>& hi) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> t(0, 1);
  const Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  for (int k = 0; k < 16; ++k) {
    std::vector<double> x;
    for (size_t i = 0; i < box.lo.size(); ++i) x.push_back(box.lo[i] + t(rng) * (box.hi[i] - box.lo[i]));
    std::vector<double> y;
    if (arith == "f32") {
      F32Context f;
      const std::vector<Tensor<float>> in = {Tensor<float>(box.shape, std::vector<float>(x.begin(), x.end()))};
      auto v = denote(m.graph, p32, std::span<const Tensor<float>>(in), m.output_ids[0], f);
      ASSERT_TRUE(v.ok()) << v.message();
      y.assign(v->data.begin(), v->data.end());
    } else {
      F64Context f;
      const std::vector<Tensor<double>> in = {Tensor<double>(box.shape, x)};
      auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(in), m.output_ids[0], f);
      ASSERT_TRUE(v.ok()) << v.message();
      y = v->data;
    }
    ASSERT_EQ(y.size(), lo.size());
    for (size_t j = 0; j < y.size(); ++j) {
      EXPECT_LE(lo[j], y[j]) << "output " << j;
      EXPECT_GE(hi[j], y[j]) << "output " << j;
    }
  }
}

struct Bounds {
  std::vector<double> lo, hi;
};

void expect_close(const Bounds& a, const Bounds& b, double rel) {
  ASSERT_EQ(a.lo.size(), b.lo.size());
  for (size_t j = 0; j < a.lo.size(); ++j) {
    EXPECT_NEAR(a.lo[j], b.lo[j], rel * (1 + std::fabs(a.lo[j]))) << "output " << j;
    EXPECT_NEAR(a.hi[j], b.hi[j], rel * (1 + std::fabs(a.hi[j]))) << "output " << j;
  }
}

struct Config {
  BoundMethod method;
  bool forward;
  const char* name;
};

TEST(SimdLevels, BoundsAtEveryLevelHoldAndAgree) {
  LevelGuard guard;
  const Net nets[] = {{"/tests/data/mnistfc/mnist-net_256x2.onnx", 0.02, 0.1, 0.9},
                      {"/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx", 0.05, -0.4, 0.4}};
  const Config configs[] = {{BoundMethod::Crown, false, "crown"},
                            {BoundMethod::AlphaCrown, false, "alpha-crown"},
                            {BoundMethod::Crown, true, "crown, forward intermediate"}};
  int runs = 0;
  for (const Net& net : nets) {
    const Model m = load(net.path);
    ASSERT_FALSE(m.graph.nodes.empty());
    const DoubleBox box = box_of(m, net, 3);
    const std::vector<DoubleBox> in = {box};
    for (const char* arith : {"f64", "f32"}) {
      auto prep = IbpPrepared::prepare(m.graph, m.payload, arith);
      ASSERT_TRUE(prep.ok()) << prep.message();
      for (const Config& c : configs) {
        std::vector<Bounds> per_level;
        for (int level = 0; level <= cpu_simd_level(); ++level) {
          SCOPED_TRACE(::testing::Message() << net.path << " " << arith << " " << c.name << " level " << level);
          ASSERT_EQ(set_simd_level(level), level);
          CrownOptions o;
          o.method = c.method;
          o.arith = *parse_arith_name(arith);
          o.alpha_iters = 5;
          o.forward_intermediate = c.forward;
          Subdomain where;
          where.prepared = *prep;
          auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o, where);
          ASSERT_TRUE(r.ok()) << r.message();
          expect_contains(m, arith, box, r->spec_lo, r->spec_hi);
          per_level.push_back({r->spec_lo, r->spec_hi});
          if (level > 0) expect_close(per_level[0], per_level.back(), c.method == BoundMethod::Crown ? 1e-9 : 1e-6);
          ++runs;
        }
      }
      // Prepared IBP (the interval mat-vec's copies): equal boxes at every level up to rounding.
      std::vector<Bounds> ibp;
      for (int level = 0; level <= cpu_simd_level(); ++level) {
        SCOPED_TRACE(::testing::Message() << net.path << " " << arith << " ibp level " << level);
        set_simd_level(level);
        auto r = run_ibp_double(*prep, std::span<const DoubleBox>(in));
        ASSERT_TRUE(r.ok()) << r.message();
        const auto& out = r->boxes[static_cast<size_t>(m.output_ids[0])];
        ASSERT_TRUE(out.has_value());
        expect_contains(m, arith, box, out->lo, out->hi);
        ibp.push_back({out->lo, out->hi});
        if (level > 0) expect_close(ibp[0], ibp.back(), 1e-9);
      }
    }
  }
  EXPECT_EQ(runs, 2 * 2 * 3 * (cpu_simd_level() + 1));
}

}  // namespace
}  // namespace denote
