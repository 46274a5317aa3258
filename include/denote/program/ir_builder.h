// IrBuilder: the interpreter that lowers a program to a graph (the seed's lowerForwardToIR). A
// value is a node id; each call appends one node with its shape inferred by the op table and its
// parameters recorded in the payload, after the same step check the eager interpreter runs
// (program/step.h). finish() then checks the whole model as `denote check` does (check_model:
// structure, shapes, payload records) and returns it, or the first error with node context:
// "IR graph: node 3: linear: weight has 10 values, expected 12 (Node(id=3, kind=linear(...), ...))".
//
//   IrBuilder in;
//   auto x = in.input({4});
//   auto y = nn::tanh(in, nn::sum(in, in.linear(nn::relu(in, in.linear(x, 5, W1, b1)), 3, W2, b2)));
//   Result<Model> m = in.finish({y});
//   Result<Model> m2 = lower([](auto& in, auto x) { return mlp(in, x); }, {4});
#pragma once

#include <cstdint>
#include <vector>

#include "denote/program/builder.h"
#include "denote/program/program.h"

namespace denote {

class IrBuilder : public nn::Layers<IrBuilder, int64_t> {
 public:
  using Value = int64_t;

  // The node's shape ([] for an id that is not a node of this builder).
  Shape shape_of(Value v) const;
  // The first error (sticky: later calls append nothing and return -1).
  const Status& status() const { return first_error_; }
  // Nodes appended so far.
  int64_t size() const;

  // Checks one step against its parents' shapes and appends it (nn::Layers calls it).
  Value emit(Step step, std::vector<Value> parents);

  // The model with `outputs` once check_model accepts it; otherwise the first error.
  Result<Model> finish(std::vector<Value> outputs);

 private:
  Status fail(const Node& n, const Status& s);

  GraphBuilder b_;
  Status first_error_;
};

// Runs a one-input model function (run_program in program.h) on an IrBuilder and returns the
// checked model (input node 0), or the first error.
template <class F>
Result<Model> lower(F&& fn, const Shape& input) {
  IrBuilder in;
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> outputs, run_program(in, std::forward<F>(fn), input));
  return in.finish(std::move(outputs));
}

// The same for a model function of several inputs (run_program_multi): input nodes 0..n-1.
template <class F>
Result<Model> lower_multi(F&& fn, const std::vector<Shape>& inputs) {
  IrBuilder in;
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> outputs, run_program_multi(in, std::forward<F>(fn), inputs));
  return in.finish(std::move(outputs));
}

}  // namespace denote
