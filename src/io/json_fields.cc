#include "json_fields.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "denote/base/checked.h"

namespace denote::jsonio {

Status Where::error(const std::string& field, const std::string& what) const {
  std::string at = text.empty() ? "" : text + ": ";
  return Status::error(ErrorCode::kInvalidInput, fmt::format("torchlean.ir.v1: {}field '{}': {}", at, field, what))
      .with_field(field);
}

bool has(const json& obj, const char* key) { return obj.is_object() && obj.contains(key) && !obj[key].is_null(); }

namespace {

std::string type_of(const json& v) { return v.type_name(); }

Result<int64_t> as_int(const json& v, const std::string& field, const Where& w) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<int64_t>();
  if (v.is_number_unsigned()) {
    uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return w.error(field, fmt::format("integer {} is out of range", u));
    return static_cast<int64_t>(u);
  }
  return w.error(field, "expected an integer, got " + (v.is_number_float() ? fmt::format("{}", v.get<double>()) : type_of(v)));
}

Result<double> as_double(const json& v, const std::string& field, const Where& w) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  return w.error(field, "expected a number (or \"nan\", \"inf\", \"-inf\"), got " + type_of(v));
}

}  // namespace

Result<int64_t> get_int(const json& obj, const char* key, const Where& w) {
  if (!has(obj, key)) return w.error(key, "missing");
  return as_int(obj[key], key, w);
}

Result<int64_t> get_int_or(const json& obj, const char* key, int64_t fallback, const Where& w) {
  return has(obj, key) ? as_int(obj[key], key, w) : Result<int64_t>(fallback);
}

Result<uint64_t> get_uint64(const json& obj, const char* key, const Where& w) {
  if (!has(obj, key)) return w.error(key, "missing");
  const json& v = obj[key];
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return static_cast<uint64_t>(v.get<int64_t>());
  return w.error(key, "expected a nonnegative integer, got " + type_of(v));
}

Result<double> get_double_or(const json& obj, const char* key, double fallback, const Where& w) {
  return has(obj, key) ? as_double(obj[key], key, w) : Result<double>(fallback);
}

Result<bool> get_bool_or(const json& obj, const char* key, bool fallback, const Where& w) {
  if (!has(obj, key)) return fallback;
  if (!obj[key].is_boolean()) return w.error(key, "expected true or false, got " + type_of(obj[key]));
  return obj[key].get<bool>();
}

Result<std::string> get_string(const json& obj, const char* key, const Where& w) {
  if (!has(obj, key)) return w.error(key, "missing");
  if (!obj[key].is_string()) return w.error(key, "expected a string, got " + type_of(obj[key]));
  return obj[key].get<std::string>();
}

Result<std::vector<int64_t>> get_ints(const json& obj, const char* key, const Where& w) {
  if (!has(obj, key)) return w.error(key, "missing");
  const json& v = obj[key];
  if (!v.is_array()) return w.error(key, "expected an array of integers, got " + type_of(v));
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    DENOTE_ASSIGN_OR_RETURN(int64_t x, as_int(v[i], fmt::format("{}[{}]", key, i), w));
    out.push_back(x);
  }
  return out;
}

Result<std::vector<int64_t>> get_ints_or_empty(const json& obj, const char* key, const Where& w) {
  return has(obj, key) ? get_ints(obj, key, w) : Result<std::vector<int64_t>>(std::vector<int64_t>{});
}

Result<Shape> get_shape(const json& obj, const char* key, const Where& w) {
  DENOTE_ASSIGN_OR_RETURN(Shape s, get_ints(obj, key, w));
  if (auto n = checked_numel(s); !n.ok()) return w.error(key, n.message());
  return s;
}

// {"array": k}: the k-th array handed to parse_model_json_with_arrays, of exactly `count` values.
Result<std::vector<double>> array_tensor(const json& ref, const char* key, int64_t count, const Where& w) {
  if (!w.arrays)
    return w.error(key, "expected a list of numbers (an {\"array\": k} reference needs the arrays it names)");
  if (ref.size() != 1 || !has(ref, "array") || !ref["array"].is_number_integer())
    return w.error(key, "expected a list of numbers or {\"array\": k}");
  const int64_t k = ref["array"].get<int64_t>();
  if (k < 0 || k >= static_cast<int64_t>(w.arrays->size()))
    return w.error(key, fmt::format("array {} is not one of the {} arrays given", k, w.arrays->size()));
  const std::vector<double>& a = (*w.arrays)[static_cast<size_t>(k)];
  if (static_cast<int64_t>(a.size()) != count)
    return w.error(key, fmt::format("array {} has {} values, the field's shape {}", k, a.size(), count));
  return a;
}

Result<std::vector<double>> get_tensor(const json& obj, const char* key, const Shape& shape, const Where& w) {
  if (!has(obj, key)) return w.error(key, "missing");
  auto counted = checked_numel(shape);
  if (!counted.ok()) return w.error(key, counted.message());
  const int64_t count = *counted;
  const json& root = obj[key];
  if (root.is_object()) return array_tensor(root, key, count, w);
  std::vector<double> out;
  // A flat list of the right length is accepted for any shape (for a scalar: a one-element list).
  bool flat = root.is_array() && static_cast<int64_t>(root.size()) == count && (root.empty() || !root[0].is_array());
  if (flat) {
    out.reserve(root.size());
    for (size_t i = 0; i < root.size(); ++i) {
      DENOTE_ASSIGN_OR_RETURN(double x, as_double(root[i], fmt::format("{}[{}]", key, i), w));
      out.push_back(x);
    }
    return out;
  }
  // Nested lists: walk with an explicit stack of (value, depth), checking each level's length. The
  // document itself bounds how many values can arrive, so reserve no more than a modest amount up
  // front: a huge declared shape with a short list is a shape error, not an allocation.
  out.reserve(static_cast<size_t>(std::min<int64_t>(count, int64_t{1} << 16)));
  std::vector<std::pair<const json*, size_t>> stack{{&root, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (depth == shape.size()) {
      DENOTE_ASSIGN_OR_RETURN(double x, as_double(*v, key, w));
      out.push_back(x);
      continue;
    }
    if (!v->is_array() || static_cast<int64_t>(v->size()) != shape[depth])
      return w.error(key, fmt::format("expected nested lists of shape {} (or a flat list of {} values)",
                                      to_string(shape), count));
    for (size_t i = v->size(); i > 0; --i) stack.push_back({&(*v)[i - 1], depth + 1});
  }
  return out;
}

std::string quote(const json& v, size_t max_chars) {
  if (v.is_array()) return fmt::format("an array of {} elements", v.size());
  if (v.is_object()) return fmt::format("an object of {} members", v.size());
  std::string text = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > max_chars) text = text.substr(0, max_chars) + "...";
  return text;
}

json number_json(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

json tensor_json(const std::vector<double>& flat, const Shape& shape) {
  if (shape.empty() && flat.size() == 1) return number_json(flat[0]);
  auto count = checked_numel(shape);
  bool nested = !shape.empty() && count.ok() && *count == static_cast<int64_t>(flat.size());
  if (nested && *count == 0) {
    // No values, but one empty list per index before the first 0 extent: when that is absurd
    // ([2^61, 0]) write the flat `[]`, which readers accept for any zero-element shape.
    int64_t lists = 1;
    for (size_t d = 0; nested && d < shape.size() && shape[d] != 0; ++d) {
      auto next = checked_mul(lists, shape[d]);
      nested = next && *next <= (int64_t{1} << 16);
      lists = next.value_or(0);
    }
  }
  if (!nested) {
    json arr = json::array();  // the value does not fit the shape: keep it flat, readers will say so
    for (double v : flat) arr.push_back(number_json(v));
    return arr;
  }
  // Build the nested lists level by level from the innermost axis outward (no recursion).
  std::vector<json> level;
  level.reserve(flat.size());
  for (double v : flat) level.push_back(number_json(v));
  for (size_t d = shape.size(); d > 0; --d) {
    const size_t extent = static_cast<size_t>(shape[d - 1]);
    std::vector<json> next;
    if (extent == 0) {
      size_t groups = 1;
      for (size_t k = 0; k + 1 < d; ++k) groups *= static_cast<size_t>(shape[k]);
      next.assign(groups, json::array());
    } else {
      for (size_t i = 0; i < level.size(); i += extent) {
        json arr = json::array();
        for (size_t k = 0; k < extent; ++k) arr.push_back(std::move(level[i + k]));
        next.push_back(std::move(arr));
      }
    }
    level = std::move(next);
  }
  return level.empty() ? json::array() : std::move(level[0]);
}

}  // namespace denote::jsonio
