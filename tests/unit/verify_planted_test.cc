// A soundness net in the spirit of SoundnessBench (issue 47): relu networks built with a hidden
// counterexample, a spike of tiny volume that random points and gradient descent miss (the gradient
// is 0 outside it). verify must never answer unsat on them, in f32 or f64, on one or two threads; a
// sat must lie in the planted region.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "denote/base/splitmix.h"
#include "denote/program/builder.h"
#include "denote/verify/verify.h"

namespace denote {
namespace {

struct Planted {
  Model m;
  std::vector<double> p;  // the spike's centre
  double k = 0, eps = 0;  // Y_0 = relu(eps - k |x - p|_1) + noise, |noise| <= eps / 8
  std::string vnnlib;     // the box [-1, 1]^n and Y_0 >= eps / 2
};

double uniform(SplitMix64& rng, double lo, double hi) {
  return lo + static_cast<double>(rng.next() >> 11) * 0x1p-53 * (hi - lo);
}

Planted planted(uint64_t seed, int64_t n) {
  SplitMix64 rng(seed);
  Planted r;
  r.eps = 1.0;
  r.k = std::pow(10.0, uniform(rng, 3, 5));  // the region's half-width in L1: about eps / (2k), 5e-6 .. 5e-4
  for (int64_t i = 0; i < n; ++i) r.p.push_back(uniform(rng, -0.9, 0.9));
  const int64_t noise = 4;
  GraphBuilder b;
  const int64_t x = b.input({n});
  // Layer 1: x_i - p_i, p_i - x_i, and `noise` random units.
  std::vector<double> w1, b1;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) w1.push_back(i == j ? 1.0 : 0.0);
    b1.push_back(-r.p[static_cast<size_t>(i)]);
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) w1.push_back(i == j ? -1.0 : 0.0);
    b1.push_back(r.p[static_cast<size_t>(i)]);
  }
  for (int64_t u = 0; u < noise; ++u) {
    for (int64_t j = 0; j < n; ++j) w1.push_back(uniform(rng, -1, 1));
    b1.push_back(uniform(rng, -0.5, 0.5));
  }
  const int64_t h1 = b.unary(Op::Relu, b.linear(x, 2 * n + noise, w1, b1));
  // Layer 2: the spike's pre-activation eps - k |x - p|_1, and the noise sum (|.| <= eps / 8 on the box).
  const int64_t w = 2 * n + noise;
  std::vector<double> w2(static_cast<size_t>(2 * w), 0.0);
  for (int64_t j = 0; j < 2 * n; ++j) w2[static_cast<size_t>(j)] = -r.k;
  const double noise_scale = r.eps / 8 / (static_cast<double>(noise) * (static_cast<double>(n) + 0.5));
  for (int64_t u = 0; u < noise; ++u) w2[static_cast<size_t>(w + 2 * n + u)] = uniform(rng, -1, 1) * noise_scale;
  const int64_t h2 = b.linear(h1, 2, w2, {r.eps, 0.0});
  // Y_0 = relu(spike) + noise.
  const int64_t spike = b.unary(Op::Relu, b.linear(h2, 1, {1.0, 0.0}, {0.0}));
  const int64_t y = b.binary(Op::Add, spike, b.linear(h2, 1, {0.0, 1.0}, {0.0}));
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  r.m = std::move(*m);
  for (int64_t i = 0; i < n; ++i) r.vnnlib += fmt::format("(declare-const X_{} Real)", i);
  r.vnnlib += "(declare-const Y_0 Real)";
  for (int64_t i = 0; i < n; ++i) r.vnnlib += fmt::format("(assert (>= X_{0} -1))(assert (<= X_{0} 1))", i);
  r.vnnlib += "(assert (>= Y_0 0.5))";
  return r;
}

TEST(VerifyPlanted, NeverUnsatOnAHiddenCounterexample) {
  int sat = 0, runs = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    const Planted r = planted(seed, 2 + static_cast<int64_t>(seed % 3));
    auto p = parse_vnnlib(r.vnnlib);
    ASSERT_TRUE(p.ok()) << p.message();
    for (const char* arith : {"f32", "f64"})
      for (int threads : {1, 2}) {
        SCOPED_TRACE(fmt::format("seed {} arith {} threads {}", seed, arith, threads));
        VerifyOptions o;
        o.arith = *parse_arith_name(arith);
        o.threads = threads;
        o.timeout_s = 1.5;
        auto out = verify(r.m, *p, o);
        ASSERT_TRUE(out.ok()) << out.message();
        ++runs;
        EXPECT_NE(out->result, VerifyResult::Unsat);
        if (out->result != VerifyResult::Sat) continue;
        ++sat;
        // The witness lies in the spike: |x - p|_1 <= (eps - eps/2 + eps/8) / k.
        double l1 = 0;
        for (size_t i = 0; i < r.p.size(); ++i) l1 += std::fabs(out->witness->x[i] - r.p[i]);
        EXPECT_LE(l1, 0.625 * r.eps / r.k * (1 + 1e-6));
      }
  }
  RecordProperty("sat_runs", sat);
  RecordProperty("runs", runs);
}

}  // namespace
}  // namespace denote
