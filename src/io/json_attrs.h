// Internal: the torchlean.ir.v1 form of the attribute records, derived from each record's
// fields() list (denote/ir/attrs.h): read_record and write_record fold over the fields, so a
// record's JSON keys are declared once, next to its members.
//
//   AxisAttrs a;
//   DENOTE_RETURN_IF_ERROR(read_record(node_json, where, a));   // reads "axis"
//   write_record(a, out);                                        // writes "axis"
#pragma once

#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "denote/ir/attrs.h"
#include "denote/ir/model.h"
#include "json_fields.h"

namespace denote::jsonio {

using ojson = nlohmann::ordered_json;

// write_model_json, with `extra` (when set) adding fields to each node's object (json_write.cc).
using NodeFields = std::function<void(const Node&, ojson&)>;
std::string write_model_json_with(const Model& model, const NodeFields& extra);

template <class R>
Status read_record(const json& j, const Where& w, R& r);
template <class R>
void write_record(const R& r, ojson& j);

namespace detail {

// Reads one field into r (the key is present, or the field is required).
template <class R, class M>
Status read_field(const json& j, const Where& w, R& r, const AttrField<R, M>& f) {
  const std::string key(f.key);
  M& out = r.*f.member;
  if constexpr (std::is_same_v<M, WindowConfig>) {
    return read_record(j, w, out);
  } else if constexpr (std::is_same_v<M, std::vector<Shape>>) {
    if (!has(j, key.c_str()) || !j[key].is_array()) return w.error(key, "expected an array of shapes");
    out.clear();
    for (const json& s : j[key]) {
      DENOTE_ASSIGN_OR_RETURN(Shape shape, get_shape(json{{"shape", s}}, "shape", w));
      out.push_back(std::move(shape));
    }
    return ok_status();
  } else if constexpr (std::is_same_v<M, std::vector<uint8_t>>) {  // MaskBits over r.*f.extent
    DENOTE_ASSIGN_OR_RETURN(auto values, get_tensor(j, key.c_str(), r.*f.extent, w));
    out.clear();
    for (double v : values) out.push_back(v != 0.0 ? 1 : 0);
    return ok_status();
  } else if constexpr (std::is_same_v<M, std::vector<int64_t>>) {
    if (f.kind == FieldKind::Shape) {
      DENOTE_ASSIGN_OR_RETURN(out, get_shape(j, key.c_str(), w));
    } else {
      DENOTE_ASSIGN_OR_RETURN(out, get_ints(j, key.c_str(), w));
    }
    return ok_status();
  } else if constexpr (std::is_same_v<M, int64_t>) {
    DENOTE_ASSIGN_OR_RETURN(out, get_int(j, key.c_str(), w));
    return ok_status();
  } else if constexpr (std::is_same_v<M, uint64_t>) {
    DENOTE_ASSIGN_OR_RETURN(out, get_uint64(j, key.c_str(), w));
    return ok_status();
  } else if constexpr (std::is_same_v<M, double>) {
    if (!has(j, key.c_str())) return w.error(key, "missing");
    DENOTE_ASSIGN_OR_RETURN(out, get_double_or(j, key.c_str(), out, w));
    return ok_status();
  } else {
    static_assert(std::is_same_v<M, std::string>, "a field kind without a JSON reader");
    DENOTE_ASSIGN_OR_RETURN(out, get_string(j, key.c_str(), w));
    return ok_status();
  }
}

template <class R, class M>
void write_field(const R& r, const AttrField<R, M>& f, ojson& j) {
  const std::string key(f.key);
  const M& v = r.*f.member;
  if constexpr (std::is_same_v<M, WindowConfig>) {
    write_record(v, j);
  } else if constexpr (std::is_same_v<M, std::vector<uint8_t>>) {  // MaskBits over r.*f.extent
    j[key] = tensor_json(std::vector<double>(v.begin(), v.end()), r.*f.extent);
  } else if constexpr (std::is_same_v<M, double>) {
    j[key] = number_json(v);
  } else {
    j[key] = v;
  }
}

}  // namespace detail

// Reads R's fields from the node object `j`, in declaration order; an optional field whose key is
// absent keeps r's value (the record's default).
template <class R>
Status read_record(const json& j, const Where& w, R& r) {
  Status status;
  for_each_field<R>([&](const auto& f) {
    if (!status.ok()) return;
    if (f.optional && f.kind != FieldKind::Window && !has(j, std::string(f.key).c_str())) return;
    status = detail::read_field(j, w, r, f);
  });
  return status;
}

// Writes R's fields into `j`, in declaration order (optional fields too).
template <class R>
void write_record(const R& r, ojson& j) {
  for_each_field<R>([&](const auto& f) { detail::write_field(r, f, j); });
}

// The attribute record of `kind` read from a node object: the variant alternative at that index.
template <size_t I = 0>
Result<Attrs> read_attrs(AttrKind kind, const json& j, const Where& w) {
  if constexpr (I < std::variant_size_v<Attrs>) {
    if (static_cast<size_t>(kind) != I) return read_attrs<I + 1>(kind, j, w);
    std::variant_alternative_t<I, Attrs> r;
    DENOTE_RETURN_IF_ERROR(read_record(j, w, r));
    return Attrs(std::in_place_index<I>, std::move(r));
  } else {
    return w.error("kind", "unsupported attribute kind");
  }
}

inline void write_attrs(const Attrs& a, ojson& j) {
  std::visit([&](const auto& r) { write_record(r, j); }, a);
}

}  // namespace denote::jsonio
