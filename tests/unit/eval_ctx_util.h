// Test helpers for the evaluation tests: run a built model under a scalar context (F64Context or
// F32Context), converting its f64 payload and the inputs to the context's scalar.
//
//   auto y = eval_ctx::run<F32Context>(model, {Tensor<double>{{2}, {1, 2}}}, out_id);
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "denote/eval/eval.h"
#include "denote/program/builder.h"

namespace denote::eval_ctx {

template <class Ctx>
using Scalar = typename Ctx::Scalar;

template <class Ctx>
Payload<Scalar<Ctx>> payload_of(const Model& m) {
  return convert_payload<Scalar<Ctx>>(m.payload, [](double v) { return static_cast<Scalar<Ctx>>(v); });
}

template <class Ctx>
std::vector<Tensor<Scalar<Ctx>>> tensors_of(const std::vector<Tensor<double>>& xs) {
  std::vector<Tensor<Scalar<Ctx>>> out;
  for (const auto& x : xs) {
    std::vector<Scalar<Ctx>> d;
    for (double v : x.data) d.push_back(static_cast<Scalar<Ctx>>(v));
    out.emplace_back(x.shape, std::move(d));
  }
  return out;
}

// Evaluates node `id` of `m` with `payload` (already in the context's scalar).
template <class Ctx>
Result<Tensor<Scalar<Ctx>>> run_with(const Model& m, const Payload<Scalar<Ctx>>& payload,
                                     const std::vector<Tensor<double>>& inputs, int64_t id) {
  Ctx ctx;
  const auto xs = tensors_of<Ctx>(inputs);
  return denote(m.graph, payload, std::span<const Tensor<Scalar<Ctx>>>(xs), id, ctx);
}

template <class Ctx>
Result<Tensor<Scalar<Ctx>>> run(const Model& m, const std::vector<Tensor<double>>& inputs, int64_t id) {
  return run_with<Ctx>(m, payload_of<Ctx>(m), inputs, id);
}

// Absolute tolerance for comparing a context's result with an f64 reference of magnitude `ref`.
template <class Ctx>
double tol(double ref) {
  const double eps = sizeof(Scalar<Ctx>) == sizeof(float) ? 2e-6 : 1e-13;
  return eps * (1.0 + std::fabs(ref)) * 8;
}

// Expects `got` to have shape `shape` and values close to `want` (an f64 reference).
template <class Ctx>
void expect_values(const Tensor<Scalar<Ctx>>& got, const Shape& shape, const std::vector<double>& want) {
  ASSERT_EQ(got.shape, shape);
  ASSERT_EQ(got.data.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_NEAR(static_cast<double>(got.data[i]), want[i], tol<Ctx>(want[i])) << "at flat index " << i;
}

// Deterministic test data: small dyadic values, exact in binary32 (k-th value of a stream `salt`).
inline std::vector<double> sample(int64_t n, int salt = 0) {
  std::vector<double> v;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>((i * 7 + salt * 3) % 11 - 5) * 0.25);
  return v;
}

inline Model build_or_die(GraphBuilder& b, std::vector<int64_t> outs) {
  auto m = b.build(std::move(outs));
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? *m : Model{};
}

}  // namespace denote::eval_ctx
