// Evaluation of the storage-only ops (permute, transpose, detach, broadcast_to, concat) and matmul,
// under F64Context and F32Context, against hand-computed values and direct loops in the test.
#include <gtest/gtest.h>

#include "eval_ctx_util.h"

namespace denote {
namespace {

using eval_ctx::build_or_die;
using eval_ctx::expect_values;
using eval_ctx::sample;

template <class Ctx>
class EvalLayout : public ::testing::Test {};
template <class Ctx>
class EvalMatmul : public ::testing::Test {};
using Contexts = ::testing::Types<F64Context, F32Context>;
TYPED_TEST_SUITE(EvalLayout, Contexts);
TYPED_TEST_SUITE(EvalMatmul, Contexts);

std::vector<double> iota(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
  return v;
}

// Runs the single unary op `op` on an input of shape `in` holding 0, 1, 2, ...
template <class Ctx>
Tensor<typename Ctx::Scalar> unary_on_iota(Op op, Attrs attrs, const Shape& in) {
  GraphBuilder b;
  const int64_t x = b.input(in);
  const int64_t y = b.unary(op, x, std::move(attrs));
  const Model m = build_or_die(b, {y});
  auto r = eval_ctx::run<Ctx>(m, {Tensor<double>(in, iota(numel(in)))}, y);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : Tensor<typename Ctx::Scalar>{};
}

TYPED_TEST(EvalLayout, PermuteMovesEveryAxis) {
  // in [2, 3, 4] (value = flat index), perm [2, 0, 1]: out[i, j, k] = in[j, k, i], out shape [4, 2, 3].
  auto y = unary_on_iota<TypeParam>(Op::Permute, PermAttrs{{2, 0, 1}}, {2, 3, 4});
  std::vector<double> want;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) want.push_back(j * 12 + k * 4 + i);
  expect_values<TypeParam>(y, {4, 2, 3}, want);
}

TYPED_TEST(EvalLayout, PermuteOfInteriorAxes) {
  // in [2, 3, 4, 5], perm [0, 2, 1, 3]: out[a, c, b, d] = in[a, b, c, d].
  auto y = unary_on_iota<TypeParam>(Op::Permute, PermAttrs{{0, 2, 1, 3}}, {2, 3, 4, 5});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c)
      for (int b = 0; b < 3; ++b)
        for (int d = 0; d < 5; ++d) want.push_back(a * 60 + b * 20 + c * 5 + d);
  expect_values<TypeParam>(y, {2, 4, 3, 5}, want);
}

TYPED_TEST(EvalLayout, TransposeHandCase) {
  // [[0, 1, 2], [3, 4, 5]]^T = [[0, 3], [1, 4], [2, 5]].
  auto y = unary_on_iota<TypeParam>(Op::Transpose, TransposeAttrs{0, 1}, {2, 3});
  expect_values<TypeParam>(y, {3, 2}, {0, 3, 1, 4, 2, 5});
}

TYPED_TEST(EvalLayout, TransposeOfInteriorAxes) {
  // in [2, 3, 4, 2], swap axes 1 and 2: out[a, c, b, d] = in[a, b, c, d].
  auto y = unary_on_iota<TypeParam>(Op::Transpose, TransposeAttrs{2, 1}, {2, 3, 4, 2});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 4; ++c)
      for (int b = 0; b < 3; ++b)
        for (int d = 0; d < 2; ++d) want.push_back(a * 24 + b * 8 + c * 2 + d);
  expect_values<TypeParam>(y, {2, 4, 3, 2}, want);
}

TYPED_TEST(EvalLayout, DetachIsTheIdentity) {
  auto y = unary_on_iota<TypeParam>(Op::Detach, NoAttrs{}, {2, 3});
  expect_values<TypeParam>(y, {2, 3}, iota(6));
}

TYPED_TEST(EvalLayout, BroadcastInteriorAndLeadingAxes) {
  // [3, 1] -> [2, 3, 4]: out[a, b, c] = in[b, 0].
  auto y = unary_on_iota<TypeParam>(Op::BroadcastTo, BroadcastAttrs{{3, 1}, {2, 3, 4}}, {3, 1});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 4; ++c) want.push_back(b);
  expect_values<TypeParam>(y, {2, 3, 4}, want);
}

TYPED_TEST(EvalLayout, BroadcastMiddleAxisOfRank3) {
  // [2, 1, 3] -> [2, 4, 3]: out[a, b, c] = in[a, 0, c].
  auto y = unary_on_iota<TypeParam>(Op::BroadcastTo, BroadcastAttrs{{2, 1, 3}, {2, 4, 3}}, {2, 1, 3});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 4; ++b)
      for (int c = 0; c < 3; ++c) want.push_back(a * 3 + c);
  expect_values<TypeParam>(y, {2, 4, 3}, want);
}

TYPED_TEST(EvalLayout, BroadcastScalarAndEmpty) {
  auto y = unary_on_iota<TypeParam>(Op::BroadcastTo, BroadcastAttrs{{}, {2, 2}}, {});
  expect_values<TypeParam>(y, {2, 2}, {0, 0, 0, 0});
  auto e = unary_on_iota<TypeParam>(Op::BroadcastTo, BroadcastAttrs{{1, 3}, {0, 3}}, {1, 3});
  expect_values<TypeParam>(e, {0, 3}, {});
}

// Concatenates three inputs along `axis`; parents hold 0.., 100.., 200.. .
template <class Ctx>
Tensor<typename Ctx::Scalar> concat3(int64_t axis, const std::vector<Shape>& shapes) {
  GraphBuilder b;
  std::vector<int64_t> ids;
  std::vector<Tensor<double>> inputs;
  for (size_t k = 0; k < shapes.size(); ++k) {
    ids.push_back(b.input(shapes[k]));
    std::vector<double> v = iota(numel(shapes[k]));
    for (double& e : v) e += 100.0 * static_cast<double>(k);
    inputs.emplace_back(shapes[k], v);
  }
  const int64_t y = b.add(Op::Concat, ids, AxisAttrs{axis});
  const Model m = build_or_die(b, {y});
  auto r = eval_ctx::run<Ctx>(m, inputs, y);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : Tensor<typename Ctx::Scalar>{};
}

TYPED_TEST(EvalLayout, ConcatInteriorAxis) {
  // [2, 1, 3] ++ [2, 2, 3] ++ [2, 3, 3] along axis 1 -> [2, 6, 3].
  auto y = concat3<TypeParam>(1, {{2, 1, 3}, {2, 2, 3}, {2, 3, 3}});
  std::vector<double> want;
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 1; ++b)
      for (int c = 0; c < 3; ++c) want.push_back(a * 3 + b * 3 + c);
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 3; ++c) want.push_back(100 + a * 6 + b * 3 + c);
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 3; ++c) want.push_back(200 + a * 9 + b * 3 + c);
  }
  expect_values<TypeParam>(y, {2, 6, 3}, want);
}

TYPED_TEST(EvalLayout, ConcatFirstAndLastAxis) {
  auto first = concat3<TypeParam>(0, {{1, 2}, {2, 2}});
  expect_values<TypeParam>(first, {3, 2}, {0, 1, 100, 101, 102, 103});
  auto last = concat3<TypeParam>(1, {{2, 1}, {2, 2}, {2, 0}});
  expect_values<TypeParam>(last, {2, 3}, {0, 100, 101, 1, 102, 103});
}

// Evaluates a @ b for inputs of the given shapes and values.
template <class Ctx>
Tensor<typename Ctx::Scalar> matmul(const Shape& sa, const std::vector<double>& va, const Shape& sb,
                                    const std::vector<double>& vb) {
  GraphBuilder b;
  const int64_t x = b.input(sa), w = b.input(sb);
  const int64_t y = b.binary(Op::Matmul, x, w);
  const Model m = build_or_die(b, {y});
  auto r = eval_ctx::run<Ctx>(m, {Tensor<double>(sa, va), Tensor<double>(sb, vb)}, y);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? *r : Tensor<typename Ctx::Scalar>{};
}

TYPED_TEST(EvalMatmul, HandComputedPromotions) {
  // [1, 2, 3] @ [[1, 2], [3, 4], [5, 6]] = [22, 28]
  expect_values<TypeParam>(matmul<TypeParam>({3}, {1, 2, 3}, {3, 2}, {1, 2, 3, 4, 5, 6}), {2}, {22, 28});
  // [[1, 2, 3], [4, 5, 6]] @ [1, 0, -1] = [-2, -2]
  expect_values<TypeParam>(matmul<TypeParam>({2, 3}, {1, 2, 3, 4, 5, 6}, {3}, {1, 0, -1}), {2}, {-2, -2});
  // [1, 2, 3] . [4, 5, 6] = 32, a scalar
  expect_values<TypeParam>(matmul<TypeParam>({3}, {1, 2, 3}, {3}, {4, 5, 6}), {}, {32});
  // [[1, 2], [3, 4]] @ [[5, 6], [7, 8]] = [[19, 22], [43, 50]]
  expect_values<TypeParam>(matmul<TypeParam>({2, 2}, {1, 2, 3, 4}, {2, 2}, {5, 6, 7, 8}), {2, 2}, {19, 22, 43, 50});
}

TYPED_TEST(EvalMatmul, EmptyInnerDimGivesZeros) {
  expect_values<TypeParam>(matmul<TypeParam>({2, 0}, {}, {0, 3}, {}), {2, 3}, {0, 0, 0, 0, 0, 0});
}

TYPED_TEST(EvalMatmul, BatchBroadcast) {
  // [2, 1, 3, 4] @ [5, 4, 2] -> [2, 5, 3, 2]: out[i, j, m, n] = sum_k A[i, 0, m, k] * B[j, k, n].
  const auto va = sample(24, 1), vb = sample(40, 2);
  std::vector<double> want;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j)
      for (int m = 0; m < 3; ++m)
        for (int n = 0; n < 2; ++n) {
          double s = 0;
          for (int k = 0; k < 4; ++k) s += va[i * 12 + m * 4 + k] * vb[j * 8 + k * 2 + n];
          want.push_back(s);
        }
  expect_values<TypeParam>(matmul<TypeParam>({2, 1, 3, 4}, va, {5, 4, 2}, vb), {2, 5, 3, 2}, want);
}

TYPED_TEST(EvalMatmul, VectorAgainstBatches) {
  // [4] @ [5, 4, 2] -> [5, 2]: out[j, n] = sum_k v[k] * B[j, k, n].
  const auto v = sample(4, 3), vb = sample(40, 4);
  std::vector<double> want;
  for (int j = 0; j < 5; ++j)
    for (int n = 0; n < 2; ++n) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += v[k] * vb[j * 8 + k * 2 + n];
      want.push_back(s);
    }
  expect_values<TypeParam>(matmul<TypeParam>({4}, v, {5, 4, 2}, vb), {5, 2}, want);
  // [2, 1, 3, 4] @ [4] -> [2, 1, 3]: out[i, 0, m] = sum_k A[i, 0, m, k] * v[k].
  const auto va = sample(24, 5);
  want.clear();
  for (int i = 0; i < 2; ++i)
    for (int m = 0; m < 3; ++m) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += va[i * 12 + m * 4 + k] * v[k];
      want.push_back(s);
    }
  expect_values<TypeParam>(matmul<TypeParam>({2, 1, 3, 4}, va, {4}, v), {2, 1, 3}, want);
}

TEST(EvalMatmulOrder, InnerProductIsALeftFoldFromZero) {
  // (((0 + 1e16 * 1) + 1 * 1) + -1e16 * 1) = 0 in f64 (the 1 is absorbed); another order would give 1.
  auto y = matmul<F64Context>({3}, {1e16, 1, -1e16}, {3}, {1, 1, 1});
  ASSERT_EQ(y.data.size(), 1u);
  EXPECT_EQ(y.data[0], 0.0);
}

}  // namespace
}  // namespace denote
