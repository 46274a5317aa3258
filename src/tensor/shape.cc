#include "denote/tensor/shape.h"

#include "denote/base/checked.h"

namespace denote {

std::string join_ints(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(values[i]);
  }
  return out;
}

std::string to_string(const Shape& shape) { return "[" + join_ints(shape) + "]"; }

Result<int64_t> checked_numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return error_status("negative dimension " + std::to_string(d) + " in shape " + to_string(shape));
    auto next = checked_mul(n, d);
    if (!next) return error_status("element count of shape " + to_string(shape) + " overflows");
    n = *next;
  }
  return n;
}

int64_t numel(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::vector<int64_t> row_major_strides(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i > 1; --i) strides[i - 2] = strides[i - 1] * shape[i - 1];
  return strides;
}

}  // namespace denote
