// The Op enum and its table row (OpInfo), generated from ops.def. Passes ask properties of an op
// (is_elementwise, family, attr kind) instead of listing ops.
//
//   const OpInfo& info = op_info(Op::Relu);   // info.tag == "relu", info.min_parents == 1
//   std::optional<Op> op = op_from_tag("mul_elem");
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace denote {

enum OpFlag : uint32_t {
  kFlagNone = 0,
  kFlagElementwise = 1u << 0,
  kFlagMonotone = 1u << 1,
  kFlagStorageOnly = 1u << 2,
  kFlagPayload = 1u << 3,
  kFlagInteger = 1u << 4,  // the typed interpreter's integer rules accept it (src/typed/int_ops.cc)
  kFlagRandom = 1u << 5,
  kFlagAxis = 1u << 6,
  kFlagParams = 1u << 7,  // parameters come from the payload by node id (listing: payload=node_id)
  kFlagBool = 1u << 8,    // defined on bool too (logical or / and)
  kFlagSameOrder = 1u << 9,        // output = the parent's elements in the same row-major order
  kFlagAffine = 1u << 10,          // output = fixed weights x parent elements + constant (bounds pass it exactly)
  kFlagPiecewiseLinear = 1u << 11, // continuous, finitely many linear pieces
  kFlagRelaxed = 1u << 12,         // unary; bounds relax it between two lines per element
  kFlagOneToOne = 1u << 13,        // storage-only; each output element a distinct parent element
  kFlagSplit = 1u << 14,           // branch and bound splits it at 0; alpha-CROWN optimises its lower slope
};

// The ONNX column of ops.def: how export writes the op and which ONNX op type imports back to it.
enum class OnnxExport : uint8_t {
  None,    // no ONNX counterpart
  Direct,  // one node of type `name` on the same inputs, no attributes; imported back 1:1
  Custom,  // its own export function; `name` is its main node type ("" when lowered to other ops)
};
struct OnnxName {
  OnnxExport how;
  std::string_view name;
};
inline constexpr OnnxName kOnnxNone{OnnxExport::None, ""};
constexpr OnnxName onnx_direct(std::string_view name) { return {OnnxExport::Direct, name}; }
constexpr OnnxName onnx_custom(std::string_view name) { return {OnnxExport::Custom, name}; }

// The diff column of ops.def: how a gradient passes through the op (src/autodiff/).
enum class Diff : uint8_t { Rule, Zero, None, Leaf };

enum class OpFamily : uint8_t { Source, Misc, Layout, Binary, Unary, Reduction, Contraction, Window, Normalization };

// Which attribute record an op carries (the alternative held by Node::attrs).
enum class AttrKind : uint8_t {
  None, ValueShape, Seed, Custom, Perm, Transpose, Broadcast, Reshape, Axis, Clamp, Cast, Conv, Window,
  BatchNorm, Mask, Gather, MxCast
};

enum class Op : uint8_t {
#define DENOTE_OP(name, ...) name,
#include "denote/ir/ops.def"
#undef DENOTE_OP
};

inline constexpr int kNumOps = 0
#define DENOTE_OP(name, ...) +1
#include "denote/ir/ops.def"
#undef DENOTE_OP
    ;

struct OpInfo {
  Op op;
  std::string_view tag;
  int min_parents;
  int max_parents;  // -1: unbounded
  OpFamily family;
  AttrKind attr;
  uint32_t flags;
  OnnxName onnx;
  Diff diff;
  std::string_view shape_rule;
  std::string_view meaning;
};

inline constexpr std::array<OpInfo, kNumOps> kOpTable = {{
#define DENOTE_OP(name, tag, minp, maxp, family, attr, flags, onnx, diff, shape, meaning)                     \
  {Op::name, tag, minp, maxp, OpFamily::family, AttrKind::attr, static_cast<uint32_t>(flags), onnx, Diff::diff, shape, \
   meaning},
#include "denote/ir/ops.def"
#undef DENOTE_OP
}};

inline const OpInfo& op_info(Op op) { return kOpTable[static_cast<size_t>(op)]; }
// The same row in constant expressions (tables generated at compile time).
constexpr const OpInfo& op_info_c(Op op) { return kOpTable[static_cast<size_t>(op)]; }
inline std::string_view op_tag(Op op) { return op_info(op).tag; }
constexpr bool has_flag(Op op, OpFlag f) { return (op_info_c(op).flags & f) != 0; }
constexpr bool is_elementwise(Op op) { return has_flag(op, kFlagElementwise); }
// Facts the bound engine, verify and the fast paths read (ops.def's O, L, K, X flags), usable in `if constexpr`.
constexpr bool moves_one_to_one(Op op) { return has_flag(op, kFlagOneToOne); }
constexpr bool keeps_order(Op op) { return has_flag(op, kFlagSameOrder); }
constexpr bool is_affine(Op op) { return has_flag(op, kFlagAffine); }
constexpr bool is_piecewise_linear(Op op) { return has_flag(op, kFlagPiecewiseLinear); }
constexpr bool is_relaxed(Op op) { return has_flag(op, kFlagRelaxed); }
constexpr bool splits_at_zero(Op op) { return has_flag(op, kFlagSplit); }
// A step: one parent, elementwise, nondecreasing, derivative 0 wherever it exists, and arithmetic (not a
// storage-only gradient stop such as detach): sign, floor, ceil, round (GradOptions::step_window).
constexpr bool is_step_op(Op op) {
  const OpInfo& i = op_info_c(op);
  return i.diff == Diff::Zero && i.max_parents == 1 && is_elementwise(op) && has_flag(op, kFlagMonotone) &&
         !has_flag(op, kFlagStorageOnly);
}
// The ONNX op type the op exports as (ops.def's onnx column); "" when none or lowered to other ops.
constexpr std::string_view onnx_name(Op op) { return kOpTable[static_cast<size_t>(op)].onnx.name; }
constexpr OnnxExport onnx_export(Op op) { return kOpTable[static_cast<size_t>(op)].onnx.how; }

std::optional<Op> op_from_tag(std::string_view tag);
std::string_view family_name(OpFamily family);
std::string_view attr_kind_name(AttrKind kind);
std::string_view diff_name(Diff diff);

}  // namespace denote
