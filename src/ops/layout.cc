// Shape rules of the storage-only family: permute, transpose, detach, broadcast_to, reshape,
// flatten, concat, gather.
#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

Result<Shape> infer_Permute(const Node& node, std::span<const Shape> parents) {
  const auto& perm = std::get<PermAttrs>(node.attrs).perm;
  const Shape& in = parents[0];
  if (perm.size() != in.size())
    return op_error(node, fmt::format("perm length {} does not match rank {}", perm.size(), in.size()));
  std::vector<bool> seen(in.size(), false);
  Shape out(in.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = perm[i];
    if (p < 0 || static_cast<size_t>(p) >= in.size() || seen[p])
      return op_error(node, "perm " + to_string(perm) + " is not a permutation of 0.." + std::to_string(in.size()));
    seen[p] = true;
    out[i] = in[p];
  }
  return out;
}

Result<Shape> infer_Transpose(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<TransposeAttrs>(node.attrs);
  Shape out = parents[0];
  DENOTE_RETURN_IF_ERROR(check_axis(node, a.axis1, out.size()));
  DENOTE_RETURN_IF_ERROR(check_axis(node, a.axis2, out.size()));
  std::swap(out[a.axis1], out[a.axis2]);
  return out;
}

// detach: the elementwise shape rule generated from the op table (src/ops/common.cc).

Result<Shape> infer_BroadcastTo(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<BroadcastAttrs>(node.attrs);
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "to", a.to));
  if (parents[0] != a.from)
    return op_error(node, "parent shape " + to_string(parents[0]) + " is not from " + to_string(a.from));
  bool fits = a.from.size() <= a.to.size();
  for (size_t i = 0; fits && i < a.from.size(); ++i) {
    int64_t f = a.from[a.from.size() - 1 - i], t = a.to[a.to.size() - 1 - i];
    fits = (f == t || f == 1);
  }
  if (!fits) return op_error(node, "cannot broadcast " + to_string(a.from) + " to " + to_string(a.to));
  return a.to;
}

Result<Shape> infer_Reshape(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<ReshapeAttrs>(node.attrs);
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "out_shape", a.out_shape));
  if (parents[0] != a.in_shape)
    return op_error(node, "parent shape " + to_string(parents[0]) + " is not in_shape " + to_string(a.in_shape));
  int64_t from = numel(a.in_shape), to = numel(a.out_shape);
  if (from != to) return error_status(fmt::format("reshape numel mismatch: {} vs {}", from, to));
  return a.out_shape;
}

Result<Shape> infer_Flatten(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<ValueShapeAttrs>(node.attrs);
  if (parents[0] != a.shape)
    return op_error(node, "parent shape " + to_string(parents[0]) + " is not shape " + to_string(a.shape));
  return Shape{numel(parents[0])};
}

Result<Shape> infer_Concat(const Node& node, std::span<const Shape> parents) {
  const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
  const Shape& first = parents[0];
  DENOTE_RETURN_IF_ERROR(check_axis(node, axis, first.size()));
  Shape out = first;
  for (size_t k = 1; k < parents.size(); ++k) {
    const Shape& s = parents[k];
    bool same = s.size() == first.size();
    for (size_t d = 0; same && d < s.size(); ++d) same = (static_cast<int64_t>(d) == axis || s[d] == first[d]);
    if (!same)
      return op_error(node, fmt::format("parent {} shape {} does not fit {} along axis {}", k, to_string(s),
                                        to_string(first), axis));
    auto sum = checked_add(out[axis], s[axis]);
    if (!sum) return op_error(node, "axis extent overflows");
    out[axis] = *sum;
  }
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "output", out));
  return out;
}

// gather: one axis, every index inside it; the axis takes the number of indices (0 allowed).
Result<Shape> infer_Gather(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<GatherAttrs>(node.attrs);
  Shape out = parents[0];
  DENOTE_RETURN_IF_ERROR(check_axis(node, a.axis, out.size()));
  const int64_t extent = out[static_cast<size_t>(a.axis)];
  for (size_t j = 0; j < a.indices.size(); ++j)
    if (a.indices[j] < 0 || a.indices[j] >= extent)
      return op_error(node, fmt::format("index {} at position {} is outside [0, {}) (axis {} of {})", a.indices[j], j,
                                        extent, a.axis, to_string(parents[0])));
  out[static_cast<size_t>(a.axis)] = static_cast<int64_t>(a.indices.size());
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "output", out));
  return out;
}

}  // namespace denote::rules
