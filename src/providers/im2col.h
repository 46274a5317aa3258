// Internal: conv operands for the providers' prepared conv kernels: the window geometry of a conv
// node and im2col (the GEMM operand col[channels * taps, out_vol]) by row copies for rank 2 or a
// gather table for other ranks; padded taps read as zeros.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "../ops/window_eval.h"
#include "denote/plan/prepared.h"

namespace denote::prepared {

// The conv record of a prepared conv node with one parent, when the reference rule's checks accept it
// and every weight is finite (padded taps would multiply 0 by an infinite one); null otherwise (the
// node then gets no prepared form, and the reference kernel reports the error).
template <class S>
const ConvRecord<S>* usable_conv_record(const PrepareArgs<S>& a) {
  if (a.parent_shapes.size() != 1) return nullptr;
  const auto* rec = find_record(a.payload.conv, a.node.id);
  if (!rules::check_conv_record(a.node, rec, a.parent_shapes[0]).ok()) return nullptr;
  for (const S& v : rec->weight)
    if (!std::isfinite(v)) return nullptr;
  return rec;
}

// How a conv chunk builds its GEMM operand col[gin * kvol, out_vol] from one group's input channels.
struct ConvGeometry {
  rules::Window w;
  int64_t in_vol = 0, out_vol = 0, k_vol = 0;
  bool direct = false;            // 1x1, stride 1, no padding: col is the input itself
  bool two_d = false;             // rank 2: row copies
  std::vector<int64_t> gather;    // other ranks: gather[kk * out_vol + p], -1 on padding
};

// Rank-2 im2col: for every input channel and tap, each output row is a shifted (strided) copy of one
// input row with zeros where the tap falls on padding.
template <class S>
void im2col_2d(const ConvGeometry& g, const S* x, int64_t channels, S* col) {
  const int64_t H = g.w.in[0], W = g.w.in[1], OH = g.w.out[0], OW = g.w.out[1];
  const int64_t KH = g.w.kernel[0], KW = g.w.kernel[1], sh = g.w.stride[0], sw = g.w.stride[1];
  const int64_t ph = g.w.pad_before[0], pw = g.w.pad_before[1], dh = g.w.dilation[0], dw = g.w.dilation[1];
  for (int64_t ic = 0; ic < channels; ++ic) {
    const S* xc = x + ic * H * W;
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        S* dst = col + ((ic * KH + kh) * KW + kw) * OH * OW;
        const int64_t off = kw * dw - pw;
        const int64_t lo = std::min(OW, off >= 0 ? 0 : (-off + sw - 1) / sw);
        const int64_t hi = std::max(lo, W - 1 - off < 0 ? 0 : std::min(OW, (W - 1 - off) / sw + 1));
        for (int64_t oh = 0; oh < OH; ++oh) {
          S* row = dst + oh * OW;
          const int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= H) {
            std::fill(row, row + OW, S(0));
            continue;
          }
          const S* src = xc + ih * W + off;
          std::fill(row, row + lo, S(0));
          if (sw == 1) std::memcpy(row + lo, src + lo, static_cast<size_t>(hi - lo) * sizeof(S));
          else
            for (int64_t ow = lo; ow < hi; ++ow) row[ow] = src[ow * sw];
          std::fill(row + hi, row + OW, S(0));
        }
      }
  }
}

template <class S>
void im2col_gather(const ConvGeometry& g, const S* x, int64_t channels, S* col) {
  const size_t n = g.gather.size();
  for (int64_t ic = 0; ic < channels; ++ic) {
    const S* xs = x + ic * g.in_vol;
    S* block = col + ic * static_cast<int64_t>(n);
    for (size_t i = 0; i < n; ++i) block[i] = g.gather[i] < 0 ? S(0) : xs[g.gather[i]];
  }
}

inline ConvGeometry conv_geometry(const ConvConfig& c, const Shape& in, const Shape& out) {
  ConvGeometry g;
  g.w = rules::conv_window(c, in, out);
  g.in_vol = numel(g.w.in);
  g.out_vol = numel(g.w.out);
  g.k_vol = numel(g.w.kernel);
  bool unit = g.w.in == g.w.out;
  for (size_t i = 0; i < g.w.kernel.size(); ++i)
    unit = unit && g.w.kernel[i] == 1 && g.w.stride[i] == 1 && g.w.pad_before[i] == 0;
  g.direct = unit;
  g.two_d = !unit && g.w.in.size() == 2;
  if (!g.direct && !g.two_d) {
    g.gather.assign(static_cast<size_t>(g.k_vol * g.out_vol), -1);
    rules::for_each_window(g.w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
      for (const rules::Tap& t : taps) g.gather[static_cast<size_t>(t.k * g.out_vol + p)] = t.in;
    });
  }
  return g;
}

}  // namespace denote::prepared
