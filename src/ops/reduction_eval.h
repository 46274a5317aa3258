// Internal: evaluation rules of the reductions (sum, reduce_sum, reduce_mean, mse_loss). Every
// sum is a left fold from zero in index order.
#pragma once

#include "eval_args.h"
#include "axis_lanes.h"

namespace denote::rules {

// Left fold from zero, in row-major order.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Sum(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  auto acc = ctx.zero();
  for (const auto& v : a.in().data) acc = ctx.add(acc, v);
  return Tensor<typename Ctx::Scalar>(Shape{}, {acc});
}

// Sums each lane along the node's axis (keepdim = false); `mean` divides by the axis extent.
template <class Ctx>
Tensor<typename Ctx::Scalar> reduce_along_axis(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a, bool mean) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in();
  const AxisLanes lanes = axis_lanes(x.shape, std::get<AxisAttrs>(a.node.attrs).axis);
  const S extent = ctx.from_double(static_cast<double>(lanes.extent));
  Tensor<S> y;
  y.shape = a.out_shape;
  y.data.reserve(static_cast<size_t>(lanes.count()));
  for (int64_t l = 0; l < lanes.count(); ++l) {
    S acc = ctx.zero();
    for (int64_t k = 0; k < lanes.extent; ++k) acc = ctx.add(acc, x.data[lanes.at(l, k)]);
    y.data.push_back(mean ? ctx.div(acc, extent) : acc);
  }
  return y;
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_ReduceSum(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  return reduce_along_axis(ctx, a, /*mean=*/false);
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_ReduceMean(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  return reduce_along_axis(ctx, a, /*mean=*/true);
}

// Sum of (y - t)^2 over all entries, divided by the element count (by 1 for an empty tensor).
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_MseLoss(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const std::vector<S>& y = a.in(0).data;
  const std::vector<S>& t = a.in(1).data;
  S acc = ctx.zero();
  for (size_t i = 0; i < y.size(); ++i) {
    const S d = ctx.sub(y[i], t[i]);
    acc = ctx.add(acc, ctx.mul(d, d));
  }
  const double count = y.empty() ? 1.0 : static_cast<double>(y.size());
  return Tensor<S>(Shape{}, {ctx.div(acc, ctx.from_double(count))});
}

}  // namespace denote::rules
