// IBP's rule of mx_cast (src/bounds/ibp_mx.h).
#include "bounds/ibp_mx.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "denote/tensor/mx.h"

namespace denote::ibp {

namespace {

struct Block {
  int64_t first = 0, count = 0, stride = 1;  // element k of the block is first + k * stride
};

// One block's boxes in place.
Status block_boxes(const MxFormat& f, const Block& b, std::vector<double>& lo, std::vector<double>& hi) {
  double a_lo = 0, a_hi = 0;
  for (int64_t k = 0; k < b.count; ++k) {
    const auto i = static_cast<size_t>(b.first + k * b.stride);
    if (!std::isfinite(lo[i]) || !std::isfinite(hi[i])) return error_status("mx_cast: a box is not finite");
    const double smallest = lo[i] > 0 ? lo[i] : hi[i] < 0 ? -hi[i] : 0.0;
    a_lo = std::max(a_lo, smallest), a_hi = std::max({a_hi, std::fabs(lo[i]), std::fabs(hi[i])});
  }
  const int64_t e_lo = mx_shared_exponent(f, a_lo), e_hi = mx_shared_exponent(f, a_hi);
  if (e_hi - e_lo >= kMxMaxExponents)
    return error_status(fmt::format("mx_cast: a block's shared exponent ranges over {} values (at most {})",
                                    e_hi - e_lo + 1, kMxMaxExponents));
  for (int64_t k = 0; k < b.count; ++k) {
    const auto i = static_cast<size_t>(b.first + k * b.stride);
    double l = INFINITY, h = -INFINITY;
    for (int64_t e = e_lo; e <= e_hi; ++e)
      l = std::min(l, mx_round_at_scale(f, lo[i], e)), h = std::max(h, mx_round_at_scale(f, hi[i], e));
    lo[i] = l, hi[i] = h;
  }
  return ok_status();
}

}  // namespace

Status mx_cast_boxes(const MxCastAttrs& a, const Shape& shape, std::vector<double>& lo, std::vector<double>& hi) {
  DENOTE_ASSIGN_OR_RETURN(const MxFormat f, parse_mx_format(a.format));
  DENOTE_RETURN_IF_ERROR(mx_check_block(a.block));
  const Shape s = shape.empty() ? Shape{1} : shape;
  DENOTE_ASSIGN_OR_RETURN(const int64_t axis, mx_normalise_axis(s, shape.empty() ? 0 : a.axis));
  const int64_t outer = numel(Shape(s.begin(), s.begin() + axis)), n = s[static_cast<size_t>(axis)];
  const int64_t inner = numel(Shape(s.begin() + axis + 1, s.end()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j)
      for (int64_t k0 = 0; k0 < n; k0 += a.block)
        DENOTE_RETURN_IF_ERROR(
            block_boxes(f, Block{(o * n + k0) * inner + j, std::min(a.block, n - k0), inner}, lo, hi));
  return ok_status();
}

}  // namespace denote::ibp
