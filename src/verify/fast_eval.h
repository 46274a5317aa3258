// Internal: the model compiled once into a kernel plan (include/denote/plan/compiled.h) under the
// provider policy prefer:avx2, in the network's arithmetic, for screening many candidate points
// (falsification's sampling). About 11x the evaluator's speed on convolutional generators (VNN-COMP
// 2023 cgan: 1.65 ms against 18.8 ms a call), with an implementation-defined summation order: it only
// screens. A point it finds (nearly) satisfying a conjunction is re-checked by the evaluator and
// exactly (falsify.h's try_point), so the answer never depends on it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "denote/ir/model.h"
#include "denote/scalar/arith_spec.h"

namespace denote::verify_detail {

class FastEval {
 public:
  // Null when the model has not one input and one output, the arithmetic is not f32/f64, or no plan
  // compiles (the caller evaluates point by point then).
  static std::unique_ptr<FastEval> of(const Model& m, const ArithSpec& arith);
  virtual ~FastEval() = default;
  // y = the output at x (flat, the input's element count); false on an error.
  virtual bool eval(const std::vector<double>& x, std::vector<double>& y) = 0;
};

}  // namespace denote::verify_detail
