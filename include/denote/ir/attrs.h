// Op-local attribute records. A node holds exactly the alternative its op's AttrKind names
// (see ops.def); `attrs_match(op, attrs)` checks that.
//
//   Attrs a = AxisAttrs{1};                       // softmax(axis=1)
//   Attrs w = WindowConfig{2, {2, 2}, {2, 2}, {0, 0}};
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "denote/ir/op.h"
#include "denote/ir/shape.h"

namespace denote {

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};
// const: shape of the payload value; flatten: the parent's shape.
struct ValueShapeAttrs {
  Shape shape;
  bool operator==(const ValueShapeAttrs&) const = default;
};
struct SeedAttrs {
  uint64_t seed = 0;
  bool operator==(const SeedAttrs&) const = default;
};
struct CustomAttrs {
  std::string name;
  std::vector<Shape> input_shapes;
  bool operator==(const CustomAttrs&) const = default;
};
struct PermAttrs {
  std::vector<int64_t> perm;
  bool operator==(const PermAttrs&) const = default;
};
struct TransposeAttrs {
  int64_t axis1 = 0, axis2 = 0;
  bool operator==(const TransposeAttrs&) const = default;
};
// broadcast_to (from -> to).
struct BroadcastAttrs {
  Shape from, to;
  bool operator==(const BroadcastAttrs&) const = default;
};
// reshape (in_shape -> out_shape).
struct ReshapeAttrs {
  Shape in_shape, out_shape;
  bool operator==(const ReshapeAttrs&) const = default;
};
struct AxisAttrs {
  int64_t axis = 0;
  bool operator==(const AxisAttrs&) const = default;
};
struct ClampAttrs {
  double bound = 0.0;
  bool operator==(const ClampAttrs&) const = default;
};
// cast: target dtype descriptor ("binary16", "int(8)", "bool" ...) and rounding mode name.
struct CastAttrs {
  std::string dtype;
  std::string rounding = "nearest-even";
  bool operator==(const CastAttrs&) const = default;
};
// Pooling window: one entry per spatial axis (no silent common value).
struct WindowConfig {
  int64_t spatial_rank = 0;
  std::vector<int64_t> kernel, stride, padding;
  bool operator==(const WindowConfig&) const = default;
};
// Convolution geometry. Empty dilation means all 1; empty padding_after means = padding.
struct ConvConfig {
  WindowConfig window;
  std::vector<int64_t> dilation;
  std::vector<int64_t> padding_after;
  int64_t groups = 1;
  int64_t channel_axis = 0;
  int64_t in_channels = 0;
  int64_t out_channels = 0;
  bool operator==(const ConvConfig&) const = default;
  int64_t dilation_at(size_t i) const { return dilation.empty() ? 1 : dilation[i]; }
  int64_t padding_after_at(size_t i) const { return padding_after.empty() ? window.padding[i] : padding_after[i]; }
};
struct BatchNormAttrs {
  int64_t channel_axis = 0;
  int64_t channels = 0;
  bool operator==(const BatchNormAttrs&) const = default;
};
// Hard attention mask, row-major over `shape`; allowed[i] != 0 keeps entry i.
struct HardMask {
  Shape shape;
  std::vector<uint8_t> allowed;
  bool operator==(const HardMask&) const = default;
};

// Alternatives are in AttrKind order.
using Attrs = std::variant<NoAttrs, ValueShapeAttrs, SeedAttrs, CustomAttrs, PermAttrs, TransposeAttrs, BroadcastAttrs,
                           ReshapeAttrs, AxisAttrs, ClampAttrs, CastAttrs, ConvConfig, WindowConfig, BatchNormAttrs,
                           HardMask>;

inline AttrKind attr_kind_of(const Attrs& a) { return static_cast<AttrKind>(a.index()); }
inline bool attrs_match(Op op, const Attrs& a) { return attr_kind_of(a) == op_info(op).attr; }

// Default-constructed attrs of the kind `op` needs.
Attrs default_attrs(Op op);

// Text of the attrs for the listing, e.g. "axis=1" or "perm=[1, 0]"; empty for NoAttrs.
std::string describe_attrs(const Attrs& a);

}  // namespace denote
