// Internal: strided index arithmetic shared by the layout, contraction and window rules. A
// multi-index is advanced like an odometer (last axis fastest), so no rule recurses over axes.
//
//   Shape out{2, 3};
//   std::vector<int64_t> src = {1, 2};            // source strides of each output axis
//   auto data = strided_gather(x.data, 0, out, src);   // transposes a [3, 2] tensor
#pragma once

#include <cstdint>
#include <vector>

#include "denote/tensor/shape.h"

namespace denote::rules {

// Advances `idx` (row-major over `shape`) by one; returns false after the last index.
inline bool next_index(std::vector<int64_t>& idx, const Shape& shape) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) return true;
    idx[i] = 0;
  }
  return false;
}

// Per-axis strides (in elements) with which a value of shape `from` is read when broadcast,
// right-aligned, to shape `to`: axes `from` lacks or has extent 1 get stride 0.
inline std::vector<int64_t> broadcast_strides(const Shape& from, const Shape& to) {
  std::vector<int64_t> out(to.size(), 0);
  const std::vector<int64_t> src = row_major_strides(from);
  const size_t shift = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1) out[shift + i] = src[i];
  return out;
}

// Advances `idx` like next_index and keeps `offset` = base + sum(idx[i] * strides[i]) up to date.
inline bool next_index(std::vector<int64_t>& idx, const Shape& shape, const std::vector<int64_t>& strides,
                       int64_t& offset) {
  for (size_t i = idx.size(); i-- > 0;) {
    if (++idx[i] < shape[i]) {
      offset += strides[i];
      return true;
    }
    offset -= (shape[i] - 1) * strides[i];
    idx[i] = 0;
  }
  return false;
}

// The element offsets base + sum(idx[i] * strides[i]) for every idx of `shape`, in row-major order.
inline std::vector<int64_t> strided_offsets(int64_t base, const Shape& shape, const std::vector<int64_t>& strides) {
  std::vector<int64_t> offsets;
  const int64_t n = numel(shape);
  offsets.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = base;
  for (int64_t k = 0; k < n; ++k) {
    offsets.push_back(off);
    next_index(idx, shape, strides, off);
  }
  return offsets;
}

// Copies src[base + sum(idx[i] * strides[i])] for every idx of `shape`, in row-major order.
template <class S>
std::vector<S> strided_gather(const std::vector<S>& src, int64_t base, const Shape& shape,
                              const std::vector<int64_t>& strides) {
  const int64_t n = numel(shape);
  std::vector<S> out;
  out.reserve(static_cast<size_t>(n));
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t off = base;
  for (int64_t k = 0; k < n; ++k) {
    out.push_back(src[static_cast<size_t>(off)]);
    next_index(idx, shape, strides, off);
  }
  return out;
}

}  // namespace denote::rules
