// Internal: evaluation rules of the storage-only family (permute, transpose, detach, broadcast_to,
// reshape, flatten, concat, gather). They move values and never call the context's arithmetic.
#pragma once

#include <utility>

#include "eval_args.h"
#include "strided.h"

namespace denote::rules {

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Reshape(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  return Tensor<typename Ctx::Scalar>(a.out_shape, a.in().data);
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Flatten(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  return Tensor<typename Ctx::Scalar>(a.out_shape, a.in().data);
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Detach(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  return a.in();
}

// Output axis i reads input axis perm[i].
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Permute(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  const auto& perm = std::get<PermAttrs>(a.node.attrs).perm;
  const std::vector<int64_t> in_strides = row_major_strides(a.in().shape);
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) strides[i] = in_strides[static_cast<size_t>(perm[i])];
  return Tensor<typename Ctx::Scalar>(a.out_shape, strided_gather(a.in().data, 0, a.out_shape, strides));
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Transpose(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  const auto& t = std::get<TransposeAttrs>(a.node.attrs);
  std::vector<int64_t> strides = row_major_strides(a.in().shape);
  std::swap(strides[static_cast<size_t>(t.axis1)], strides[static_cast<size_t>(t.axis2)]);
  return Tensor<typename Ctx::Scalar>(a.out_shape, strided_gather(a.in().data, 0, a.out_shape, strides));
}

// Right-aligned broadcast: axes of extent 1 (or missing) are read with stride 0.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_BroadcastTo(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  const std::vector<int64_t> strides = broadcast_strides(a.in().shape, a.out_shape);
  return Tensor<typename Ctx::Scalar>(a.out_shape, strided_gather(a.in().data, 0, a.out_shape, strides));
}

// torch.cat: for each index of the axes before `axis`, the parents' blocks one after the other.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Concat(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const size_t axis = static_cast<size_t>(std::get<AxisAttrs>(a.node.attrs).axis);
  const Shape& out_shape = a.out_shape;
  const int64_t outer = numel(out_shape.begin(), out_shape.begin() + static_cast<std::ptrdiff_t>(axis));
  const int64_t inner = numel(out_shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1, out_shape.end());
  Tensor<S> out;
  out.shape = out_shape;
  out.data.reserve(static_cast<size_t>(numel(out_shape)));
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor<S>* p : a.parents) {
      const int64_t block = p->shape[axis] * inner;
      const auto first = p->data.begin() + static_cast<std::ptrdiff_t>(o * block);
      out.data.insert(out.data.end(), first, first + static_cast<std::ptrdiff_t>(block));
    }
  }
  return out;
}

// gather's blocks of a parent shape: `outer` blocks (the axes before `axis`) of `extent` rows of
// `inner` contiguous elements (the axes after it). The evaluation and the VJP share it.
struct GatherBlocks {
  int64_t outer = 0, inner = 0, extent = 0;
};
inline GatherBlocks gather_blocks(const Shape& in_shape, int64_t axis_) {
  const auto axis = static_cast<std::ptrdiff_t>(axis_);
  return {numel(in_shape.begin(), in_shape.begin() + axis), numel(in_shape.begin() + axis + 1, in_shape.end()),
          in_shape[static_cast<size_t>(axis)]};
}

// gather: for each index of the axes before `axis`, the rows indices[0], indices[1], ... of the
// parent's block along `axis` (each row = the inner axes, contiguous).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Gather(Ctx&, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const auto& g = std::get<GatherAttrs>(a.node.attrs);
  const Shape& in_shape = a.in().shape;
  const auto [outer, inner, extent] = gather_blocks(in_shape, g.axis);
  Tensor<S> out;
  out.shape = a.out_shape;
  out.data.reserve(static_cast<size_t>(numel(a.out_shape)));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t idx : g.indices) {
      const auto first = a.in().data.begin() + static_cast<std::ptrdiff_t>((o * extent + idx) * inner);
      out.data.insert(out.data.end(), first, first + static_cast<std::ptrdiff_t>(inner));
    }
  return out;
}

}  // namespace denote::rules
