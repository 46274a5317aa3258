// The infer column of the op table and the helpers shared by every family's shape rules.
#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

InferFn infer_fn(Op op) {
  static constexpr InferFn kInfer[] = {
#define DENOTE_OP(name, ...) &infer_##name,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kInfer[static_cast<size_t>(op)];
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
