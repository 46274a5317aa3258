// Internal: typed access to JSON fields with errors that name where the field is.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "denote/base/status.h"
#include "denote/tensor/shape.h"

namespace denote::jsonio {

using nlohmann::json;

// Where we are in the document, e.g. "nodes[3] (id 3, kind conv)"; errors read
// "torchlean.ir.v1: nodes[3] (id 3, kind conv): field 'kernel': expected an array of integers".
struct Where {
  std::string text;
  // The arrays a tensor field may name as {"array": k} instead of listing its values
  // (parse_model_json_with_arrays); null: such a field is an error.
  const std::vector<std::vector<double>>* arrays = nullptr;
  Status error(const std::string& field, const std::string& what) const;
};

bool has(const json& obj, const char* key);
Result<int64_t> get_int(const json& obj, const char* key, const Where& w);
Result<int64_t> get_int_or(const json& obj, const char* key, int64_t fallback, const Where& w);
Result<uint64_t> get_uint64(const json& obj, const char* key, const Where& w);
Result<double> get_double_or(const json& obj, const char* key, double fallback, const Where& w);
Result<bool> get_bool_or(const json& obj, const char* key, bool fallback, const Where& w);
Result<std::string> get_string(const json& obj, const char* key, const Where& w);
Result<std::vector<int64_t>> get_ints(const json& obj, const char* key, const Where& w);
Result<std::vector<int64_t>> get_ints_or_empty(const json& obj, const char* key, const Where& w);
// An array of nonnegative dims with a bounded element count.
Result<Shape> get_shape(const json& obj, const char* key, const Where& w);
// A tensor of `shape`: nested lists in that shape (as torch.Tensor.tolist() writes) or a flat
// row-major list of the right length. Numbers, or "nan"/"inf"/"-inf".
Result<std::vector<double>> get_tensor(const json& obj, const char* key, const Shape& shape, const Where& w);

// A short quote of a value for an error text, never recursive: a scalar's JSON text (invalid UTF-8
// replaced) cut to `max_chars`, or "an array of {n} elements" / "an object of {n} members".
std::string quote(const json& v, size_t max_chars = 40);

// Nesting deeper than this is refused by the readers (a tensor nests once per axis).
inline constexpr size_t kMaxJsonDepth = 512;

// Writers: numbers with round-trip precision, non-finite values as strings.
json number_json(double v);
json tensor_json(const std::vector<double>& flat, const Shape& shape);

}  // namespace denote::jsonio
