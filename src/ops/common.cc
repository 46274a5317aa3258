// The infer column of the op table and the helpers shared by every family's shape rules.
#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

namespace {

// The shape rule the table generates for an elementwise op without attributes: one parent keeps
// its shape; two parents must have equal shapes (no implicit broadcasting; importers insert
// broadcast_to). Such ops have no infer_<Op> of their own.
template <Op op>
Result<Shape> elementwise_infer(const Node& node, std::span<const Shape> parents) {
  if constexpr (op_info_c(op).max_parents == 2) {
    DENOTE_RETURN_IF_ERROR(check_same_shape(node, parents[0], parents[1]));
  }
  return parents[0];
}

template <Op op>
constexpr bool kGeneratedShapeRule =
    (op_info_c(op).flags & kFlagElementwise) != 0 && op_info_c(op).attr == AttrKind::None &&
    op_info_c(op).min_parents == op_info_c(op).max_parents && op_info_c(op).max_parents >= 1 &&
    op_info_c(op).max_parents <= 2;

// `own` names the op's infer_<Op>; it is only instantiated (and so only needs a definition) for
// ops whose rule the table does not generate.
template <Op op, class Own>
constexpr InferFn pick_infer(Own own) {
  if constexpr (kGeneratedShapeRule<op>) return &elementwise_infer<op>;
  else return own(0);
}

}  // namespace

InferFn infer_fn(Op op) {
  static constexpr InferFn kInfer[] = {
#define DENOTE_OP(name, ...) pick_infer<Op::name>([](auto) { return &infer_##name; }),
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kInfer[static_cast<size_t>(op)];
}

bool shape_rule_generated(Op op) {
  static constexpr bool kGenerated[] = {
#define DENOTE_OP(name, ...) kGeneratedShapeRule<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kGenerated[static_cast<size_t>(op)];
}

Status op_error(const Node& node, const std::string& what) {
  return error_status(std::string(op_tag(node.op)) + ": " + what);
}

Status check_attr_shape(const Node& node, const char* field, const Shape& s) {
  auto n = checked_numel(s);
  if (!n.ok()) return op_error(node, std::string(field) + ": " + n.message());
  return ok_status();
}

Status check_axis(const Node& node, int64_t axis, size_t rank) {
  if (axis < 0 || static_cast<uint64_t>(axis) >= rank)
    return op_error(node, fmt::format("invalid axis {} for rank {}", axis, rank));
  return ok_status();
}

Status check_same_shape(const Node& node, const Shape& a, const Shape& b) {
  if (a != b) return op_error(node, "shape mismatch: " + to_string(a) + " vs " + to_string(b));
  return ok_status();
}

}  // namespace denote::rules
