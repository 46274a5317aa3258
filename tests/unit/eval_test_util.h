// Test helpers for the evaluation-rule tests: run a built model in a native context (payload and
// inputs converted from f64) and compare against reference values computed in double by the test.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <vector>

#include "denote/eval/eval.h"
#include "denote/program/builder.h"

namespace denote::testing {

using NativeContexts = ::testing::Types<F64Context, F32Context>;

// Evaluates node `output` of `m` in context Ctx with the given f64 inputs (one per input node).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_in(const Model& m, const std::vector<Tensor<double>>& inputs,
                                             int64_t output) {
  using S = typename Ctx::Scalar;
  auto to_s = [](double v) { return static_cast<S>(v); };
  Payload<S> payload = convert_payload<S>(m.payload, to_s);
  std::vector<Tensor<S>> in;
  for (const auto& t : inputs) {
    Tensor<S> c;
    c.shape = t.shape;
    for (double v : t.data) c.data.push_back(to_s(v));
    in.push_back(std::move(c));
  }
  Ctx ctx;
  return denote(m.graph, payload, std::span<const Tensor<S>>(in), output, ctx);
}

// Tolerance for comparing a Ctx result with a double reference: tight for f64, a few binary32
// ulps (times the magnitude) for f32.
template <class Ctx>
double tolerance(double ref) {
  const double rel = sizeof(typename Ctx::Scalar) == sizeof(double) ? 1e-12 : 4e-6;
  return rel * std::max(1.0, std::fabs(ref));
}

template <class Ctx>
void expect_values(const Tensor<typename Ctx::Scalar>& got, const Shape& shape, const std::vector<double>& want) {
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(static_cast<double>(got.data[i]), want[i], tolerance<Ctx>(want[i])) << "at flat index " << i;
}

// Row-major values 0.1 * ((7 i) mod 11) - 0.4, distinct and of both signs.
inline std::vector<double> sample_values(size_t n) {
  std::vector<double> v;
  for (size_t i = 0; i < n; ++i) v.push_back(0.1 * static_cast<double>((7 * i) % 11) - 0.4);
  return v;
}

}  // namespace denote::testing
