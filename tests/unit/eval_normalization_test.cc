// Evaluation rules of the normalization family (softmax, log_softmax, hard_masked_softmax,
// layernorm, batch_norm_eval) on every axis of a [2, 3, 4] tensor, in F64Context and F32Context,
// against direct nested loops written here (plain exp/log formulas, no shared code with the rules).
#include <gtest/gtest.h>

#include <cmath>

#include "unit/eval_test_util.h"

namespace denote {
namespace {

using testing::eval_in;
using testing::expect_values;
using testing::sample_values;

constexpr int64_t kDims[3] = {2, 3, 4};

// Flat row-major index into [2, 3, 4].
size_t at3(int64_t i, int64_t j, int64_t k) { return static_cast<size_t>((i * kDims[1] + j) * kDims[2] + k); }

// Index of element t along `axis` of the lane through (i, j, k) (the axis coordinate replaced by t).
size_t along(int axis, int64_t i, int64_t j, int64_t k, int64_t t) {
  return axis == 0 ? at3(t, j, k) : axis == 1 ? at3(i, t, k) : at3(i, j, t);
}

// x -> op(x) on an input of the given shape.
Model one_op(Op op, Shape shape, Attrs attrs) {
  GraphBuilder b;
  int64_t x = b.input(std::move(shape));
  int64_t y = b.unary(op, x, std::move(attrs));
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

// Naive softmax (or log-softmax) of [2, 3, 4] values along `axis`: e^x / sum e^x per lane.
std::vector<double> reference_softmax(const std::vector<double>& x, int axis, bool log_form) {
  std::vector<double> y(x.size());
  for (int64_t i = 0; i < kDims[0]; ++i)
    for (int64_t j = 0; j < kDims[1]; ++j)
      for (int64_t k = 0; k < kDims[2]; ++k) {
        double total = 0;
        for (int64_t t = 0; t < kDims[axis]; ++t) total += std::exp(x[along(axis, i, j, k, t)]);
        const double v = x[at3(i, j, k)];
        y[at3(i, j, k)] = log_form ? v - std::log(total) : std::exp(v) / total;
      }
  return y;
}

template <class Ctx>
class EvalNormalization : public ::testing::Test {};
TYPED_TEST_SUITE(EvalNormalization, testing::NativeContexts);

TYPED_TEST(EvalNormalization, SoftmaxOnEveryAxisOf234) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  for (int axis = 0; axis < 3; ++axis) {
    auto r = eval_in<TypeParam>(one_op(Op::Softmax, s, AxisAttrs{axis}), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    SCOPED_TRACE(axis);
    expect_values<TypeParam>(*r, s, reference_softmax(x, axis, false));
  }
}

TYPED_TEST(EvalNormalization, LogSoftmaxOnEveryAxisOf234) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  for (int axis = 0; axis < 3; ++axis) {
    auto r = eval_in<TypeParam>(one_op(Op::LogSoftmax, s, AxisAttrs{axis}), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    SCOPED_TRACE(axis);
    expect_values<TypeParam>(*r, s, reference_softmax(x, axis, true));
  }
}

TYPED_TEST(EvalNormalization, SoftmaxIsStableForLargeInputs) {
  // softmax([0, 1, 2]) = e^t / (1 + e + e^2); a shift by 1000 must not change it (e^1000 overflows).
  const double z = 1 + M_E + M_E * M_E;
  const std::vector<double> want = {1 / z, M_E / z, M_E * M_E / z};
  const Shape s{3};
  auto r = eval_in<TypeParam>(one_op(Op::Softmax, s, AxisAttrs{0}), {Tensor<double>(s, {1000, 1001, 1002})}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, s, want);
  auto l = eval_in<TypeParam>(one_op(Op::LogSoftmax, s, AxisAttrs{0}), {Tensor<double>(s, {1000, 1001, 1002})}, 1);
  ASSERT_TRUE(l.ok()) << l.message();
  expect_values<TypeParam>(*l, s, {-std::log(z), 1 - std::log(z), 2 - std::log(z)});
}

TYPED_TEST(EvalNormalization, HardMaskedSoftmaxOverAllowedEntries) {
  // Rows of the last axis: [1, 2, 3] with the middle blocked; [4, 5, 6] fully blocked;
  // [0, 1, 2] all allowed; [7, 8, 9] with only the last allowed.
  const Shape s{2, 2, 3};
  const HardMask mask{s, {1, 0, 1, 0, 0, 0, 1, 1, 1, 0, 0, 1}};
  const std::vector<double> x = {1, 2, 3, 4, 5, 6, 0, 1, 2, 7, 8, 9};
  const double z0 = std::exp(1.0) + std::exp(3.0), z2 = 1 + M_E + M_E * M_E;
  const std::vector<double> want = {std::exp(1.0) / z0, 0, std::exp(3.0) / z0, 0, 0, 0,
                                    1 / z2, M_E / z2, M_E * M_E / z2, 0, 0, 1};
  auto r = eval_in<TypeParam>(one_op(Op::HardMaskedSoftmax, s, mask), {Tensor<double>(s, x)}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, s, want);
}

// Direct layernorm of [2, 3, 4] values over the suffix from `axis` (population variance).
std::vector<double> reference_layernorm(const std::vector<double>& x, int axis, double eps,
                                        const std::vector<double>& gamma, const std::vector<double>& beta) {
  const size_t width = axis == 0 ? 24 : axis == 1 ? 12 : 4, rows = x.size() / width;
  std::vector<double> y(x.size());
  for (size_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (size_t j = 0; j < width; ++j) mean += x[r * width + j] / static_cast<double>(width);
    for (size_t j = 0; j < width; ++j) var += std::pow(x[r * width + j] - mean, 2) / static_cast<double>(width);
    for (size_t j = 0; j < width; ++j) {
      const double n = (x[r * width + j] - mean) / std::sqrt(var + eps);
      y[r * width + j] = gamma.empty() ? n : n * gamma[j] + beta[j];
    }
  }
  return y;
}

TYPED_TEST(EvalNormalization, LayernormWithoutPayloadOnEveryAxis) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  for (int axis = 0; axis < 3; ++axis) {
    auto r = eval_in<TypeParam>(one_op(Op::Layernorm, s, AxisAttrs{axis}), {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    SCOPED_TRACE(axis);
    expect_values<TypeParam>(*r, s, reference_layernorm(x, axis, 1e-5, {}, {}));
  }
}

TYPED_TEST(EvalNormalization, LayernormByHand) {
  // [1, 2, 3]: mean 2, population variance 2/3, so +-1 / sqrt(2/3 + 1e-5) at the ends.
  const Shape s{3};
  const double d = 1 / std::sqrt(2.0 / 3.0 + 1e-5);
  auto r = eval_in<TypeParam>(one_op(Op::Layernorm, s, AxisAttrs{0}), {Tensor<double>(s, {1, 2, 3})}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, s, {-d, 0, d});
}

TYPED_TEST(EvalNormalization, LayernormWithPayloadOnInteriorAxis) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  std::vector<double> gamma, beta;
  for (int j = 0; j < 12; ++j) {
    gamma.push_back(0.5 + 0.1 * j);
    beta.push_back(0.25 * j - 1);
  }
  Model m = one_op(Op::Layernorm, s, AxisAttrs{1});
  m.payload.layernorm[1] = LayerNormRecord<double>{{3, 4}, gamma, beta, 1e-3};
  auto r = eval_in<TypeParam>(m, {Tensor<double>(s, x)}, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  expect_values<TypeParam>(*r, s, reference_layernorm(x, 1, 1e-3, gamma, beta));
}

// A rule error of node 1 as "{detail} [{field}]", after checking the walker attributed it to node 1.
template <class R>
std::string rule_error(const R& r) {
  const Status& s = r.status();
  EXPECT_EQ(s.node(), 1);
  EXPECT_EQ(s.message().rfind("IR eval: node 1: " + s.detail() + " (Node(id=1", 0), 0u) << s.message();
  return s.detail() + " [" + s.field() + "]";
}

TYPED_TEST(EvalNormalization, LayernormPayloadErrors) {
  const Shape s{2, 3, 4};
  const Tensor<double> x(s, sample_values(24));
  Model m = one_op(Op::Layernorm, s, AxisAttrs{1});
  m.payload.layernorm[1] = LayerNormRecord<double>{{12}, std::vector<double>(12, 1), std::vector<double>(12, 0), 1e-5};
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)),
            "layernorm: normalized_shape [12] differs from the input's shape [3, 4] from axis 1 [normalized_shape]");
  m.payload.layernorm[1] = LayerNormRecord<double>{{3, 4}, std::vector<double>(11, 1), std::vector<double>(12, 0), 1e-5};
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)),
            "layernorm: gamma has 11 values and beta 12, expected 12 each [gamma]");
  m.payload.layernorm[1] = LayerNormRecord<double>{{3, 4}, std::vector<double>(12, 1), {}, 1e-5};
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)),
            "layernorm: gamma has 12 values and beta 0, expected 12 each [gamma]");
}

// batch_norm_eval on [2, 3, 4] with the channel axis `axis`.
struct BatchNormCase {
  std::vector<double> gamma, beta, mean, var;
  double eps;
};

BatchNormCase batch_norm_case(int64_t channels) {
  BatchNormCase c{{}, {}, {}, {}, 1e-3};
  for (int64_t k = 0; k < channels; ++k) {
    c.gamma.push_back(1.5 - 0.5 * static_cast<double>(k));
    c.beta.push_back(0.1 * static_cast<double>(k) - 0.2);
    c.mean.push_back(0.05 * static_cast<double>(k));
    c.var.push_back(0.5 + static_cast<double>(k));
  }
  return c;
}

TYPED_TEST(EvalNormalization, BatchNormOnEveryChannelAxis) {
  const Shape s{2, 3, 4};
  const std::vector<double> x = sample_values(24);
  for (int axis = 0; axis < 3; ++axis) {
    const BatchNormCase c = batch_norm_case(kDims[axis]);
    Model m = one_op(Op::BatchNormEval, s, BatchNormAttrs{axis, kDims[axis]});
    m.payload.batch_norm[1] = BatchNormRecord<double>{c.gamma, c.beta, c.mean, c.var, c.eps};
    std::vector<double> want(24);
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 3; ++j)
        for (int64_t k = 0; k < 4; ++k) {
          const size_t ch = static_cast<size_t>(axis == 0 ? i : axis == 1 ? j : k), f = at3(i, j, k);
          want[f] = (x[f] - c.mean[ch]) / std::sqrt(c.var[ch] + c.eps) * c.gamma[ch] + c.beta[ch];
        }
    auto r = eval_in<TypeParam>(m, {Tensor<double>(s, x)}, 1);
    ASSERT_TRUE(r.ok()) << r.message();
    SCOPED_TRACE(axis);
    expect_values<TypeParam>(*r, s, want);
  }
}

TYPED_TEST(EvalNormalization, BatchNormPayloadErrors) {
  const Shape s{2, 3};
  const Tensor<double> x(s, {1, 2, 3, 4, 5, 6});
  Model m = one_op(Op::BatchNormEval, s, BatchNormAttrs{1, 3});
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)), "missing batch_norm_eval payload [payload]");
  const BatchNormCase c = batch_norm_case(3);
  m.payload.batch_norm[1] = BatchNormRecord<double>{c.gamma, c.beta, c.mean, {1, 1}, c.eps};
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)),
            "batch_norm_eval: var has 2 values, expected 3 (one per channel) [var]");
  m.payload.batch_norm[1] = BatchNormRecord<double>{{1}, c.beta, c.mean, c.var, c.eps};
  EXPECT_EQ(rule_error(eval_in<TypeParam>(m, {x}, 1)),
            "batch_norm_eval: gamma has 1 values, expected 3 (one per channel) [gamma]");
}

TYPED_TEST(EvalNormalization, EmptyOuterDimsGiveEmptyResults) {
  const Shape s{0, 3};
  for (Op op : {Op::Softmax, Op::LogSoftmax, Op::Layernorm}) {
    auto r = eval_in<TypeParam>(one_op(op, s, AxisAttrs{1}), {Tensor<double>(s, {})}, 1);
    ASSERT_TRUE(r.ok()) << op_tag(op) << ": " << r.message();
    EXPECT_EQ(r->shape, s);
    EXPECT_TRUE(r->data.empty());
  }
}

}  // namespace
}  // namespace denote
