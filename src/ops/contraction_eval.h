// Internal: evaluation rules of the contractions (linear, matmul).
#pragma once

#include <fmt/format.h>

#include "../eval/eval_args.h"

namespace denote::rules {

// y = W x + b at every leading index; inner products summed left to right from 0, then + b.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Linear(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const int64_t id = a.node.id;
  const auto* rec = find_record(a.payload.linear, id);
  if (!rec) return eval_error(fmt::format("missing linear payload for node {}", id));
  const Tensor<S>& x = a.in();
  Shape expected = x.shape;
  expected.back() = rec->out_dim;
  if (expected != a.node.out_shape)
    return eval_error(fmt::format("linear {}: declared outShape mismatch: {} vs expected {}", id,
                                  to_string(a.node.out_shape), to_string(expected)));
  if (x.shape.back() != rec->in_dim)
    return eval_error(fmt::format("linear {}: input shape mismatch: last dim {} vs in_dim {}", id, x.shape.back(),
                                  rec->in_dim));
  const int64_t out = rec->out_dim, in = rec->in_dim;
  if (static_cast<int64_t>(rec->weight.size()) != out * in || static_cast<int64_t>(rec->bias.size()) != out)
    return eval_error(fmt::format("linear {}: payload has {} weights and {} biases, expected {} and {}", id,
                                  rec->weight.size(), rec->bias.size(), out * in, out));
  const int64_t lead = numel(Shape(x.shape.begin(), x.shape.end() - 1));
  Tensor<S> y;
  y.shape = expected;
  y.data.reserve(static_cast<size_t>(lead * out));
  for (int64_t r = 0; r < lead; ++r) {
    const S* xr = x.data.data() + r * in;
    for (int64_t o = 0; o < out; ++o) {
      const S* w = rec->weight.data() + o * in;
      S acc = ctx.zero();
      for (int64_t k = 0; k < in; ++k) acc = ctx.add(acc, ctx.mul(w[k], xr[k]));
      y.data.push_back(ctx.add(acc, rec->bias[o]));
    }
  }
  return y;
}

}  // namespace denote::rules
