// Op-local attribute records. A node holds exactly the alternative its op's AttrKind names
// (see ops.def); `attrs_match(op, attrs)` checks that.
//
// Each record is declared once: its members and its `fields()` list (listing name, JSON key,
// member, kind of value). The torchlean.ir.v1 reader and writer (src/io/json_attrs.h) and the
// listing text (describe_attrs) are folds over that list; adding a record = the struct, its
// fields() and its variant slot.
//
//   Attrs a = AxisAttrs{1};                       // softmax(axis=1)
//   Attrs w = WindowConfig{2, {2, 2}, {2, 2}, {0, 0}};
//   describe_attrs(a) == "axis=1";               // from AxisAttrs::fields()
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/op.h"
#include "denote/scalar/binary_format.h"
#include "denote/tensor/shape.h"

namespace denote {

// The kind of value a field holds, which decides how it is read, written and listed:
//   Int      int64_t                 JSON integer; listing 3
//   Uint64   uint64_t                JSON nonnegative integer
//   Double   double                  JSON number or "nan"/"inf"/"-inf"; listing as fmt's {}
//   String   std::string             JSON string
//   Ints     std::vector<int64_t>    JSON integer array; listing [1, 0]
//   Shape    Shape                   like Ints, dims nonnegative with a bounded element count
//   Shapes   std::vector<Shape>      JSON array of shapes; listing [[2, 3], [4]]
//   Window   WindowConfig            its own fields, inline (same JSON object, same listing)
//   MaskBits std::vector<uint8_t>    JSON tensor of the shape in `extent`, nonzero kept; listing kept/total
enum class FieldKind : uint8_t { Int, Uint64, Double, String, Ints, Shape, Shapes, Window, MaskBits };

// One field of a record R. `optional`: the JSON key may be absent (the record's default member
// value stays); the writer always writes it. `extent`: MaskBits only, the member with its shape.
template <class R, class M>
struct AttrField {
  std::string_view name;  // in the listing ("in")
  std::string_view key;   // in torchlean.ir.v1 ("in_channels"); unused for Window
  M R::*member;
  FieldKind kind;
  bool optional = false;
  std::vector<int64_t> R::*extent = nullptr;
};

template <class R, class M>
constexpr AttrField<R, M> attr_field(std::string_view name, std::string_view key, M R::*member, FieldKind kind,
                                bool optional = false) {
  return AttrField<R, M>{name, key, member, kind, optional, nullptr};
}

struct NoAttrs {
  static constexpr auto fields() { return std::tuple<>{}; }
  bool operator==(const NoAttrs&) const = default;
};
// const: shape of the payload value; flatten: the parent's shape.
struct ValueShapeAttrs {
  Shape shape;
  static constexpr auto fields() {
    return std::tuple{attr_field("shape", "value_shape", &ValueShapeAttrs::shape, FieldKind::Shape)};
  }
  bool operator==(const ValueShapeAttrs&) const = default;
};
struct SeedAttrs {
  uint64_t seed = 0;
  static constexpr auto fields() { return std::tuple{attr_field("seed", "seed", &SeedAttrs::seed, FieldKind::Uint64)}; }
  bool operator==(const SeedAttrs&) const = default;
};
struct CustomAttrs {
  std::string name;
  std::vector<Shape> input_shapes;
  static constexpr auto fields() {
    return std::tuple{attr_field("name", "name", &CustomAttrs::name, FieldKind::String),
                      attr_field("inputs", "input_shapes", &CustomAttrs::input_shapes, FieldKind::Shapes)};
  }
  bool operator==(const CustomAttrs&) const = default;
};
struct PermAttrs {
  std::vector<int64_t> perm;
  static constexpr auto fields() { return std::tuple{attr_field("perm", "perm", &PermAttrs::perm, FieldKind::Ints)}; }
  bool operator==(const PermAttrs&) const = default;
};
struct TransposeAttrs {
  int64_t axis1 = 0, axis2 = 0;
  static constexpr auto fields() {
    return std::tuple{attr_field("axis1", "axis1", &TransposeAttrs::axis1, FieldKind::Int),
                      attr_field("axis2", "axis2", &TransposeAttrs::axis2, FieldKind::Int)};
  }
  bool operator==(const TransposeAttrs&) const = default;
};
// broadcast_to (from -> to).
struct BroadcastAttrs {
  Shape from, to;
  static constexpr auto fields() {
    return std::tuple{attr_field("from", "from_shape", &BroadcastAttrs::from, FieldKind::Shape),
                      attr_field("to", "to_shape", &BroadcastAttrs::to, FieldKind::Shape)};
  }
  bool operator==(const BroadcastAttrs&) const = default;
};
// reshape (in_shape -> out_shape).
struct ReshapeAttrs {
  Shape in_shape, out_shape;
  static constexpr auto fields() {
    return std::tuple{attr_field("in_shape", "in_shape", &ReshapeAttrs::in_shape, FieldKind::Shape),
                      attr_field("out_shape", "out_shape", &ReshapeAttrs::out_shape, FieldKind::Shape)};
  }
  bool operator==(const ReshapeAttrs&) const = default;
};
struct AxisAttrs {
  int64_t axis = 0;
  static constexpr auto fields() { return std::tuple{attr_field("axis", "axis", &AxisAttrs::axis, FieldKind::Int)}; }
  bool operator==(const AxisAttrs&) const = default;
};
struct ClampAttrs {
  double bound = 0.0;
  static constexpr auto fields() { return std::tuple{attr_field("bound", "bound", &ClampAttrs::bound, FieldKind::Double)}; }
  bool operator==(const ClampAttrs&) const = default;
};
// cast: target dtype descriptor ("binary16", "int(8)", "bool" ...) and rounding mode name, as on
// the wire; cast_target() parses them (once per node, not per element).
struct CastAttrs {
  std::string dtype;
  std::string rounding = "nearest-even";
  static constexpr auto fields() {
    return std::tuple{attr_field("dtype", "dtype", &CastAttrs::dtype, FieldKind::String),
                      attr_field("rounding", "rounding", &CastAttrs::rounding, FieldKind::String, /*optional=*/true)};
  }
  bool operator==(const CastAttrs&) const = default;
};
// Pooling window: one entry per spatial axis (no silent common value).
struct WindowConfig {
  int64_t spatial_rank = 0;
  std::vector<int64_t> kernel, stride, padding;
  static constexpr auto fields() {
    return std::tuple{attr_field("spatial_rank", "spatial_rank", &WindowConfig::spatial_rank, FieldKind::Int),
                      attr_field("kernel", "kernel", &WindowConfig::kernel, FieldKind::Ints),
                      attr_field("stride", "stride", &WindowConfig::stride, FieldKind::Ints),
                      attr_field("padding", "padding", &WindowConfig::padding, FieldKind::Ints)};
  }
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
  // The listing wraps the fields: "config={spatial_rank=2, ..., in=1, out=4}".
  static constexpr std::string_view kListingGroup = "config";
  static constexpr auto fields() {
    using C = ConvConfig;
    return std::tuple{attr_field("window", "", &C::window, FieldKind::Window),
                      attr_field("dilation", "dilation", &C::dilation, FieldKind::Ints, /*optional=*/true),
                      attr_field("padding_after", "padding_after", &C::padding_after, FieldKind::Ints, /*optional=*/true),
                      attr_field("groups", "groups", &C::groups, FieldKind::Int, /*optional=*/true),
                      attr_field("channel_axis", "channel_axis", &C::channel_axis, FieldKind::Int),
                      attr_field("in", "in_channels", &C::in_channels, FieldKind::Int),
                      attr_field("out", "out_channels", &C::out_channels, FieldKind::Int)};
  }
  bool operator==(const ConvConfig&) const = default;
  int64_t dilation_at(size_t i) const { return dilation.empty() ? 1 : dilation[i]; }
  int64_t padding_after_at(size_t i) const { return padding_after.empty() ? window.padding[i] : padding_after[i]; }
};
struct BatchNormAttrs {
  int64_t channel_axis = 0;
  int64_t channels = 0;
  static constexpr auto fields() {
    return std::tuple{attr_field("channel_axis", "channel_axis", &BatchNormAttrs::channel_axis, FieldKind::Int),
                      attr_field("channels", "channels", &BatchNormAttrs::channels, FieldKind::Int)};
  }
  bool operator==(const BatchNormAttrs&) const = default;
};
// Hard attention mask, row-major over `shape`; allowed[i] != 0 keeps entry i.
struct HardMask {
  Shape shape;
  std::vector<uint8_t> allowed;
  static constexpr auto fields() {
    return std::tuple{attr_field("mask", "mask_shape", &HardMask::shape, FieldKind::Shape),
                      AttrField<HardMask, std::vector<uint8_t>>{"allowed", "allowed", &HardMask::allowed,
                                                                FieldKind::MaskBits, false, &HardMask::shape}};
  }
  bool operator==(const HardMask&) const = default;
};

// gather: the axis and the constant indices read along it (each in [0, extent); repeats allowed).
struct GatherAttrs {
  int64_t axis = 0;
  std::vector<int64_t> indices;
  static constexpr auto fields() {
    return std::tuple{attr_field("axis", "axis", &GatherAttrs::axis, FieldKind::Int),
                      attr_field("indices", "indices", &GatherAttrs::indices, FieldKind::Ints)};
  }
  bool operator==(const GatherAttrs&) const = default;
};

// mx_cast: an OCP MX format (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4_e2m1, mxint8), the block
// size and the axis the blocks run along (negative: from the end).
struct MxCastAttrs {
  std::string format = "mxfp8_e4m3";
  int64_t block = 32;
  int64_t axis = -1;
  static constexpr auto fields() {
    return std::tuple{attr_field("format", "format", &MxCastAttrs::format, FieldKind::String),
                      attr_field("block", "block", &MxCastAttrs::block, FieldKind::Int, /*optional=*/true),
                      attr_field("axis", "axis", &MxCastAttrs::axis, FieldKind::Int, /*optional=*/true)};
  }
  bool operator==(const MxCastAttrs&) const = default;
};

// Alternatives are in AttrKind order.
using Attrs = std::variant<NoAttrs, ValueShapeAttrs, SeedAttrs, CustomAttrs, PermAttrs, TransposeAttrs, BroadcastAttrs,
                           ReshapeAttrs, AxisAttrs, ClampAttrs, CastAttrs, ConvConfig, WindowConfig, BatchNormAttrs,
                           HardMask, GatherAttrs, MxCastAttrs>;

inline AttrKind attr_kind_of(const Attrs& a) { return static_cast<AttrKind>(a.index()); }
inline bool attrs_match(Op op, const Attrs& a) { return attr_kind_of(a) == op_info(op).attr; }

// Default-constructed attrs of the kind `op` needs.
Attrs default_attrs(Op op);

// Text of the attrs for the listing, e.g. "axis=1" or "perm=[1, 0]"; empty for NoAttrs.
std::string describe_attrs(const Attrs& a);

// Calls f(field) for each field of record R, in declaration order.
template <class R, class F>
constexpr void for_each_field(F&& f) {
  std::apply([&](const auto&... fs) { (f(fs), ...); }, R::fields());
}

// A cast's target, parsed once: the binary format (binary targets: every format name, binary(E,F),
// f32, f64; integer and bool targets run in typed execution and have none) and the rounding mode.
struct CastTarget {
  std::optional<BinaryFormat> format;
  Rounding rounding = Rounding::NearestEven;
};
// Errors (kInvalidInput): "cast: unknown rounding mode 'r'" (field rounding), "cast: target dtype
// is empty" (field dtype). An integer or bool dtype is not an error here (format is empty); a
// malformed binary format name is parse_format's error (field dtype).
Result<CastTarget> cast_target(const CastAttrs& a);

}  // namespace denote
