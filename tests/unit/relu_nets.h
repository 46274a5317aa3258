// Random relu networks for the CROWN tests: n inputs (2 to 6), `layers` linear + relu layers of
// width n, a linear layer of 2 outputs, and a random box of the inputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {

// The fixed 4 -> 6 (relu) -> 2 tail the scale-step tests put after a normalised input f of 4
// elements (sin / cos weights): the output's node id.
inline int64_t fixed_relu_tail(GraphBuilder& b, int64_t f) {
  std::vector<double> w1(24), w2(12);
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = std::sin(static_cast<double>(i) + 1);
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = std::cos(static_cast<double>(i) * 0.7);
  const int64_t r = b.unary(Op::Relu, b.linear(f, 6, w1, {0.1, -0.2, 0.3, 0, 0.05, -0.4}));
  return b.linear(r, 2, w2, {0.25, -0.5});
}

struct ReluNet {
  Model m;
  int64_t out = -1, n = 0;
  DoubleBox box;
};
inline ReluNet random_relu_net(ibp_test::Rng& rng, int layers) {
  GraphBuilder b;
  ReluNet r;
  r.n = rng.range(2, 6);
  const int64_t n = r.n;
  int64_t x = b.input({n});
  for (int l = 0; l < layers; ++l) {
    std::vector<double> w, bias;
    for (int64_t i = 0; i < n * n; ++i) w.push_back(rng.real(-1, 1));
    for (int64_t i = 0; i < n; ++i) bias.push_back(rng.real(-0.5, 0.5));
    x = b.unary(Op::Relu, b.linear(x, n, w, bias));
  }
  std::vector<double> w(static_cast<size_t>(2 * n)), bias(2);
  for (double& v : w) v = rng.real(-1, 1);
  r.out = b.linear(x, 2, w, bias);
  auto m = b.build({r.out});
  EXPECT_TRUE(m.ok());
  if (m.ok()) r.m = std::move(*m);
  r.box = DoubleBox{{n}, {}, {}};
  for (int64_t i = 0; i < n; ++i) {
    const double c = rng.real(-1, 1), rad = rng.real(0, 1);
    r.box.lo.push_back(c - rad), r.box.hi.push_back(c + rad);
  }
  return r;
}


}  // namespace denote
