// Shape rules of the elementwise families: binary ops need equal shapes (no implicit
// broadcasting; importers insert broadcast_to), unary ops keep the parent's shape.
#include <array>

#include "rules.h"

namespace denote::rules {

namespace {

constexpr std::array<std::string_view, 5> kRoundingNames = {"nearest-even", "toward-zero", "upward", "downward",
                                                            "nearest-away"};

}  // namespace

// Add, sub, ..., pow and abs, ..., gelu, clamp_min: the shape rule generated from the op table
// (src/ops/common.cc, elementwise ops without attributes).

Result<Shape> infer_ClampMin(const Node&, std::span<const Shape> parents) { return parents[0]; }

Result<Shape> infer_Cast(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<CastAttrs>(node.attrs);
  if (a.dtype.empty()) return op_error(node, "target dtype is empty");
  bool known = false;
  for (auto r : kRoundingNames) known = known || r == a.rounding;
  if (!known) return op_error(node, "unknown rounding mode '" + a.rounding + "'");
  return parents[0];
}

Result<Shape> infer_SafeLog(const Node& node, std::span<const Shape> parents) {
  if (!parents[1].empty()) return op_error(node, "eps must be a scalar [], got " + to_string(parents[1]));
  return parents[0];
}

}  // namespace denote::rules
