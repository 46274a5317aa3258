#include "denote/ir/attrs.h"

#include <fmt/format.h>

#include "denote/scalar/binary_context.h"

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

template <class R>
std::string describe_record(const R& r);

// The listing text of one field's value ("[1, 0]", "4/6", ...).
template <class R, class M>
std::string value_text(const R& r, const AttrField<R, M>& f) {
  const M& v = r.*f.member;
  if constexpr (std::is_same_v<M, std::vector<Shape>>) {
    std::string shapes;
    for (size_t i = 0; i < v.size(); ++i) shapes += (i ? ", " : "") + to_string(v[i]);
    return "[" + shapes + "]";
  } else if constexpr (std::is_same_v<M, std::vector<int64_t>>) {
    return ints(v);
  } else if constexpr (std::is_same_v<M, std::vector<uint8_t>>) {  // MaskBits: kept/total
    int64_t kept = 0;
    for (uint8_t b : v) kept += b ? 1 : 0;
    return fmt::format("{}/{}", kept, v.size());
  } else if constexpr (std::is_same_v<M, WindowConfig>) {
    return describe_record(v);
  } else {
    return fmt::format("{}", v);
  }
}

// "name=value, name=value" over R::fields(); a Window field inlines its own fields; a record with
// a kListingGroup wraps the text: "config={...}".
template <class R>
std::string describe_record(const R& r) {
  std::string out;
  for_each_field<R>([&](const auto& f) {
    if (!out.empty()) out += ", ";
    if (f.kind != FieldKind::Window) out += std::string(f.name) + "=";
    out += value_text(r, f);
  });
  if constexpr (requires { R::kListingGroup; }) return fmt::format("{}={{{}}}", R::kListingGroup, out);
  else return out;
}

}  // namespace

Attrs default_attrs(Op op) { return make_alternative(static_cast<size_t>(op_info(op).attr)); }

std::string describe_attrs(const Attrs& a) {
  return std::visit([](const auto& r) { return describe_record(r); }, a);
}

Result<CastTarget> cast_target(const CastAttrs& a) {
  CastTarget t;
  const std::optional<Rounding> r = parse_rounding(a.rounding);
  if (!r)
    return Status::error(ErrorCode::kInvalidInput, fmt::format("cast: unknown rounding mode '{}'", a.rounding))
        .with_field("rounding");
  t.rounding = *r;
  if (a.dtype.empty()) return Status::error(ErrorCode::kInvalidInput, "cast: target dtype is empty").with_field("dtype");
  const bool typed_only = a.dtype == "bool" || a.dtype.starts_with("int") || a.dtype.starts_with("uint");
  if (typed_only) return t;
  Result<BinaryFormat> f = parse_cast_target(a.dtype);
  if (!f.ok()) return f.status().with_code(ErrorCode::kInvalidInput).with_field("dtype");
  t.format = *f;
  return t;
}

}  // namespace denote
