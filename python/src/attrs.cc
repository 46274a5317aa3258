// Attrs records <-> Python dicts, as folds over each record's fields() list (include/denote/ir/attrs.h):
// keys are the torchlean.ir.v1 JSON keys ("axis", "value_shape", "in_channels" ...); a pooling window's
// fields sit inline, as in the JSON document.
#include <set>
#include <type_traits>

#include <fmt/format.h>

#include "common.h"
#include "denote/ir/attrs.h"

namespace denote::python {

namespace {

template <class R>
void record_to_dict(const R& r, py::dict& d) {
  for_each_field<R>([&](const auto& f) {
    using M = std::remove_cvref_t<decltype(r.*(f.member))>;
    if constexpr (std::is_same_v<M, WindowConfig>) record_to_dict(r.*(f.member), d);
    else d[py::str(std::string(f.key))] = py::cast(r.*(f.member));
  });
}

// The attribute names of record R (a window config's included).
template <class R>
void record_keys(std::set<std::string>& keys) {
  for_each_field<R>([&](const auto& f) {
    using M = std::remove_cvref_t<decltype(std::declval<R>().*(f.member))>;
    if constexpr (std::is_same_v<M, WindowConfig>) record_keys<WindowConfig>(keys);
    else keys.insert(std::string(f.key));
  });
}

template <class R>
void record_from_dict(R& r, const py::dict& d, std::set<std::string>& used, std::string_view op) {
  for_each_field<R>([&](const auto& f) {
    using M = std::remove_cvref_t<decltype(r.*(f.member))>;
    if constexpr (std::is_same_v<M, WindowConfig>) {
      record_from_dict(r.*(f.member), d, used, op);
    } else {
      const std::string key(f.key);
      if (!d.contains(key)) {
        if (!f.optional) raise_invalid(fmt::format("{}: missing attribute '{}'", op, key), key);
        return;
      }
      used.insert(key);
      try {
        r.*(f.member) = d[py::str(key)].template cast<M>();
      } catch (const py::cast_error&) {
        const py::object v = d[py::str(key)];
        if (PyLong_Check(v.ptr()) && !PyBool_Check(v.ptr()))  // an int that does not fit (axis=2**70)
          raise_invalid(fmt::format("{}: attribute '{}': {} does not fit in a 64-bit integer", op, key,
                                    py::str(v).cast<std::string>().substr(0, 40)),
                        key);
        raise_invalid(fmt::format("{}: attribute '{}': wrong type {}", op, key, py::str(v.get_type()).cast<std::string>()),
                      key);
      }
    }
  });
}

}  // namespace

py::dict attrs_to_dict(const Attrs& a) {
  py::dict d;
  std::visit([&](const auto& r) { record_to_dict(r, d); }, a);
  return d;
}

Attrs attrs_from_dict(Op op, const py::dict& d) {
  Attrs a = default_attrs(op);
  std::set<std::string> used, known;
  const std::string_view tag = op_tag(op);
  // An unknown keyword first: a typo (kernal=3) once surfaced as a missing required attribute.
  std::visit([&](auto& r) { record_keys<std::remove_cvref_t<decltype(r)>>(known); }, a);
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k).cast<std::string>();
    if (!known.count(key)) {
      std::string names;
      for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
      raise_invalid(fmt::format("{}: unknown attribute '{}' (its attributes: {})", tag, key, names.empty() ? "none" : names), key);
    }
  }
  std::visit([&](auto& r) { record_from_dict(r, d, used, tag); }, a);
  for (const auto& [k, v] : d) {
    const std::string key = py::str(k).cast<std::string>();
    if (!used.count(key)) raise_invalid(fmt::format("{}: unknown attribute '{}'", tag, key), key);
  }
  return a;
}

}  // namespace denote::python
