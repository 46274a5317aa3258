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
#include "denote/program/builder.h"
#include "ibp_random_graphs.h"

namespace denote {
namespace {

using ibp_test::Rng;

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
TEST(IbpRandom, RandomGraphsAndBoxesContainEveryEvaluatedPoint) {
  // 400 graphs here; tests/long/ibp_long_test.cc runs 20,000 with wider boxes (> 10^7 checks).
  ibp_test::RandomGraphStats st;
  ibp_test::check_random_graphs(20261130, 400, /*wide=*/false, st);
  if (HasFatalFailure()) return;
  EXPECT_GT(st.checks, 100000);
  EXPECT_LT(st.skipped, 50);
  std::cout << "[ibp] " << st.checks << " point checks, " << st.none << " of " << st.nodes << " node boxes absent\n";
}

}  // namespace
}  // namespace denote
