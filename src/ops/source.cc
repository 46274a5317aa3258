// Shape rules of the source family (input, const, rand_uniform, bernoulli_mask) and custom.
#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

Result<Shape> infer_Input(const Node& node, std::span<const Shape>) { return node.out_shape; }

Result<Shape> infer_Const(const Node& node, std::span<const Shape>) {
  const auto& a = std::get<ValueShapeAttrs>(node.attrs);
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "value_shape", a.shape));
  return a.shape;
}

Result<Shape> infer_RandUniform(const Node& node, std::span<const Shape>) { return node.out_shape; }

Result<Shape> infer_BernoulliMask(const Node& node, std::span<const Shape> parents) {
  if (!parents[0].empty())
    return op_error(node, "keep probability must be a scalar [], got " + to_string(parents[0]));
  return node.out_shape;
}

Result<Shape> infer_Custom(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<CustomAttrs>(node.attrs);
  if (parents.size() != a.input_shapes.size())
    return op_error(node, fmt::format("{} parents for {} declared inputs", parents.size(), a.input_shapes.size()));
  for (size_t i = 0; i < parents.size(); ++i) {
    if (parents[i] != a.input_shapes[i])
      return op_error(node, fmt::format("input {} shape mismatch: {} vs declared {}", i, to_string(parents[i]),
                                        to_string(a.input_shapes[i])));
  }
  return node.out_shape;
}

}  // namespace denote::rules
