// Internal: derivative rules of the linear reductions (sum, reduce_sum, reduce_mean). The JVP is
// the reduction of the tangent; the VJP spreads each cotangent entry over the entries it summed
// (reduce_mean: the cotangent divided by the axis extent once per lane, then spread, as PyTorch's
// mean backward grad / N).
//
//   // x [2, 3], reduce_sum over axis 1: out.parents[0][i, j] = cot[i]
//   auto st = vjp_ReduceSum(ctx, args, cot, out);
#pragma once

#include "diff_layout.h"
#include "../ops/axis_lanes.h"
#include "../ops/reduction_eval.h"

namespace denote::ad {

namespace lrc {

// g[lane entries] = cot[lane] (divided by the extent first when `mean`), g of the parent's shape.
template <class Ctx>
Tensor<typename Ctx::Scalar> spread_along_axis(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                               const Tensor<typename Ctx::Scalar>& cot, bool mean) {
  using S = typename Ctx::Scalar;
  const Shape& in_shape = a.in().shape;
  const rules::AxisLanes lanes = rules::axis_lanes(in_shape, std::get<AxisAttrs>(a.node.attrs).axis);
  Tensor<S> g = zeros(ctx, in_shape);
  if (lanes.extent == 0) return g;  // nothing was summed (and no division by 0)
  const S extent = ctx.from_double(static_cast<double>(lanes.extent));
  S* dst = g.data.data();
  for (int64_t l = 0; l < lanes.count(); ++l) {
    const S v = mean ? ctx.div(cot.data[static_cast<size_t>(l)], extent) : cot.data[static_cast<size_t>(l)];
    const int64_t base = lanes.base(l);
    for (int64_t k = 0; k < lanes.extent; ++k) dst[base + k * lanes.inner] = v;
  }
  return g;
}

}  // namespace lrc

// ---- sum: every entry receives the scalar cotangent

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Sum(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                             std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_Sum<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_Sum(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
               VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  out.parents[0] = Tensor<S>::filled(a.in().shape, cot.data[0]);
  return ok_status();
}

// ---- reduce_sum, reduce_mean (keepdim = false)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_ReduceSum(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                   std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_ReduceSum<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_ReduceSum(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                     VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  out.parents[0] = lrc::spread_along_axis(ctx, a, cot, /*mean=*/false);
  return ok_status();
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_ReduceMean(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                    std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_ReduceMean<Ctx>(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_ReduceMean(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                      VjpOut<typename Ctx::Scalar>& out) {
  if (!lrc::wants(out, 0)) return ok_status();
  lrc::reserve_slots(out, 1);
  out.parents[0] = lrc::spread_along_axis(ctx, a, cot, /*mean=*/true);
  return ok_status();
}

}  // namespace denote::ad
