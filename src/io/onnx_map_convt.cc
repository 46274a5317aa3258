// ONNX ConvTranspose -> IR, as the convolution it is the adjoint of: along each spatial axis the
// input is spread out by the stride with zero rows between (a `gather` reading a 0 fill row, exact)
// and padded by dilation * (kernel - 1) - pad (+ output_padding at the end; negative amounts crop),
// then one stride-1 `conv` (same dilation, groups) with the kernel flipped and its in/out channels
// swapped per group: W'[g*Mg + m, c, k] = W[g*Cg + c, m, K - 1 - k]. Output extent:
// stride * (in - 1) + output_padding + dilation * (kernel - 1) + 1 - pads (ONNX's formula);
// output_shape and auto_pad SAME_UPPER / SAME_LOWER set the pads as the ONNX operator page says.
#include <fmt/format.h>

#include "onnx_index.h"

namespace denote::onnxio {
namespace {

Result<std::vector<int64_t>> per_axis_attr(Importer& im, std::string_view name, size_t d, int64_t fallback) {
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> v, attr_ints(im, name));
  if (v.empty()) v.assign(d, fallback);
  if (v.size() != d) return im.fail(fmt::format("{} has {} entries, expected {}", name, v.size(), d));
  return v;
}

}  // namespace

Status map_conv_transpose(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  if (in.size() < 3) return im.fail("X must have shape [N, C, spatial...], got " + to_string(in));
  const size_t d = in.size() - 2;
  const HostTensor* w = im.const_input(1);
  if (!w) return im.fail("the weight W must be an initializer or constant");
  if (w->shape.size() != d + 2) return im.fail("W must have rank " + std::to_string(d + 2));
  DENOTE_ASSIGN_OR_RETURN(int64_t groups, attr_int(im, "group", 1));
  const int64_t c = in[1];
  if (groups < 1 || c % groups != 0 || w->shape[0] != c) return im.fail("W must be [C, M / group, kernel...] with group dividing C");
  const int64_t cg = c / groups, mg = w->shape[1], m = mg * groups;
  const Shape kernel(w->shape.begin() + 2, w->shape.end());
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> stride, per_axis_attr(im, "strides", d, 1));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> dil, per_axis_attr(im, "dilations", d, 1));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> out_pad, per_axis_attr(im, "output_padding", d, 0));
  DENOTE_ASSIGN_OR_RETURN(std::string auto_pad, attr_string(im, "auto_pad", "NOTSET"));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> pads, attr_ints(im, "pads"));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> out_shape, attr_ints(im, "output_shape"));
  if (out_shape.size() == d + 2) out_shape.erase(out_shape.begin(), out_shape.begin() + 2);
  if (pads.empty()) pads.assign(2 * d, 0);
  if (pads.size() != 2 * d) return im.fail(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * d));
  for (int64_t v : out_shape)
    if (v < 0) return im.fail(fmt::format("output_shape has a negative entry {}", v));
  for (size_t i = 0; i < d; ++i) {
    if (stride[i] < 1 || dil[i] < 1) return im.fail("strides and dilations must be >= 1");
    // Every extent below (spread input, padding, output) stays within the synthesized-constant cap.
    const int64_t cap = kMaxSynthesizedElements;
    if (stride[i] > cap || dil[i] > cap || out_pad[i] > cap || kernel[i] > cap || pads[i] > cap || pads[i + d] > cap ||
        pads[i] < -cap || pads[i + d] < -cap || (in[2 + i] - 1) * stride[i] + (kernel[i] - 1) * dil[i] + out_pad[i] > cap)
      return im.fail(fmt::format("spatial axis {}: strides {}, dilations {}, kernel {} and pads give more than {} "
                                 "elements", i, stride[i], dil[i], kernel[i], cap));
    // ONNX: output_padding must be less than the stride or the dilation of its axis.
    if (out_pad[i] < 0 || (out_pad[i] >= stride[i] && out_pad[i] >= dil[i]))
      return im.fail(fmt::format("output_padding {} on spatial axis {}: expected 0 <= output_padding < max(stride {}, "
                                 "dilation {})", out_pad[i], i, stride[i], dil[i]));
    const int64_t full = stride[i] * (in[2 + i] - 1) + out_pad[i] + (kernel[i] - 1) * dil[i] + 1;
    int64_t target = -1;
    if (!out_shape.empty()) target = out_shape.size() == d ? out_shape[i] : -1;
    else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") target = in[2 + i] * stride[i];
    else if (auto_pad != "NOTSET" && auto_pad != "VALID") return im.fail("auto_pad '" + auto_pad + "' is unknown");
    if (!out_shape.empty() && out_shape.size() != d) return im.fail("output_shape must have one entry per spatial axis");
    if (target >= 0) {
      const int64_t total = full - target;  // may be < 0 (output_shape larger): extra rows at the end
      const int64_t half = total >= 0 ? total / 2 : -((-total + 1) / 2);  // floor(total / 2)
      const bool upper = auto_pad == "SAME_UPPER";
      pads[i] = upper ? half : total - half;
      pads[i + d] = upper ? total - half : half;
    }
  }
  // Spread, pad (or crop) each spatial axis.
  Val v{std::nullopt, x, in};
  for (size_t i = 0; i < d; ++i) {
    const int64_t len = (in[2 + i] - 1) * stride[i] + 1;
    const int64_t before = dil[i] * (kernel[i] - 1) - pads[i];
    const int64_t after = dil[i] * (kernel[i] - 1) - pads[i + d] + out_pad[i];
    if (len + before + after < dil[i] * (kernel[i] - 1) + 1) return im.fail("the pads leave no output");
    std::vector<int64_t> idx;
    for (int64_t j = -before; j < len + after; ++j)
      idx.push_back(j >= 0 && j < len && j % stride[i] == 0 ? j / stride[i] : -1);
    DENOTE_ASSIGN_OR_RETURN(v, gather_axis(im, std::move(v), static_cast<int64_t>(2 + i), std::move(idx), 0.0));
  }
  // The flipped kernel with in/out channels swapped per group: [M, C / group, k...].
  const int64_t ksize = dims_product(kernel, 0, kernel.size());
  std::vector<double> wt(static_cast<size_t>(m * cg * ksize));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t o = 0; o < mg; ++o)
      for (int64_t ci = 0; ci < cg; ++ci)
        for (int64_t k = 0; k < ksize; ++k) {
          const int64_t src = (((g * cg + ci) * mg + o) * ksize) + (ksize - 1 - k);
          wt[static_cast<size_t>(((g * mg + o) * cg + ci) * ksize + k)] = w->values[static_cast<size_t>(src)];
        }
  ConvConfig cc;
  cc.window = WindowConfig{static_cast<int64_t>(d), kernel, std::vector<int64_t>(d, 1), std::vector<int64_t>(d, 0)};
  cc.dilation = dil;
  cc.padding_after = std::vector<int64_t>(d, 0);
  cc.groups = groups;
  cc.channel_axis = 1;
  cc.in_channels = c;
  cc.out_channels = m;
  std::vector<double> bias(static_cast<size_t>(m), 0.0);
  if (im.has_input(2)) {
    const HostTensor* b = im.const_input(2);
    if (!b || b->values.size() != bias.size()) return im.fail("the bias B must be a constant of shape [M]");
    bias = b->values;
  }
  const Shape spatial(v.shape.begin() + 2, v.shape.end());
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Conv, {v.id}, cc));
  im.model().payload.conv[y] = ConvRecord<double>{cc, spatial, std::move(wt), std::move(bias)};
  return im.set_output(0, y);
}

}  // namespace denote::onnxio
