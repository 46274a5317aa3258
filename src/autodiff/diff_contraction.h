// Internal: derivative rules of the contractions (matmul, linear).
//
// matmul (torch.matmul, 1-D operands promoted, batch dims broadcast): JVP = tA B + A tB; VJP:
// gA = G B^T and gB = A^T G per batch matrix, each entry a left fold from zero over the contracted
// index, then summed over the batches an operand was broadcast across, in batch order.
// linear (y = W x + b over leading dims): JVP = W t (the bias is constant); VJP gives the input
// cotangent G W and, on request, the parameter gradients weight = G^T X summed over the leading
// rows ([out, in]) and bias = the column sums of G ([out]), each a left fold from zero over the
// rows in order (over the output features for G W).
//
// The loops are arranged so the innermost one runs over contiguous memory and independent
// entries (an axpy, which vectorises), without changing any entry's order of summation.
//
//   // x [3, 4], linear 4 -> 2: out.parents[0] is [3, 4], out.params = {weight [2, 4], bias [2]}
//   VjpOut<double> out{{true}, {Tensor<double>{}}, /*want_params=*/true, {}};
//   auto st = vjp_Linear(ctx, args, cot, out);
#pragma once

#include <algorithm>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "blas_linear.h"
#include "diff_layout.h"
#include "../ops/contraction_eval.h"

namespace denote::ad {

namespace lrc {

// dst[0..n) = src[0..n) when `first`, else dst += src (in the context's arithmetic).
template <class Ctx>
void store_or_add(Ctx& ctx, typename Ctx::Scalar* dst, const typename Ctx::Scalar* src, int64_t n, bool first) {
  if (first) {
    std::copy(src, src + n, dst);
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i] = ctx.add(dst[i], src[i]);
}

// acc[0..n) += s * x[0..n).
template <class Ctx>
void axpy(Ctx& ctx, typename Ctx::Scalar* acc, const typename Ctx::Scalar& s, const typename Ctx::Scalar* x,
          int64_t n) {
  for (int64_t i = 0; i < n; ++i) acc[i] = ctx.add(acc[i], ctx.mul(s, x[i]));
}

// The matmul operand matrix of batch t is number off[t]; returns, per batch, whether it is the
// first batch to write its operand's gradient (a broadcast operand is visited several times).
inline std::vector<char> first_visits(const std::vector<int64_t>& off) {
  const int64_t matrices = off.empty() ? 0 : *std::max_element(off.begin(), off.end()) + 1;
  std::vector<char> seen(static_cast<size_t>(matrices), 0), first(off.size(), 0);
  for (size_t t = 0; t < off.size(); ++t) {
    first[t] = !seen[static_cast<size_t>(off[t])];
    seen[static_cast<size_t>(off[t])] = 1;
  }
  return first;
}

// gA = G B^T per batch: gA[i, r] = sum_j G[i, j] B[r, j]. B^T is copied once per batch so the
// inner loop is an axpy over r.
template <class Ctx>
Tensor<typename Ctx::Scalar> matmul_grad_a(Ctx& ctx, const rules::MatmulDims& d, const Tensor<typename Ctx::Scalar>& g,
                                           const Tensor<typename Ctx::Scalar>& b, const Shape& a_shape) {
  using S = typename Ctx::Scalar;
  const std::vector<int64_t> a_off = rules::strided_offsets(0, d.batch, d.a_strides);
  const std::vector<int64_t> b_off = rules::strided_offsets(0, d.batch, d.b_strides);
  Tensor<S> ga = zeros(ctx, a_shape);
  const std::vector<char> first = first_visits(a_off);
  std::vector<S> bt(static_cast<size_t>(d.n * d.k), ctx.zero()), acc(static_cast<size_t>(d.m * d.k), ctx.zero());
  for (size_t t = 0; t < a_off.size(); ++t) {
    const S* bm = b.data.data() + b_off[t] * d.k * d.n;
    for (int64_t r = 0; r < d.k; ++r)
      for (int64_t j = 0; j < d.n; ++j) bt[static_cast<size_t>(j * d.k + r)] = bm[r * d.n + j];
    const S* gm = g.data.data() + static_cast<int64_t>(t) * d.m * d.n;
    std::fill(acc.begin(), acc.end(), ctx.zero());
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.n; ++j) axpy(ctx, acc.data() + i * d.k, gm[i * d.n + j], bt.data() + j * d.k, d.k);
    store_or_add(ctx, ga.data.data() + a_off[t] * d.m * d.k, acc.data(), d.m * d.k, first[t] != 0);
  }
  return ga;
}

// gB = A^T G per batch: gB[r, j] = sum_i A[i, r] G[i, j] (an axpy over j for each i, r).
template <class Ctx>
Tensor<typename Ctx::Scalar> matmul_grad_b(Ctx& ctx, const rules::MatmulDims& d, const Tensor<typename Ctx::Scalar>& a,
                                           const Tensor<typename Ctx::Scalar>& g, const Shape& b_shape) {
  using S = typename Ctx::Scalar;
  const std::vector<int64_t> a_off = rules::strided_offsets(0, d.batch, d.a_strides);
  const std::vector<int64_t> b_off = rules::strided_offsets(0, d.batch, d.b_strides);
  Tensor<S> gb = zeros(ctx, b_shape);
  const std::vector<char> first = first_visits(b_off);
  std::vector<S> acc(static_cast<size_t>(d.k * d.n), ctx.zero());
  for (size_t t = 0; t < b_off.size(); ++t) {
    const S* am = a.data.data() + a_off[t] * d.m * d.k;
    const S* gm = g.data.data() + static_cast<int64_t>(t) * d.m * d.n;
    std::fill(acc.begin(), acc.end(), ctx.zero());
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t r = 0; r < d.k; ++r) axpy(ctx, acc.data() + r * d.n, am[i * d.k + r], gm + i * d.n, d.n);
    store_or_add(ctx, gb.data.data() + b_off[t] * d.k * d.n, acc.data(), d.k * d.n, first[t] != 0);
  }
  return gb;
}

}  // namespace lrc

// ---- matmul

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Matmul(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  using S = typename Ctx::Scalar;
  const Tensor<S>* left[2] = {tangents[0], a.parents[1]};
  const Tensor<S>* right[2] = {a.parents[0], tangents[1]};
  auto y = rules::eval_Matmul<Ctx>(ctx, a.eval_args(std::span<const Tensor<S>* const>(left, 2)));
  if (!y.ok()) return y;
  auto z = rules::eval_Matmul<Ctx>(ctx, a.eval_args(std::span<const Tensor<S>* const>(right, 2)));
  if (!z.ok()) return z;
  accumulate(ctx, *y, *z);
  return y;
}

template <class Ctx>
Status vjp_Matmul(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                  VjpOut<typename Ctx::Scalar>& out) {
  lrc::reserve_slots(out, 2);
  const rules::MatmulDims d = rules::matmul_dims(a.in(0).shape, a.in(1).shape);
  if (lrc::wants(out, 0)) out.parents[0] = lrc::matmul_grad_a(ctx, d, cot, a.in(1), a.in(0).shape);
  if (lrc::wants(out, 1)) out.parents[1] = lrc::matmul_grad_b(ctx, d, a.in(0), cot, a.in(1).shape);
  return ok_status();
}

// ---- linear

namespace lrc {

// The node's linear record, checked against its input (the forward rule checked it too; a rule
// never indexes past a payload it did not check).
template <class S>
Result<const LinearRecord<S>*> linear_record(const DiffArgs<S>& a) {
  const auto* rec = find_record(a.payload.linear, a.node.id);
  if (!rec) return diff_error("missing linear payload", "payload");
  const Tensor<S>& x = a.in();
  if (x.shape.empty() || x.shape.back() != rec->in_dim)
    return diff_error(fmt::format("linear: input shape mismatch: {} vs in_dim {}", to_string(x.shape), rec->in_dim),
                      "in_dim");
  if (static_cast<int64_t>(rec->weight.size()) != rec->out_dim * rec->in_dim ||
      static_cast<int64_t>(rec->bias.size()) != rec->out_dim)
    return diff_error(fmt::format("linear: payload has {} weights and {} biases, expected {} and {}",
                                  rec->weight.size(), rec->bias.size(), rec->out_dim * rec->in_dim, rec->out_dim),
                      "weight");
  return rec;
}

// The gradient buffers of one linear VJP; empty when not wanted.
template <class S>
struct LinearGrads {
  std::vector<S> x, weight, bias;
};

// Output features per block: the block's rows of W and of the weight gradient stay in cache while
// every input row streams past. Each entry's order of summation does not depend on the block size.
inline int64_t linear_block(int64_t in) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(1, in)); }

// The VJP's loops: gx[row, :] += G[row, o] W[o, :] (fold over o), gw[o, :] += G[row, o] X[row, :]
// and gb[o] += G[row, o] (fold over rows).
template <class Ctx>
void linear_backward(Ctx& ctx, const LinearRecord<typename Ctx::Scalar>& rec, const Tensor<typename Ctx::Scalar>& x,
                     const Tensor<typename Ctx::Scalar>& g, LinearGrads<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  const int64_t n_out = rec.out_dim, n_in = rec.in_dim;
  const int64_t rows = numel(x.shape.begin(), x.shape.end() - 1);
  const bool want_x = !out.x.empty(), want_p = !out.bias.empty() || !out.weight.empty();
  const int64_t block = linear_block(n_in);
  for (int64_t o0 = 0; o0 < n_out; o0 += block) {
    const int64_t o1 = std::min(n_out, o0 + block);
    for (int64_t row = 0; row < rows; ++row) {
      const S* gr = g.data.data() + row * n_out;
      const S* xr = x.data.data() + row * n_in;
      bool x_done = false;  // the block's rows of W at once, each gx entry's fold still over o in turn
      if constexpr (std::is_base_of_v<NativeContext<S>, Ctx>)
        x_done = want_x && rules::native_fold::axpy_rows_simd(out.x.data() + row * n_in, gr + o0,
                                                              rec.weight.data() + o0 * n_in, o1 - o0, n_in, n_in);
      bool w_done = false;  // the block's weight-gradient rows at once
      if constexpr (std::is_base_of_v<NativeContext<S>, Ctx>)
        w_done = want_p &&
                 rules::native_fold::outer_add_simd(out.weight.data() + o0 * n_in, gr + o0, xr, o1 - o0, n_in);
      for (int64_t o = o0; o < o1; ++o) {
        const S& go = gr[o];
        if (want_x && !x_done) axpy(ctx, out.x.data() + row * n_in, go, rec.weight.data() + o * n_in, n_in);
        if (want_p) {
          if (!w_done) axpy(ctx, out.weight.data() + o * n_in, go, xr, n_in);
          out.bias[static_cast<size_t>(o)] = ctx.add(out.bias[static_cast<size_t>(o)], go);
        }
      }
    }
  }
}

}  // namespace lrc

// W t at every leading index (no bias), each inner product a left fold from zero as in the forward rule.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Linear(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  using S = typename Ctx::Scalar;
  auto rec = lrc::linear_record(a);
  if (!rec.ok()) return rec.status();
  const LinearRecord<S>& r = **rec;
  const Tensor<S>& t = *tangents[0];
  const int64_t n_out = r.out_dim, n_in = r.in_dim;
  Shape shape = t.shape;
  shape.back() = n_out;
  Tensor<S> y = zeros(ctx, shape);
  const int64_t rows = numel(t.shape.begin(), t.shape.end() - 1);
  if constexpr (rules::native_fold::kTiled<S>) {  // the same values, independent folds interleaved
    rules::native_fold::linear(ctx, t.data.data(), r.weight.data(), static_cast<const S*>(nullptr), rows, n_in, n_out,
                               y.data.data());
    return y;
  }
  for (int64_t row = 0; row < rows; ++row) {
    const S* tr = t.data.data() + row * n_in;
    for (int64_t o = 0; o < n_out; ++o) {
      const S* w = r.weight.data() + o * n_in;
      S acc = ctx.zero();
      for (int64_t k = 0; k < n_in; ++k) acc = ctx.add(acc, ctx.mul(w[k], tr[k]));
      y.data[static_cast<size_t>(row * n_out + o)] = acc;
    }
  }
  return y;
}

template <class Ctx>
Status vjp_Linear(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                  VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  const bool want_x = lrc::wants(out, 0);
  if (!want_x && !out.want_params) return ok_status();
  auto rec = lrc::linear_record(a);
  if (!rec.ok()) return rec.status();
  const LinearRecord<S>& r = **rec;
  lrc::LinearGrads<S> g;
  if (want_x) g.x.assign(a.in().data.size(), ctx.zero());
  if (out.want_params) {
    g.weight.assign(r.weight.size(), ctx.zero());
    g.bias.assign(r.bias.size(), ctx.zero());
  }
  const int64_t rows = numel(a.in().shape.begin(), a.in().shape.end() - 1);
  bool done = false;
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>)
    done = a.blas && rows >= kBlasMinRows && blas_linear_backward(r, rows, a.in().data.data(), cot.data.data(),
                                          want_x ? g.x.data() : nullptr,
                                          out.want_params ? g.weight.data() : nullptr,
                                          out.want_params ? g.bias.data() : nullptr);
  if (!done) lrc::linear_backward(ctx, r, a.in(), cot, g);
  if (want_x) {
    lrc::reserve_slots(out, 1);
    out.parents[0] = Tensor<S>(a.in().shape, std::move(g.x));
  }
  if (out.want_params) {
    out.params.push_back(ParamGrad<S>{a.node.id, "weight", Shape{r.out_dim, r.in_dim}, std::move(g.weight)});
    out.params.push_back(ParamGrad<S>{a.node.id, "bias", Shape{r.out_dim}, std::move(g.bias)});
  }
  return ok_status();
}

}  // namespace denote::ad
