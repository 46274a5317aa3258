// Soundness of the interval primitives and of run_ibp on random input: every point of an input box,
// evaluated exactly (MPFR, RealContext at 200 bits) and in the endpoint arithmetic (hardware f64 /
// f32, bfloat16 rounded to nearest), must lie in the box the interval context returns.
#include <gtest/gtest.h>

#include <mpfr.h>

#include <cmath>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <span>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/ir/builder.h"

namespace denote {
namespace {

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

bool real_inside(const RealScalar& v, double lo, double hi) {
  return !mpfr_nan_p(v.get()) && mpfr_cmp_d(v.get(), lo) >= 0 && mpfr_cmp_d(v.get(), hi) <= 0;
}

// One primitive: `op` applied in any context to 1 or 2 scalars.
struct Prim {
  const char* name;
  int arity;
  double shift;  // added to the random interval (domains: log, sqrt ...)
  std::function<bool(double)> domain;
};

template <class E, class P, class F>
void check_primitive(IntervalContext<E>& ic, P pc, const Prim& prim, F&& op, Rng& rng, int64_t& checks) {
  RealContext rc(200);
  for (int trial = 0; trial < 300; ++trial) {
    Interval<typename E::Value> in[2];
    double los[2], his[2];
    for (int k = 0; k < prim.arity; ++k) {
      double a = rng.value() + prim.shift, b = rng.next() % 4 == 0 ? a : rng.value() + prim.shift;
      if (a > b) std::swap(a, b);
      in[k] = ic.make(a, b);
      los[k] = ic.lo_double(in[k]);
      his[k] = ic.hi_double(in[k]);
    }
    ic.take_error();
    const auto box = prim.arity == 1 ? op(ic, in[0], in[0]) : op(ic, in[0], in[1]);
    if (!ic.take_error().empty()) continue;  // no box: nothing claimed
    const double lo = ic.lo_double(box), hi = ic.hi_double(box);
    ASSERT_LE(lo, hi) << prim.name;
    for (int j = 0; j < 8; ++j) {
      double x[2];
      typename P::Scalar px[2];
      for (int k = 0; k < prim.arity; ++k) {
        const double t = j == 0 ? 0 : j == 1 ? 1 : j == 2 ? 0.5 : rng.unit();
        px[k] = pc.from_double(std::clamp(los[k] + t * (his[k] - los[k]), los[k], his[k]));
        x[k] = std::clamp(pc.to_double(px[k]), los[k], his[k]);
        px[k] = pc.from_double(x[k]);
      }
      if (prim.domain && !prim.domain(x[0])) continue;
      const auto rx0 = rc.from_double(x[0]), rx1 = rc.from_double(x[prim.arity - 1]);
      const RealScalar exact = op(rc, rx0, rx1);
      EXPECT_TRUE(real_inside(exact, lo, hi)) << prim.name << " exact at " << x[0] << ", " << x[1] << " box [" << lo
                                              << ", " << hi << "] value " << rc.to_double(exact);
      const double y = pc.to_double(op(pc, px[0], px[prim.arity - 1]));
      EXPECT_TRUE(y >= lo && y <= hi) << prim.name << " " << P::kName << " at " << x[0] << ", " << x[1] << " box ["
                                      << lo << ", " << hi << "] value " << y;
      checks += 2;
    }
  }
}

template <class E, class P>
void check_all_primitives(IntervalContext<E> ic, P pc, uint64_t seed, int64_t& checks) {
  Rng rng(seed);
  auto positive = [](double x) { return x > 0; };
  auto nonneg = [](double x) { return x >= 0; };
  auto above_m1 = [](double x) { return x > -1; };
  const std::function<bool(double)> any;
  auto run = [&](const Prim& p, auto op) { check_primitive(ic, pc, p, op, rng, checks); };
  run(Prim{"add", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.add(a, b); });
  run(Prim{"sub", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.sub(a, b); });
  run(Prim{"mul", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.mul(a, b); });
  run(Prim{"div", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.div(a, b); });
  run(Prim{"max", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.max(a, b); });
  run(Prim{"min", 2, 0, any}, [](auto& c, const auto& a, const auto& b) { return c.min(a, b); });
  run(Prim{"relu", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.relu(a); });
  run(Prim{"abs", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.abs(a); });
  run(Prim{"neg", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.neg(a); });
  run(Prim{"clamp_min", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.clamp_min(a, 0.1); });
  run(Prim{"exp", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.exp(a); });
  run(Prim{"log", 1, 10, positive}, [](auto& c, const auto& a, const auto&) { return c.log(a); });
  run(Prim{"log1p", 1, 0, above_m1}, [](auto& c, const auto& a, const auto&) { return c.log1p(a); });
  run(Prim{"tanh", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.tanh(a); });
  run(Prim{"sigmoid", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.sigmoid(a); });
  run(Prim{"softplus", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.softplus(a); });
  run(Prim{"erf", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.erf(a); });
  run(Prim{"gelu", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.gelu(a); });
  run(Prim{"gelu near its minimum", 1, -0.75, any}, [](auto& c, const auto& a, const auto&) { return c.gelu(a); });
  run(Prim{"sqrt", 1, 10, nonneg}, [](auto& c, const auto& a, const auto&) { return c.sqrt(a); });
  run(Prim{"rsqrt", 1, 10, positive}, [](auto& c, const auto& a, const auto&) { return c.rsqrt(a); });
  run(Prim{"sin", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.sin(a); });
  run(Prim{"cos", 1, 0, any}, [](auto& c, const auto& a, const auto&) { return c.cos(a); });
  run(Prim{"sin near 100", 1, 100, any}, [](auto& c, const auto& a, const auto&) { return c.sin(a); });
  run(Prim{"cos near pi", 1, 3.14159, any}, [](auto& c, const auto& a, const auto&) { return c.cos(a); });
  run(Prim{"sin near pi/2", 1, 1.5708, any}, [](auto& c, const auto& a, const auto&) { return c.sin(a); });
}

TEST(IbpRandom, EveryPrimitiveContainsTheExactAndTheFormatImage) {
  int64_t checks = 0;
  check_all_primitives(IntervalContext<NativeEndpoints<double>>(), F64Context(), 1, checks);
  check_all_primitives(IntervalContext<NativeEndpoints<float>>(), F32Context(), 2, checks);
  const BinaryFormat bf16 = *parse_format("bfloat16");
  check_all_primitives(IntervalContext<BinaryEndpoints>(BinaryEndpoints(bf16)), BinaryContext(bf16), 3, checks);
  const BinaryFormat e4m3 = *parse_format("e5m2");
  check_all_primitives(IntervalContext<BinaryEndpoints>(BinaryEndpoints(e4m3)), BinaryContext(e4m3), 4, checks);
  for (const char* name : {"e4m3fn", "e2m1fn"}) {  // no infinity: overflow is NaN or saturation (no box)
    const BinaryFormat f = *parse_format(name);
    check_all_primitives(IntervalContext<BinaryEndpoints>(BinaryEndpoints(f)), BinaryContext(f), 5, checks);
  }
  EXPECT_GT(checks, 100000);
}

// A random chain-and-merge graph over vectors [n]: pointwise ops, linear, softmax, layernorm,
// binary ops, and guarded domains (log of a sigmoid, sqrt of an abs, division by an exp).
Model random_model(Rng& rng, int64_t n) {
  GraphBuilder b;
  std::vector<int64_t> pool = {b.input({n})};
  const int steps = static_cast<int>(rng.range(3, 9));
  auto any = [&] { return pool[static_cast<size_t>(rng.range(0, static_cast<int64_t>(pool.size()) - 1))]; };
  for (int s = 0; s < steps; ++s) {
    const int64_t x = any();
    int64_t y = -1;
    switch (rng.range(0, 19)) {
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

TEST(IbpRandom, RandomGraphsAndBoxesContainEveryEvaluatedPoint) {
  Rng rng(20261130);
  int64_t checks = 0, skipped = 0, none = 0, nodes = 0;
  const char* ariths[] = {"f64", "f32", "bfloat16"};
  // DENOTE_IBP_STRESS=1: 20,000 graphs with wider boxes (a manual soak run, not the default suite).
  const bool stress = std::getenv("DENOTE_IBP_STRESS") != nullptr;
  for (int g = 0; g < (stress ? 20000 : 400); ++g) {
    const int64_t n = rng.range(1, 4);
    const Model m = random_model(rng, n);
    DoubleBox box{{n}, {}, {}};
    for (int64_t i = 0; i < n; ++i) {
      const double c = rng.real(-2, 2), r = rng.range(0, 3) == 0 ? 0 : rng.real(0, stress && rng.range(0, 1) ? 3.0 : 0.5);
      box.lo.push_back(c - r);
      box.hi.push_back(c + r);
    }
    std::vector<DoubleBox> in = {box};
    DoubleIbp boxes[3];
    for (int a = 0; a < 3; ++a) {
      auto r = run_ibp_double(m.graph, m.payload, in, ariths[a]);
      ASSERT_TRUE(r.ok()) << r.message();
      boxes[a] = *r;
      for (const auto& b : r->boxes) none += !b, ++nodes;
    }
    for (int j = 0; j < 6; ++j) {
      std::vector<double> x;
      for (int64_t i = 0; i < n; ++i) {
        const double t = j == 0 ? 0 : j == 1 ? 1 : j == 2 ? 0.5 : rng.unit();
        x.push_back(std::clamp(box.lo[i] + t * (box.hi[i] - box.lo[i]), box.lo[i], box.hi[i]));
      }
      RealContext real(200);
      F64Context f64;
      F32Context f32;
      BinaryContext bf16(*parse_format("bfloat16"));
      auto exact = eval_at(real, m, x);
      if (!exact.ok()) {
        ++skipped;
        continue;
      }
      for (const DoubleIbp& b : boxes) expect_inside(real, *exact, b, "exact", checks);
      if (auto t = eval_at(f64, m, x); t.ok()) expect_inside(f64, *t, boxes[0], "f64", checks);
      if (auto t = eval_at(f32, m, x); t.ok()) expect_inside(f32, *t, boxes[1], "f32", checks);
      if (auto t = eval_at(bf16, m, x); t.ok()) expect_inside(bf16, *t, boxes[2], "bfloat16", checks);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_GT(checks, 100000);
  EXPECT_LT(skipped, 50);
  std::cout << "[ibp] " << checks << " point checks, " << none << " of " << nodes << " node boxes absent\n";
}

}  // namespace
}  // namespace denote
