// Evaluation rules of the reductions (reduce_sum, reduce_mean on every axis of [2, 3, 4],
// mse_loss, sum) in F64Context and F32Context, against direct nested loops and hand numbers.
#include <gtest/gtest.h>

#include "unit/eval_test_util.h"

namespace denote {
namespace {

using testing::eval_in;
using testing::expect_values;
using testing::sample_values;

template <class Ctx>
class EvalReduction : public ::testing::Test {};
TYPED_TEST_SUITE(EvalReduction, testing::NativeContexts);

Model reduce_model(Op op, Shape shape, int64_t axis) {
  GraphBuilder b;
  int64_t x = b.input(std::move(shape));
  int64_t y = b.unary(op, x, AxisAttrs{axis});
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

// Sums (or means) of [2, 3, 4] values along `axis`, by explicit coordinates.
std::vector<double> reference_reduce(const std::vector<double>& x, int axis, bool mean) {
  const int64_t d[3] = {2, 3, 4};
  int64_t keep[2], n = d[axis];
  for (int a = 0, w = 0; a < 3; ++a)
    if (a != axis) keep[w++] = d[a];
  std::vector<double> y;
  for (int64_t p = 0; p < keep[0]; ++p)
    for (int64_t q = 0; q < keep[1]; ++q) {
      double acc = 0;
      for (int64_t t = 0; t < n; ++t) {
        const int64_t i = axis == 0 ? t : p, j = axis == 0 ? p : axis == 1 ? t : q, k = axis == 2 ? t : q;
        acc += x[static_cast<size_t>((i * 3 + j) * 4 + k)];
      }
      y.push_back(mean ? acc / static_cast<double>(n) : acc);
    }
  return y;
}

TYPED_TEST(EvalReduction, ReduceSumAndMeanOnEveryAxis) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  const Shape out[3] = {{3, 4}, {2, 4}, {2, 3}};
  for (int axis = 0; axis < 3; ++axis) {
    SCOPED_TRACE(axis);
    for (bool mean : {false, true}) {
      auto r = eval_in<TypeParam>(reduce_model(mean ? Op::ReduceMean : Op::ReduceSum, s, axis),
                                  {Tensor<double>(s, x)}, 1);
      ASSERT_TRUE(r.ok()) << r.message();
      expect_values<TypeParam>(*r, out[axis], reference_reduce(x, axis, mean));
    }
  }
}

TYPED_TEST(EvalReduction, ReduceByHand) {
  // [[1, 2, 3], [4, 5, 6]]: column sums [5, 7, 9], row means [2, 5].
  const Shape s{2, 3};
  const Tensor<double> x(s, {1, 2, 3, 4, 5, 6});
  auto cols = eval_in<TypeParam>(reduce_model(Op::ReduceSum, s, 0), {x}, 1);
  ASSERT_TRUE(cols.ok()) << cols.message();
  expect_values<TypeParam>(*cols, {3}, {5, 7, 9});
  auto rows = eval_in<TypeParam>(reduce_model(Op::ReduceMean, s, 1), {x}, 1);
  ASSERT_TRUE(rows.ok()) << rows.message();
  expect_values<TypeParam>(*rows, {2}, {2, 5});
  auto empty = eval_in<TypeParam>(reduce_model(Op::ReduceSum, {0, 3}, 1), {Tensor<double>({0, 3}, {})}, 1);
  ASSERT_TRUE(empty.ok()) << empty.message();
  EXPECT_EQ(empty->shape, Shape{0});
}

TYPED_TEST(EvalReduction, EmptyReductionAxisIsRejected) {
  GraphBuilder b;
  int64_t x = b.input({2, 0});
  int64_t y = b.add(Op::ReduceSum, {x}, AxisAttrs{1}, Shape{2});
  Model m = b.model();
  auto r = eval_in<TypeParam>(m, {Tensor<double>({2, 0}, {})}, y);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("invalid or empty reduction axis 1 for shape [2, 0]"), std::string::npos) << r.message();
}

Model mse_model(Shape shape) {
  GraphBuilder b;
  int64_t y = b.input(shape);
  int64_t t = b.input(shape);
  int64_t l = b.binary(Op::MseLoss, y, t);
  auto m = b.build({l});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

TYPED_TEST(EvalReduction, MseLossByHand) {
  // ((1-0)^2 + (2-4)^2 + (3-3.5)^2 + (-1-(-1))^2) / 4 = (1 + 4 + 0.25 + 0) / 4
  const Shape s{2, 2};
  auto r = eval_in<TypeParam>(mse_model(s), {Tensor<double>(s, {1, 2, 3, -1}), Tensor<double>(s, {0, 4, 3.5, -1})}, 2);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, {}, {5.25 / 4});
}

TYPED_TEST(EvalReduction, MseLossOfEmptyTensorsIsZero) {
  const Shape s{0, 5};
  auto r = eval_in<TypeParam>(mse_model(s), {Tensor<double>(s, {}), Tensor<double>(s, {})}, 2);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, {}, {0});
  EXPECT_FALSE(std::signbit(static_cast<double>(r->data[0])));
}

TYPED_TEST(EvalReduction, SumOfAllEntries) {
  GraphBuilder b;
  int64_t x = b.input({2, 2});
  int64_t y = b.sum(x);
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  auto r = eval_in<TypeParam>(*m, {Tensor<double>({2, 2}, {0.5, -1.25, 2, 4})}, y);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, {}, {5.25});
}

}  // namespace
}  // namespace denote
