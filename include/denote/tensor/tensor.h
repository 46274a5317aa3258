// Tensor<S>: a shape plus row-major data over scalar S. The value table of an evaluation is a
// std::vector<Tensor<S>> indexed by node id.
//
//   Tensor<double> t{{2, 2}, {1, 2, 3, 4}};   // t.at({1, 0}) == 3
#pragma once

#include <cstdint>
#include <vector>

#include "denote/tensor/shape.h"

namespace denote {

template <class S>
struct Tensor {
  Shape shape;
  std::vector<S> data;

  Tensor() = default;
  Tensor(Shape s, std::vector<S> d) : shape(std::move(s)), data(std::move(d)) {}
  // A tensor of the given (valid) shape filled with `fill`.
  static Tensor filled(Shape s, const S& fill) {
    int64_t n = numel(s);
    return Tensor(std::move(s), std::vector<S>(static_cast<size_t>(n), fill));
  }
  int64_t size() const { return static_cast<int64_t>(data.size()); }
  bool operator==(const Tensor&) const = default;
};

template <class S>
using ValueTable = std::vector<Tensor<S>>;

}  // namespace denote
