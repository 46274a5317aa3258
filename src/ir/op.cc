#include "denote/ir/op.h"

namespace denote {

std::optional<Op> op_from_tag(std::string_view tag) {
  for (const OpInfo& info : kOpTable)
    if (info.tag == tag) return info.op;
  return std::nullopt;
}

std::string_view family_name(OpFamily family) {
  static constexpr std::string_view kNames[] = {"source", "misc", "layout", "binary", "unary",
                                                "reduction", "contraction", "window", "normalization"};
  return kNames[static_cast<size_t>(family)];
}

std::string_view attr_kind_name(AttrKind kind) {
  static constexpr std::string_view kNames[] = {"none", "value_shape", "seed", "custom", "perm",
                                                "transpose", "broadcast", "reshape", "axis", "clamp",
                                                "cast", "conv", "window", "batch_norm", "mask", "gather",
                                                "mx_cast"};
  static_assert(std::size(kNames) == static_cast<size_t>(AttrKind::MxCast) + 1, "one name per AttrKind");
  return kNames[static_cast<size_t>(kind)];
}

std::string_view diff_name(Diff diff) {
  static constexpr std::string_view kNames[] = {"rule", "zero", "none", "leaf"};
  return kNames[static_cast<size_t>(diff)];
}

}  // namespace denote
