// Internal: sliding-window index arithmetic shared by conv, max_pool and avg_pool. A Window
// describes the spatial axes; for_each_window visits the output positions in row-major order and
// hands each the taps (kernel position, input offset) that fall inside the unpadded input, in
// row-major kernel order. Only in-range taps are enumerated, so a huge padded kernel costs no more
// than the input it covers. No recursion: every walk is an odometer.
//
//   Window w{{5}, {5}, {3}, {1}, {1}, {1}, {1}};   // in, out, kernel, stride, pad before, dilation, kernel strides
//   for_each_window(w, [&](int64_t p, const std::vector<Tap>& taps) { ... });
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "denote/tensor/shape.h"
#include "strided.h"

namespace denote::rules {

struct Window {
  Shape in, out, kernel;                  // spatial extents
  std::vector<int64_t> stride, pad_before, dilation;
  std::vector<int64_t> kernel_strides;    // row-major strides of `kernel`, or all 0 when not needed
};

struct Tap {
  int64_t k;   // flat kernel position (0 when the window has no kernel strides)
  int64_t in;  // flat offset into the spatial block of the input
};

// The kernel indices [lo, hi) of one axis whose input position start + kk * d lies in [0, in).
inline void valid_kernel_range(int64_t start, int64_t d, int64_t k, int64_t in, int64_t& lo, int64_t& hi) {
  lo = start >= 0 ? 0 : (-start + d - 1) / d;
  hi = start > in - 1 ? 0 : std::min(k, (in - 1 - start) / d + 1);
  if (hi < lo) hi = lo;
}

// Fills `taps` for the window whose first (padded) position per axis is `start`.
inline void window_taps(const Window& w, const std::vector<int64_t>& start, const std::vector<int64_t>& in_strides,
                        std::vector<Tap>& taps) {
  taps.clear();
  const size_t r = w.in.size();
  std::vector<int64_t> lo(r), hi(r);
  Shape extent(r);
  for (size_t i = 0; i < r; ++i) {
    valid_kernel_range(start[i], w.dilation[i], w.kernel[i], w.in[i], lo[i], hi[i]);
    extent[i] = hi[i] - lo[i];
  }
  const int64_t count = numel(extent);
  std::vector<int64_t> idx(r, 0);
  for (int64_t t = 0; t < count; ++t) {
    Tap tap{0, 0};
    for (size_t i = 0; i < r; ++i) {
      const int64_t kk = lo[i] + idx[i];
      tap.k += kk * w.kernel_strides[i];
      tap.in += (start[i] + kk * w.dilation[i]) * in_strides[i];
    }
    taps.push_back(tap);
    next_index(idx, extent);
  }
}

// Calls f(p, taps) for every output position p (flat, row-major over w.out).
template <class F>
void for_each_window(const Window& w, F&& f) {
  const int64_t count = numel(w.out);
  const std::vector<int64_t> in_strides = row_major_strides(w.in);
  std::vector<int64_t> pos(w.out.size(), 0), start(w.out.size());
  std::vector<Tap> taps;
  for (int64_t p = 0; p < count; ++p) {
    for (size_t i = 0; i < pos.size(); ++i) start[i] = pos[i] * w.stride[i] - w.pad_before[i];
    window_taps(w, start, in_strides, taps);
    f(p, taps);
    next_index(pos, w.out);
  }
}

}  // namespace denote::rules
