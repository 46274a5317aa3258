// Internal: evaluation rules of the window family. conv is cross-correlation with zero padding
// (torch.nn.functional.conv1d/2d/3d, any spatial rank, groups, dilation, asymmetric padding);
// max_pool ignores padded positions; avg_pool divides by the kernel volume (count_include_pad).
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>

#include "eval_args.h"
#include "native_fold.h"
#include "denote/base/checked.h"
#include "window_geometry.h"

namespace denote::rules {

// The first field in which the payload's conv config differs from the node's, as a message.
inline std::string conv_config_difference(const ConvConfig& p, const ConvConfig& n) {
  auto ints = [](const char* f, int64_t a, int64_t b) { return fmt::format("{} {} vs {}", f, a, b); };
  auto vecs = [](const char* f, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    return fmt::format("{} {} vs {}", f, to_string(a), to_string(b));
  };
  if (p.window.spatial_rank != n.window.spatial_rank)
    return ints("spatial_rank", p.window.spatial_rank, n.window.spatial_rank);
  if (p.window.kernel != n.window.kernel) return vecs("kernel", p.window.kernel, n.window.kernel);
  if (p.window.stride != n.window.stride) return vecs("stride", p.window.stride, n.window.stride);
  if (p.window.padding != n.window.padding) return vecs("padding", p.window.padding, n.window.padding);
  if (p.dilation != n.dilation) return vecs("dilation", p.dilation, n.dilation);
  if (p.padding_after != n.padding_after) return vecs("padding_after", p.padding_after, n.padding_after);
  if (p.groups != n.groups) return ints("groups", p.groups, n.groups);
  if (p.channel_axis != n.channel_axis) return ints("channel_axis", p.channel_axis, n.channel_axis);
  if (p.in_channels != n.in_channels) return ints("in_channels", p.in_channels, n.in_channels);
  return ints("out_channels", p.out_channels, n.out_channels);
}

// Checks a conv payload against the node's config and the actual input shape `in`.
template <class S>
Status check_conv_record(const Node& node, const ConvRecord<S>* rec, const Shape& in) {
  if (!rec) return eval_error("missing conv payload", "payload");
  const auto& c = std::get<ConvConfig>(node.attrs);
  if (rec->config != c)
    return eval_error(fmt::format("conv: payload config does not match the node's config: {} (payload vs node)",
                                  conv_config_difference(rec->config, c)),
                      "config");
  const Shape spatial(in.begin() + c.channel_axis + 1, in.end());
  if (rec->input_spatial != spatial)
    return eval_error(fmt::format("conv: payload input_spatial {} does not match the input's spatial dims {}",
                                  to_string(rec->input_spatial), to_string(spatial)),
                      "input_spatial");
  Shape wshape{c.out_channels, c.in_channels / c.groups};
  wshape.insert(wshape.end(), c.window.kernel.begin(), c.window.kernel.end());
  std::optional<int64_t> wcount = int64_t{1};
  for (int64_t d : wshape) wcount = wcount ? checked_mul(*wcount, d) : std::nullopt;
  if (!wcount || static_cast<int64_t>(rec->weight.size()) != *wcount)
    return eval_error(fmt::format("conv: weight has {} values, expected shape {}", rec->weight.size(), to_string(wshape)),
                      "weight");
  if (static_cast<int64_t>(rec->bias.size()) != c.out_channels)
    return eval_error(fmt::format("conv: bias has {} values, expected shape [{}]", rec->bias.size(), c.out_channels),
                      "bias");
  return ok_status();
}

// The spatial window of a conv whose input is `in` and output `out` (both full shapes).
inline Window conv_window(const ConvConfig& c, const Shape& in, const Shape& out) {
  const auto first = static_cast<std::ptrdiff_t>(c.channel_axis + 1);
  Window w{Shape(in.begin() + first, in.end()), Shape(out.begin() + first, out.end()), c.window.kernel,
           c.window.stride, c.window.padding, {}, row_major_strides(c.window.kernel)};
  for (size_t i = 0; i < w.kernel.size(); ++i) w.dilation.push_back(c.dilation_at(i));
  return w;
}

// out[l, o, p] = sum over the group's input channels ic, then the taps of p, of x * w; then + b[o].
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_Conv(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  const Tensor<S>& x = a.in();
  const auto* rec = find_record(a.payload.conv, a.node.id);
  DENOTE_RETURN_IF_ERROR(check_conv_record(a.node, rec, x.shape));
  const auto& c = std::get<ConvConfig>(a.node.attrs);
  const Window w = conv_window(c, x.shape, a.out_shape);
  const int64_t lead = numel(x.shape.begin(), x.shape.begin() + c.channel_axis);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out), k_vol = numel(w.kernel);
  const int64_t cin = c.in_channels, cout = c.out_channels;
  const int64_t group_in = cin / c.groups, group_out = cout / c.groups;
  Tensor<S> out = Tensor<S>::filled(a.out_shape, ctx.zero());
  if constexpr (native_fold::kTiled<S>) {  // the same values, four output channels' folds interleaved
    for_each_window(w, [&](int64_t p, const std::vector<Tap>& taps) {
      for (int64_t l = 0; l < lead; ++l)
        for (int64_t o = 0; o < cout;) {
          const int64_t c0 = (o / group_out) * group_in;
          const int64_t block = o % group_out + 4 <= group_out ? 4 : 1;
          const S* xs = x.data.data() + (l * cin + c0) * in_vol;
          const S* ws = rec->weight.data() + o * group_in * k_vol;
          S acc[4];
          if (block == 4) native_fold::conv_sums<4>(ctx, xs, ws, group_in, in_vol, k_vol, taps, acc);
          else native_fold::conv_sums<1>(ctx, xs, ws, group_in, in_vol, k_vol, taps, acc);
          for (int64_t q = 0; q < block; ++q)
            out.data[static_cast<size_t>((l * cout + o + q) * out_vol + p)] = ctx.add(acc[q], rec->bias[o + q]);
          o += block;
        }
    });
    return out;
  }
  for_each_window(w, [&](int64_t p, const std::vector<Tap>& taps) {
    for (int64_t l = 0; l < lead; ++l) {
      for (int64_t o = 0; o < cout; ++o) {
        S acc = ctx.zero();
        const int64_t c0 = (o / group_out) * group_in;
        for (int64_t ic = 0; ic < group_in; ++ic) {
          const S* xs = x.data.data() + (l * cin + c0 + ic) * in_vol;
          const S* ws = rec->weight.data() + (o * group_in + ic) * k_vol;
          for (const Tap& t : taps) acc = ctx.add(acc, ctx.mul(xs[t.in], ws[t.k]));
        }
        out.data[static_cast<size_t>((l * cout + o) * out_vol + p)] = ctx.add(acc, rec->bias[o]);
      }
    }
  });
  return out;
}

// The window of a pool over the last spatial_rank axes (no dilation, symmetric padding).
inline Window pool_window(const WindowConfig& c, const Shape& in, const Shape& out) {
  const auto first = static_cast<std::ptrdiff_t>(in.size()) - c.spatial_rank;
  const size_t r = static_cast<size_t>(c.spatial_rank);
  return Window{Shape(in.begin() + first, in.end()), Shape(out.begin() + first, out.end()), c.kernel, c.stride,
                c.padding, std::vector<int64_t>(r, 1), std::vector<int64_t>(r, 0)};
}

// Applies `reduce(taps, block)` to every window of every leading index; block points at the spatial
// block of the input. `reduce` returns false when a window is unusable.
template <class S, class F>
Result<Tensor<S>> pool_apply(const EvalArgs<S>& a, const S& fill, F&& reduce) {
  const Tensor<S>& x = a.in();
  const Window w = pool_window(std::get<WindowConfig>(a.node.attrs), x.shape, a.out_shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  const int64_t lead = out_vol == 0 ? 0 : numel(a.out_shape) / out_vol;
  Tensor<S> out = Tensor<S>::filled(a.out_shape, fill);
  bool ok = true;
  for_each_window(w, [&](int64_t p, const std::vector<Tap>& taps) {
    for (int64_t l = 0; l < lead && ok; ++l)
      ok = reduce(taps, x.data.data() + l * in_vol, out.data[static_cast<size_t>(l * out_vol + p)]);
  });
  if (!ok) return eval_error(fmt::format("{}: pooling window without input elements", op_tag(a.node.op)), "window");
  return out;
}

// Maximum over the window's unpadded elements (padding acts as -inf); NaN propagates.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_MaxPool(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  return pool_apply(a, ctx.zero(), [&](const std::vector<Tap>& taps, const S* xs, S& dst) {
    if (taps.empty()) return false;
    S m = xs[taps[0].in];
    for (size_t t = 1; t < taps.size(); ++t) m = ctx.max(m, xs[taps[t].in]);
    dst = m;
    return true;
  });
}

// Sum of the window's unpadded elements (from zero, row-major kernel order) / kernel volume.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_AvgPool(Ctx& ctx, const EvalArgs<typename Ctx::Scalar>& a) {
  using S = typename Ctx::Scalar;
  double volume = 1.0;
  for (int64_t k : std::get<WindowConfig>(a.node.attrs).kernel) volume *= static_cast<double>(k);
  const S divisor = ctx.from_double(volume);
  return pool_apply(a, ctx.zero(), [&](const std::vector<Tap>& taps, const S* xs, S& dst) {
    S acc = ctx.zero();
    for (const Tap& t : taps) acc = ctx.add(acc, xs[t.in]);
    dst = ctx.div(acc, divisor);
    return true;
  });
}

}  // namespace denote::rules
