// ONNX Resize (opset 10 to 18) and Upsample (7 to 9) -> IR, one axis at a time as the ONNX
// reference does (interpolate_nd is separable): for each axis whose size or coordinates change,
// the output coordinate is mapped back (coordinate_transformation_mode), and
//   nearest:       each output row is one input row (nearest_mode): a `gather` (exact);
//   linear, cubic: each output row is a weighted sum of 2 / 4 input rows (edge rows repeated,
//                  exclude_outside renormalizes): a `linear` along that axis (permuted last) with
//                  the interpolation weights and zero bias;
//   tf_crop_and_resize: outside the roi the row is extrapolation_value (a fill row / the bias).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "onnx_index.h"

namespace denote::onnxio {
namespace {

struct ResizeSpec {
  std::string mode = "nearest", ctm = "half_pixel", nearest = "round_prefer_floor";
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false;
  std::vector<double> scales, roi;
  std::vector<int64_t> sizes;
};

// The input coordinate of output index x (nullopt: outside the roi, the extrapolation value).
std::optional<double> source_coord(const ResizeSpec& s, size_t axis, int64_t x, int64_t in, double scale, size_t rank) {
  const double out_f = scale * static_cast<double>(in);
  const double xd = static_cast<double>(x);
  if (s.ctm == "align_corners") return out_f == 1 ? 0.0 : xd * static_cast<double>(in - 1) / (out_f - 1);
  if (s.ctm == "asymmetric") return xd / scale;
  if (s.ctm == "tf_half_pixel_for_nn") return (xd + 0.5) / scale;
  if (s.ctm == "pytorch_half_pixel") return out_f == 1 ? -0.5 : (xd + 0.5) / scale - 0.5;
  if (s.ctm == "tf_crop_and_resize") {
    const double r0 = s.roi[axis], r1 = s.roi[axis + rank];
    double v = out_f == 1 ? (r1 - r0) * static_cast<double>(in - 1) / 2
                          : xd * (r1 - r0) * static_cast<double>(in - 1) / (out_f - 1);
    v += r0 * static_cast<double>(in - 1);
    if (v < 0 || v > static_cast<double>(in - 1)) return std::nullopt;
    return v;
  }
  return (xd + 0.5) / scale - 0.5;  // half_pixel
}

std::vector<double> coeffs(const ResizeSpec& s, double ratio, bool integer) {
  if (s.mode == "nearest") {
    if (integer) return {0, 1};
    if (s.nearest == "round_prefer_ceil") return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (s.nearest == "floor") return {1, 0};
    if (s.nearest == "ceil") return {0, 1};
    return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
  }
  if (s.mode == "linear") return {1 - ratio, ratio};
  const double a = s.cubic_a, r = ratio, q = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a, ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * q - (a + 3)) * q * q + 1, ((a * (q + 1) - 5 * a) * (q + 1) + 8 * a) * (q + 1) - 4 * a};
}

// The weights of one axis: W[out][in] (rows of extrapolated outputs all zero, flagged in `outside`).
struct AxisWeights {
  std::vector<double> w;
  std::vector<bool> outside;
};

AxisWeights axis_weights(const ResizeSpec& s, size_t axis, int64_t in, int64_t out, double scale, size_t rank) {
  AxisWeights aw{std::vector<double>(static_cast<size_t>(out * in), 0.0), std::vector<bool>(static_cast<size_t>(out), false)};
  for (int64_t x = 0; x < out; ++x) {
    auto c = source_coord(s, axis, x, in, scale, rank);
    if (!c) {
      aw.outside[static_cast<size_t>(x)] = true;
      continue;
    }
    const double xo = *c, fl = std::floor(xo);
    const bool integer = xo == fl;
    std::vector<double> k = coeffs(s, integer ? 1.0 : xo - fl, integer);
    const int64_t n = static_cast<int64_t>(k.size());
    // The n indices nearest to xo (ties to the smaller index), sorted: the reference's choice.
    const int64_t first = integer ? static_cast<int64_t>(fl) - n / 2 : static_cast<int64_t>(fl) - (n / 2 - 1);
    if (s.exclude_outside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (first + i < 0 || first + i >= in) k[static_cast<size_t>(i)] = 0;
        sum += k[static_cast<size_t>(i)];
      }
      for (double& v : k) v /= sum;
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t src = std::clamp<int64_t>(first + i, 0, in - 1);
      aw.w[static_cast<size_t>(x * in + src)] += k[static_cast<size_t>(i)];
    }
  }
  return aw;
}

Result<int64_t> linear_along(Importer& im, int64_t x, size_t axis, const AxisWeights& aw, int64_t out, double fill) {
  const Shape s = im.shape(x);
  const size_t r = s.size();
  const int64_t in = s[axis];
  std::vector<int64_t> perm;
  for (size_t i = 0; i < r; ++i)
    if (i != axis) perm.push_back(static_cast<int64_t>(i));
  perm.push_back(static_cast<int64_t>(axis));
  const bool moved = axis + 1 != r;
  if (moved) { DENOTE_ASSIGN_OR_RETURN(x, im.emit(Op::Permute, {x}, PermAttrs{perm})); }
  Shape ls = im.shape(x);
  ls.back() = out;
  std::vector<double> bias(static_cast<size_t>(out), 0.0);
  for (int64_t o = 0; o < out; ++o)
    if (aw.outside[static_cast<size_t>(o)]) bias[static_cast<size_t>(o)] = fill;
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Linear, {x}, NoAttrs{}, ls));
  im.model().payload.linear[y] = LinearRecord<double>{out, in, aw.w, std::move(bias)};
  if (!moved) return y;
  std::vector<int64_t> inv(r);
  for (size_t i = 0; i < r; ++i) inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return im.emit(Op::Permute, {y}, PermAttrs{inv});
}

std::vector<double> const_doubles(const HostTensor* t) { return t ? t->values : std::vector<double>{}; }

}  // namespace

Status map_resize(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  const size_t r = in.size();
  ResizeSpec s;
  DENOTE_ASSIGN_OR_RETURN(s.mode, attr_string(im, "mode", "nearest"));
  if (s.mode == "bilinear" || s.mode == "trilinear") s.mode = "linear";
  const bool upsample = im.node().op_type() == "Upsample";
  if (upsample || im.opset() < 11) {
    s.ctm = "asymmetric";
    s.nearest = "floor";
    if (upsample && im.opset() < 9) {
      if (const auto* a = find_attr(im.node(), "scales"))
        for (float v : a->floats()) s.scales.push_back(v);
    } else {
      const HostTensor* sc = im.const_input(1);
      if (!sc) return im.fail("scales must be a constant (computed scales are not supported)");
      s.scales = sc->values;
    }
  } else {
    DENOTE_ASSIGN_OR_RETURN(s.ctm, attr_string(im, "coordinate_transformation_mode", "half_pixel"));
    DENOTE_ASSIGN_OR_RETURN(s.nearest, attr_string(im, "nearest_mode", "round_prefer_floor"));
    DENOTE_ASSIGN_OR_RETURN(s.cubic_a, attr_float(im, "cubic_coeff_a", -0.75));
    DENOTE_ASSIGN_OR_RETURN(s.extrapolation, attr_float(im, "extrapolation_value", 0.0));
    DENOTE_ASSIGN_OR_RETURN(int64_t ex, attr_int(im, "exclude_outside", 0));
    s.exclude_outside = ex != 0;
    DENOTE_ASSIGN_OR_RETURN(int64_t antialias, attr_int(im, "antialias", 0));
    if (antialias) return im.fail("antialias is not supported");
    if (find_attr(im.node(), "axes")) return im.fail("the axes attribute is not supported");
    for (int i = 1; i <= 3; ++i)
      if (im.has_input(i) && !im.const_input(i))
        return im.fail("roi, scales and sizes must be constants (computed ones are not supported)");
    s.roi = const_doubles(im.const_input(1));
    s.scales = const_doubles(im.const_input(2));
    if (const HostTensor* sz = im.const_input(3)) s.sizes = sz->ints;
  }
  if (s.mode != "nearest" && s.mode != "linear" && s.mode != "cubic") return im.fail("mode '" + s.mode + "' is not supported");
  static constexpr std::string_view kCtms[] = {"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                                               "tf_half_pixel_for_nn", "tf_crop_and_resize"};
  if (s.ctm == "half_pixel_symmetric") return im.fail("coordinate_transformation_mode 'half_pixel_symmetric' is not supported");
  if (std::find(std::begin(kCtms), std::end(kCtms), s.ctm) == std::end(kCtms))
    return im.fail("coordinate_transformation_mode '" + s.ctm +
                   "' is unknown; expected half_pixel, pytorch_half_pixel, align_corners, asymmetric, "
                   "tf_half_pixel_for_nn or tf_crop_and_resize");
  static constexpr std::string_view kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (std::find(std::begin(kNearest), std::end(kNearest), s.nearest) == std::end(kNearest))
    return im.fail("nearest_mode '" + s.nearest + "' is unknown; expected round_prefer_floor, round_prefer_ceil, floor or ceil");
  if (s.ctm == "tf_crop_and_resize" && s.roi.size() != 2 * r) return im.fail("tf_crop_and_resize needs a roi of 2 * rank values");
  if (!s.sizes.empty() && s.sizes.size() != r) return im.fail("sizes must have one entry per axis");
  if (s.sizes.empty() && s.scales.size() != r) return im.fail("scales must have one entry per axis");
  Val v{std::nullopt, x, in};
  for (size_t a = 0; a < r; ++a) {
    // The output extent and the axis' weight table (out x in) stay within the synthesized-constant cap.
    const double want = s.sizes.empty() ? s.scales[a] * static_cast<double>(in[a]) : static_cast<double>(s.sizes[a]);
    if (!(want * static_cast<double>(std::max<int64_t>(in[a], 1)) <= static_cast<double>(kMaxSynthesizedElements)))
      return im.fail(fmt::format("axis {}: the output extent {} times the input extent {} exceeds {} weights", a, want,
                                 in[a], kMaxSynthesizedElements));
    const int64_t out = s.sizes.empty() ? static_cast<int64_t>(want) : s.sizes[a];
    const double scale = s.sizes.empty() ? s.scales[a] : static_cast<double>(out) / static_cast<double>(in[a]);
    if (out < 0 || in[a] == 0 || !(scale > 0)) return im.fail(fmt::format("axis {}: bad scale or size", a));
    const AxisWeights aw = axis_weights(s, a, in[a], out, scale, r);
    // Identity: skip the axis.
    bool ident = out == in[a];
    for (int64_t o = 0; ident && o < out; ++o)
      for (int64_t i = 0; ident && i < in[a]; ++i)
        ident = aw.w[static_cast<size_t>(o * in[a] + i)] == (o == i ? 1.0 : 0.0) && !aw.outside[static_cast<size_t>(o)];
    if (ident) continue;
    bool one_hot = true;
    std::vector<int64_t> idx;
    for (int64_t o = 0; o < out; ++o) {
      int64_t pick = -1;
      for (int64_t i = 0; i < in[a]; ++i) {
        const double w = aw.w[static_cast<size_t>(o * in[a] + i)];
        if (w == 1.0 && pick < 0) pick = i;
        else if (w != 0.0) one_hot = false;
      }
      if (pick < 0 && !aw.outside[static_cast<size_t>(o)]) one_hot = false;
      idx.push_back(pick);
    }
    if (one_hot) {
      DENOTE_ASSIGN_OR_RETURN(v, gather_axis(im, std::move(v), static_cast<int64_t>(a), std::move(idx), s.extrapolation));
    } else {
      DENOTE_ASSIGN_OR_RETURN(int64_t y, linear_along(im, v.id, a, aw, out, s.extrapolation));
      v = Val{std::nullopt, y, im.shape(y)};
    }
  }
  return set_val(im, 0, std::move(v));
}

}  // namespace denote::onnxio
