// The openblas provider's prepared kernels (see openblas_prepared.h). Numerics: every output is the
// GEMM's sum (OpenBLAS's order, beta = 0), then + bias, then the fused stages, so the capsule's
// tolerance (k + 1 terms) covers it. Chunks: linear splits the rows into at most 8 pieces of >= 16
// rows, matmul takes one batch matrix per chunk (split by rows into pieces of >= 16 rows when there
// are fewer than 8 matrices), conv takes one leading index (image) per chunk, add/sub kElementChunk
// values: all fixed by the shapes, so the thread count never changes a result.
#include "openblas_prepared.h"

#ifdef DENOTE_HAVE_OPENBLAS

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include "kernels/blas.h"
#include "im2col.h"
#include "matmul_layout.h"
#include "prepared_util.h"
#include "../ops/window_eval.h"

namespace denote {

namespace {

using prepared::chunk_range;
using prepared::chunks_of;
using prepared::ConvGeometry;
using prepared::conv_geometry;
using prepared::im2col_2d;
using prepared::im2col_gather;

template <class S>
void add_bias_rows(S* y, int64_t rows, int64_t cols, const S* bias, const Epilogue<S>& e) {
  for (int64_t r = 0; r < rows; ++r) {
    S* row = y + r * cols;
    for (int64_t j = 0; j < cols; ++j) row[j] += bias[j];
    e.apply(row, cols);
  }
}

}  // namespace

template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_linear(const PrepareArgs<S>& a) {
  kernels::blas::ensure_threads();
  const auto* rec = find_record(a.payload.linear, a.node.id);
  if (a.parent_shapes.size() != 1 || a.parent_shapes[0].empty() || a.out_shape.empty()) return std::nullopt;
  if (!rec || a.parent_shapes[0].back() != rec->in_dim || a.out_shape.back() != rec->out_dim ||
      static_cast<int64_t>(rec->weight.size()) != rec->out_dim * rec->in_dim ||
      static_cast<int64_t>(rec->bias.size()) != rec->out_dim)
    return std::nullopt;
  const int64_t out = rec->out_dim, in = rec->in_dim, lead = numel(a.out_shape) / std::max<int64_t>(out, 1);
  if (!kernels::blas::fits({out, in, lead})) return std::nullopt;
  const int64_t chunks = lead < 32 ? 1 : std::min<int64_t>(8, lead / 16);
  const int64_t per = (lead + chunks - 1) / chunks;
  PreparedKernel<S> k;
  k.chunks = chunks_of(lead, per);
  k.takes_epilogue = true;
  k.run = [=, w = rec->weight, b = rec->bias](const KernelCall<S>& c) {
    const auto r = chunk_range(c.chunk, lead, per);
    S* y = c.out + r.begin * out;
    const S* x = c.in[0] + r.begin * in;
    if (r.size() == 1) kernels::blas::gemv(out, in, w.data(), x, y, S(0));
    else kernels::blas::gemm(/*trans_a=*/false, /*trans_b=*/true, r.size(), out, in, x, w.data(), y, out, S(0));
    add_bias_rows(y, r.size(), out, b.data(), *c.epilogue);
  };
  return k;
}

// One gemm (beta = 0) per chunk: rows [r.begin, r.end) of batch matrix t, then the fused stages.
template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_matmul(const PrepareArgs<S>& a) {
  kernels::blas::ensure_threads();
  std::optional<prepared::MatmulLayout> layout = prepared::matmul_layout(a);
  if (!layout || layout->batches() == 0 || !kernels::blas::fits({layout->m, layout->n, layout->k})) return std::nullopt;
  auto l = std::make_shared<const prepared::MatmulLayout>(std::move(*layout));
  const int64_t batches = l->batches(), m = l->m;
  const int64_t pieces = m < 32 ? 1 : std::clamp<int64_t>((8 + batches - 1) / batches, 1, m / 16);
  const int64_t per = (m + pieces - 1) / pieces;
  const int64_t row_chunks = chunks_of(m, per);
  PreparedKernel<S> k;
  k.chunks = batches * row_chunks;
  k.takes_epilogue = true;
  k.run = [l, per, row_chunks](const KernelCall<S>& c) {
    const auto t = static_cast<size_t>(c.chunk / row_chunks);
    const auto r = chunk_range(c.chunk % row_chunks, l->m, per);
    S* y = c.out + (static_cast<int64_t>(t) * l->m + r.begin) * l->n;
    kernels::blas::gemm(/*trans_a=*/false, /*trans_b=*/false, r.size(), l->n, l->k,
                        c.in[0] + l->a_off[t] + r.begin * l->k, c.in[1] + l->b_off[t], y, l->n, S(0));
    c.epilogue->apply(y, r.size() * l->n);
  };
  return k;
}

template <class S>
std::optional<PreparedKernel<S>> openblas_prepare_conv(const PrepareArgs<S>& a) {
  kernels::blas::ensure_threads();
  const auto* rec = prepared::usable_conv_record(a);
  if (!rec) return std::nullopt;
  const Shape& xs = a.parent_shapes[0];
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  auto g = std::make_shared<const ConvGeometry>(conv_geometry(c, xs, a.out_shape));
  const int64_t lead = numel(xs.begin(), xs.begin() + c.channel_axis);
  const int64_t gin = c.in_channels / c.groups, gout = c.out_channels / c.groups, groups = c.groups;
  const int64_t cin = c.in_channels, cout = c.out_channels, kdim = gin * g->k_vol;
  if (!kernels::blas::fits({gout, g->out_vol, kdim, lead})) return std::nullopt;
  PreparedKernel<S> k;
  k.chunks = lead;
  k.scratch = g->direct ? 0 : kdim * g->out_vol;
  k.takes_epilogue = true;
  k.run = [=, w = rec->weight, b = rec->bias](const KernelCall<S>& call) {
    const int64_t l = call.chunk;
    for (int64_t grp = 0; grp < groups; ++grp) {
      const S* x = call.in[0] + (l * cin + grp * gin) * g->in_vol;
      const S* col = x;
      if (!g->direct) {
        if (g->two_d) im2col_2d(*g, x, gin, call.scratch);
        else im2col_gather(*g, x, gin, call.scratch);
        col = call.scratch;
      }
      S* y = call.out + (l * cout + grp * gout) * g->out_vol;
      kernels::blas::gemm(/*trans_a=*/false, /*trans_b=*/false, gout, g->out_vol, kdim, w.data() + grp * gout * kdim,
                          col, y, g->out_vol, S(0));
      for (int64_t o = 0; o < gout; ++o) {
        S* row = y + o * g->out_vol;
        const S bias = b[static_cast<size_t>(grp * gout + o)];
        for (int64_t p = 0; p < g->out_vol; ++p) row[p] += bias;
        call.epilogue->apply(row, g->out_vol);
      }
    }
  };
  return k;
}

// add: y = b; y += 1 * a. sub: y = a; y += -1 * b (one rounding each: exactly a + b, a - b).
template <class S, bool kSub>
std::optional<PreparedKernel<S>> openblas_prepare_axpy(const PrepareArgs<S>& a) {
  kernels::blas::ensure_threads();
  if (a.parent_shapes.size() != 2 || a.parent_shapes[0] != a.parent_shapes[1] || a.parent_shapes[0] != a.out_shape)
    return std::nullopt;
  const int64_t n = numel(a.out_shape);
  if (!kernels::blas::fits({n})) return std::nullopt;
  PreparedKernel<S> k;
  k.chunks = chunks_of(n, prepared::kElementChunk);
  k.takes_epilogue = true;
  k.run = [n](const KernelCall<S>& c) {
    const auto r = chunk_range(c.chunk, n, prepared::kElementChunk);
    const S* first = (kSub ? c.in[0] : c.in[1]) + r.begin;
    const S* second = (kSub ? c.in[1] : c.in[0]) + r.begin;
    S* y = c.out + r.begin;
    std::memcpy(y, first, static_cast<size_t>(r.size()) * sizeof(S));
    kernels::blas::axpy(r.size(), kSub ? S(-1) : S(1), second, y);
    c.epilogue->apply(y, r.size());
  };
  return k;
}

template std::optional<PreparedKernel<double>> openblas_prepare_linear<double>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> openblas_prepare_linear<float>(const PrepareArgs<float>&);
template std::optional<PreparedKernel<double>> openblas_prepare_matmul<double>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> openblas_prepare_matmul<float>(const PrepareArgs<float>&);
template std::optional<PreparedKernel<double>> openblas_prepare_conv<double>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> openblas_prepare_conv<float>(const PrepareArgs<float>&);
template std::optional<PreparedKernel<double>> openblas_prepare_axpy<double, false>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> openblas_prepare_axpy<float, false>(const PrepareArgs<float>&);
template std::optional<PreparedKernel<double>> openblas_prepare_axpy<double, true>(const PrepareArgs<double>&);
template std::optional<PreparedKernel<float>> openblas_prepare_axpy<float, true>(const PrepareArgs<float>&);

}  // namespace denote

#endif
