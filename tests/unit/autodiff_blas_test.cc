// vjp's OpenBLAS path (GradKernels::Blas, src/autodiff/blas_linear.cc) against the exact rules, and
// vjp_lent (the inputs lent to the tape, not copied) against vjp. The BLAS path blocks its sums,
// so each gradient entry may differ from the exact fold by the gemm bound k u sum |a||b|; the test
// computes that bound per entry from the same network's absolute values (|W|, |x|, all-ones
// cotangent magnitudes) and checks every entry against it, with a factor of 4 for the layers the
// error passes through.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "denote/autodiff/grad.h"
#include "denote/program/builder.h"

namespace denote {
namespace {

struct Mlp {
  Model model;
  int64_t output = -1;
  int64_t rows = 0, in = 0;
};

// rows x in -> linear h -> relu -> linear h -> tanh -> linear 3, weights uniform in +-1/sqrt(fan_in).
Mlp mlp(int64_t rows, int64_t in, int64_t h, uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int64_t n, double a) {
    std::uniform_real_distribution<double> d(-a, a);
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = d(rng);
    return v;
  };
  GraphBuilder b;
  int64_t x = b.input({rows, in});
  const int64_t fan[3] = {in, h, h}, outs[3] = {h, h, 3};
  for (int k = 0; k < 3; ++k) {
    const double a = 1.0 / std::sqrt(static_cast<double>(fan[k]));
    x = b.linear(x, outs[k], uniform(outs[k] * fan[k], a), uniform(outs[k], a));
    if (k == 0) x = b.unary(Op::Relu, x);
    if (k == 1) x = b.unary(Op::Tanh, x);
  }
  auto m = b.build({x});
  EXPECT_TRUE(m.ok()) << m.message();
  Mlp r;
  r.model = std::move(*m);
  r.output = x;
  r.rows = rows;
  r.in = in;
  return r;
}

template <class S>
std::vector<Tensor<S>> input(const Mlp& n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<S> v(static_cast<size_t>(n.rows * n.in));
  for (S& x : v) x = static_cast<S>(d(rng));
  return {Tensor<S>(Shape{n.rows, n.in}, std::move(v))};
}

// The gradients of everything (inputs and parameters) by the exact rules and by the Blas kernels.
template <class Ctx>
std::pair<Result<Gradients<typename Ctx::Scalar>>, Result<Gradients<typename Ctx::Scalar>>> exact_and_blas(
    const Mlp& n, uint32_t input_seed) {
  using S = typename Ctx::Scalar;
  Ctx ctx;
  const Payload<S> payload = convert_payload<S>(n.model.payload, [](double v) { return static_cast<S>(v); });
  const auto x = input<S>(n, input_seed);
  GradOptions exact, blas;
  exact.wrt = blas.wrt = GradWrt::All;
  blas.kernels = GradKernels::Blas;
  return {vjp(n.model.graph, payload, std::span<const Tensor<S>>(x), n.output, nullptr, ctx, exact),
          vjp(n.model.graph, payload, std::span<const Tensor<S>>(x), n.output, nullptr, ctx, blas)};
}

template <class Ctx>
void blas_within_gemm_bound(const Mlp& n, double u) {
  using S = typename Ctx::Scalar;
  if (!grad_blas_available()) GTEST_SKIP() << "built without OpenBLAS";
  auto [e, f] = exact_and_blas<Ctx>(n, 7);
  ASSERT_TRUE(e.ok()) << e.message();
  ASSERT_TRUE(f.ok()) << f.message();
  // Every product here has inner extent at most max(rows, in) and factors below 1 in magnitude
  // after the first layer; the bound per entry: 4 k u (1 + |exact entry| + the entry's absolute sum),
  // with the absolute sum bounded by k (|w|, |x|, |tanh'|, |cotangent| <= 1 each).
  const double k = static_cast<double>(std::max(n.rows, n.in));
  auto near = [&](const std::vector<S>& got, const std::vector<S>& want, const char* what) {
    ASSERT_EQ(got.size(), want.size()) << what;
    for (size_t i = 0; i < got.size(); ++i) {
      const double w = static_cast<double>(want[i]), g = static_cast<double>(got[i]);
      EXPECT_LE(std::fabs(g - w), 4 * k * u * (1 + std::fabs(w) + k)) << what << " entry " << i;
    }
  };
  near(f->value.data, e->value.data, "output value");
  ASSERT_EQ(f->inputs.size(), 1u);
  near(f->inputs[0].data, e->inputs[0].data, "input gradient");
  ASSERT_EQ(f->params.size(), e->params.size());
  ASSERT_EQ(f->params.size(), 6u);  // weight and bias of three linears
  for (size_t p = 0; p < e->params.size(); ++p) {
    EXPECT_EQ(f->params[p].node, e->params[p].node);
    EXPECT_EQ(f->params[p].field, e->params[p].field);
    near(f->params[p].values, e->params[p].values, e->params[p].field.c_str());
  }
  // The last bias gradient is exactly the row count (all-ones cotangent), in both paths.
  for (S v : f->params.back().values) EXPECT_EQ(static_cast<double>(v), static_cast<double>(n.rows));
}

TEST(AutodiffBlas, F64GradientsWithinTheGemmBoundOfTheExactRules) {
  blas_within_gemm_bound<F64Context>(mlp(37, 29, 23, 1), std::ldexp(1.0, -53));
}

TEST(AutodiffBlas, F32GradientsWithinTheGemmBoundOfTheExactRules) {
  blas_within_gemm_bound<F32Context>(mlp(64, 40, 33, 2), std::ldexp(1.0, -24));
}

// Under kBlasMinRows rows (a batch of 1 to 3) the Blas kernels keep the exact rules: the same
// gradients bit for bit.
TEST(AutodiffBlas, SmallBatchesTakeTheExactRules) {
  if (!grad_blas_available()) GTEST_SKIP() << "built without OpenBLAS";
  for (int64_t rows : {int64_t{1}, int64_t{3}}) {
    auto [e, f] = exact_and_blas<F32Context>(mlp(rows, 40, 33, 3), 5);
    ASSERT_TRUE(e.ok() && f.ok());
    EXPECT_EQ(f->value.data, e->value.data) << rows;
    EXPECT_EQ(f->inputs[0].data, e->inputs[0].data) << rows;
    ASSERT_EQ(f->params.size(), e->params.size());
    for (size_t p = 0; p < e->params.size(); ++p) EXPECT_EQ(f->params[p].values, e->params[p].values) << rows;
  }
}

// vjp_lent gives vjp's gradients bit for bit, with either kernels, and the caller's inputs are the
// same tensors afterwards: after success, and after an error (a cotangent of the wrong shape)
// raised once the inputs are in the tape.
TEST(AutodiffBlas, LentInputsGiveTheSameGradientsAndComeBack) {
  const Mlp n = mlp(9, 6, 5, 3);
  F64Context ctx;
  const auto original = input<double>(n, 11);
  for (GradKernels kernels : {GradKernels::Exact, GradKernels::Blas}) {
    for (GradWrt wrt : {GradWrt::Inputs, GradWrt::Params, GradWrt::All}) {
      GradOptions o;
      o.wrt = wrt;
      o.kernels = kernels;
      auto want = vjp(n.model.graph, n.model.payload, std::span<const Tensor<double>>(original), n.output, nullptr,
                      ctx, o);
      ASSERT_TRUE(want.ok()) << want.message();
      auto lent = original;
      auto got = vjp_lent(n.model.graph, n.model.payload, std::span<Tensor<double>>(lent), n.output, nullptr, ctx, o);
      ASSERT_TRUE(got.ok()) << got.message();
      EXPECT_EQ(lent, original);
      EXPECT_EQ(got->value, want->value);
      EXPECT_EQ(got->inputs, want->inputs);
      ASSERT_EQ(got->params.size(), want->params.size());
      for (size_t p = 0; p < want->params.size(); ++p) EXPECT_EQ(got->params[p].values, want->params[p].values);
      const Tensor<double> bad(Shape{2}, {1, 1});
      auto err = vjp_lent(n.model.graph, n.model.payload, std::span<Tensor<double>>(lent), n.output, &bad, ctx, o);
      ASSERT_FALSE(err.ok());
      EXPECT_NE(err.message().find("cotangent shape mismatch"), std::string::npos) << err.message();
      EXPECT_EQ(lent, original);
    }
  }
}

// A lent input of the wrong shape is refused before it is moved: the caller keeps it.
TEST(AutodiffBlas, LentInputOfTheWrongShapeStaysWithTheCaller) {
  const Mlp n = mlp(4, 6, 5, 4);
  F64Context ctx;
  std::vector<Tensor<double>> wrong{Tensor<double>(Shape{4, 5}, std::vector<double>(20, 0.5))};
  const auto copy = wrong;
  auto r = vjp_lent(n.model.graph, n.model.payload, std::span<Tensor<double>>(wrong), n.output, nullptr, ctx);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(wrong, copy);
}

}  // namespace
}  // namespace denote
