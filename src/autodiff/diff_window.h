// Internal: derivative rules of the window family (conv, max_pool, avg_pool), written over any
// scalar context with the forward rules' own geometry (src/ops/window_geometry.h): the VJPs walk
// the same windows and taps as the forward and scatter into the input.
//   conv      JVP: the conv of the tangent without bias. VJP: dx[tap] += g * w, and on request
//             weight [out, in/groups, k...] (dW[tap] += g * x[tap]) and bias [out] (sum of g).
//   max_pool  the gradient goes to the window's maximum; ties: the first maximal element in the
//             window's row-major scan order, and a NaN takes it over (PyTorch's CPU max_pool);
//             padding is ignored (acts as -inf).
//   avg_pool  g / kernel volume to every unpadded tap (count_include_pad: padding counts).
//
//   DENOTE_ASSIGN_OR_RETURN(Tensor<double> dy, ad::jvp_Conv(ctx, args, tangents));
//   DENOTE_RETURN_IF_ERROR(ad::vjp_MaxPool(ctx, args, cot, out));   // out.parents[0] = dx
#pragma once

#include <utility>
#include <vector>

#include <fmt/format.h>

#include "diff_args.h"
#include "../ops/window_eval.h"

namespace denote::ad {

namespace window_diff {

using ad::set_parent;
using ad::wants;

// The extents a conv's loops run over (the same split as rules::eval_Conv).
struct ConvDims {
  int64_t lead = 1, in_vol = 1, out_vol = 1, k_vol = 1, cin = 0, cout = 0, group_in = 0, group_out = 0;
};

inline ConvDims conv_dims(const ConvConfig& c, const rules::Window& w, const Shape& in) {
  ConvDims d;
  d.lead = numel(in.begin(), in.begin() + c.channel_axis);
  d.in_vol = numel(w.in);
  d.out_vol = numel(w.out);
  d.k_vol = numel(w.kernel);
  d.cin = c.in_channels;
  d.cout = c.out_channels;
  d.group_in = c.in_channels / c.groups;
  d.group_out = c.out_channels / c.groups;
  return d;
}

// out[l, o, p] = sum over the group's input channels ic, then the taps of p, of x * weight (no
// bias): the forward's sum, so the JVP rounds as the forward does.
template <class Ctx>
void conv_no_bias(Ctx& ctx, const rules::Window& w, const ConvDims& d, const std::vector<typename Ctx::Scalar>& x,
                  const std::vector<typename Ctx::Scalar>& weight, std::vector<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (int64_t l = 0; l < d.lead; ++l)
      for (int64_t o = 0; o < d.cout; ++o) {
        S acc = ctx.zero();
        const int64_t c0 = (o / d.group_out) * d.group_in;
        for (int64_t ic = 0; ic < d.group_in; ++ic) {
          const S* xs = x.data() + (l * d.cin + c0 + ic) * d.in_vol;
          const S* ws = weight.data() + (o * d.group_in + ic) * d.k_vol;
          for (const rules::Tap& t : taps) acc = ctx.add(acc, ctx.mul(xs[t.in], ws[t.k]));
        }
        out[static_cast<size_t>((l * d.cout + o) * d.out_vol + p)] = acc;
      }
  });
}

// Where the conv VJP scatters: dx (input cotangent, may be null), dw and db (parameter gradients,
// may be null).
template <class S>
struct ConvGrads {
  S* dx = nullptr;
  S* dw = nullptr;
  S* db = nullptr;
  // Outputs whose cotangent is 0 add nothing (GradKernels::Blas, f32/f64: not bit for bit where a weight
  // or input is infinite or NaN, or a -0 sum would become +0): after relus and the descents' step
  // surrogates most cotangents are 0.
  bool skip_zero = false;
};

// Walks the forward's windows: for every output (l, o, p) with cotangent g, dx[tap] += g * w[k],
// dw[k] += g * x[tap] over the group's input channels, and db[o] += g.
template <class Ctx>
void conv_scatter(Ctx& ctx, const rules::Window& w, const ConvDims& d, const std::vector<typename Ctx::Scalar>& x,
                  const std::vector<typename Ctx::Scalar>& weight, const std::vector<typename Ctx::Scalar>& cot,
                  const ConvGrads<typename Ctx::Scalar>& gr) {
  using S = typename Ctx::Scalar;
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (int64_t l = 0; l < d.lead; ++l)
      for (int64_t o = 0; o < d.cout; ++o) {
        const S& g = cot[static_cast<size_t>((l * d.cout + o) * d.out_vol + p)];
        if constexpr (std::is_floating_point_v<S>)
          if (gr.skip_zero && g == 0) continue;
        if (gr.db) gr.db[o] = ctx.add(gr.db[o], g);
        const int64_t c0 = (o / d.group_out) * d.group_in;
        for (int64_t ic = 0; ic < d.group_in; ++ic) {
          const int64_t xoff = (l * d.cin + c0 + ic) * d.in_vol, woff = (o * d.group_in + ic) * d.k_vol;
          if (gr.dx) {
            S* dxs = gr.dx + xoff;
            const S* ws = weight.data() + woff;
            for (const rules::Tap& t : taps) dxs[t.in] = ctx.add(dxs[t.in], ctx.mul(g, ws[t.k]));
          }
          if (gr.dw) {
            S* dws = gr.dw + woff;
            const S* xs = x.data() + xoff;
            for (const rules::Tap& t : taps) dws[t.k] = ctx.add(dws[t.k], ctx.mul(g, xs[t.in]));
          }
        }
      }
  });
}

// The shape of a conv weight: [out, in/groups, k1..kd].
inline Shape conv_weight_shape(const ConvConfig& c) {
  Shape s{c.out_channels, c.in_channels / c.groups};
  s.insert(s.end(), c.window.kernel.begin(), c.window.kernel.end());
  return s;
}

// Index (into taps) of the window's maximum: the first maximal element in scan order; a NaN takes
// over (as PyTorch's CPU kernel: `val > max || isnan(val)`). taps must not be empty.
template <class Ctx>
size_t argmax_tap(Ctx& ctx, const std::vector<rules::Tap>& taps, const typename Ctx::Scalar* xs) {
  size_t best = 0;
  for (size_t t = 1; t < taps.size(); ++t) {
    const auto& v = xs[taps[t].in];
    if (ctx.less(xs[taps[best].in], v) || ctx.is_nan(v)) best = t;
  }
  return best;
}

// Calls f(in_index, out_index) for the argmax of every window of every leading index (flat
// indices into the input and the output). An error for a window without input elements.
template <class Ctx, class F>
Status for_each_argmax(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, F&& f) {
  const auto& x = a.in();
  const rules::Window w = rules::pool_window(std::get<WindowConfig>(a.node.attrs), x.shape, a.out.shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  const int64_t lead = out_vol == 0 ? 0 : numel(a.out.shape) / out_vol;
  bool ok = true;
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    if (taps.empty()) {
      ok = ok && lead == 0;
      return;
    }
    for (int64_t l = 0; l < lead; ++l) {
      const size_t t = argmax_tap(ctx, taps, x.data.data() + l * in_vol);
      f(l * in_vol + taps[t].in, l * out_vol + p);
    }
  });
  if (!ok) return diff_error("max_pool: pooling window without input elements", "window");
  return ok_status();
}

}  // namespace window_diff

// ---- conv

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_Conv(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                              std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  const auto& x = a.in();
  const auto* rec = find_record(a.payload.conv, a.node.id);
  DENOTE_RETURN_IF_ERROR(rules::check_conv_record(a.node, rec, x.shape));
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  const rules::Window w = rules::conv_window(c, x.shape, a.out.shape);
  auto dy = zeros(ctx, a.out.shape);
  window_diff::conv_no_bias(ctx, w, window_diff::conv_dims(c, w, x.shape), tangents[0]->data, rec->weight, dy.data);
  return dy;
}

template <class Ctx>
Status vjp_Conv(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  const bool want_x = window_diff::wants(out, 0);
  if (!want_x && !out.want_params) return ok_status();
  const Tensor<S>& x = a.in();
  const auto* rec = find_record(a.payload.conv, a.node.id);
  DENOTE_RETURN_IF_ERROR(rules::check_conv_record(a.node, rec, x.shape));
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  const rules::Window w = rules::conv_window(c, x.shape, a.out.shape);
  Tensor<S> dx = want_x ? zeros(ctx, x.shape) : Tensor<S>{};
  std::vector<S> dw(out.want_params ? rec->weight.size() : 0, ctx.zero());
  std::vector<S> db(out.want_params ? rec->bias.size() : 0, ctx.zero());
  const window_diff::ConvGrads<S> gr{want_x ? dx.data.data() : nullptr, out.want_params ? dw.data() : nullptr,
                                     out.want_params ? db.data() : nullptr, a.blas};
  window_diff::conv_scatter(ctx, w, window_diff::conv_dims(c, w, x.shape), x.data, rec->weight, cot.data, gr);
  if (want_x) window_diff::set_parent(out, 0, std::move(dx));
  if (out.want_params) {
    out.params.push_back(ParamGrad<S>{a.node.id, "weight", window_diff::conv_weight_shape(c), std::move(dw)});
    out.params.push_back(ParamGrad<S>{a.node.id, "bias", Shape{c.out_channels}, std::move(db)});
  }
  return ok_status();
}

// ---- max_pool

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_MaxPool(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  const auto& t = tangents[0]->data;
  auto dy = zeros(ctx, a.out.shape);
  DENOTE_RETURN_IF_ERROR(window_diff::for_each_argmax(
      ctx, a, [&](int64_t in, int64_t o) { dy.data[static_cast<size_t>(o)] = t[static_cast<size_t>(in)]; }));
  return dy;
}

template <class Ctx>
Status vjp_MaxPool(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  if (!window_diff::wants(out, 0)) return ok_status();
  auto dx = zeros(ctx, a.in().shape);
  DENOTE_RETURN_IF_ERROR(window_diff::for_each_argmax(ctx, a, [&](int64_t in, int64_t o) {
    auto& d = dx.data[static_cast<size_t>(in)];
    d = ctx.add(d, cot.data[static_cast<size_t>(o)]);
  }));
  window_diff::set_parent(out, 0, std::move(dx));
  return ok_status();
}

// ---- avg_pool (linear: the JVP is the op itself)

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> jvp_AvgPool(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a,
                                                 std::span<const Tensor<typename Ctx::Scalar>* const> tangents) {
  return rules::eval_AvgPool(ctx, a.eval_args(tangents));
}

template <class Ctx>
Status vjp_AvgPool(Ctx& ctx, const DiffArgs<typename Ctx::Scalar>& a, const Tensor<typename Ctx::Scalar>& cot,
                   VjpOut<typename Ctx::Scalar>& out) {
  using S = typename Ctx::Scalar;
  if (!window_diff::wants(out, 0)) return ok_status();
  const auto& c = std::get<WindowConfig>(a.node.attrs);
  double volume = 1.0;
  for (int64_t k : c.kernel) volume *= static_cast<double>(k);
  const S divisor = ctx.from_double(volume);
  Tensor<S> dx = zeros(ctx, a.in().shape);
  const rules::Window w = rules::pool_window(c, dx.shape, a.out.shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  const int64_t lead = out_vol == 0 ? 0 : numel(a.out.shape) / out_vol;
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (int64_t l = 0; l < lead; ++l) {
      const S q = ctx.div(cot.data[static_cast<size_t>(l * out_vol + p)], divisor);
      S* dxs = dx.data.data() + l * in_vol;
      for (const rules::Tap& t : taps) dxs[t.in] = ctx.add(dxs[t.in], q);
    }
  });
  window_diff::set_parent(out, 0, std::move(dx));
  return ok_status();
}

}  // namespace denote::ad
