// Internal: evaluation rules of the contractions (linear, matmul).
#pragma once

#include <algorithm>

#include <fmt/format.h>

#include "eval_args.h"
#include "native_fold.h"
#include "strided.h"

namespace denote::rules {

// y = W x + b at every leading index; inner products summed left to right from 0, then + b.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Linear(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const int64_t id = a.node.id;
  const auto* rec = find_record(a.payload.linear, id);
  if (!rec) return eval_error("missing linear payload", "payload");
  const Tensor<S>& x = a.in();
  Shape expected = x.shape;
  expected.back() = rec->out_dim;
  if (expected != a.node.out_shape)
    return seed_node_error(a.node, fmt::format("IR eval: linear {}: declared outShape mismatch: {} vs expected {}", id,
                                                 to_string(a.node.out_shape), to_string(expected)),
                           "out_dim");
  if (x.shape.back() != rec->in_dim)
    return eval_error(fmt::format("linear: input shape mismatch: last dim {} vs in_dim {}", x.shape.back(), rec->in_dim),
                      "in_dim");
  const int64_t out = rec->out_dim, in = rec->in_dim;
  if (static_cast<int64_t>(rec->weight.size()) != out * in || static_cast<int64_t>(rec->bias.size()) != out)
    return eval_error(fmt::format("linear: payload has {} weights and {} biases, expected {} and {}", rec->weight.size(),
                                  rec->bias.size(), out * in, out),
                      "weight");
  const int64_t lead = numel(x.shape.begin(), x.shape.end() - 1);
  Tensor<S> y;
  y.shape = std::move(expected);
  if constexpr (native_fold::kTiled<S>) {  // the same values, independent folds interleaved
    y.data.resize(static_cast<size_t>(lead * out));
    native_fold::linear(ctx, x.data.data(), rec->weight.data(), rec->bias.data(), lead, in, out, y.data.data());
    return y;
  }
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

// The operands of matmul after 1-D promotion: a is [batch_a..., m, k], b is [batch_b..., k, n].
struct MatmulDims {
  int64_t m = 1, k = 1, n = 1;
  Shape batch;                              // broadcast batch shape
  std::vector<int64_t> a_strides, b_strides;  // per batch axis, in matrices (0 where broadcast)
};

inline MatmulDims matmul_dims(Shape a, Shape b) {
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatmulDims d;
  d.m = a[a.size() - 2];
  d.k = a.back();
  d.n = b.back();
  const Shape batch_a(a.begin(), a.end() - 2), batch_b(b.begin(), b.end() - 2);
  const size_t rank = std::max(batch_a.size(), batch_b.size());
  d.batch.assign(rank, 1);
  for (size_t i = 0; i < batch_a.size(); ++i) d.batch[rank - batch_a.size() + i] = batch_a[i];
  for (size_t i = 0; i < batch_b.size(); ++i)
    if (batch_b[i] != 1) d.batch[rank - batch_b.size() + i] = batch_b[i];
  d.a_strides = broadcast_strides(batch_a, d.batch);
  d.b_strides = broadcast_strides(batch_b, d.batch);
  return d;
}

// torch.matmul: 1-D operands are promoted (the promoted axes do not appear in the output, which
// does not change the row-major layout), batch dims broadcast from the right; each inner product
// is summed left to right from zero.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Matmul(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in(0);
  const Tensor<S>& y = a.in(1);
  const MatmulDims d = matmul_dims(x.shape, y.shape);
  const std::vector<int64_t> a_off = strided_offsets(0, d.batch, d.a_strides);
  const std::vector<int64_t> b_off = strided_offsets(0, d.batch, d.b_strides);
  Tensor<S> out;
  out.shape = a.out_shape;
  out.data.reserve(static_cast<size_t>(numel(a.out_shape)));
  for (size_t t = 0; t < a_off.size(); ++t) {
    const S* xa = x.data.data() + a_off[t] * d.m * d.k;
    const S* yb = y.data.data() + b_off[t] * d.k * d.n;
    if constexpr (native_fold::kTiled<S>) {  // the same values, independent folds interleaved
      const size_t at = out.data.size();
      out.data.resize(at + static_cast<size_t>(d.m * d.n));
      native_fold::matmul(ctx, xa, yb, d.m, d.k, d.n, out.data.data() + at);
      continue;
    }
    for (int64_t i = 0; i < d.m; ++i) {
      for (int64_t j = 0; j < d.n; ++j) {
        S acc = ctx.zero();
        for (int64_t r = 0; r < d.k; ++r) acc = ctx.add(acc, ctx.mul(xa[i * d.k + r], yb[r * d.n + j]));
        out.data.push_back(acc);
      }
    }
  }
  return out;
}

}  // namespace denote::rules
