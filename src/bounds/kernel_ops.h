// Which ops the bound engine's dedicated kernels serve: a table over include/denote/ir/ops.def (a row
// per op that has one), read by IBP's fast passes, CROWN's one-step, first-layer and max_pool paths, and
// verify's dense chains. Facts about ops themselves (affine, same order, relaxed, split) are ops.def's
// flags (op.h: is_affine, keeps_order, is_relaxed, splits_at_zero); this table says only which kernel runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

#include "denote/ir/graph.h"
#include "denote/ir/op.h"
#include "denote/ir/payload.h"

namespace denote {

enum class BoundKernel : uint8_t {
  None,
  Dense,    // linear, y = W x + b: ibp_dense.h, crown_linear.cc, Engine::linear_one_step
  Conv,     // conv: the batched conv (ibp_conv.h, crown_conv.cc)
  Pool,     // max_pool: lines from the parent's box (crown_maxpool.cc)
  Mean,     // avg_pool: the window mean (crown_patches.cc's windowed rows)
  Product,   // mul_elem, matmul: affine in one operand when the other is constant
  Quotient,  // div: affine in the dividend when the divisor is constant
  Sum,         // add: the coefficients go to both parents (crown_patches.cc's windowed rows)
  Difference,  // sub: to both parents, negated to the second
};

template <Op O>
inline constexpr BoundKernel kBoundKernel = BoundKernel::None;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Linear> = BoundKernel::Dense;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Conv> = BoundKernel::Conv;
template <>
inline constexpr BoundKernel kBoundKernel<Op::MaxPool> = BoundKernel::Pool;
template <>
inline constexpr BoundKernel kBoundKernel<Op::AvgPool> = BoundKernel::Mean;
template <>
inline constexpr BoundKernel kBoundKernel<Op::MulElem> = BoundKernel::Product;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Matmul> = BoundKernel::Product;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Div> = BoundKernel::Quotient;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Add> = BoundKernel::Sum;
template <>
inline constexpr BoundKernel kBoundKernel<Op::Sub> = BoundKernel::Difference;

constexpr BoundKernel bound_kernel(Op op) {
  constexpr BoundKernel kTable[] = {
#define DENOTE_OP(name, ...) kBoundKernel<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kTable) == kNumOps);
  return kTable[static_cast<size_t>(op)];
}
constexpr bool is_dense(Op op) { return bound_kernel(op) == BoundKernel::Dense; }

// A constant offset or scale of parent 0 (x + c, x - c, x * c) when parent 1 is a constant: an
// elementwise binary op that is affine, or a product.
constexpr bool offset_or_scale(Op op) {
  return is_elementwise(op) && op_info_c(op).min_parents == 2 &&
         (is_affine(op) || bound_kernel(op) == BoundKernel::Product);
}

// The constant values behind node p: a const's record, or a one-element const under a storage-only op of
// one parent (broadcast_to: how ONNX import writes `x - mean` with a scalar mean; every layout of one
// element is that element); nullptr otherwise. Callers check the values' count against their node.
inline const ConstRecord<double>* const_behind(const Graph& g, const Payload<double>& p, int64_t id) {
  if (id < 0 || id >= static_cast<int64_t>(g.nodes.size())) return nullptr;
  const Node& q = g.nodes[static_cast<size_t>(id)];
  if (q.op == Op::Const) return find_record(p.consts, id);
  if (!has_flag(q.op, kFlagStorageOnly) || q.parents.size() != 1) return nullptr;
  if (g.nodes[static_cast<size_t>(q.parents[0])].op != Op::Const) return nullptr;
  const ConstRecord<double>* rec = find_record(p.consts, q.parents[0]);
  return rec && rec->values.size() == 1 ? rec : nullptr;
}

}  // namespace denote
