// Shape rules of the elementwise families: binary ops need equal shapes (no implicit
// broadcasting; importers insert broadcast_to), unary ops keep the parent's shape.
#include <array>

#include "rules.h"

namespace denote::rules {

namespace {

Result<Shape> same_shapes(const Node& node, std::span<const Shape> parents) {
  DENOTE_RETURN_IF_ERROR(check_same_shape(node, parents[0], parents[1]));
  return parents[0];
}

constexpr std::array<std::string_view, 5> kRoundingNames = {"nearest-even", "toward-zero", "upward", "downward",
                                                            "nearest-away"};

}  // namespace

#define DENOTE_BINARY_RULE(name) \
  Result<Shape> infer_##name(const Node& node, std::span<const Shape> parents) { return same_shapes(node, parents); }
DENOTE_BINARY_RULE(Add)
DENOTE_BINARY_RULE(Sub)
DENOTE_BINARY_RULE(MulElem)
DENOTE_BINARY_RULE(MaxElem)
DENOTE_BINARY_RULE(MinElem)
DENOTE_BINARY_RULE(Div)
DENOTE_BINARY_RULE(DivTrunc)
DENOTE_BINARY_RULE(DivFloor)
DENOTE_BINARY_RULE(Remainder)
DENOTE_BINARY_RULE(Pow)
#undef DENOTE_BINARY_RULE

#define DENOTE_UNARY_RULE(name) \
  Result<Shape> infer_##name(const Node&, std::span<const Shape> parents) { return parents[0]; }
DENOTE_UNARY_RULE(Abs)
DENOTE_UNARY_RULE(Sqrt)
DENOTE_UNARY_RULE(Inv)
DENOTE_UNARY_RULE(Relu)
DENOTE_UNARY_RULE(Tanh)
DENOTE_UNARY_RULE(Sigmoid)
DENOTE_UNARY_RULE(Exp)
DENOTE_UNARY_RULE(Log)
DENOTE_UNARY_RULE(Sin)
DENOTE_UNARY_RULE(Cos)
DENOTE_UNARY_RULE(Softplus)
DENOTE_UNARY_RULE(Neg)
DENOTE_UNARY_RULE(Rsqrt)
DENOTE_UNARY_RULE(Erf)
DENOTE_UNARY_RULE(Gelu)
DENOTE_UNARY_RULE(ClampMin)
#undef DENOTE_UNARY_RULE

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
