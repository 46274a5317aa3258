// Shared by the default soundness test (tests/unit/ibp_random_test.cc, 400 graphs) and the long
// target (tests/long/ibp_long_test.cc, 20,000 graphs with wider boxes, > 10^7 point checks): random
// graphs over the interval-relevant ops, random input boxes, and points of each box (corners, the
// midpoint, random points) evaluated exactly (MPFR, 200 bits) and in f64, f32 and bfloat16, each of
// which must lie in every node box that IBP gave in the matching arithmetic.
#pragma once

#include <gtest/gtest.h>

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"

namespace denote::ibp_test {

class Rng {
 public:
  explicit Rng(uint64_t seed) : gen_(seed) {}
  uint64_t next() { return gen_.next(); }
  double unit() { return static_cast<double>(next() >> 11) * 0x1p-53; }
  double real(double lo, double hi) { return lo + (hi - lo) * unit(); }
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(next() % static_cast<uint64_t>(hi - lo + 1)); }
  // A signed value of magnitude 10^[-3, 1.3], sometimes 0.
  double value() { return range(0, 15) == 0 ? 0.0 : (next() & 1 ? 1 : -1) * std::pow(10.0, real(-3, 1.3)); }

 private:
  SplitMix64 gen_;
};

// A random chain-and-merge graph over vectors [n]: pointwise ops, linear, the softmax family,
// layernorm (with and without gamma/beta), batch_norm_eval, binary ops, sometimes a final mse_loss,
// and guarded domains (log of a sigmoid, sqrt of an abs, division by an exp).
inline Model random_model(Rng& rng, int64_t n) {
  GraphBuilder b;
  std::vector<int64_t> pool = {b.input({n})};
  const int steps = static_cast<int>(rng.range(3, 9));
  auto any = [&] { return pool[static_cast<size_t>(rng.range(0, static_cast<int64_t>(pool.size()) - 1))]; };
  for (int s = 0; s < steps; ++s) {
    const int64_t x = any();
    int64_t y = -1;
    switch (rng.range(0, 23)) {
      case 20: y = b.unary(Op::LogSoftmax, x, AxisAttrs{0}); break;
      case 21: {
        HardMask mask{{n}, {}};
        for (int64_t i = 0; i < n; ++i) mask.allowed.push_back(rng.range(0, 3) != 0);
        y = b.unary(Op::HardMaskedSoftmax, x, mask);
        break;
      }
      case 22: {
        y = b.unary(Op::BatchNormEval, x, BatchNormAttrs{0, n});
        BatchNormRecord<double> rec;
        for (int64_t i = 0; i < n; ++i) {
          rec.gamma.push_back(rng.real(-2, 2));
          rec.beta.push_back(rng.real(-1, 1));
          rec.mean.push_back(rng.real(-1, 1));
          rec.var.push_back(rng.real(0, 2));
        }
        b.model().payload.batch_norm[y] = rec;
        break;
      }
      case 23: {  // layernorm with gamma/beta
        y = b.unary(Op::Layernorm, x, AxisAttrs{0});
        LayerNormRecord<double> rec{{n}, {}, {}, 1e-5};
        for (int64_t i = 0; i < n; ++i) {
          rec.gamma.push_back(rng.real(-2, 2));
          rec.beta.push_back(rng.real(-1, 1));
        }
        b.model().payload.layernorm[y] = rec;
        break;
      }
      case 0: y = b.unary(Op::Relu, x); break;
      case 1: y = b.unary(Op::Tanh, x); break;
      case 2: y = b.unary(Op::Sigmoid, x); break;
      case 3: y = b.unary(Op::Softplus, x); break;
      case 4: y = b.unary(Op::Gelu, x); break;
      case 5: y = b.unary(Op::Erf, x); break;
      case 6: y = b.unary(Op::Abs, x); break;
      case 7: y = b.unary(Op::Sin, x); break;
      case 8: y = b.unary(Op::Exp, b.unary(Op::Tanh, x)); break;
      case 9: y = b.unary(Op::Log, b.unary(Op::Sigmoid, x)); break;
      case 10: y = b.unary(Op::Sqrt, b.unary(Op::Abs, x)); break;
      case 11: y = b.unary(Op::Softmax, x, AxisAttrs{0}); break;
      case 12: y = b.unary(Op::Layernorm, x, AxisAttrs{0}); break;
      case 13: y = b.binary(Op::Div, x, b.unary(Op::Exp, b.unary(Op::Tanh, any()))); break;
      case 14: y = b.binary(Op::Add, x, any()); break;
      case 15: y = b.binary(Op::Sub, x, any()); break;
      case 16: y = b.binary(Op::MulElem, x, any()); break;
      case 17: y = b.binary(rng.range(0, 1) ? Op::MaxElem : Op::MinElem, x, any()); break;
      case 18: y = b.unary(Op::ClampMin, x, ClampAttrs{rng.real(-1, 1)}); break;
      default: {
        std::vector<double> w, bias;
        for (int64_t i = 0; i < n * n; ++i) w.push_back(rng.real(-1, 1));
        for (int64_t i = 0; i < n; ++i) bias.push_back(rng.real(-0.5, 0.5));
        y = b.linear(x, n, w, bias);
      }
    }
    pool.push_back(y);
  }
  if (rng.range(0, 3) == 0) pool.push_back(b.add(Op::MseLoss, {pool.back(), any()}));
  auto m = b.build({pool.back()});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> eval_at(Ctx& ctx, const Model& m, const std::vector<double>& x) {
  using S = typename Ctx::Scalar;
  std::vector<S> d;
  for (double v : x) d.push_back(ctx.from_double(v));
  std::vector<Tensor<S>> in = {Tensor<S>({static_cast<int64_t>(x.size())}, d)};
  const Payload<S> p = convert_payload<S>(m.payload, [&](double v) { return ctx.from_double(v); });
  return denote_all(m.graph, p, std::span<const Tensor<S>>(in), ctx);
}

// Every value of `table` that has a box lies in it; counts the checks.
template <class Ctx>
void expect_inside(Ctx& ctx, const ValueTable<typename Ctx::Scalar>& table, const DoubleIbp& boxes, const char* what,
                   int64_t& checks) {
  for (size_t id = 0; id < boxes.boxes.size(); ++id) {
    if (!boxes.boxes[id]) continue;
    for (size_t i = 0; i < boxes.boxes[id]->lo.size(); ++i) {
      const double y = ctx.to_double(table[id].data[i]);
      ASSERT_TRUE(y >= boxes.boxes[id]->lo[i] && y <= boxes.boxes[id]->hi[i])
          << what << ": node " << id << " element " << i << " value " << y << " box [" << boxes.boxes[id]->lo[i]
          << ", " << boxes.boxes[id]->hi[i] << "]";
      ++checks;
    }
  }
}

// Point j of a box: j = 0 the lower corner, 1 the upper corner, 2 the midpoint, then random points.
inline std::vector<double> box_point(Rng& rng, const DoubleBox& box, int j) {
  std::vector<double> x;
  for (size_t i = 0; i < box.lo.size(); ++i) {
    const double t = j == 0 ? 0 : j == 1 ? 1 : j == 2 ? 0.5 : rng.unit();
    x.push_back(std::clamp(box.lo[i] + t * (box.hi[i] - box.lo[i]), box.lo[i], box.hi[i]));
  }
  return x;
}

struct RandomGraphStats {
  int64_t checks = 0, skipped = 0, none = 0, nodes = 0;
};

// Runs `graphs` random graphs; `wide` draws half of the box radii up to 3 instead of 0.5. Stops at
// the first fatal failure (the caller checks HasFatalFailure()).
inline void check_random_graphs(uint64_t seed, int graphs, bool wide, RandomGraphStats& st) {
  Rng rng(seed);
  const char* ariths[] = {"f64", "f32", "bfloat16"};
  for (int g = 0; g < graphs; ++g) {
    const int64_t n = rng.range(1, 4);
    const Model m = random_model(rng, n);
    DoubleBox box{{n}, {}, {}};
    for (int64_t i = 0; i < n; ++i) {
      const double c = rng.real(-2, 2), r = rng.range(0, 3) == 0 ? 0 : rng.real(0, wide && rng.range(0, 1) ? 3.0 : 0.5);
      box.lo.push_back(c - r);
      box.hi.push_back(c + r);
    }
    std::vector<DoubleBox> in = {box};
    DoubleIbp boxes[3];
    for (int a = 0; a < 3; ++a) {
      auto r = run_ibp_double(m.graph, m.payload, in, ariths[a]);
      ASSERT_TRUE(r.ok()) << r.message();
      boxes[a] = *r;
      for (const auto& b : r->boxes) st.none += !b, ++st.nodes;
    }
    for (int j = 0; j < 6; ++j) {
      const std::vector<double> x = box_point(rng, box, j);
      RealContext real(200);
      F64Context f64;
      F32Context f32;
      BinaryContext bf16(*parse_format("bfloat16"));
      auto exact = eval_at(real, m, x);
      if (!exact.ok()) {
        ++st.skipped;
        continue;
      }
      for (const DoubleIbp& b : boxes) expect_inside(real, *exact, b, "exact", st.checks);
      if (auto t = eval_at(f64, m, x); t.ok()) expect_inside(f64, *t, boxes[0], "f64", st.checks);
      if (auto t = eval_at(f32, m, x); t.ok()) expect_inside(f32, *t, boxes[1], "f32", st.checks);
      if (auto t = eval_at(bf16, m, x); t.ok()) expect_inside(bf16, *t, boxes[2], "bfloat16", st.checks);
      if (testing::Test::HasFatalFailure()) return;
    }
  }
}

}  // namespace denote::ibp_test
