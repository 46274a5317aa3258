// Evaluation rules of the elementwise ops, in F64Context and F32Context, against hand-computed
// numbers and <cmath> formulas written out here; plus log's domain error and cast's limits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "unit/eval_test_util.h"

namespace denote {
namespace {

using testing::eval_in;
using testing::expect_values;

// x -> op(x), with the input of the given shape.
Model unary_model(Op op, Shape shape, Attrs attrs = NoAttrs{}) {
  GraphBuilder b;
  int64_t x = b.input(std::move(shape));
  int64_t y = b.unary(op, x, std::move(attrs));
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

// (x, y) -> op(x, y), both inputs of the given shape.
Model binary_model(Op op, Shape shape) {
  GraphBuilder b;
  int64_t x = b.input(shape);
  int64_t y = b.input(shape);
  int64_t z = b.binary(op, x, y);
  auto m = b.build({z});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

template <class Ctx>
class EvalPointwise : public ::testing::Test {
 protected:
  void check_unary(Op op, const std::vector<double>& x, const std::vector<double>& want, Attrs attrs = NoAttrs{}) {
    const Shape s{static_cast<int64_t>(x.size())};
    auto r = eval_in<Ctx>(unary_model(op, s, std::move(attrs)), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << op_tag(op) << ": " << r.message();
    expect_values<Ctx>(*r, s, want);
  }
  void check_binary(Op op, const std::vector<double>& x, const std::vector<double>& y,
                    const std::vector<double>& want) {
    const Shape s{2, static_cast<int64_t>(x.size()) / 2};
    auto r = eval_in<Ctx>(binary_model(op, s), {Tensor<double>(s, x), Tensor<double>(s, y)}, 2);
    ASSERT_TRUE(r.ok()) << op_tag(op) << ": " << r.message();
    expect_values<Ctx>(*r, s, want);
  }
};
TYPED_TEST_SUITE(EvalPointwise, testing::NativeContexts);

TYPED_TEST(EvalPointwise, BinaryOpsByHand) {
  const std::vector<double> x = {-3.5, -2, 0.5, 2, 7, -7};
  const std::vector<double> y = {2, -3, 0.25, 2, -2, 2.5};
  this->check_binary(Op::Add, x, y, {-1.5, -5, 0.75, 4, 5, -4.5});
  this->check_binary(Op::Sub, x, y, {-5.5, 1, 0.25, 0, 9, -9.5});
  this->check_binary(Op::MulElem, x, y, {-7, 6, 0.125, 4, -14, -17.5});
  this->check_binary(Op::MaxElem, x, y, {2, -2, 0.5, 2, 7, 2.5});
  this->check_binary(Op::MinElem, x, y, {-3.5, -3, 0.25, 2, -2, -7});
  this->check_binary(Op::Div, x, y, {-1.75, 2.0 / 3.0, 2, 1, -3.5, -2.8});
  this->check_binary(Op::DivTrunc, x, y, {-1, 0, 2, 1, -3, -2});
  this->check_binary(Op::DivFloor, x, y, {-2, 0, 2, 1, -4, -3});
  // Python: -3.5 % 2 = 0.5, -2 % -3 = -2, 0.5 % 0.25 = 0, 2 % 2 = 0, 7 % -2 = -1, -7 % 2.5 = 0.5
  this->check_binary(Op::Remainder, x, y, {0.5, -2, 0, 0, -1, 0.5});
  this->check_binary(Op::Pow, {2, 9, -2, 0.5}, {3, 0.5, 2, -1}, {8, 3, 4, 2});
}

TYPED_TEST(EvalPointwise, DivFloorIsTheFloorOfTheExactQuotient) {
  // Python: 1 // 0.1 == 9 and 3 // 0.1 == 29 (0.1 is stored slightly above 1/10, so the exact
  // quotients are just below 10 and 30 although a / b rounds to them); -1 // 0.1 == -10,
  // 0.7 // 0.1 == 6, -1 // inf == -1, 1 // inf == 0.
  const double inf = std::numeric_limits<double>::infinity();
  this->check_binary(Op::DivFloor, {1, 3, -1, 0.7, -1, 1}, {0.1, 0.1, 0.1, 0.1, inf, inf}, {9, 29, -10, 6, -1, 0});
  // trunc mode is trunc(a / b) of the rounded quotient, as torch computes it: 1 / 0.1 rounds to 10.
  this->check_binary(Op::DivTrunc, {1, -1}, {0.1, 0.1}, {10, -10});
}

TYPED_TEST(EvalPointwise, MaxMinPropagateNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Shape s{2};
  for (Op op : {Op::MaxElem, Op::MinElem}) {
    auto r = eval_in<TypeParam>(binary_model(op, s), {Tensor<double>(s, {nan, 1}), Tensor<double>(s, {1, nan})}, 2);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_TRUE(std::isnan(r->data[0]) && std::isnan(r->data[1])) << op_tag(op);
  }
}

TYPED_TEST(EvalPointwise, SimpleUnaryOpsByHand) {
  const std::vector<double> x = {-2, -0.5, 0, 0.5, 3};
  this->check_unary(Op::Abs, x, {2, 0.5, 0, 0.5, 3});
  this->check_unary(Op::Neg, x, {2, 0.5, 0, -0.5, -3});
  this->check_unary(Op::Relu, x, {0, 0, 0, 0.5, 3});
  this->check_unary(Op::ClampMin, x, {0.5, 0.5, 0.5, 0.5, 3}, ClampAttrs{0.5});
  this->check_unary(Op::ClampMin, x, {-1, -0.5, 0, 0.5, 3}, ClampAttrs{-1});
  this->check_unary(Op::Sqrt, {0.25, 4, 2}, {0.5, 2, M_SQRT2});
  this->check_unary(Op::Inv, {0.25, -4, 2}, {4, -0.25, 0.5});
  this->check_unary(Op::Rsqrt, {0.25, 4, 2}, {2, 0.5, M_SQRT1_2});
}

TYPED_TEST(EvalPointwise, TranscendentalOpsByKnownValues) {
  // Reference values: sigmoid(0) = 1/2, softplus(0) = ln 2, erf(0.5), Phi(1) and Phi(-1) for GELU.
  this->check_unary(Op::Sigmoid, {0}, {0.5});
  this->check_unary(Op::Softplus, {0}, {0.6931471805599453});
  this->check_unary(Op::Erf, {0.5, -0.5, 0}, {0.5204998778130465, -0.5204998778130465, 0});
  this->check_unary(Op::Gelu, {1, -1, 0}, {0.8413447460685429, -0.15865525393145707, 0});
  this->check_unary(Op::Exp, {0, 1}, {1, M_E});
  this->check_unary(Op::Sin, {0, M_PI / 6}, {0, 0.5});
  this->check_unary(Op::Cos, {0, M_PI / 3}, {1, 0.5});
  this->check_unary(Op::Tanh, {0, 0.5}, {0, 0.46211715726000974});
}

TYPED_TEST(EvalPointwise, TranscendentalOpsMatchCmathFormulas) {
  const std::vector<double> x = {-3, -0.7, 0.2, 1.5, 4};
  std::vector<double> sig, ex, sn, cs, sp, er, ge;
  for (double v : x) {
    sig.push_back(1.0 / (1.0 + std::exp(-v)));
    ex.push_back(std::exp(v));
    sn.push_back(std::sin(v));
    cs.push_back(std::cos(v));
    sp.push_back(std::log(1.0 + std::exp(v)));
    er.push_back(std::erf(v));
    ge.push_back(0.5 * v * std::erfc(-v / std::sqrt(2.0)));
  }
  this->check_unary(Op::Sigmoid, x, sig);
  this->check_unary(Op::Exp, x, ex);
  this->check_unary(Op::Sin, x, sn);
  this->check_unary(Op::Cos, x, cs);
  this->check_unary(Op::Softplus, x, sp);
  this->check_unary(Op::Erf, x, er);
  this->check_unary(Op::Gelu, x, ge);
}

TYPED_TEST(EvalPointwise, SoftplusIsStableForLargeMagnitudes) {
  // softplus(100) = 100 + log1p(e^-100) rounds to 100 (a naive log(1 + e^100) overflows binary32);
  // softplus(-50) = log1p(e^-50) ~ e^-50.
  this->check_unary(Op::Softplus, {100, -50}, {100, std::exp(-50.0)});
}

TYPED_TEST(EvalPointwise, LogOfPositiveData) {
  this->check_unary(Op::Log, {1, M_E, 0.5, 100}, {0, 1, -M_LN2, 2 * M_LN10});
}

TYPED_TEST(EvalPointwise, LogOfNonpositiveOrNanDataIsAnError) {
  const std::string want =
      "IR eval: node 1: log: input contains values <= 0 (or NaN); use `safe_log`, which is log(softplus(x) + eps) "
      "(Node(id=1, kind=log, parents=#[0], outShape=[3]))";
  const Shape s{3};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (const std::vector<double>& x : {std::vector<double>{1, 0, 2}, std::vector<double>{1, 2, -1e-3},
                                       std::vector<double>{nan, 1, 2}, std::vector<double>{-0.0, 1, 1}}) {
    auto r = eval_in<TypeParam>(unary_model(Op::Log, s), {Tensor<double>(s, x)}, 1);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.message(), want);
  }
}

TYPED_TEST(EvalPointwise, SafeLogIsLogOfSoftplusPlusEps) {
  GraphBuilder b;
  int64_t x = b.input({4});
  int64_t eps = b.constant({}, {1e-3});
  int64_t y = b.add(Op::SafeLog, {x, eps});
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<double> in = {-1, 0, 2, -30};
  std::vector<double> want;
  for (double v : in) want.push_back(std::log(std::log(1.0 + std::exp(v)) + 1e-3));
  auto r = eval_in<TypeParam>(*m, {Tensor<double>({4}, in)}, y);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, {4}, want);
  EXPECT_NEAR(static_cast<double>(r->data[1]), std::log(M_LN2 + 1e-3), 1e-6);
}

TYPED_TEST(EvalPointwise, CastToTheNativeFormats) {
  using S = typename TypeParam::Scalar;
  const Shape s{3};
  const std::vector<double> x = {0.1, 1.0 + std::ldexp(1.0, -24), 1.0 + 3 * std::ldexp(1.0, -24)};
  // binary32 nearest-even: 0.1 -> 0x3dcccccd = 0.100000001490116119384765625; 1 + 2^-24 is a tie
  // between 1 and 1 + 2^-23 and goes to 1 (even); 1 + 3*2^-24 is a tie that goes to 1 + 2^-22.
  const std::vector<double> f32 = {0.100000001490116119384765625, 1.0, 1.0 + std::ldexp(1.0, -22)};
  for (const char* name : {"binary32", "f32"}) {
    auto r = eval_in<TypeParam>(unary_model(Op::Cast, s, CastAttrs{name, "nearest-even"}), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(static_cast<double>(r->data[i]), f32[i]) << name << " " << i;
  }
  for (const char* name : {"binary64", "f64"}) {
    auto r = eval_in<TypeParam>(unary_model(Op::Cast, s, CastAttrs{name, "nearest-even"}), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    for (size_t i = 0; i < 3; ++i) EXPECT_EQ(r->data[i], static_cast<S>(x[i])) << name << " " << i;  // exact
  }
}

TYPED_TEST(EvalPointwise, CastToOtherTargetsNeedsTheBinaryFormatContext) {
  const Shape s{2};
  const std::string ctx_name(TypeParam::kName);
  const std::pair<const char*, const char*> targets[] = {
      {"binary16", "nearest-even"}, {"bfloat16", "nearest-even"}, {"e4m3fn", "nearest-even"},
      {"int(8)", "nearest-even"},   {"bool", "nearest-even"},     {"binary32", "toward-zero"},
      {"binary64", "upward"}};
  for (const auto& [dtype, rounding] : targets) {
    auto r = eval_in<TypeParam>(unary_model(Op::Cast, s, CastAttrs{dtype, rounding}), {Tensor<double>(s, {1, 2})}, 1);
    ASSERT_FALSE(r.ok()) << dtype << " " << rounding;
    EXPECT_EQ(r.status().detail(), std::string("cast to ") + dtype + " with rounding " + rounding +
                                       " is not available in the " + ctx_name + " context; it needs the binary-format context");
    EXPECT_EQ(r.status().node(), 1);
    EXPECT_EQ(r.status().field(), "dtype");
  }
}

TYPED_TEST(EvalPointwise, EmptyTensorsGiveEmptyResults) {
  const Shape s{0, 3};
  auto r = eval_in<TypeParam>(unary_model(Op::Exp, s), {Tensor<double>(s, {})}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->shape, s);
  EXPECT_TRUE(r->data.empty());
  auto l = eval_in<TypeParam>(unary_model(Op::Log, s), {Tensor<double>(s, {})}, 1);
  EXPECT_TRUE(l.ok()) << l.message();
}

}  // namespace
}  // namespace denote
