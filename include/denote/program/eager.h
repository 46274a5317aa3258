// Eager<Ctx>: the interpreter that computes values. A program's values are Tensor<Ctx::Scalar>;
// each call is checked like a lowered node (program/step.h: structure, shape rule, payload record),
// then runs the op table's evaluation rule for its op in the context, so an op has exactly one
// meaning whether it is run eagerly or lowered and denoted. Parameters are converted with
// ctx.from_double, as a lowered model's f64 payload is converted for the context.
//
// The first error is kept and later calls do nothing (they return an empty tensor). It names the
// call's position: "program step 3 (linear): linear: weight has 10 values, expected 12", with
// node() == 3 and field() "weight" (step k is node k of the lowered graph).
//
//   F32Context ctx;
//   Eager<F32Context> in(ctx, {Tensor<float>{{2}, {1, -2}}});
//   auto x = in.input({2});
//   auto y = nn::relu(in, in.linear(x, 1, {0.5, 0.25}, {0}));    // y.data == {0}
//   in.status().ok();
// Instantiated for F64Context, F32Context, BinaryContext and RealContext (src/program/eager.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/program/program.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"
#include "denote/tensor/tensor.h"

namespace denote {

template <class Ctx>
class Eager : public nn::Layers<Eager<Ctx>, Tensor<typename Ctx::Scalar>> {
 public:
  using Scalar = typename Ctx::Scalar;
  using Value = Tensor<Scalar>;

  // `inputs` are the values the program's input() calls read, in order.
  explicit Eager(Ctx& ctx, std::vector<Value> inputs = {}, EvalOptions options = {})
      : ctx_(ctx), inputs_(std::move(inputs)), options_(options) {}

  const Shape& shape_of(const Value& v) const { return v.shape; }
  const Status& status() const { return first_error_; }
  // Calls made so far (the id the next call's node would have when lowered).
  int64_t steps() const { return steps_; }
  Ctx& context() { return ctx_; }

  // Checks and evaluates one step on its parents' values (program/program.h's nn::Layers calls it).
  Value emit(Step step, std::vector<Value> parents);

 private:
  Result<Value> run(Step& step, const std::vector<Value>& parents);
  Status fail(const Step& step, int64_t id, const Status& s);

  Ctx& ctx_;
  std::vector<Value> inputs_;
  EvalOptions options_;
  size_t next_input_ = 0;
  int64_t steps_ = 0;
  Status first_error_;
};

extern template class Eager<F64Context>;
extern template class Eager<F32Context>;
extern template class Eager<BinaryContext>;
extern template class Eager<RealContext>;

// Runs a one-input model function (run_program in program.h) eagerly on x: its outputs' values.
template <class Ctx, class F>
Result<std::vector<Tensor<typename Ctx::Scalar>>> run_eager(Ctx& ctx, F&& fn, Tensor<typename Ctx::Scalar> x,
                                                            EvalOptions options = {}) {
  const Shape shape = x.shape;
  std::vector<Tensor<typename Ctx::Scalar>> xs;
  xs.push_back(std::move(x));
  Eager<Ctx> in(ctx, std::move(xs), options);
  return run_program(in, std::forward<F>(fn), shape);
}

// The same for a model function of several inputs (run_program_multi): fn(in, std::vector<Value>).
template <class Ctx, class F>
Result<std::vector<Tensor<typename Ctx::Scalar>>> run_eager_multi(Ctx& ctx, F&& fn,
                                                                  std::vector<Tensor<typename Ctx::Scalar>> inputs,
                                                                  EvalOptions options = {}) {
  std::vector<Shape> shapes;
  for (const auto& x : inputs) shapes.push_back(x.shape);
  Eager<Ctx> in(ctx, std::move(inputs), options);
  return run_program_multi(in, std::forward<F>(fn), shapes);
}

}  // namespace denote
