// Shape rules of the window family: conv, max_pool, avg_pool.
#include <fmt/format.h>

#include <cstdint>

#include "rules.h"

namespace denote::rules {

namespace {

Status check_lengths(const Node& node, const WindowConfig& w) {
  if (w.spatial_rank < 0) return op_error(node, fmt::format("spatial_rank {} is negative", w.spatial_rank));
  auto bad = [&](const char* field, size_t n) {
    return op_error(node, fmt::format("{} has {} entries, expected spatial_rank = {}", field, n, w.spatial_rank));
  };
  const size_t r = static_cast<size_t>(w.spatial_rank);
  if (w.kernel.size() != r) return bad("kernel", w.kernel.size());
  if (w.stride.size() != r) return bad("stride", w.stride.size());
  if (w.padding.size() != r) return bad("padding", w.padding.size());
  for (size_t i = 0; i < r; ++i) {
    if (w.kernel[i] < 0 || w.padding[i] < 0)
      return op_error(node, fmt::format("negative kernel or padding at spatial axis {}", i));
    if (w.stride[i] <= 0) return op_error(node, fmt::format("stride {} at spatial axis {} must be >= 1", w.stride[i], i));
  }
  return ok_status();
}

// Pool extent of one axis (TorchLean's total rule: an oversized window gives 0, not an error). In 128
// bits: an extent near 2^63 plus the padding does not overflow; a result beyond int64 saturates (the
// element-count checks then refuse the shape).
int64_t pool_extent(int64_t in, int64_t k, int64_t s, int64_t p) {
  if (in == 0 || k == 0 || p > k / 2) return 0;
  const __int128 span = static_cast<__int128>(in) + 2 * static_cast<__int128>(p);
  if (span < k) return 0;
  const __int128 out = (span - k) / s + 1;
  return out > INT64_MAX ? INT64_MAX : static_cast<int64_t>(out);
}

Result<Shape> infer_pool(const Node& node, const Shape& in) {
  const auto& w = std::get<WindowConfig>(node.attrs);
  DENOTE_RETURN_IF_ERROR(check_lengths(node, w));
  if (static_cast<size_t>(w.spatial_rank) > in.size())
    return op_error(node, fmt::format("spatial_rank {} exceeds input rank {}", w.spatial_rank, in.size()));
  Shape out = in;
  const size_t first = in.size() - static_cast<size_t>(w.spatial_rank);
  for (size_t i = 0; i < static_cast<size_t>(w.spatial_rank); ++i) {
    if (w.padding[i] > (int64_t{1} << 40) || w.kernel[i] > (int64_t{1} << 40))
      return op_error(node, fmt::format("kernel or padding at spatial axis {} is absurdly large", i));
    out[first + i] = pool_extent(in[first + i], w.kernel[i], w.stride[i], w.padding[i]);
  }
  return out;
}

Status check_conv_config(const Node& node, const ConvConfig& c, const Shape& in) {
  DENOTE_RETURN_IF_ERROR(check_lengths(node, c.window));
  const size_t r = static_cast<size_t>(c.window.spatial_rank);
  if (!c.dilation.empty() && c.dilation.size() != r)
    return op_error(node, fmt::format("dilation has {} entries, expected spatial_rank = {}", c.dilation.size(), r));
  if (!c.padding_after.empty() && c.padding_after.size() != r)
    return op_error(node, fmt::format("padding_after has {} entries, expected spatial_rank = {}", c.padding_after.size(), r));
  for (size_t i = 0; i < r; ++i) {
    if (c.dilation_at(i) < 1) return op_error(node, fmt::format("dilation at spatial axis {} must be >= 1", i));
    if (c.padding_after_at(i) < 0) return op_error(node, fmt::format("negative padding_after at spatial axis {}", i));
    if (c.window.kernel[i] < 1) return op_error(node, fmt::format("kernel at spatial axis {} must be >= 1", i));
  }
  if (c.channel_axis < 0 || static_cast<size_t>(c.channel_axis) + 1 + r != in.size())
    return op_error(node, fmt::format("input {} does not have channel_axis {} followed by {} spatial axes",
                                      to_string(in), c.channel_axis, r));
  if (c.groups < 1 || c.in_channels < 1 || c.out_channels < 1 || c.in_channels % c.groups || c.out_channels % c.groups)
    return op_error(node, fmt::format("groups {} must divide in_channels {} and out_channels {}", c.groups,
                                      c.in_channels, c.out_channels));
  if (in[c.channel_axis] != c.in_channels)
    return op_error(node, fmt::format("input has {} channels, expected in_channels = {}", in[c.channel_axis],
                                      c.in_channels));
  return ok_status();
}

}  // namespace

Result<Shape> infer_MaxPool(const Node& node, std::span<const Shape> parents) { return infer_pool(node, parents[0]); }
Result<Shape> infer_AvgPool(const Node& node, std::span<const Shape> parents) { return infer_pool(node, parents[0]); }

Result<Shape> infer_Conv(const Node& node, std::span<const Shape> parents) {
  const auto& c = std::get<ConvConfig>(node.attrs);
  const Shape& in = parents[0];
  DENOTE_RETURN_IF_ERROR(check_conv_config(node, c, in));
  Shape out = in;
  out[c.channel_axis] = c.out_channels;
  for (size_t i = 0; i < static_cast<size_t>(c.window.spatial_rank); ++i) {
    const size_t axis = static_cast<size_t>(c.channel_axis) + 1 + i;
    auto eff = checked_add(checked_mul(c.dilation_at(i), c.window.kernel[i] - 1).value_or(-1), 1);
    auto padded = checked_add(checked_add(in[axis], c.window.padding[i]).value_or(-1), c.padding_after_at(i));
    if (!eff || !padded || *eff <= 0 || *padded < 0)
      return op_error(node, fmt::format("window arithmetic overflows at spatial axis {}", i));
    if (*padded < *eff)
      return op_error(node, fmt::format("padded input {} is smaller than the dilated kernel {} at spatial axis {}",
                                        *padded, *eff, i));
    out[axis] = (*padded - *eff) / c.window.stride[i] + 1;
  }
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "output", out));
  return out;
}

}  // namespace denote::rules
