// Internal: derivative rules of the storage-only family (permute, transpose, broadcast_to,
// reshape, flatten, concat, gather). Every one is linear, so its JVP is the op itself applied to the
// tangents; its VJP moves the cotangent back (the inverse permutation, a split along the concat
// axis). Only broadcast_to's VJP does arithmetic: it sums the cotangent over the broadcast axes
// (PyTorch's sum_to_size), each input entry a left fold from zero in the cotangent's row-major order.
//
//   VjpOut<double> out{{true}, {Tensor<double>{}}};
//   auto st = vjp_Permute(ctx, args, cot, out);   // out.parents[0]: cot permuted back
#pragma once

#include <algorithm>
#include <utility>

#include "diff_args.h"
#include "../ops/layout_eval.h"

namespace denote::ad {

// Helpers shared by the layout, reduction and contraction rules (diff_reduction.h and
// diff_contraction.h include this header).
namespace lrc {

using ad::wants;

// Makes room for one cotangent per parent (the walker usually sized it already).
template <class S>
void reserve_slots(VjpOut<S>& out, size_t parents) {
  if (out.parents.size() < parents) out.parents.resize(parents);
}

// dst[idx] += src[k] for the k-th index idx of `shape` (row-major), idx read through `strides`:
// the transpose of a broadcasting gather. Each dst entry is folded in the order src visits it.
template <class Ctx>
void scatter_add(Ctx& ctx, const std::vector<typename Ctx::Scalar>& src, const Shape& shape,
                 const std::vector<int64_t>& strides, std::vector<typename Ctx::Scalar>& dst) {
  const int64_t n = numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = 0;
  for (int64_t k = 0; k < n; ++k) {
    auto& d = dst[static_cast<size_t>(off)];
    d = ctx.add(d, src[static_cast<size_t>(k)]);
    rules::next_index(idx, shape, strides, off);
  }
}

// A value reshaped to its parent's shape (same row-major data).
template <class S>
Tensor<S> reshaped(const Tensor<S>& t, const Shape& shape) {
  return Tensor<S>(shape, t.data);
}

}  // namespace lrc

// ---- permute: the cotangent permuted back (input axis perm[i] reads cotangent axis i)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Permute(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Permute<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Permute(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  const auto& perm = std::get<PermAttrs>(a.node.attrs).perm;
  const std::vector<int64_t> cot_strides = row_major_strides(cot.shape);
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[static_cast<size_t>(perm[i])] = cot_strides[i];
  const Shape& in_shape = a.in().shape;
  out.parents[0] = Tensor<S>(in_shape, rules::strided_gather(cot.data, 0, in_shape, strides));
  return ok_status();
}

// ---- transpose: its own inverse

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Transpose(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                   std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Transpose<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Transpose(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                     VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  const auto& t = std::get<TransposeAttrs>(a.node.attrs);
  std::vector<int64_t> strides = row_major_strides(cot.shape);
  std::swap(strides[static_cast<size_t>(t.axis1)], strides[static_cast<size_t>(t.axis2)]);
  const Shape& in_shape = a.in().shape;
  out.parents[0] = Tensor<S>(in_shape, rules::strided_gather(cot.data, 0, in_shape, strides));
  return ok_status();
}

// ---- broadcast_to: the cotangent summed over the broadcast axes (leading and extent-1 axes)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_BroadcastTo(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                     std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_BroadcastTo<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_BroadcastTo(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                       VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  const Shape& in_shape = a.in().shape;
  auto g = zeros(ctx, in_shape);
  lrc::scatter_add(ctx, cot.data, cot.shape, rules::broadcast_strides(in_shape, cot.shape), g.data);
  out.parents[0] = std::move(g);
  return ok_status();
}

// ---- reshape, flatten: the same row-major data in the parent's shape

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Reshape(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Reshape<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Reshape(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  out.parents[0] = lrc::reshaped(cot, a.in().shape);
  return ok_status();
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Flatten(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Flatten<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Flatten(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  out.parents[0] = lrc::reshaped(cot, a.in().shape);
  return ok_status();
}

// ---- concat: the cotangent split along the axis, one block per parent

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Concat(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Concat<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Concat(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                  VjpOut<typename Ctx::Scalar>& out) {
  const size_t count = a.parents.size();
  lrc::reserve_slots(out, count);
  const size_t axis = static_cast<size_t>(std::get<AxisAttrs>(a.node.attrs).axis);
  const Shape& shape = cot.shape;
  const int64_t outer = numel(shape.begin(), shape.begin() + static_cast<std::ptrdiff_t>(axis));
  const int64_t inner = numel(shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, shape.end());
  for (size_t k = 0; k < count; ++k) {
    if (!lrc::wants(out, k)) continue;
    out.parents[k].shape = a.in(k).shape;
    out.parents[k].data.clear();
    out.parents[k].data.reserve(a.in(k).data.size());
  }
  auto src = cot.data.begin();
  for (int64_t o = 0; o < outer; ++o) {
    for (size_t k = 0; k < count; ++k) {
      const auto block = static_cast<std::ptrdiff_t>(a.in(k).shape[axis] * inner);
      if (lrc::wants(out, k)) out.parents[k].data.insert(out.parents[k].data.end(), src, src + block);
      src += block;
    }
  }
  return ok_status();
}

// ---- gather: the JVP gathers the tangent; the VJP adds each cotangent row back into the row it
// was read from (repeated indices accumulate, in the cotangent's order)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Gather(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Gather<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Gather(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                  VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  const auto& g = std::get<GatherAttrs>(a.node.attrs);
  const Shape& in_shape = a.in().shape;
  const auto [outer, inner, extent] = rules::gather_blocks(in_shape, g.axis);
  auto grad = zeros(ctx, in_shape);
  size_t src = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : g.indices)
      for (int64_t k = 0; k < inner; ++k, ++src) {
        auto& d = grad.data[static_cast<size_t>((o * extent + idx) * inner + k)];
        d = ctx.add(d, cot.data[src]);
      }
  out.parents[0] = std::move(grad);
  return ok_status();
}

}  // namespace denote::ad
