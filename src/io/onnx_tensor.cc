// ONNX TensorProto decoding (typed fields or little-endian raw_data) into host tensors, element
// type names, numpy broadcasting of shapes and attribute access for the importer.
#include <bit>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "denote/io/onnx.h"
#include "onnx_import.h"

namespace denote::onnxio {

using onnx::TensorProto;

bool HostTensor::is_int() const { return !is_real_dtype(dtype) && dtype != TensorProto::FLOAT16 && dtype != TensorProto::BFLOAT16; }

std::string dtype_name(int32_t data_type) {
  if (TensorProto::DataType_IsValid(data_type))
    return TensorProto::DataType_Name(static_cast<TensorProto::DataType>(data_type));
  return fmt::format("unknown element type {}", data_type);
}

bool is_real_dtype(int32_t data_type) {
  return data_type == TensorProto::FLOAT || data_type == TensorProto::DOUBLE;
}

HostTensor int_tensor(Shape shape, std::vector<int64_t> ints) {
  HostTensor t;
  t.shape = std::move(shape);
  t.dtype = TensorProto::INT64;
  for (int64_t v : ints) t.values.push_back(static_cast<double>(v));
  t.ints = std::move(ints);
  return t;
}

std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t db = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (da != db && da != 1 && db != 1) return std::nullopt;
    out[rank - 1 - i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

double half_to_double(uint32_t h) {
  const uint32_t sign = h >> 15, exp = (h >> 10) & 0x1f, frac = h & 0x3ff;
  double v;
  if (exp == 0) v = std::ldexp(static_cast<double>(frac), -24);
  else if (exp == 31) v = frac ? std::nan("") : INFINITY;
  else v = std::ldexp(static_cast<double>(frac | 0x400), static_cast<int>(exp) - 25);
  return sign ? -v : v;
}

double bfloat16_to_double(uint32_t h) { return static_cast<double>(std::bit_cast<float>(h << 16)); }

// Bytes per element in raw_data, 0 for element types we do not decode.
size_t element_size(int32_t dt) {
  switch (dt) {
    case TensorProto::FLOAT: case TensorProto::INT32: case TensorProto::UINT32: return 4;
    case TensorProto::DOUBLE: case TensorProto::INT64: case TensorProto::UINT64: return 8;
    case TensorProto::FLOAT16: case TensorProto::BFLOAT16: case TensorProto::INT16: case TensorProto::UINT16: return 2;
    case TensorProto::INT8: case TensorProto::UINT8: case TensorProto::BOOL: return 1;
    default: return 0;
  }
}

template <class T>
T load(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

// One element of raw_data as (double, exact integer when integral).
std::pair<double, int64_t> raw_element(int32_t dt, const char* p) {
  switch (dt) {
    case TensorProto::FLOAT: return {load<float>(p), 0};
    case TensorProto::DOUBLE: return {load<double>(p), 0};
    case TensorProto::FLOAT16: return {half_to_double(load<uint16_t>(p)), 0};
    case TensorProto::BFLOAT16: return {bfloat16_to_double(load<uint16_t>(p)), 0};
    case TensorProto::INT8: { int64_t v = load<int8_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::UINT8: case TensorProto::BOOL: { int64_t v = load<uint8_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::INT16: { int64_t v = load<int16_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::UINT16: { int64_t v = load<uint16_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::INT32: { int64_t v = load<int32_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::UINT32: { int64_t v = load<uint32_t>(p); return {static_cast<double>(v), v}; }
    case TensorProto::INT64: { int64_t v = load<int64_t>(p); return {static_cast<double>(v), v}; }
    default: {  // UINT64
      uint64_t v = load<uint64_t>(p);
      return {static_cast<double>(v), static_cast<int64_t>(v)};
    }
  }
}

// The typed repeated field that holds `dt`'s values, as a count and an element reader.
Status read_typed(const TensorProto& t, HostTensor& out, int64_t n) {
  const int32_t dt = t.data_type();
  auto push = [&](double d, int64_t i) {
    out.values.push_back(d);
    if (out.is_int()) out.ints.push_back(i);
  };
  int64_t have = 0;
  if (dt == TensorProto::FLOAT) have = t.float_data_size();
  else if (dt == TensorProto::DOUBLE) have = t.double_data_size();
  else if (dt == TensorProto::INT64) have = t.int64_data_size();
  else if (dt == TensorProto::UINT32 || dt == TensorProto::UINT64) have = t.uint64_data_size();
  else have = t.int32_data_size();
  if (have != n) return error_status(fmt::format("has {} values, expected {}", have, n));
  out.values.reserve(static_cast<size_t>(n));  // only after the count matched the data present
  for (int64_t i = 0; i < n; ++i) {
    const int k = static_cast<int>(i);
    if (dt == TensorProto::FLOAT) push(t.float_data(k), 0);
    else if (dt == TensorProto::DOUBLE) push(t.double_data(k), 0);
    else if (dt == TensorProto::INT64) push(static_cast<double>(t.int64_data(k)), t.int64_data(k));
    else if (dt == TensorProto::UINT32 || dt == TensorProto::UINT64)
      push(static_cast<double>(t.uint64_data(k)), static_cast<int64_t>(t.uint64_data(k)));
    else if (dt == TensorProto::FLOAT16) push(half_to_double(static_cast<uint32_t>(t.int32_data(k)) & 0xffff), 0);
    else if (dt == TensorProto::BFLOAT16) push(bfloat16_to_double(static_cast<uint32_t>(t.int32_data(k)) & 0xffff), 0);
    else push(static_cast<double>(t.int32_data(k)), t.int32_data(k));
  }
  return ok_status();
}

}  // namespace

Result<HostTensor> tensor_from_proto(const TensorProto& t) {
  HostTensor out;
  out.dtype = t.data_type();
  const std::string what = fmt::format("tensor '{}'", t.name());
  if (t.data_location() == TensorProto::EXTERNAL)
    return error_status(what + ": external data is not supported (save the model with the weights inside)");
  if (t.has_segment()) return error_status(what + ": segmented tensors are not supported");
  const size_t esize = element_size(out.dtype);
  if (esize == 0) return error_status(what + ": unsupported element type " + dtype_name(out.dtype));
  for (int64_t d : t.dims()) {
    if (d < 0) return error_status(fmt::format("{}: negative dim {}", what, d));
    out.shape.push_back(d);
  }
  auto n = checked_numel(out.shape);
  if (!n.ok() || *n > kMaxImportElements)
    return error_status(fmt::format("{}: dims {} are too large", what, to_string(out.shape)));
  if (!t.has_raw_data()) {
    Status s = read_typed(t, out, *n);
    if (!s.ok()) return s.with_prefix(what + ": ");
    return out;
  }
  const std::string& raw = t.raw_data();
  if (raw.size() != static_cast<size_t>(*n) * esize)
    return error_status(fmt::format("{}: raw_data has {} bytes, expected {} ({} x {})", what, raw.size(),
                                    static_cast<size_t>(*n) * esize, to_string(out.shape), dtype_name(out.dtype)));
  out.values.reserve(static_cast<size_t>(*n));
  for (int64_t i = 0; i < *n; ++i) {
    auto [d, v] = raw_element(out.dtype, raw.data() + static_cast<size_t>(i) * esize);
    out.values.push_back(d);
    if (out.is_int()) out.ints.push_back(v);
  }
  return out;
}

// --- attributes

const onnx::AttributeProto* find_attr(const onnx::NodeProto& n, std::string_view name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

namespace {

Status attr_type_error(const Importer& im, std::string_view name, std::string_view expected) {
  return im.fail(fmt::format("attribute '{}' must be {}", name, expected));
}

}  // namespace

Result<int64_t> attr_int(const Importer& im, std::string_view name, int64_t fallback) {
  const auto* a = find_attr(im.node(), name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::INT) return attr_type_error(im, name, "an INT");
  return a->i();
}

Result<double> attr_float(const Importer& im, std::string_view name, double fallback) {
  const auto* a = find_attr(im.node(), name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::FLOAT) return attr_type_error(im, name, "a FLOAT");
  return static_cast<double>(a->f());
}

Result<std::vector<int64_t>> attr_ints(const Importer& im, std::string_view name) {
  const auto* a = find_attr(im.node(), name);
  if (!a) return std::vector<int64_t>{};
  if (a->type() != onnx::AttributeProto::INTS) return attr_type_error(im, name, "INTS");
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

Result<std::string> attr_string(const Importer& im, std::string_view name, std::string fallback) {
  const auto* a = find_attr(im.node(), name);
  if (!a) return fallback;
  if (a->type() != onnx::AttributeProto::STRING) return attr_type_error(im, name, "a STRING");
  return a->s();
}

Result<int64_t> norm_axis(const Importer& im, int64_t axis, size_t rank, std::string_view what) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r) return im.fail(fmt::format("{} {} is out of range for rank {}", what, axis, r));
  return axis < 0 ? axis + r : axis;
}

}  // namespace denote::onnxio

namespace denote {

Result<OnnxTensor> read_onnx_tensor(std::string_view bytes) {
  onnx::TensorProto t;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return error_status("onnx: not a valid TensorProto (protobuf parse failed)");
  auto h = onnxio::tensor_from_proto(t);
  if (!h.ok()) return h.status().with_prefix("onnx: ");
  OnnxTensor out;
  out.name = t.name();
  out.data_type = t.data_type();
  out.tensor = Tensor<double>(h->shape, std::move(h->values));
  return out;
}

}  // namespace denote
