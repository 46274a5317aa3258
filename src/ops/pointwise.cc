// Shape rules of the elementwise families: binary ops need equal shapes (no implicit
// broadcasting; importers insert broadcast_to), unary ops keep the parent's shape.
#include <array>

#include "denote/tensor/mx.h"
#include "pointwise_eval.h"
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

// A known MX format, a block in [1, 2^24] and an axis of the parent (negative: from the end; a scalar
// parent has none, so it is one block of one element, axis 0 or -1).
Result<Shape> infer_MxCast(const Node& node, std::span<const Shape> parents) {
  const auto& a = std::get<MxCastAttrs>(node.attrs);
  if (auto f = parse_mx_format(a.format); !f.ok()) return op_error(node, f.status().detail());
  if (Status b = mx_check_block(a.block); !b.ok()) return op_error(node, b.detail());
  if (!parents[0].empty())
    if (auto ax = mx_normalise_axis(parents[0], a.axis); !ax.ok()) return op_error(node, ax.status().detail());
  return parents[0];
}

Result<Shape> infer_SafeLog(const Node& node, std::span<const Shape> parents) {
  if (!parents[1].empty()) return op_error(node, "eps must be a scalar [], got " + to_string(parents[1]));
  return parents[0];
}

Result<MxRoundTrip> mx_round_trip(const MxCastAttrs& a, const Tensor<double>& x) {
  DENOTE_ASSIGN_OR_RETURN(const MxFormat f, parse_mx_format(a.format));
  Tensor<double> t = x;
  const bool scalar = t.shape.empty();  // one block of one element
  if (scalar) t.shape = Shape{1};
  DENOTE_ASSIGN_OR_RETURN(const MxQuantized q, mx_quantize(f, t, scalar ? 0 : a.axis, a.block));
  DENOTE_ASSIGN_OR_RETURN(Tensor<double> y, mx_dequantize(q.q));
  y.shape = x.shape;
  return MxRoundTrip{std::move(y), q.flags};
}

}  // namespace denote::rules
