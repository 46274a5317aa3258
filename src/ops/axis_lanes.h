// Internal: strided walks along one axis of a row-major tensor, for the reductions and the
// normalizations. A shape splits around an axis into outer x extent x inner; each (outer, inner)
// pair is a lane, the 1-D run of `extent` entries along the axis, `inner` apart in memory.
//
//   AxisLanes l = axis_lanes({2, 3, 4}, 1);   // outer 2, extent 3, inner 4: 8 lanes
//   l.at(5, 2) == l.base(5) + 2 * 4;          // lane 5 is (outer 1, inner 1): base 13
#pragma once

#include <cstdint>

#include "denote/tensor/shape.h"

namespace denote::rules {

struct AxisLanes {
  int64_t outer = 1, extent = 1, inner = 1;

  int64_t count() const { return outer * inner; }
  // Flat index of the first entry of lane `lane` (lanes are numbered outer-major, so a reduction
  // along the axis writes lane l's result at flat index l of the axis-dropped shape).
  int64_t base(int64_t lane) const { return (lane / inner) * extent * inner + lane % inner; }
  // Flat index of entry k of lane `lane`.
  int64_t at(int64_t lane, int64_t k) const { return base(lane) + k * inner; }
};

// Lanes along `axis` (0 <= axis < rank).
inline AxisLanes axis_lanes(const Shape& s, int64_t axis) {
  AxisLanes l;
  for (int64_t d = 0; d < axis; ++d) l.outer *= s[d];
  l.extent = s[axis];
  for (size_t d = static_cast<size_t>(axis) + 1; d < s.size(); ++d) l.inner *= s[d];
  return l;
}

// Lanes over the whole suffix s[axis:] (contiguous rows, inner 1), as layernorm normalizes.
inline AxisLanes suffix_lanes(const Shape& s, int64_t axis) {
  AxisLanes l;
  for (int64_t d = 0; d < axis; ++d) l.outer *= s[d];
  l.extent = 1;
  for (size_t d = static_cast<size_t>(axis); d < s.size(); ++d) l.extent *= s[d];
  return l;
}

}  // namespace denote::rules
