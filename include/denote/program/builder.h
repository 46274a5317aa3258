// GraphBuilder: appends nodes with their shapes inferred by the op table, records payload
// parameters, and returns the first error (if any) from build(). It lives in program/, above
// check/, because it checks and infers each node as it is added.
//
//   GraphBuilder b;
//   int64_t x = b.input({4});
//   int64_t h = b.linear(x, 5, W1, b1);
//   int64_t y = b.unary(Op::Tanh, b.sum(b.linear(b.unary(Op::Relu, h), 3, W2, b2)));
//   Result<Model> m = b.build({y});
#pragma once

#include <optional>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"

namespace denote {

class GraphBuilder {
 public:
  // Appends a node; its shape is inferred from its parents unless `declared` is given.
  int64_t add(Op op, std::vector<int64_t> parents, Attrs attrs = NoAttrs{}, std::optional<Shape> declared = {});

  int64_t input(Shape shape);
  int64_t constant(Shape shape, std::vector<double> values);
  int64_t unary(Op op, int64_t x, Attrs attrs = NoAttrs{}) { return add(op, {x}, std::move(attrs)); }
  int64_t binary(Op op, int64_t x, int64_t y) { return add(op, {x, y}); }
  int64_t sum(int64_t x) { return add(Op::Sum, {x}); }
  // weight is [out, in] row-major (PyTorch layout).
  int64_t linear(int64_t x, int64_t out_dim, std::vector<double> weight, std::vector<double> bias);
  int64_t conv(int64_t x, ConvConfig config, std::vector<double> weight, std::vector<double> bias);

  // The first error met while building (an unknown parent, a shape rule failing), or the model.
  Result<Model> build(std::vector<int64_t> output_ids);
  // Direct access, for tests that need to build invalid graphs on purpose.
  Model& model() { return model_; }
  const Model& model() const { return model_; }
  // The parameters recorded so far, keyed by node id (IrBuilder stores each step's record here).
  Payload<double>& payload() { return model_.payload; }
  // The first error so far (ok while every node was accepted).
  const Status& first_error() const { return first_error_; }

 private:
  Model model_;
  Status first_error_;
};

}  // namespace denote
