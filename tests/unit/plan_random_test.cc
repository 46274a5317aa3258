// The executor against denote_all on seeded random graphs (rank-2 chains of linear, matmul with a
// constant, elementwise binary and unary ops, transpose, softmax and reductions):
//  - the reference plan (auto) gives the same value table as denote_all, bit for bit, in f64 and f32;
//  - a plan preferring openblas succeeds or fails exactly when denote_all does, with the same message,
//    and gives the same shapes; its values differ from the reference only through the summation
//    order (checked per op by plan_differential_test, so here only a loose f64 sanity bound);
//  - the same plans compiled (denote/plan/compiled.h; fused, 1 and 2 threads): the reference plan's
//    output equals denote_all's bit for bit, the openblas plan's within the same loose bound.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/plan/registry.h"

namespace denote {
namespace {

class RandomModel {
 public:
  explicit RandomModel(uint64_t seed) : gen_(seed) {}

  // A chain over a [rows, cols] input; every step's parents are earlier nodes of the same shape.
  Model build(int steps) {
    rows_ = range(1, 4);
    int64_t cols = range(1, 6);
    int64_t x = b_.input({rows_, cols});
    input_shapes_.push_back({rows_, cols});
    std::vector<int64_t> same = {x};
    for (int s = 0; s < steps; ++s) {
      const int64_t kind = range(0, 7);
      if (kind == 0) {
        const int64_t out = range(1, 6);
        x = b_.linear(x, out, values(out * cols), values(out));
        cols = out;
        same = {x};
      } else if (kind == 1) {
        const int64_t out = range(1, 6);
        x = b_.binary(Op::Matmul, x, b_.constant({cols, out}, values(cols * out)));
        cols = out;
        same = {x};
      } else if (kind <= 3) {
        static const Op kBinary[] = {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem};
        x = b_.binary(kBinary[range(0, 3)], x, same[static_cast<size_t>(range(0, static_cast<int64_t>(same.size()) - 1))]);
        same.push_back(x);
      } else if (kind <= 5) {
        static const Op kUnary[] = {Op::Relu, Op::Tanh, Op::Sigmoid, Op::Abs, Op::Neg, Op::Detach};
        x = b_.unary(kUnary[range(0, 5)], x);
        same.push_back(x);
      } else if (kind == 6) {
        x = b_.unary(Op::Softmax, x, AxisAttrs{range(0, 1)});
        same.push_back(x);
      } else {
        x = b_.unary(Op::Transpose, x, TransposeAttrs{0, 1});
        std::swap(rows_, cols);
        same = {x};
      }
    }
    x = b_.sum(x);
    auto m = b_.build({x});
    EXPECT_TRUE(m.ok()) << m.message();
    return m.ok() ? *m : Model{};
  }

  std::vector<Tensor<double>> inputs() {
    std::vector<Tensor<double>> out;
    for (const Shape& s : input_shapes_) out.emplace_back(s, values(numel(s)));
    return out;
  }

 private:
  int64_t range(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(gen_.next() % static_cast<uint64_t>(hi - lo + 1)); }
  std::vector<double> values(int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = -1.5 + 3.0 * static_cast<double>(gen_.next() >> 11) * 0x1p-53;
    return v;
  }

  SplitMix64 gen_;
  GraphBuilder b_;
  int64_t rows_ = 1;
  std::vector<Shape> input_shapes_;
};

Result<BoundPlan> bound_plan(const Graph& g, const std::string& provider) {
  PlanPolicy p;
  DENOTE_RETURN_IF_ERROR(parse_provider_policy(provider, p));
  DENOTE_ASSIGN_OR_RETURN(CapsuleRegistry r, standard_registry());
  DENOTE_ASSIGN_OR_RETURN(GraphKernelPlan plan, plan_graph(g, r.available(detect_environment()), p));
  return bind_plan(plan, standard_handlers());
}

template <class S>
void check_reference_plan(const Model& m, const std::vector<Tensor<double>>& in64) {
  std::vector<Tensor<S>> in;
  for (const auto& t : in64) in.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  const Payload<S> p = convert_payload<S>(m.payload, [](double v) { return static_cast<S>(v); });
  std::conditional_t<std::is_same_v<S, double>, F64Context, F32Context> ctx;
  auto want = denote_all(m.graph, p, std::span<const Tensor<S>>(in), ctx);
  auto bound = bound_plan(m.graph, "only:reference");
  ASSERT_TRUE(bound.ok()) << bound.message();
  auto got = execute_plan<S>(*bound, m.graph, p, in);
  ASSERT_EQ(got.ok(), want.ok());
  if (!want.ok()) {
    EXPECT_EQ(got.message(), want.message());
    return;
  }
  ASSERT_EQ(got->size(), want->size());
  for (size_t i = 0; i < got->size(); ++i) {
    ASSERT_EQ((*got)[i].shape, (*want)[i].shape) << "node " << i;
    for (size_t j = 0; j < (*got)[i].data.size(); ++j) {
      const S a = (*got)[i].data[j], b = (*want)[i].data[j];
      ASSERT_TRUE((std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(S)) == 0)
          << "node " << i << " element " << j << ": " << a << " vs " << b;
    }
  }
}

TEST(PlanRandom, ExecutorEqualsDenoteAll) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    RandomModel gen(seed);
    const Model m = gen.build(static_cast<int>(seed % 9) + 1);
    const auto inputs = gen.inputs();
    SCOPED_TRACE(fmt::format("seed {}", seed));
    check_reference_plan<double>(m, inputs);
    check_reference_plan<float>(m, inputs);
    auto bound = bound_plan(m.graph, "prefer:openblas");
    ASSERT_TRUE(bound.ok()) << bound.message();
    F64Context ctx;
    auto want = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx);
    auto got = execute_plan<double>(*bound, m.graph, m.payload, inputs);
    ASSERT_EQ(got.ok(), want.ok());
    if (!want.ok()) {
      EXPECT_EQ(got.message(), want.message());
      continue;
    }
    for (size_t i = 0; i < got->size(); ++i) {
      ASSERT_EQ((*got)[i].shape, (*want)[i].shape);
      for (size_t j = 0; j < (*got)[i].data.size(); ++j) {
        const double a = (*got)[i].data[j], b = (*want)[i].data[j];
        if (std::isnan(b)) EXPECT_TRUE(std::isnan(a));
        else EXPECT_NEAR(a, b, 1e-9 * (1 + std::fabs(b))) << "node " << i;
      }
    }
  }
}

// The output of `m` through a compiled plan of `provider`, or the compile/run error.
template <class S>
Result<Tensor<S>> compiled_output(const Model& m, const std::string& provider, const std::vector<Tensor<double>>& in64,
                                  int threads) {
  std::vector<Tensor<S>> in;
  for (const auto& t : in64) in.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  const Payload<S> p = convert_payload<S>(m.payload, [](double v) { return static_cast<S>(v); });
  DENOTE_ASSIGN_OR_RETURN(BoundPlan bound, bound_plan(m.graph, provider));
  CompileOptions options;
  options.threads = threads;
  DENOTE_ASSIGN_OR_RETURN(CompiledPlan<S> cp, compile_plan<S>(bound, m.graph, p, m.output_ids, options));
  DENOTE_RETURN_IF_ERROR(cp.run(in));
  return cp.outputs()[0];
}

template <class S>
void check_compiled(const Model& m, const std::vector<Tensor<double>>& in64) {
  std::vector<Tensor<S>> in;
  for (const auto& t : in64) in.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  const Payload<S> p = convert_payload<S>(m.payload, [](double v) { return static_cast<S>(v); });
  std::conditional_t<std::is_same_v<S, double>, F64Context, F32Context> ctx;
  auto want = denote_all(m.graph, p, std::span<const Tensor<S>>(in), ctx);
  // The reference plan bit for bit; auto (the fastest providers: avx2, openblas) and openblas within
  // their reductions' rounding.
  for (const std::string provider : {"only:reference", "auto", "prefer:openblas"})
    for (int threads : {1, 2}) {
      SCOPED_TRACE(fmt::format("{}, {} threads", provider, threads));
      auto got = compiled_output<S>(m, provider, in64, threads);
      ASSERT_EQ(got.ok(), want.ok()) << (got.ok() ? want.message() : got.message());
      if (!want.ok()) {
        EXPECT_EQ(got.message(), want.message());
        continue;
      }
      const Tensor<S>& w = (*want)[static_cast<size_t>(m.output_ids[0])];
      ASSERT_EQ(got->shape, w.shape);
      for (size_t j = 0; j < w.data.size(); ++j) {
        const S a = got->data[j], b = w.data[j];
        if (provider == "only:reference")
          ASSERT_TRUE((std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(S)) == 0) << a << " vs " << b;
        else if (std::isnan(b))
          EXPECT_TRUE(std::isnan(a));
        else
          EXPECT_NEAR(a, b, (std::is_same_v<S, double> ? 1e-9 : 1e-3) * (1 + std::fabs(b)));
      }
    }
}

TEST(PlanRandom, CompiledEqualsDenoteAll) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    RandomModel gen(seed);
    const Model m = gen.build(static_cast<int>(seed % 9) + 1);
    const auto inputs = gen.inputs();
    SCOPED_TRACE(fmt::format("seed {}", seed));
    check_compiled<double>(m, inputs);
    check_compiled<float>(m, inputs);
  }
}

// A wrong input shape in a random graph: both report the input node's error.
TEST(PlanRandom, BadInputShape) {
  RandomModel gen(7);
  const Model m = gen.build(4);
  auto inputs = gen.inputs();
  inputs[0].shape.push_back(1);
  auto bound = bound_plan(m.graph, "prefer:openblas");
  ASSERT_TRUE(bound.ok());
  F64Context ctx;
  auto want = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(execute_plan<double>(*bound, m.graph, m.payload, inputs).message(), want.message());
}

}  // namespace
}  // namespace denote
