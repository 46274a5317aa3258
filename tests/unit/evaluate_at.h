// The network's first output at one input point, by the evaluator in f64, or in f32 with the weights
// rounded to f32 (the value CROWN's f32 bounds must enclose), and the bounds to check it against.
// Shared by the CROWN tests' sample checks.
#pragma once

#include <gtest/gtest.h>

#include <span>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/eval/eval.h"

namespace denote {

inline std::vector<double> evaluate_at(const Model& m, const Shape& shape, const std::vector<double>& x, bool f32) {
  const int64_t out = m.output_ids[0];
  if (!f32) {
    F64Context ctx;
    std::vector<Tensor<double>> xin = {Tensor<double>(shape, x)};
    auto v = denote(m.graph, m.payload, std::span<const Tensor<double>>(xin), out, ctx);
    EXPECT_TRUE(v.ok());
    return v.ok() ? v->data : std::vector<double>{};
  }
  F32Context ctx;
  std::vector<Tensor<float>> xf = {Tensor<float>(shape, std::vector<float>(x.begin(), x.end()))};
  const Payload<float> pf = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  auto v = denote(m.graph, pf, std::span<const Tensor<float>>(xf), out, ctx);
  EXPECT_TRUE(v.ok());
  return v.ok() ? std::vector<double>(v->data.begin(), v->data.end()) : std::vector<double>{};
}

// run_crown on the model's first output, no spec, with the given arith and method (the other options
// at their defaults; alpha_iters for alpha-CROWN).
inline Result<CrownResult> bound_with(const Model& m, const std::vector<DoubleBox>& in, const char* arith,
                                      BoundMethod method, int alpha_iters = 20) {
  CrownOptions o;
  o.arith = *parse_arith_name(arith);
  o.method = method;
  o.alpha_iters = alpha_iters;
  return run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
}

}  // namespace denote
