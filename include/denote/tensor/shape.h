// Shape: the dims of a tensor, outermost first. `[]` is the scalar shape (one element).
//
//   Shape s{2, 3, 4};
//   to_string(s) == "[2, 3, 4]";  checked_numel(s) -> 24
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "denote/base/status.h"

namespace denote {

using Shape = std::vector<int64_t>;

// "[2, 3, 4]"; the scalar shape prints as "[]".
std::string to_string(const Shape& shape);

// Comma list without brackets, for id lists: "1, 2".
std::string join_ints(const std::vector<int64_t>& values);

// Product of the dims; an error for a negative dim or a count above kMaxElements.
Result<int64_t> checked_numel(const Shape& shape);

// Product of the dims for a shape already known to be valid (no checks).
int64_t numel(const Shape& shape);

// Product of the dims [first, last) of a valid shape (no checks, no allocation).
inline int64_t numel(Shape::const_iterator first, Shape::const_iterator last) {
  int64_t n = 1;
  for (; first != last; ++first) n *= *first;
  return n;
}

// Row-major strides of a valid shape.
std::vector<int64_t> row_major_strides(const Shape& shape);

}  // namespace denote
