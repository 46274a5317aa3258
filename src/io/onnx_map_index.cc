// ONNX -> IR mapping of the ops that select, repeat or rearrange elements with indices known at
// import time: Slice, Gather, GatherElements, GatherND, Split, Pad, Tile, DepthToSpace,
// SpaceToDepth, Trilu, Compress, ReverseSequence, CumSum. Each is a few `gather` nodes (one axis,
// constant indices), `concat` with a fill row, `reshape` and `permute` (src/io/onnx_index.h), so the
// value of every output element is exactly one input element or the fill; on constants the same
// moves happen on the host. CumSum is a left fold of `add` over gathered rows (numpy's order).
#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "onnx_index.h"

namespace denote::onnxio {
namespace {

Result<int64_t> scalar_int(Importer& im, int i, std::string_view what) {
  const HostTensor* c = im.const_input(i);
  if (!c || !c->is_int() || c->ints.size() != 1)
    return im.fail(fmt::format("{} must be a constant integer scalar (a computed one is not supported)", what));
  return c->ints[0];
}

std::vector<int64_t> iota_from(int64_t from, int64_t to) {
  std::vector<int64_t> v;
  for (int64_t i = from; i < to; ++i) v.push_back(i);
  return v;
}

// Slice and Pad name each axis at most once (ONNX: "repeated axes are not allowed").
Status check_distinct_axes(Importer& im, const std::vector<int64_t>& axes, size_t rank, const char* op) {
  std::vector<bool> seen(rank, false);
  for (int64_t a : axes) {
    DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a, rank, "axes"));
    if (seen[static_cast<size_t>(axis)]) return im.fail(fmt::format("{} axes name axis {} twice", op, axis));
    seen[static_cast<size_t>(axis)] = true;
  }
  return ok_status();
}

// ---- Slice: per axis the ONNX clamping rules, then the index list start, start+step, ...
Status map_slice(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  const int64_t r = static_cast<int64_t>(x.shape.size());
  std::vector<int64_t> starts, ends, axes, steps;
  if (im.opset() < 10) {
    DENOTE_ASSIGN_OR_RETURN(starts, attr_ints(im, "starts"));
    DENOTE_ASSIGN_OR_RETURN(ends, attr_ints(im, "ends"));
    DENOTE_ASSIGN_OR_RETURN(axes, attr_ints(im, "axes"));
  } else {
    DENOTE_ASSIGN_OR_RETURN(auto s, const_int_list(im, 1, "Slice starts"));
    DENOTE_ASSIGN_OR_RETURN(auto e, const_int_list(im, 2, "Slice ends"));
    DENOTE_ASSIGN_OR_RETURN(auto a, const_int_list(im, 3, "Slice axes"));
    DENOTE_ASSIGN_OR_RETURN(auto st, const_int_list(im, 4, "Slice steps"));
    if (!s || !e) return im.fail("Slice needs starts and ends");
    starts = *s, ends = *e;
    if (a) axes = *a;
    if (st) steps = *st;
  }
  if (axes.empty()) axes = iota_from(0, static_cast<int64_t>(starts.size()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    return im.fail("starts, ends, axes and steps must have the same length");
  DENOTE_RETURN_IF_ERROR(check_distinct_axes(im, axes, static_cast<size_t>(r), "Slice"));
  for (size_t k = 0; k < starts.size(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, axes[k], static_cast<size_t>(r), "axes"));
    const int64_t d = x.shape[static_cast<size_t>(axis)], step = steps[k];
    if (step == 0) return im.fail("a step is 0");
    int64_t s = starts[k], e = ends[k];
    // Negative values count from the end (INT64_MIN stays far below -d); then the ONNX clamps:
    // start into [0, d] (step > 0) or [0, d - 1] (step < 0), end into [0, d] or [-1, d - 1].
    if (s < 0) s = s < -d ? -1 : s + d;
    if (e < 0) e = e < -d ? -1 : e + d;
    std::vector<int64_t> idx;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, d), e = std::clamp<int64_t>(e, 0, d);
      for (int64_t i = s; i < e;) {
        idx.push_back(i);
        if (__builtin_add_overflow(i, step, &i)) break;
      }
    } else if (d > 0) {
      s = std::clamp<int64_t>(s, 0, d - 1), e = std::clamp<int64_t>(e, -1, d - 1);
      for (int64_t i = s; i > e;) {
        idx.push_back(i);
        if (__builtin_add_overflow(i, step, &i)) break;
      }
    }
    DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), axis, std::move(idx)));
  }
  return set_val(im, 0, std::move(x));
}

// Constant indices of input i, negative ones counted from `extent`; an error outside [0, extent).
Result<HostTensor> index_input(Importer& im, int i, int64_t extent, std::string_view what) {
  const HostTensor* c = im.const_input(i);
  if (!c || !c->is_int())
    return im.fail(fmt::format("{} must be a constant integer tensor (computed indices are not supported)", what));
  HostTensor t = *c;
  for (int64_t& v : t.ints) {
    if (v < -extent || v >= extent) return im.fail(fmt::format("{}: index {} is outside [-{}, {})", what, v, extent, extent));
    if (v < 0) v += extent;
  }
  return t;
}

// ---- Gather: data.shape[:axis] + indices.shape + data.shape[axis+1:]
Status map_gather(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, x.shape.size(), "axis"));
  const size_t a = static_cast<size_t>(axis);
  DENOTE_ASSIGN_OR_RETURN(HostTensor ind, index_input(im, 1, x.shape[a], "Gather indices"));
  Shape out(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(a));
  out.insert(out.end(), ind.shape.begin(), ind.shape.end());
  out.insert(out.end(), x.shape.begin() + static_cast<std::ptrdiff_t>(a) + 1, x.shape.end());
  DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), axis, ind.ints));
  DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), out));
  return set_val(im, 0, std::move(x));
}

// Calls f(position) for each row-major index of `shape`.
template <class F>
void each_index(const Shape& shape, F&& f) {
  const int64_t n = numel(shape);
  std::vector<int64_t> idx(shape.size(), 0);
  for (int64_t j = 0; j < n; ++j) {
    f(idx);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++idx[i] < shape[i]) break;
      idx[i] = 0;
    }
  }
}

// ---- GatherElements: out[i] = data[i with axis replaced by indices[i]]
Status map_gather_elements(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, x.shape.size(), "axis"));
  const size_t a = static_cast<size_t>(axis);
  DENOTE_ASSIGN_OR_RETURN(HostTensor ind, index_input(im, 1, x.shape[a], "GatherElements indices"));
  if (ind.shape.size() != x.shape.size()) return im.fail("indices must have the rank of data");
  const std::vector<int64_t> st = strides_of(x.shape);
  std::vector<int64_t> flat;
  size_t j = 0;
  bool fits = true;
  each_index(ind.shape, [&](const std::vector<int64_t>& idx) {
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) {
      const int64_t v = i == a ? ind.ints[j] : idx[i];
      fits = fits && v < x.shape[i];
      off += v * st[i];
    }
    flat.push_back(off);
    ++j;
  });
  if (!fits) return im.fail("indices has a dim larger than data's");
  DENOTE_ASSIGN_OR_RETURN(x, take_flat(im, std::move(x), ind.shape, std::move(flat)));
  return set_val(im, 0, std::move(x));
}

// ---- GatherND (batch_dims b): indices [..., k] address data[batch..., i1..ik, rest...]
Status map_gather_nd(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t b, attr_int(im, "batch_dims", 0));
  const HostTensor* c = im.const_input(1);
  if (!c || !c->is_int() || c->shape.empty())
    return im.fail("GatherND indices must be a constant integer tensor (computed indices are not supported)");
  const Shape& is = c->shape;
  const int64_t k = is.back(), r = static_cast<int64_t>(x.shape.size());
  if (b < 0 || b >= static_cast<int64_t>(is.size()) || b + k > r) return im.fail("batch_dims / index depth do not fit data");
  Shape out(is.begin(), is.end() - 1);
  out.insert(out.end(), x.shape.begin() + b + k, x.shape.end());
  const int64_t rest = dims_product(x.shape, static_cast<size_t>(b + k), x.shape.size());
  const std::vector<int64_t> st = strides_of(x.shape);
  const int64_t tuples = dims_product(is, 0, is.size() - 1);
  const int64_t per_batch = dims_product(is, static_cast<size_t>(b), is.size() - 1);
  std::vector<int64_t> flat;
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0, bi = t / std::max<int64_t>(per_batch, 1);
    for (int64_t d = b; d-- > 0;) {  // the batch position of tuple t
      off += (bi % x.shape[static_cast<size_t>(d)]) * st[static_cast<size_t>(d)];
      bi /= x.shape[static_cast<size_t>(d)];
    }
    for (int64_t q = 0; q < k; ++q) {
      const int64_t dim = x.shape[static_cast<size_t>(b + q)];
      int64_t v = c->ints[static_cast<size_t>(t * k + q)];
      if (v < -dim || v >= dim) return im.fail(fmt::format("GatherND index {} is outside [-{}, {})", v, dim, dim));
      off += (v < 0 ? v + dim : v) * st[static_cast<size_t>(b + q)];
    }
    for (int64_t e = 0; e < rest; ++e) flat.push_back(off + e);
  }
  DENOTE_ASSIGN_OR_RETURN(x, take_flat(im, std::move(x), out, std::move(flat)));
  return set_val(im, 0, std::move(x));
}

// ---- Split: consecutive ranges along the axis (sizes from `split`, else equal parts)
Status map_split(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, x.shape.size(), "axis"));
  const int64_t d = x.shape[static_cast<size_t>(axis)];
  const int64_t n = im.node().output_size();
  std::vector<int64_t> sizes;
  if (im.opset() < 13) {
    DENOTE_ASSIGN_OR_RETURN(sizes, attr_ints(im, "split"));
  } else {
    DENOTE_ASSIGN_OR_RETURN(auto s, const_int_list(im, 1, "Split split"));
    if (s) sizes = *s;
  }
  if (sizes.empty()) {
    DENOTE_ASSIGN_OR_RETURN(int64_t parts, attr_int(im, "num_outputs", n));
    if (parts <= 0) return im.fail("Split needs at least one output");
    const int64_t chunk = (d + parts - 1) / parts;
    if (!find_attr(im.node(), "num_outputs") && d % parts != 0)
      return im.fail(fmt::format("axis extent {} does not split into {} equal parts", d, parts));
    for (int64_t k = 0; k < parts; ++k) sizes.push_back(std::max<int64_t>(0, std::min(chunk, d - k * chunk)));
  }
  if (static_cast<int64_t>(sizes.size()) != n) return im.fail(fmt::format("{} split sizes for {} outputs", sizes.size(), n));
  int64_t at = 0;
  for (int64_t k = 0; k < n; ++k) {
    if (sizes[static_cast<size_t>(k)] < 0 || at + sizes[static_cast<size_t>(k)] > d) return im.fail("split sizes exceed the axis");
    DENOTE_ASSIGN_OR_RETURN(Val part, gather_axis(im, x, axis, iota_from(at, at + sizes[static_cast<size_t>(k)])));
    at += sizes[static_cast<size_t>(k)];
    DENOTE_RETURN_IF_ERROR(set_val(im, static_cast<int>(k), std::move(part)));
  }
  if (at != d) return im.fail("split sizes do not sum to the axis extent");
  return ok_status();
}

// The source row of padded position j (in [-before, d + after)) for the non-constant modes.
int64_t pad_source(int64_t j, int64_t d, const std::string& mode) {
  if (j >= 0 && j < d) return j;
  if (mode == "edge") return j < 0 ? 0 : d - 1;
  if (mode == "wrap") return ((j % d) + d) % d;
  if (d == 1) return 0;  // reflect
  const int64_t period = 2 * (d - 1);
  int64_t m = ((j % period) + period) % period;
  return m < d ? m : period - m;
}

// ---- Pad: constant (a fill row), reflect, edge, wrap; negative pads crop
Status map_pad(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  const size_t r = x.shape.size();
  DENOTE_ASSIGN_OR_RETURN(std::string mode, attr_string(im, "mode", "constant"));
  std::vector<int64_t> pads, axes;
  double value = 0;
  if (im.opset() < 11) {
    DENOTE_ASSIGN_OR_RETURN(pads, attr_ints(im, im.opset() < 2 ? "paddings" : "pads"));
    DENOTE_ASSIGN_OR_RETURN(value, attr_float(im, "value", 0.0));
  } else {
    DENOTE_ASSIGN_OR_RETURN(auto p, const_int_list(im, 1, "Pad pads"));
    if (!p) return im.fail("Pad needs pads");
    pads = *p;
    if (im.has_input(2)) {
      const HostTensor* v = im.const_input(2);
      if (!v || v->values.size() != 1)
        return im.fail("the constant_value must be a constant scalar (a computed one is not supported)");
      value = v->values[0];
    }
    DENOTE_ASSIGN_OR_RETURN(auto a, const_int_list(im, 3, "Pad axes"));
    if (a) axes = *a;
  }
  if (axes.empty()) axes = iota_from(0, static_cast<int64_t>(r));
  if (pads.size() != 2 * axes.size()) return im.fail(fmt::format("pads has {} entries, expected {}", pads.size(), 2 * axes.size()));
  if (mode != "constant" && mode != "reflect" && mode != "edge" && mode != "wrap")
    return im.fail("mode '" + mode + "' is not supported");
  DENOTE_RETURN_IF_ERROR(check_distinct_axes(im, axes, r, "Pad"));
  for (size_t k = 0; k < axes.size(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, axes[k], r, "axes"));
    const int64_t d = x.shape[static_cast<size_t>(axis)], before = pads[k], after = pads[k + axes.size()];
    int64_t len = 0;
    if (__builtin_add_overflow(d, before, &len) || __builtin_add_overflow(len, after, &len) ||
        len > kMaxSynthesizedElements)
      return im.fail(fmt::format("pads {} and {} on axis {} of length {} give more than {} elements", before, after,
                                 axis, d, kMaxSynthesizedElements));
    if (len < 0) return im.fail("pads crop more than the axis holds");
    if (mode != "constant" && d == 0 && before + after > 0) return im.fail("cannot " + mode + "-pad an empty axis");
    if (mode == "reflect" && d > 1 && (before > d - 1 || after > d - 1)) {
      // numpy reflects repeatedly; ONNX (1.12 reference: numpy.pad) does the same
    }
    std::vector<int64_t> idx;
    for (int64_t j = -before; j < d + after; ++j)
      idx.push_back(mode == "constant" ? (j >= 0 && j < d ? j : -1) : pad_source(j, d, mode));
    DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), axis, std::move(idx), value));
  }
  return set_val(im, 0, std::move(x));
}

// ---- Tile: each axis read `repeats` times over
Status map_tile(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(auto reps, const_int_list(im, 1, "Tile repeats"));
  if (!reps || reps->size() != x.shape.size()) return im.fail("repeats must have one entry per axis");
  for (size_t a = 0; a < reps->size(); ++a) {
    const int64_t d = x.shape[a], k = (*reps)[a];
    if (k < 0) return im.fail("repeats must be >= 0");
    int64_t len = 0;
    if (__builtin_mul_overflow(d, k, &len) || len > kMaxSynthesizedElements)
      return im.fail(fmt::format("repeats {} of axis {} (length {}) give more than {} elements", k, a, d,
                                 kMaxSynthesizedElements));
    std::vector<int64_t> idx;
    for (int64_t t = 0; t < k; ++t)
      for (int64_t i = 0; i < d; ++i) idx.push_back(i);
    DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), static_cast<int64_t>(a), std::move(idx)));
  }
  return set_val(im, 0, std::move(x));
}

// ---- DepthToSpace (DCR / CRD) and SpaceToDepth: reshape, permute, reshape
template <bool kToSpace>
Status map_depth_space(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t bs, attr_int(im, "blocksize", 0));
  if (x.shape.size() != 4 || bs <= 0) return im.fail("needs a 4-D input and blocksize > 0");
  const int64_t n = x.shape[0], c = x.shape[1], h = x.shape[2], w = x.shape[3];
  if (kToSpace) {
    DENOTE_ASSIGN_OR_RETURN(std::string mode, attr_string(im, "mode", "DCR"));
    if (c % (bs * bs) != 0) return im.fail("channels are not a multiple of blocksize^2");
    const int64_t cc = c / (bs * bs);
    const bool dcr = mode == "DCR";
    if (!dcr && mode != "CRD") return im.fail("mode '" + mode + "' is not supported");
    DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), dcr ? Shape{n, bs, bs, cc, h, w} : Shape{n, cc, bs, bs, h, w}));
    DENOTE_ASSIGN_OR_RETURN(x, permute_val(im, std::move(x), dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                                                                  : std::vector<int64_t>{0, 1, 4, 2, 5, 3}));
    DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), Shape{n, cc, h * bs, w * bs}));
  } else {
    if (h % bs != 0 || w % bs != 0) return im.fail("spatial dims are not multiples of blocksize");
    DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), Shape{n, c, h / bs, bs, w / bs, bs}));
    DENOTE_ASSIGN_OR_RETURN(x, permute_val(im, std::move(x), {0, 3, 5, 1, 2, 4}));
    DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), Shape{n, c * bs * bs, h / bs, w / bs}));
  }
  return set_val(im, 0, std::move(x));
}

// ---- Trilu: the kept triangle of the last two axes, zeros elsewhere (a fill, not a product)
Status map_trilu(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t upper, attr_int(im, "upper", 1));
  int64_t k = 0;
  if (im.has_input(1)) { DENOTE_ASSIGN_OR_RETURN(k, scalar_int(im, 1, "Trilu k")); }
  const size_t r = x.shape.size();
  if (r < 2) return im.fail("needs rank >= 2");
  const int64_t rows = x.shape[r - 2], cols = x.shape[r - 1];
  std::vector<int64_t> flat;
  int64_t j = 0;
  each_index(x.shape, [&](const std::vector<int64_t>& idx) {
    const int64_t diff = idx[r - 1] - idx[r - 2];
    flat.push_back((upper ? diff >= k : diff <= k) ? j : -1);
    ++j;
  });
  (void)rows, (void)cols;
  const Shape s = x.shape;
  DENOTE_ASSIGN_OR_RETURN(x, take_flat(im, std::move(x), s, std::move(flat), 0.0));
  return set_val(im, 0, std::move(x));
}

// ---- Compress: the rows (along axis, or of the flattened input) whose constant condition holds
Status map_compress(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  const HostTensor* c = im.const_input(1);
  if (!c) return im.fail("the condition must be a constant (a computed one is not supported)");
  int64_t axis = 0;
  if (const auto* a = find_attr(im.node(), "axis")) {
    DENOTE_ASSIGN_OR_RETURN(axis, norm_axis(im, a->i(), x.shape.size(), "axis"));
  } else {
    DENOTE_ASSIGN_OR_RETURN(x, reshape_val(im, std::move(x), Shape{numel(x.shape)}));
  }
  std::vector<int64_t> idx;
  for (size_t i = 0; i < c->values.size(); ++i)
    if (c->values[i] != 0) {
      if (static_cast<int64_t>(i) >= x.shape[static_cast<size_t>(axis)]) return im.fail("the condition is longer than the axis");
      idx.push_back(static_cast<int64_t>(i));
    }
  DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), axis, std::move(idx)));
  return set_val(im, 0, std::move(x));
}

// ---- ReverseSequence: the first lengths[b] steps of each batch entry reversed
Status map_reverse_sequence(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(auto lens, const_int_list(im, 1, "sequence_lens"));
  DENOTE_ASSIGN_OR_RETURN(int64_t ba, attr_int(im, "batch_axis", 1));
  DENOTE_ASSIGN_OR_RETURN(int64_t ta, attr_int(im, "time_axis", 0));
  if (x.shape.size() < 2 || (ba != 0 && ba != 1) || (ta != 0 && ta != 1) || ba == ta) return im.fail("bad batch/time axes");
  const std::vector<int64_t> st = strides_of(x.shape);
  std::vector<int64_t> flat;
  bool ok = true;
  each_index(x.shape, [&](std::vector<int64_t> idx) {
    const int64_t b = idx[static_cast<size_t>(ba)], t = idx[static_cast<size_t>(ta)];
    const int64_t len = static_cast<size_t>(b) < lens->size() ? (*lens)[static_cast<size_t>(b)] : -1;
    ok = ok && len >= 0 && len <= x.shape[static_cast<size_t>(ta)];
    if (t < len) idx[static_cast<size_t>(ta)] = len - 1 - t;
    int64_t off = 0;
    for (size_t i = 0; i < idx.size(); ++i) off += idx[i] * st[i];
    flat.push_back(off);
  });
  if (!ok) return im.fail("sequence_lens must have one entry per batch element within the time axis");
  const Shape s = x.shape;
  DENOTE_ASSIGN_OR_RETURN(x, take_flat(im, std::move(x), s, std::move(flat)));
  return set_val(im, 0, std::move(x));
}

// ---- CumSum: y_k = y_(k-1) + x_k along the axis (exclusive: shifted by one, reverse: from the end)
Status map_cumsum(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, scalar_int(im, 1, "CumSum axis"));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, x.shape.size(), "axis"));
  DENOTE_ASSIGN_OR_RETURN(int64_t exclusive, attr_int(im, "exclusive", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t reverse, attr_int(im, "reverse", 0));
  const int64_t d = x.shape[static_cast<size_t>(axis)];
  if (d > 4096) return im.fail("CumSum over more than 4096 entries is not supported");
  DENOTE_ASSIGN_OR_RETURN(int64_t xn, node_of(im, x));
  x = Val{std::nullopt, xn, x.shape};
  std::vector<int64_t> rows(static_cast<size_t>(d));
  int64_t acc = -1;
  for (int64_t s = 0; s < d; ++s) {
    const int64_t src = reverse ? d - 1 - s : s;
    DENOTE_ASSIGN_OR_RETURN(Val row, gather_axis(im, x, axis, {src}));
    if (exclusive) {
      int64_t out_row;
      if (acc < 0) {
        Shape zs = x.shape;
        zs[static_cast<size_t>(axis)] = 1;
        DENOTE_ASSIGN_OR_RETURN(out_row, im.emit_scalar(0.0, zs));
      } else {
        out_row = acc;
      }
      rows[static_cast<size_t>(src)] = out_row;
      if (acc < 0) acc = row.id;
      else { DENOTE_ASSIGN_OR_RETURN(acc, im.emit(Op::Add, {acc, row.id})); }
    } else {
      if (acc < 0) acc = row.id;
      else { DENOTE_ASSIGN_OR_RETURN(acc, im.emit(Op::Add, {acc, row.id})); }
      rows[static_cast<size_t>(src)] = acc;
    }
  }
  if (d == 0) return set_val(im, 0, std::move(x));
  if (d == 1) return im.set_output(0, rows[0]);
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Concat, rows, AxisAttrs{axis}));
  return im.set_output(0, y);
}

}  // namespace

std::vector<MapEntry> index_mappers() {
  return {
      {"Slice", map_slice},
      {onnx_name(Op::Gather), map_gather},
      {"GatherElements", map_gather_elements},
      {"GatherND", map_gather_nd},
      {"Split", map_split},
      {"Pad", map_pad},
      {"Tile", map_tile},
      {"DepthToSpace", map_depth_space<true>},
      {"SpaceToDepth", map_depth_space<false>},
      {"Trilu", map_trilu},
      {"Compress", map_compress},
      {"ReverseSequence", map_reverse_sequence},
      {"CumSum", map_cumsum},
  };
}

}  // namespace denote::onnxio
