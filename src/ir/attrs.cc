#include "denote/ir/attrs.h"

#include <fmt/format.h>

namespace denote {

namespace {

// Builds an Attrs holding the alternative at `index` (AttrKind order), default-constructed.
template <size_t I = 0>
Attrs make_alternative(size_t index) {
  if constexpr (I < std::variant_size_v<Attrs>) {
    if (index == I) return Attrs(std::in_place_index<I>);
    return make_alternative<I + 1>(index);
  } else {
    return Attrs();
  }
}

std::string ints(const std::vector<int64_t>& v) { return "[" + join_ints(v) + "]"; }

std::string window_text(const WindowConfig& w) {
  return fmt::format("spatial_rank={}, kernel={}, stride={}, padding={}", w.spatial_rank, ints(w.kernel),
                     ints(w.stride), ints(w.padding));
}

struct Describer {
  std::string operator()(const NoAttrs&) const { return ""; }
  std::string operator()(const ValueShapeAttrs& a) const { return "shape=" + to_string(a.shape); }
  std::string operator()(const SeedAttrs& a) const { return fmt::format("seed={}", a.seed); }
  std::string operator()(const CustomAttrs& a) const {
    std::string shapes;
    for (size_t i = 0; i < a.input_shapes.size(); ++i) shapes += (i ? ", " : "") + to_string(a.input_shapes[i]);
    return fmt::format("name={}, inputs=[{}]", a.name, shapes);
  }
  std::string operator()(const PermAttrs& a) const { return "perm=" + ints(a.perm); }
  std::string operator()(const TransposeAttrs& a) const { return fmt::format("axis1={}, axis2={}", a.axis1, a.axis2); }
  std::string operator()(const BroadcastAttrs& a) const {
    return "from=" + to_string(a.from) + ", to=" + to_string(a.to);
  }
  std::string operator()(const ReshapeAttrs& a) const {
    return "in_shape=" + to_string(a.in_shape) + ", out_shape=" + to_string(a.out_shape);
  }
  std::string operator()(const AxisAttrs& a) const { return fmt::format("axis={}", a.axis); }
  std::string operator()(const ClampAttrs& a) const { return fmt::format("bound={}", a.bound); }
  std::string operator()(const CastAttrs& a) const { return fmt::format("dtype={}, rounding={}", a.dtype, a.rounding); }
  std::string operator()(const WindowConfig& w) const { return window_text(w); }
  std::string operator()(const ConvConfig& c) const {
    return fmt::format("config={{{}, dilation={}, padding_after={}, groups={}, channel_axis={}, in={}, out={}}}",
                       window_text(c.window), ints(c.dilation), ints(c.padding_after), c.groups, c.channel_axis,
                       c.in_channels, c.out_channels);
  }
  std::string operator()(const BatchNormAttrs& a) const {
    return fmt::format("channel_axis={}, channels={}", a.channel_axis, a.channels);
  }
  std::string operator()(const HardMask& m) const {
    int64_t allowed = 0;
    for (uint8_t b : m.allowed) allowed += b ? 1 : 0;
    return fmt::format("mask={}, allowed={}/{}", to_string(m.shape), allowed, m.allowed.size());
  }
};

}  // namespace

Attrs default_attrs(Op op) { return make_alternative(static_cast<size_t>(op_info(op).attr)); }

std::string describe_attrs(const Attrs& a) { return std::visit(Describer{}, a); }

}  // namespace denote
