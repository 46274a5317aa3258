// Shape rules of the normalization family: batch_norm_eval, softmax, log_softmax,
// hard_masked_softmax, layernorm.
#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

Result<Shape> infer_BatchNormEval(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<BatchNormAttrs>(node.attrs);
  const Shape& in = parents[0];
  DENOTE_RETURN_IF_ERROR(check_axis(node, a.channel_axis, in.size()));
  if (in[a.channel_axis] != a.channels)
    return op_error(node, fmt::format("input has {} channels on axis {}, expected {}", in[a.channel_axis],
                                      a.channel_axis, a.channels));
  return in;
}

Result<Shape> infer_Softmax(const Node& node, std::span<const Shape> parents) {
  DENOTE_RETURN_IF_ERROR(check_axis(node, std::get<AxisAttrs>(node.attrs).axis, parents[0].size()));
  return parents[0];
}

Result<Shape> infer_LogSoftmax(const Node& node, std::span<const Shape> parents) {
  return infer_Softmax(node, parents);
}

Result<Shape> infer_HardMaskedSoftmax(const Node& node, std::span<const Shape> parents) {
  const auto& m = std::get<HardMask>(node.attrs);
  if (parents[0].empty()) return op_error(node, "input must have rank >= 1, got []");
  if (m.shape != parents[0])
    return op_error(node, "mask shape " + to_string(m.shape) + " differs from input " + to_string(parents[0]));
  if (static_cast<int64_t>(m.allowed.size()) != numel(m.shape))
    return op_error(node, fmt::format("mask has {} entries, expected {}", m.allowed.size(), numel(m.shape)));
  return parents[0];
}

Result<Shape> infer_Layernorm(const Node& node, std::span<const Shape> parents) {
  const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
  const Shape& in = parents[0];
  DENOTE_RETURN_IF_ERROR(check_axis(node, axis, in.size()));
  if (numel(in.begin() + axis, in.end()) <= 0) return op_error(node, "embedDim must be > 0");
  return in;
}

}  // namespace denote::rules
