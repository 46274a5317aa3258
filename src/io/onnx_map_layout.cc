// ONNX -> IR mapping of layout ops (Reshape, Flatten, Transpose, Concat, Expand, Squeeze, Unsqueeze),
// Softmax / LogSoftmax (opset-dependent axis rules) and the reductions (ReduceSum, ReduceMean, and
// ReduceL1 / L2 / SumSquare / LogSum / LogSumExp built on a sum, ReduceMax / ReduceMin on max_pool).
// Layout ops on import-time constants are folded on the host (shape arithmetic stays constant).
#include <algorithm>
#include <numeric>
#include <optional>

#include <fmt/format.h>

#include "onnx_import.h"

namespace denote::onnxio {
namespace {

// Integer list from a constant 1-D (or scalar) integer input.
Result<std::vector<int64_t>> const_ints(Importer& im, int i, std::string_view what) {
  const HostTensor* c = im.const_input(i);
  if (!c || !c->is_int() || c->shape.size() > 1)
    return im.fail(fmt::format("{} must be a constant 1-D integer tensor", what));
  return c->ints;
}

// Output 0 = input 0 with a new shape: folded for constants, a reshape node otherwise.
Status reshape_to(Importer& im, const Shape& to) {
  if (const HostTensor* c = im.const_input(0)) {
    HostTensor t = *c;
    t.shape = to;
    return im.set_output_const(0, std::move(t));
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.reshape(x, to));
  return im.set_output(0, y);
}

Result<Shape> shape0(Importer& im) {
  if (const HostTensor* c = im.const_input(0)) return c->shape;
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  return im.shape(x);
}

// ONNX Reshape rules: 0 copies the input dim (unless allowzero), one -1 is inferred.
Result<Shape> reshape_target(Importer& im, const Shape& in, std::vector<int64_t> spec, bool allow_zero) {
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] == 0 && !allow_zero) {
      if (i >= in.size()) return im.fail(fmt::format("shape entry {} is 0 but the input has rank {}", i, in.size()));
      spec[i] = in[i];
    }
    if (spec[i] == -1) {
      if (infer >= 0) return im.fail("shape has more than one -1");
      infer = static_cast<int64_t>(i);
    } else if (spec[i] < 0) {
      return im.fail(fmt::format("shape entry {} is {}", i, spec[i]));
    } else if (__builtin_mul_overflow(known, spec[i], &known)) {
      return im.fail("shape is too large");
    }
  }
  const int64_t total = numel(in);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      return im.fail(fmt::format("cannot infer -1 reshaping {} to {}", to_string(in), to_string(spec)));
    spec[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    return im.fail(fmt::format("reshape {} to {}: element counts differ", to_string(in), to_string(spec)));
  }
  return Shape(spec);
}

Status map_reshape(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape in, shape0(im));
  std::vector<int64_t> spec;
  if (im.opset() < 5) { DENOTE_ASSIGN_OR_RETURN(spec, attr_ints(im, "shape")); }
  else { DENOTE_ASSIGN_OR_RETURN(spec, const_ints(im, 1, "the shape input")); }
  DENOTE_ASSIGN_OR_RETURN(int64_t allow_zero, attr_int(im, "allowzero", 0));
  DENOTE_ASSIGN_OR_RETURN(Shape to, reshape_target(im, in, spec, allow_zero != 0));
  return reshape_to(im, to);
}

int64_t prod(const Shape& s, size_t from, size_t to) { return dims_product(s, from, to); }

Status map_flatten(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape in, shape0(im));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, attr_int(im, "axis", 1));
  const int64_t r = static_cast<int64_t>(in.size());
  if (axis < -r || axis > r) return im.fail(fmt::format("axis {} is out of range for rank {}", axis, r));
  const size_t a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  const Shape out{prod(in, 0, a), prod(in, a, in.size())};
  if (out[0] == INT64_MAX || out[1] == INT64_MAX) return im.fail("the flattened dims overflow");
  return reshape_to(im, out);
}

Status map_transpose(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const size_t r = im.shape(x).size();
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> perm, attr_ints(im, "perm"));
  if (!find_attr(im.node(), "perm"))
    for (size_t i = 0; i < r; ++i) perm.push_back(static_cast<int64_t>(r - 1 - i));
  std::vector<int64_t> ident(r);
  std::iota(ident.begin(), ident.end(), 0);
  if (perm == ident) return im.set_output(0, x);
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Permute, {x}, PermAttrs{perm}));
  return im.set_output(0, y);
}

// Expand: bidirectional numpy broadcast of the input with a constant shape.
Status map_expand(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> spec, const_ints(im, 1, "the shape input"));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  for (int64_t d : spec)
    if (d < 0) return im.fail("shape entries must be >= 0");
  auto to = broadcast_shapes(im.shape(x), Shape(spec));
  if (!to) return im.fail(fmt::format("{} does not broadcast to {}", to_string(im.shape(x)), to_string(Shape(spec))));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.broadcast(x, *to));
  return im.set_output(0, y);
}

// Concatenation of import-time constants (shape arithmetic in exported graphs).
Status concat_host(Importer& im, int64_t axis) {
  HostTensor out = *im.const_input(0);
  const size_t a = static_cast<size_t>(axis);
  for (int k = 1; k < im.input_count(); ++k) {
    const HostTensor& b = *im.const_input(k);
    if (b.shape.size() != out.shape.size() || b.is_int() != out.is_int()) return im.fail("operands differ in rank or type");
    for (size_t i = 0; i < b.shape.size(); ++i)
      if (i != a && b.shape[i] != out.shape[i]) return im.fail("operand shapes do not concatenate");
    Shape merged = out.shape;
    if (__builtin_add_overflow(merged[a], b.shape[a], &merged[a])) return im.fail("concatenated axis is too large");
    const int64_t outer = prod(out.shape, 0, a), ca = prod(out.shape, a, out.shape.size()),
                  cb = prod(b.shape, a, b.shape.size());
    HostTensor t;
    t.shape = merged;
    t.dtype = out.dtype;
    for (int64_t o = 0; o < outer; ++o) {
      t.values.insert(t.values.end(), out.values.begin() + o * ca, out.values.begin() + (o + 1) * ca);
      t.values.insert(t.values.end(), b.values.begin() + o * cb, b.values.begin() + (o + 1) * cb);
      if (!out.is_int()) continue;
      t.ints.insert(t.ints.end(), out.ints.begin() + o * ca, out.ints.begin() + (o + 1) * ca);
      t.ints.insert(t.ints.end(), b.ints.begin() + o * cb, b.ints.begin() + (o + 1) * cb);
    }
    out = std::move(t);
  }
  return im.set_output_const(0, std::move(out));
}

Status map_concat(Importer& im) {
  if (im.input_count() < 1) return im.fail("needs at least one input");
  DENOTE_ASSIGN_OR_RETURN(Shape s0, shape0(im));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, attr_int(im, "axis", 0));
  DENOTE_ASSIGN_OR_RETURN(axis, norm_axis(im, axis, s0.size(), "axis"));
  bool all_const = true;
  for (int k = 0; k < im.input_count(); ++k) all_const = all_const && im.const_input(k);
  if (all_const) return concat_host(im, axis);
  if (im.input_count() == 1) return reshape_to(im, s0);
  std::vector<int64_t> parts;
  for (int k = 0; k < im.input_count(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(k));
    parts.push_back(x);
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Concat, parts, AxisAttrs{axis}));
  return im.set_output(0, y);
}

// Axes from the attribute (before `input_from`) or from optional input 1.
Result<std::vector<int64_t>> axes_arg(Importer& im, int64_t input_from) {
  if (im.opset() < input_from) return attr_ints(im, "axes");
  if (!im.has_input(1)) return std::vector<int64_t>{};
  return const_ints(im, 1, "the axes input");
}

// Sorted, normalized, duplicate-free axes.
Result<std::vector<int64_t>> norm_axes(Importer& im, std::vector<int64_t> axes, size_t rank) {
  for (int64_t& a : axes) { DENOTE_ASSIGN_OR_RETURN(a, norm_axis(im, a, rank, "axis")); }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return im.fail("axes repeat");
  return axes;
}

Status map_squeeze(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape in, shape0(im));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_arg(im, 13));
  DENOTE_ASSIGN_OR_RETURN(axes, norm_axes(im, axes, in.size()));
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    const bool listed = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i));
    if (listed && in[i] != 1) return im.fail(fmt::format("axis {} has extent {}, not 1", i, in[i]));
    if (!(listed || (axes.empty() && in[i] == 1))) out.push_back(in[i]);
  }
  return reshape_to(im, out);
}

Status map_unsqueeze(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape in, shape0(im));
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_arg(im, 13));
  if (axes.empty()) return im.fail("axes are required");
  DENOTE_ASSIGN_OR_RETURN(axes, norm_axes(im, axes, in.size() + axes.size()));
  Shape out;
  size_t next = 0;
  for (size_t i = 0; i < in.size() + axes.size(); ++i)
    out.push_back(std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(i)) ? 1 : in[next++]);
  return reshape_to(im, out);
}

// Before opset 13 the input is flattened to 2-D at `axis` and normalized along axis 1.
template <Op kOp>
Status map_softmax(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  const bool legacy = im.opset() < 13;
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, attr_int(im, "axis", legacy ? 1 : -1));
  if (in.empty()) return im.fail("input must have rank >= 1");
  if (!legacy) {
    DENOTE_ASSIGN_OR_RETURN(axis, norm_axis(im, axis, in.size(), "axis"));
    DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(kOp, {x}, AxisAttrs{axis}));
    return im.set_output(0, y);
  }
  DENOTE_ASSIGN_OR_RETURN(axis, norm_axis(im, axis, in.size(), "axis"));
  const size_t a = static_cast<size_t>(axis);
  const Shape flat_shape{prod(in, 0, a), prod(in, a, in.size())};
  if (flat_shape[0] == INT64_MAX || flat_shape[1] == INT64_MAX) return im.fail("the flattened dims overflow");
  DENOTE_ASSIGN_OR_RETURN(int64_t flat, im.reshape(x, flat_shape));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(kOp, {flat}, AxisAttrs{1}));
  DENOTE_ASSIGN_OR_RETURN(y, im.reshape(y, in));
  return im.set_output(0, y);
}

// The reductions built on a sum: an elementwise step before (|x|, x^2, e^x) and after (sqrt, log).
enum class Form { Plain, L1, L2, SumSquare, LogSum, LogSumExp };

Result<int64_t> before_sum(Importer& im, Form f, int64_t x) {
  if (f == Form::L1) return im.emit(Op::Abs, {x});
  if (f == Form::L2 || f == Form::SumSquare) return im.emit(Op::MulElem, {x, x});
  if (f == Form::LogSumExp) return im.emit(Op::Exp, {x});
  return x;
}

Result<int64_t> after_sum(Importer& im, Form f, int64_t y) {
  if (f == Form::L2) return im.emit(Op::Sqrt, {y});
  if (f == Form::LogSum || f == Form::LogSumExp) return im.emit(Op::Log, {y});
  return y;
}

// The common part of every Reduce*: the axes (attribute or input from opset `axes_input_from`),
// keepdims, and noop_with_empty_axes. nullopt: a no-op reduction (the input passes through).
// Otherwise the normalized axes, all of them when none are given.
struct ReduceSpec {
  std::vector<int64_t> axes;
  bool keepdims = true;
};
Result<std::optional<ReduceSpec>> reduce_spec(Importer& im, size_t rank, int64_t axes_input_from) {
  DENOTE_ASSIGN_OR_RETURN(std::vector<int64_t> axes, axes_arg(im, axes_input_from));
  DENOTE_ASSIGN_OR_RETURN(int64_t keepdims, attr_int(im, "keepdims", 1));
  DENOTE_ASSIGN_OR_RETURN(int64_t noop, attr_int(im, "noop_with_empty_axes", 0));
  if (axes.empty() && noop) return std::optional<ReduceSpec>();
  DENOTE_ASSIGN_OR_RETURN(axes, norm_axes(im, axes, rank));
  if (axes.empty())
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  return std::optional<ReduceSpec>(ReduceSpec{std::move(axes), keepdims != 0});
}

// ReduceSum takes axes as an input from opset 13, the others from opset 18. Single-axis IR
// reductions run from the largest axis down (a sum over every axis is one row-major `sum`);
// keepdims reshapes the 1s back in.
template <Op kOp, int64_t kAxesInputFrom, Form kForm = Form::Plain>
Status map_reduce(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  DENOTE_ASSIGN_OR_RETURN(std::optional<ReduceSpec> spec, reduce_spec(im, in.size(), kAxesInputFrom));
  if (!spec) return im.set_output(0, x);
  std::vector<int64_t>& axes = spec->axes;
  const bool keepdims = spec->keepdims;
  DENOTE_ASSIGN_OR_RETURN(int64_t y, before_sum(im, kForm, x));
  if (kOp == Op::ReduceSum && axes.size() == in.size() && !in.empty()) {  // all axes: one row-major left fold
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Sum, {y}));
    axes.clear();
  }
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) { DENOTE_ASSIGN_OR_RETURN(y, im.emit(kOp, {y}, AxisAttrs{*it})); }
  DENOTE_ASSIGN_OR_RETURN(y, after_sum(im, kForm, y));
  if (keepdims) {
    Shape kept = in;
    for (int64_t& d : kept)
      if (im.shape(y).empty()) d = 1;  // reduced to a scalar by sum
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    DENOTE_ASSIGN_OR_RETURN(y, im.reshape(y, kept));
  }
  return im.set_output(0, y);
}

// max over one axis (dropped): permute the axis last, max_pool with the whole extent as window,
// reshape the pooled axis away.
Result<int64_t> reduce_max_axis(Importer& im, int64_t x, int64_t axis) {
  const Shape in = im.shape(x);
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < static_cast<int64_t>(in.size()); ++i)
    if (i != axis) perm.push_back(i);
  perm.push_back(axis);
  int64_t y = x;
  if (axis + 1 != static_cast<int64_t>(in.size())) { DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Permute, {x}, PermAttrs{perm})); }
  const int64_t extent = in[static_cast<size_t>(axis)];
  if (extent == 0) return im.fail(fmt::format("cannot reduce the empty axis {}", axis));
  DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::MaxPool, {y}, WindowConfig{1, {extent}, {1}, {0}}));
  Shape out = im.shape(y);
  out.pop_back();
  return im.reshape(y, out);
}

// ReduceMax, and ReduceMin as -max(-x) (exact). Axes: attribute before opset 18, input from 18.
template <bool kMin>
Status map_reduce_max(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape in = im.shape(x);
  DENOTE_ASSIGN_OR_RETURN(std::optional<ReduceSpec> spec, reduce_spec(im, in.size(), 18));
  if (!spec) return im.set_output(0, x);
  const std::vector<int64_t>& axes = spec->axes;
  const bool keepdims = spec->keepdims;
  int64_t y = x;
  if (kMin) { DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Neg, {y})); }
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) { DENOTE_ASSIGN_OR_RETURN(y, reduce_max_axis(im, y, *it)); }
  if (kMin) { DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Neg, {y})); }
  if (keepdims) {
    Shape kept = in;
    for (int64_t a : axes) kept[static_cast<size_t>(a)] = 1;
    DENOTE_ASSIGN_OR_RETURN(y, im.reshape(y, kept));
  }
  return im.set_output(0, y);
}

}  // namespace

std::vector<MapEntry> layout_mappers() {
  return {
      {onnx_name(Op::Reshape), map_reshape}, {"Flatten", map_flatten}, {onnx_name(Op::Transpose), map_transpose},
      {onnx_name(Op::Concat), map_concat}, {onnx_name(Op::BroadcastTo), map_expand},
      {"Squeeze", map_squeeze}, {"Unsqueeze", map_unsqueeze},
      {onnx_name(Op::Softmax), map_softmax<Op::Softmax>}, {onnx_name(Op::LogSoftmax), map_softmax<Op::LogSoftmax>},
      {onnx_name(Op::ReduceSum), map_reduce<Op::ReduceSum, 13>},
      {onnx_name(Op::ReduceMean), map_reduce<Op::ReduceMean, 18>},
      {"ReduceL1", map_reduce<Op::ReduceSum, 18, Form::L1>}, {"ReduceL2", map_reduce<Op::ReduceSum, 18, Form::L2>},
      {"ReduceSumSquare", map_reduce<Op::ReduceSum, 18, Form::SumSquare>},
      {"ReduceLogSum", map_reduce<Op::ReduceSum, 18, Form::LogSum>},
      {"ReduceLogSumExp", map_reduce<Op::ReduceSum, 18, Form::LogSumExp>},
      {"ReduceMax", map_reduce_max<false>}, {"ReduceMin", map_reduce_max<true>},
  };
}

}  // namespace denote::onnxio
