#include "denote/io/npy.h"

#include <bit>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "denote/base/checked.h"
#include "denote/io/json.h"

namespace denote {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

namespace {

Status npy_error(size_t offset, const std::string& what) {
  return error_status(fmt::format(".npy: at byte {}: {}", offset, what));
}

// Finds the value text of `'key':` in the header dict, up to the next top-level comma or brace.
Result<std::string> dict_value(std::string_view header, std::string_view key, size_t base) {
  const std::string quoted = "'" + std::string(key) + "'";
  size_t at = header.find(quoted);
  if (at == std::string_view::npos) return npy_error(base, fmt::format("header has no {} entry", quoted));
  size_t colon = header.find(':', at + quoted.size());
  if (colon == std::string_view::npos) return npy_error(base + at, "malformed header dict");
  size_t start = colon + 1, end = start;
  int depth = 0;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  std::string v(header.substr(start, end - start));
  v.erase(0, v.find_first_not_of(' '));
  v.erase(v.find_last_not_of(' ') + 1);
  return v;
}

Result<Shape> parse_shape_tuple(const std::string& text, size_t base) {
  if (text.size() < 2 || text.front() != '(' || text.back() != ')')
    return npy_error(base, "shape must be a tuple, got " + text);
  Shape shape;
  size_t i = 1;
  while (i + 1 < text.size()) {
    while (i + 1 < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
    if (i + 1 >= text.size()) break;
    size_t j = i;
    int64_t d = 0;
    while (j < text.size() && text[j] >= '0' && text[j] <= '9') {
      // Bound d before multiplying (d * 10 itself must not overflow).
      if (d > (int64_t{1} << 58)) return npy_error(base, "dimension too large in shape " + text);
      d = d * 10 + (text[j] - '0');
      ++j;
    }
    if (j == i) return npy_error(base, "bad dimension in shape " + text);
    shape.push_back(d);
    i = j;
  }
  return shape;
}

}  // namespace

Result<NpyArray> parse_npy(std::string_view b) {
  if (b.size() < 10 || b.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    return npy_error(0, "not a .npy file (missing \\x93NUMPY magic)");
  const unsigned major = static_cast<unsigned char>(b[6]);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(b[8]) | (static_cast<unsigned char>(b[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (b.size() < 12) return npy_error(8, "truncated header length");
    header_len = 0;
    for (int k = 3; k >= 0; --k) header_len = (header_len << 8) | static_cast<unsigned char>(b[8 + k]);
    header_start = 12;
  } else {
    return npy_error(6, fmt::format("unsupported format version {}", major));
  }
  if (header_len > b.size() - header_start) return npy_error(header_start, "header runs past the end of the file");
  std::string_view header = b.substr(header_start, header_len);
  DENOTE_ASSIGN_OR_RETURN(std::string descr, dict_value(header, "descr", header_start));
  DENOTE_ASSIGN_OR_RETURN(std::string fortran, dict_value(header, "fortran_order", header_start));
  DENOTE_ASSIGN_OR_RETURN(std::string shape_text, dict_value(header, "shape", header_start));
  NpyArray out;
  size_t width = 0;
  if (descr == "'<f8'") {
    out.dtype = NpyDtype::F64;
    width = 8;
  } else if (descr == "'<f4'") {
    out.dtype = NpyDtype::F32;
    width = 4;
  } else if (descr == "'|u1'" || descr == "'<u1'") {
    out.dtype = NpyDtype::U8;
    width = 1;
  } else {
    return npy_error(header_start,
                     "unsupported dtype " + descr + " (expected '<f8' or '<f4', little-endian float, or '|u1')");
  }
  if (fortran == "True") return npy_error(header_start, "Fortran-order arrays are not supported (expected C order)");
  if (fortran != "False")
    return npy_error(header_start, "fortran_order is " + fortran.substr(0, 40) + "; expected True or False");
  DENOTE_ASSIGN_OR_RETURN(out.tensor.shape, parse_shape_tuple(shape_text, header_start));
  auto counted = checked_numel(out.tensor.shape);
  if (!counted.ok()) return npy_error(header_start, counted.message());
  const int64_t count = *counted;
  const size_t data_start = header_start + header_len;
  const size_t available = b.size() - data_start;
  if (static_cast<uint64_t>(count) > available / width)
    return npy_error(data_start, fmt::format("data holds {} bytes, shape {} needs {}", available,
                                             to_string(out.tensor.shape), static_cast<uint64_t>(count) * width));
  if (available != static_cast<size_t>(count) * width)
    return npy_error(data_start, fmt::format("{} trailing bytes after the data", available - count * width));
  out.tensor.data.resize(static_cast<size_t>(count));
  const char* p = b.data() + data_start;
  for (int64_t i = 0; i < count; ++i) {
    if (width == 8) {
      std::memcpy(&out.tensor.data[i], p + i * 8, 8);
    } else if (width == 1) {
      out.tensor.data[i] = static_cast<unsigned char>(p[i]);
    } else {
      float f;
      std::memcpy(&f, p + i * 4, 4);
      out.tensor.data[i] = f;
    }
  }
  return out;
}

std::string format_npy(const Tensor<double>& t, NpyDtype dtype) {
  std::string shape = "(";
  for (size_t i = 0; i < t.shape.size(); ++i) shape += std::to_string(t.shape[i]) + (t.shape.size() == 1 ? "," : (i + 1 < t.shape.size() ? ", " : ""));
  shape += ")";
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 dtype == NpyDtype::F64 ? "<f8" : dtype == NpyDtype::F32 ? "<f4" : "|u1", shape);
  // Pad with spaces so that data starts on a 64-byte boundary; the header ends with '\n'.
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(dict.size() & 0xff);
  out += static_cast<char>((dict.size() >> 8) & 0xff);
  out += dict;
  for (double v : t.data) {
    if (dtype == NpyDtype::F64) {
      out.append(reinterpret_cast<const char*>(&v), 8);
    } else if (dtype == NpyDtype::U8) {
      out += static_cast<char>(static_cast<uint8_t>(v));
    } else {
      float f = static_cast<float>(v);
      out.append(reinterpret_cast<const char*>(&f), 4);
    }
  }
  return out;
}

Result<NpyArray> read_npy_file(const std::string& path) {
  DENOTE_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path));
  auto a = parse_npy(bytes);
  if (!a.ok()) return a.status().with_prefix(path + ": ");
  return a;
}

Status write_npy_file(const std::string& path, const Tensor<double>& t, NpyDtype dtype) {
  std::ofstream out(path, std::ios::binary);
  if (!out) return error_status("cannot write file '" + path + "'");
  out << format_npy(t, dtype);
  return out ? ok_status() : error_status("error writing file '" + path + "'");
}

}  // namespace denote
