// Internal: the per-op rule declarations generated from ops.def. Each family file under src/ops/
// defines infer_<Op> (shape rule) for its ops; each <family>_eval.h defines eval_<Op> templates.
// A missing rule is a compile or link error, which is the static completeness check of the table.
#pragma once

#include <span>
#include <string>

#include "denote/base/checked.h"
#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/tensor/shape.h"

namespace denote::rules {

using InferFn = Result<Shape> (*)(const Node&, std::span<const Shape>);

#define DENOTE_OP(name, ...) \
  Result<Shape> infer_##name(const Node& node, std::span<const Shape> parents);
#include "denote/ir/ops.def"
#undef DENOTE_OP

// infer column of the op table, indexed by Op. Elementwise ops without attributes get the rule the
// table generates from their flags and arity (see common.cc); every other op has infer_<Op>.
InferFn infer_fn(Op op);
bool shape_rule_generated(Op op);

// ---- helpers shared by the shape rules (all messages lower-case, no node context: callers add it)

// An op-local error text, "{tag}: {what}".
Status op_error(const Node& node, const std::string& what);

// Validates a shape coming from attrs: nonnegative dims and a bounded element count.
Status check_attr_shape(const Node& node, const char* field, const Shape& s);

// "invalid axis {a} for rank {r}" unless 0 <= axis < rank.
Status check_axis(const Node& node, int64_t axis, size_t rank);

// "{tag}: shape mismatch: {a} vs {b}" unless equal.
Status check_same_shape(const Node& node, const Shape& a, const Shape& b);

}  // namespace denote::rules
