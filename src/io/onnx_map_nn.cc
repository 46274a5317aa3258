// ONNX -> IR mapping of Conv, pooling (MaxPool, AveragePool, the global pools) and the
// normalizations (BatchNormalization in inference, LayerNormalization with its optional Mean and
// InvStdDev outputs). Weights must be import-time constants; they go to the payload.
#include <limits>

#include <fmt/format.h>

#include "onnx_import.h"

namespace denote::onnxio {
namespace {

// Padding (begin, end) per spatial axis from pads / auto_pad.
struct Pads {
  std::vector<int64_t> begin, end;
};

Result<Pads> spatial_pads(Importer& im, const Shape& spatial, const std::vector<int64_t>& kernel,
                          const std::vector<int64_t>& stride, const std::vector<int64_t>& dilation) {
  const size_t d = spatial.size();
  DENOTE_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(im, "auto_pad", "NOTSET"));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attr_ints(im, "pads"));
  Pads p{std::vector<int64_t>(d, 0), std::vector<int64_t>(d, 0)};
  if (auto_pad == "NOTSET") {
    if (pads.empty()) return p;
    if (pads.size() != 2 * d) return im.fail(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * d));
    for (size_t i = 0; i < d; ++i) {
      if (pads[i] < 0 || pads[i + d] < 0) return im.fail("pads must be >= 0");
      p.begin[i] = pads[i];
      p.end[i] = pads[i + d];
    }
    return p;
  }
  if (auto_pad == "VALID") return p;
  if (auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER") return im.fail("auto_pad '" + auto_pad + "' is unknown");
  for (size_t i = 0; i < d; ++i) {
    const int64_t out = (spatial[i] + stride[i] - 1) / stride[i];
    const int64_t eff = dilation[i] * (kernel[i] - 1) + 1;
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride[i] + eff - spatial[i]);
    p.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    p.end[i] = total - p.begin[i];
  }
  return p;
}

// An attribute list with one entry per spatial axis, `fallback` when absent.
Result<std::vector<int64_t>> per_axis(Importer& im, std::string_view name, size_t d, int64_t fallback) {
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> v, attr_ints(im, name));
  if (v.empty()) v.assign(d, fallback);
  if (v.size() != d) return im.fail(fmt::format("{} has {} entries, expected {}", name, v.size(), d));
  for (int64_t x : v)
    if (x < 1) return im.fail(fmt::format("{} entries must be >= 1", name));
  return v;
}

Result<int64_t> nchw_input(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  if (im.shape(x).size() < 3) return im.fail("X must have shape [N, C, spatial...], got " + to_string(im.shape(x)));
  return x;
}

Status map_conv(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, nchw_input(im));
  const Shape in = im.shape(x);
  const size_t d = in.size() - 2;
  const HostTensor* w = im.const_input(1);
  if (!w) return im.fail("the weight W must be an initializer or constant");
  if (w->shape.size() != d + 2) return im.fail("W must have rank " + std::to_string(d + 2));
  const Shape spatial(in.begin() + 2, in.end());
  ConvConfig c;
  DENOTE_ASSIGN_OR_RETURN(c.groups, attr_int(im, "group", 1));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> kernel, attr_ints(im, "kernel_shape"));
  if (kernel.empty()) kernel.assign(w->shape.begin() + 2, w->shape.end());
  if (kernel != Shape(w->shape.begin() + 2, w->shape.end())) return im.fail("kernel_shape differs from W's shape");
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> stride, per_axis(im, "strides", d, 1));
  DENOTE_ASSIGN_OR_RETURN(c.dilation, per_axis(im, "dilations", d, 1));
  DENOTE_ASSIGN_OR_RETURN(Pads pads, spatial_pads(im, spatial, kernel, stride, c.dilation));
  c.window = WindowConfig{static_cast<int64_t>(d), kernel, stride, pads.begin};
  c.padding_after = pads.end;
  c.channel_axis = 1;
  c.in_channels = in[1];
  c.out_channels = w->shape[0];
  // W is [M, C / group, k...]: its channel dim must match X's (fuzz_onnx_import, issue 13: a
  // mismatch was imported, and the export then wrote W with X's channel count and too few values).
  // A group count that is < 1 or does not divide C is the conv rule's error (field groups).
  if (c.groups >= 1 && in[1] % c.groups == 0 && w->shape[1] != in[1] / c.groups)
    return im.fail(fmt::format("W has {} input channels per group, but X has {} channels in {} group(s) (W must "
                               "be [M, C / group, kernel...])",
                               w->shape[1], in[1], c.groups));
  if (c.out_channels > kMaxSynthesizedElements) return im.fail("W has too many output channels");
  std::vector<double> bias(static_cast<size_t>(c.out_channels), 0.0);
  if (im.has_input(2)) {
    const HostTensor* b = im.const_input(2);
    if (!b || b->values.size() != bias.size()) return im.fail("the bias B must be a constant of shape [M]");
    bias = b->values;
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Conv, {x}, c));
  im.model().payload.conv[y] = ConvRecord<double>{c, spatial, w->values, std::move(bias)};
  return im.set_output(0, y);
}

// MaxPool / AveragePool geometry: the padding (begin, end) per axis, plus the end padding that
// ceil_mode=1 needs so that floor rounding yields the ceil output size.
struct PoolGeometry {
  std::vector<int64_t> kernel, stride;
  Pads pads;
  bool extended = false;  // ceil_mode added end padding
};

Result<PoolGeometry> pool_geometry(Importer& im, const Shape& spatial) {
  const size_t d = spatial.size();
  PoolGeometry g;
  DENOTE_ASSIGN_OR_RETURN(g.kernel, per_axis(im, "kernel_shape", d, 0));
  DENOTE_ASSIGN_OR_RETURN(g.stride, per_axis(im, "strides", d, 1));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> dilation, per_axis(im, "dilations", d, 1));
  for (int64_t v : dilation)
    if (v != 1) return im.fail("dilations other than 1 are not supported");
  DENOTE_ASSIGN_OR_RETURN(g.pads, spatial_pads(im, spatial, g.kernel, g.stride, dilation));
  DENOTE_ASSIGN_OR_RETURN(int64_t ceil_mode, attr_int(im, "ceil_mode", 0));
  for (size_t i = 0; i < d; ++i) {
    const int64_t padded = spatial[i] + g.pads.begin[i] + g.pads.end[i];
    if (g.kernel[i] > padded) return im.fail("the kernel is larger than the padded input");
    if (!ceil_mode) continue;
    const int64_t out = (padded - g.kernel[i] + g.stride[i] - 1) / g.stride[i] + 1;
    const int64_t extra = (out - 1) * g.stride[i] + g.kernel[i] - padded;
    if (extra > 0) {
      g.pads.end[i] += extra;
      g.extended = true;
    }
  }
  return g;
}

// x padded along its spatial axes (2, 3, ...) with constant `fill` blocks joined by concat.
Result<int64_t> pad_spatial(Importer& im, int64_t x, const Pads& p, double fill) {
  for (size_t i = 0; i < p.begin.size(); ++i) {
    const int64_t axis = static_cast<int64_t>(i) + 2;
    for (bool before : {true, false}) {
      const int64_t count = before ? p.begin[i] : p.end[i];
      if (count == 0) continue;
      Shape block = im.shape(x);
      block[static_cast<size_t>(axis)] = count;
      DENOTE_ASSIGN_OR_RETURN(int64_t c, im.emit_scalar(fill, block));
      DENOTE_ASSIGN_OR_RETURN(x, im.emit(Op::Concat, before ? std::vector<int64_t>{c, x} : std::vector<int64_t>{x, c},
                                         AxisAttrs{axis}));
    }
  }
  return x;
}

// Whether the IR pool's own symmetric padding (at most kernel / 2 per side) expresses `g`.
bool ir_padding_fits(const PoolGeometry& g) {
  for (size_t i = 0; i < g.kernel.size(); ++i)
    if (g.pads.begin[i] != g.pads.end[i] || g.pads.begin[i] > g.kernel[i] / 2) return false;
  return !g.extended;
}

// AveragePool without counting padding: avg(x padded with 0) / avg(ones padded with 0), so the
// divisor is the number of real entries in each window.
Result<int64_t> avg_pool_excluding_pad(Importer& im, int64_t x, const PoolGeometry& g, const WindowConfig& w) {
  DENOTE_ASSIGN_OR_RETURN(int64_t xp, pad_spatial(im, x, g.pads, 0.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t num, im.emit(Op::AvgPool, {xp}, w));
  Shape ones_shape = im.shape(x);
  ones_shape[0] = ones_shape[1] = 1;
  DENOTE_ASSIGN_OR_RETURN(int64_t ones, im.emit_scalar(1.0, ones_shape));
  DENOTE_ASSIGN_OR_RETURN(int64_t op, pad_spatial(im, ones, g.pads, 0.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t den, im.emit(Op::AvgPool, {op}, w));
  return im.binary(Op::Div, num, den);
}

template <Op kOp>
Status map_pool(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, nchw_input(im));
  const Shape in = im.shape(x);
  if (im.wants_output(1)) return im.fail("the Indices output is not supported");
  DENOTE_ASSIGN_OR_RETURN(PoolGeometry g, pool_geometry(im, Shape(in.begin() + 2, in.end())));
  const size_t d = g.kernel.size();
  WindowConfig w{static_cast<int64_t>(d), g.kernel, g.stride, std::vector<int64_t>(d, 0)};
  bool padded = false;
  for (size_t i = 0; i < d; ++i) padded = padded || g.pads.begin[i] != 0 || g.pads.end[i] != 0;
  int64_t y = x;
  if (kOp == Op::MaxPool) {  // padding never wins a maximum: the IR's padding, or -inf blocks
    if (ir_padding_fits(g)) {
      w.padding = g.pads.begin;
    } else {
      DENOTE_ASSIGN_OR_RETURN(y, pad_spatial(im, x, g.pads, -std::numeric_limits<double>::infinity()));
    }
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(kOp, {y}, w));
    return im.set_output(0, y);
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t include_pad, attr_int(im, "count_include_pad", 0));
  if (padded && !include_pad) {
    DENOTE_ASSIGN_OR_RETURN(y, avg_pool_excluding_pad(im, x, g, w));
    return im.set_output(0, y);
  }
  if (g.extended) return im.fail("ceil_mode=1 with count_include_pad=1 is not supported");
  if (ir_padding_fits(g)) {
    w.padding = g.pads.begin;
  } else {
    DENOTE_ASSIGN_OR_RETURN(y, pad_spatial(im, x, g.pads, 0.0));
  }
  DENOTE_ASSIGN_OR_RETURN(y, im.emit(kOp, {y}, w));
  return im.set_output(0, y);
}

template <Op kOp>
Status map_global_pool(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, nchw_input(im));
  const Shape in = im.shape(x);
  const Shape spatial(in.begin() + 2, in.end());
  const WindowConfig w{static_cast<int64_t>(spatial.size()), spatial, std::vector<int64_t>(spatial.size(), 1),
                       std::vector<int64_t>(spatial.size(), 0)};
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(kOp, {x}, w));
  return im.set_output(0, y);
}

Result<std::vector<double>> channel_vector(Importer& im, int i, int64_t channels, const char* what) {
  const HostTensor* t = im.const_input(i);
  if (!t || t->values.size() != static_cast<size_t>(channels))
    return im.fail(fmt::format("{} must be a constant of shape [{}]", what, channels));
  return t->values;
}

Status map_batch_norm(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t training, attr_int(im, "training_mode", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t spatial_attr, attr_int(im, "spatial", 1));
  if (training) return im.fail("training_mode=1 is not supported (inference only)");
  if (spatial_attr != 1) return im.fail("spatial=0 is not supported");
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  if (in.size() < 2) return im.fail("X must have shape [N, C, ...], got " + to_string(in));
  const int64_t c = in[1];
  BatchNormRecord<double> rec;
  DENOTE_ASSIGN_OR_RETURN(rec.gamma, channel_vector(im, 1, c, "scale"));
  DENOTE_ASSIGN_OR_RETURN(rec.beta, channel_vector(im, 2, c, "B"));
  DENOTE_ASSIGN_OR_RETURN(rec.mean, channel_vector(im, 3, c, "input_mean"));
  DENOTE_ASSIGN_OR_RETURN(rec.var, channel_vector(im, 4, c, "input_var"));
  DENOTE_ASSIGN_OR_RETURN(rec.eps, attr_float(im, "epsilon", 1e-5));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::BatchNormEval, {x}, BatchNormAttrs{1, c}));
  im.model().payload.batch_norm[y] = std::move(rec);
  return im.set_output(0, y);
}

// Scale / B of LayerNormalization when it is a constant of the normalized shape (leading 1s allowed).
const HostTensor* ln_param(Importer& im, int i, const Shape& normalized) {
  const HostTensor* t = im.const_input(i);
  if (!t || t->values.size() != static_cast<size_t>(numel(normalized))) return nullptr;
  return t;
}

// Mean and 1 / sqrt(var + eps) over the normalized axes, shaped x.shape[:axis] + [1]*.
Status ln_stats(Importer& im, int64_t x, size_t axis, double eps) {
  const Shape in = im.shape(x);
  const int64_t outer = dims_product(in, 0, axis), inner = dims_product(in, axis, in.size());
  Shape kept = in;
  for (size_t i = axis; i < in.size(); ++i) kept[i] = 1;
  DENOTE_ASSIGN_OR_RETURN(int64_t flat, im.reshape(x, Shape{outer, inner}));
  DENOTE_ASSIGN_OR_RETURN(int64_t mean, im.emit(Op::ReduceMean, {flat}, AxisAttrs{1}));
  DENOTE_ASSIGN_OR_RETURN(int64_t mean2, im.reshape(mean, Shape{outer, 1}));
  DENOTE_ASSIGN_OR_RETURN(int64_t dev, im.binary(Op::Sub, flat, mean2));
  DENOTE_ASSIGN_OR_RETURN(int64_t sq, im.emit(Op::MulElem, {dev, dev}));
  DENOTE_ASSIGN_OR_RETURN(int64_t var, im.emit(Op::ReduceMean, {sq}, AxisAttrs{1}));
  DENOTE_ASSIGN_OR_RETURN(int64_t e, im.emit_scalar(eps, {outer}));
  DENOTE_ASSIGN_OR_RETURN(int64_t ve, im.emit(Op::Add, {var, e}));
  DENOTE_ASSIGN_OR_RETURN(int64_t sd, im.emit(Op::Sqrt, {ve}));
  DENOTE_ASSIGN_OR_RETURN(int64_t inv, im.emit(Op::Inv, {sd}));
  DENOTE_ASSIGN_OR_RETURN(int64_t mean_out, im.reshape(mean, kept));
  DENOTE_ASSIGN_OR_RETURN(int64_t inv_out, im.reshape(inv, kept));
  DENOTE_RETURN_IF_ERROR(im.set_output(1, mean_out));
  return im.set_output(2, inv_out);
}

Status map_layer_norm(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, attr_int(im, "axis", -1));
  DENOTE_ASSIGN_OR_RETURN(axis, norm_axis(im, axis, in.size(), "axis"));
  DENOTE_ASSIGN_OR_RETURN(double eps, attr_float(im, "epsilon", 1e-5));
  const Shape normalized(in.begin() + axis, in.end());
  const int64_t w = dims_product(normalized, 0, normalized.size());
  if (w > kMaxSynthesizedElements) return im.fail("the normalized shape is too large");
  DENOTE_RETURN_IF_ERROR(im.synthesize(2 * w, "the scale and bias of the normalized shape"));
  const size_t width = static_cast<size_t>(w);
  const HostTensor* scale = ln_param(im, 1, normalized);
  const HostTensor* bias = im.has_input(2) ? ln_param(im, 2, normalized) : nullptr;
  LayerNormRecord<double> rec{normalized, std::vector<double>(width, 1.0), std::vector<double>(width, 0.0), eps};
  if (scale) rec.gamma = scale->values;
  if (bias) rec.beta = bias->values;
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Layernorm, {x}, AxisAttrs{axis}));
  im.model().payload.layernorm[y] = std::move(rec);
  if (!scale) {  // a computed or broadcast scale: multiply after normalizing
    DENOTE_ASSIGN_OR_RETURN(int64_t s, im.input(1));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(Op::MulElem, y, s));
  }
  if (im.has_input(2) && !bias) {
    DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(2));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(Op::Add, y, b));
  }
  if (im.wants_output(1) || im.wants_output(2)) DENOTE_RETURN_IF_ERROR(ln_stats(im, x, static_cast<size_t>(axis), eps));
  return im.set_output(0, y);
}

// InstanceNormalization: layernorm over the spatial axes (2...), then scale and B per channel
// (reshaped to [C, 1, ...] and broadcast).
Status map_instance_norm(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, nchw_input(im));
  const Shape in = im.shape(x);
  DENOTE_ASSIGN_OR_RETURN(double eps, attr_float(im, "epsilon", 1e-5));
  const Shape normalized(in.begin() + 2, in.end());
  const int64_t w = dims_product(normalized, 0, normalized.size());
  if (w > kMaxSynthesizedElements) return im.fail("the spatial extent is too large");
  DENOTE_RETURN_IF_ERROR(im.synthesize(2 * w, "the scale and bias of the spatial extent"));
  const size_t width = static_cast<size_t>(w);
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Layernorm, {x}, AxisAttrs{2}));
  im.model().payload.layernorm[y] =
      LayerNormRecord<double>{normalized, std::vector<double>(width, 1.0), std::vector<double>(width, 0.0), eps};
  Shape per_channel(in.size() - 1, 1);
  per_channel[0] = in[1];
  for (int k : {1, 2}) {
    DENOTE_ASSIGN_OR_RETURN(int64_t p, im.input(k));
    if (numel(im.shape(p)) != in[1]) return im.fail(k == 1 ? "scale must have C elements" : "B must have C elements");
    DENOTE_ASSIGN_OR_RETURN(p, im.reshape(p, per_channel));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(k == 1 ? Op::MulElem : Op::Add, y, p));
  }
  return im.set_output(0, y);
}

}  // namespace

std::vector<MapEntry> nn_mappers() {
  return {
      {onnx_name(Op::Conv), map_conv}, {onnx_name(Op::MaxPool), map_pool<Op::MaxPool>},
      {onnx_name(Op::AvgPool), map_pool<Op::AvgPool>},
      {"GlobalAveragePool", map_global_pool<Op::AvgPool>}, {"GlobalMaxPool", map_global_pool<Op::MaxPool>},
      {onnx_name(Op::BatchNormEval), map_batch_norm}, {onnx_name(Op::Layernorm), map_layer_norm},
      {"InstanceNormalization", map_instance_norm},
  };
}

}  // namespace denote::onnxio
