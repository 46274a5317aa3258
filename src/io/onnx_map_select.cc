// ONNX -> IR mapping of selections decided at import time and of the losses and resizes built on
// them: Where (constant condition), Equal / Less / LessOrEqual / Greater / GreaterOrEqual / Not /
// Xor (folded on constants), EyeLike, OneHot, NegativeLogLikelihoodLoss and
// SoftmaxCrossEntropyLoss (constant targets: one `gather` of the picked entries), Resize and
// Upsample (nearest: `gather` per axis; linear / cubic: a `linear` per axis with the interpolation
// weights), ThresholdedRelu and Shrink (selections through `sign`).
#include <algorithm>
#include <cmath>
#include <numeric>

#include <fmt/format.h>

#include "denote/typed/dtype.h"
#include "onnx_index.h"

namespace denote::onnxio {
namespace {

HostTensor bool_tensor(Shape shape, const std::vector<bool>& v) {
  HostTensor t;
  t.shape = std::move(shape);
  t.dtype = onnx::TensorProto::BOOL;
  for (bool b : v) {
    t.values.push_back(b ? 1.0 : 0.0);
    t.ints.push_back(b ? 1 : 0);
  }
  return t;
}

// Two constant operands broadcast to one shape (values as doubles, ints exact where present).
Result<std::pair<HostTensor, HostTensor>> const_pair(Importer& im, std::string_view what) {
  const HostTensor* a = im.const_input(0);
  const HostTensor* b = im.const_input(1);
  if (!a || !b)
    return im.fail(fmt::format("{} of computed values is not supported (operands must be constant: the IR has no "
                               "comparisons or bool logic on graph values)",
                               what));
  auto to = broadcast_shapes(a->shape, b->shape);
  if (!to) return im.fail("operand shapes do not broadcast");
  Result<Val> va = broadcast_val(im, Val{*a, -1, a->shape}, *to);
  if (!va.ok()) return va.status();
  Result<Val> vb = broadcast_val(im, Val{*b, -1, b->shape}, *to);
  if (!vb.ok()) return vb.status();
  std::pair<HostTensor, HostTensor> out;
  out.first = va->host.value_or(HostTensor{});
  out.second = vb->host.value_or(HostTensor{});
  return out;
}

// kCmp: 0 Equal, 1 Less, 2 LessOrEqual, 3 Greater, 4 GreaterOrEqual, 5 Xor
template <int kCmp>
Status map_compare(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(auto ab, const_pair(im, im.node().op_type()));
  const auto& [a, b] = ab;
  const bool ints = a.is_int() && b.is_int();
  std::vector<bool> out;
  for (size_t j = 0; j < a.values.size(); ++j) {
    const double x = a.values[j], y = b.values[j];
    const int64_t p = ints ? a.ints[j] : 0, q = ints ? b.ints[j] : 0;
    bool r = false;
    if constexpr (kCmp == 0) r = ints ? p == q : x == y;
    else if constexpr (kCmp == 1) r = ints ? p < q : x < y;
    else if constexpr (kCmp == 2) r = ints ? p <= q : x <= y;
    else if constexpr (kCmp == 3) r = ints ? p > q : x > y;
    else if constexpr (kCmp == 4) r = ints ? p >= q : x >= y;
    else r = (x != 0) != (y != 0);
    out.push_back(r);
  }
  return im.set_output_const(0, bool_tensor(a.shape, out));
}

Status map_not(Importer& im) {
  const HostTensor* a = im.const_input(0);
  if (!a) return im.fail("Not of a computed value is not supported (the operand must be constant)");
  std::vector<bool> out;
  for (double v : a->values) out.push_back(v == 0);
  return im.set_output_const(0, bool_tensor(a->shape, out));
}

// ---- Where: condition constant; X and Y broadcast, each output element taken from one of them
Status map_where(Importer& im) {
  const HostTensor* c = im.const_input(0);
  if (!c) return im.fail("Where with a computed condition is not supported (the condition must be constant)");
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 1));
  DENOTE_ASSIGN_OR_RETURN(Val y, operand(im, 2));
  auto xy = broadcast_shapes(x.shape, y.shape);
  auto to = xy ? broadcast_shapes(c->shape, *xy) : std::nullopt;
  if (!to) return im.fail("condition, X and Y do not broadcast");
  DENOTE_ASSIGN_OR_RETURN(Val cond, broadcast_val(im, Val{*c, -1, c->shape}, *to));
  DENOTE_ASSIGN_OR_RETURN(x, broadcast_val(im, std::move(x), *to));
  DENOTE_ASSIGN_OR_RETURN(y, broadcast_val(im, std::move(y), *to));
  const int64_t n = numel(*to);
  std::vector<int64_t> flat(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) flat[static_cast<size_t>(j)] = cond.host->values[static_cast<size_t>(j)] != 0 ? j : n + j;
  Val both;
  if (x.host && y.host) {
    HostTensor t = *x.host;
    t.values.insert(t.values.end(), y.host->values.begin(), y.host->values.end());
    t.ints.insert(t.ints.end(), y.host->ints.begin(), y.host->ints.end());
    t.shape = Shape{2 * n};
    both = Val{t, -1, t.shape};
  } else {
    DENOTE_ASSIGN_OR_RETURN(int64_t xn, node_of(im, x));
    DENOTE_ASSIGN_OR_RETURN(int64_t yn, node_of(im, y));
    DENOTE_ASSIGN_OR_RETURN(xn, im.reshape(xn, Shape{n}));
    DENOTE_ASSIGN_OR_RETURN(yn, im.reshape(yn, Shape{n}));
    DENOTE_ASSIGN_OR_RETURN(int64_t cat, im.emit(Op::Concat, {xn, yn}, AxisAttrs{0}));
    both = Val{std::nullopt, cat, Shape{2 * n}};
  }
  DENOTE_ASSIGN_OR_RETURN(Val out, take_flat(im, std::move(both), *to, std::move(flat)));
  return set_val(im, 0, std::move(out));
}

// ---- EyeLike: ones on the k-th diagonal of the input's (static) shape
Status map_eye_like(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
  if (x.shape.size() != 2) return im.fail("EyeLike needs a 2-D input");
  DENOTE_ASSIGN_OR_RETURN(int64_t k, attr_int(im, "k", 0));
  const int32_t in_type = x.host ? x.host->dtype : onnx::TensorProto::FLOAT;
  int32_t dtype = in_type;
  if (!x.host && im.typed) { DENOTE_ASSIGN_OR_RETURN(dtype, typed_value_type(im, x.id)); }
  DENOTE_ASSIGN_OR_RETURN(int64_t dt, attr_int(im, "dtype", dtype));
  HostTensor t;
  t.shape = x.shape;
  t.dtype = static_cast<int32_t>(dt);
  const bool ints = t.is_int();
  for (int64_t i = 0; i < x.shape[0]; ++i)
    for (int64_t j = 0; j < x.shape[1]; ++j) {
      t.values.push_back(j - i == k ? 1.0 : 0.0);
      if (ints) t.ints.push_back(j - i == k ? 1 : 0);
    }
  return im.set_output_const(0, std::move(t));
}

// ---- OneHot: constant indices, depth and values (off, on)
Status map_one_hot(Importer& im) {
  const HostTensor* ind = im.const_input(0);
  const HostTensor* depth = im.const_input(1);
  const HostTensor* vals = im.const_input(2);
  if (!ind || !depth || !vals || depth->values.size() != 1 || vals->values.size() != 2)
    return im.fail("OneHot needs constant indices, depth and values (computed ones are not supported)");
  const int64_t d = static_cast<int64_t>(depth->values[0]);
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", -1));
  const int64_t r = static_cast<int64_t>(ind->shape.size()) + 1;
  if (a0 < -r || a0 >= r) return im.fail("axis is out of range");
  const size_t axis = static_cast<size_t>(a0 < 0 ? a0 + r : a0);
  Shape out = ind->shape;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), d);
  const int64_t outer = dims_product(ind->shape, 0, axis), inner = dims_product(ind->shape, axis, ind->shape.size());
  HostTensor t;
  t.shape = out;
  t.dtype = vals->dtype;
  const bool ints = t.is_int();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t c = 0; c < d; ++c)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t v = static_cast<int64_t>(ind->values[static_cast<size_t>(o * inner + i)]);
        if (v < 0) v += d;
        const size_t pick = v == c ? 1 : 0;
        t.values.push_back(vals->values[pick]);
        if (ints) t.ints.push_back(vals->ints[pick]);
      }
  return im.set_output_const(0, std::move(t));
}

// ---- NegativeLogLikelihoodLoss on an IR value `x` [N, C, d...] with constant targets [N, d...]:
// loss = -x[n, t, d] * w[t] (0 where t = ignore_index), then none / sum / mean (sum / sum of the
// weights that were used).
Result<int64_t> nll(Importer& im, int64_t x, int target_input, int weight_input) {
  const Shape xs = im.shape(x);
  const HostTensor* t = im.const_input(target_input);
  if (!t || !t->is_int())
    return im.fail("the target must be a constant integer tensor (computed targets are not supported)");
  const HostTensor* w = nullptr;
  if (im.has_input(weight_input)) {
    w = im.const_input(weight_input);
    if (!w) return im.fail("the weight must be a constant (a computed one is not supported)");
  }
  if (xs.size() < 2 || t->shape.size() != xs.size() - 1) return im.fail("input must be [N, C, ...] and target [N, ...]");
  const int64_t c = xs[1], inner = dims_product(xs, 2, xs.size());
  DENOTE_ASSIGN_OR_RETURN(std::string reduction, attr_string(im, "reduction", "mean"));
  const onnx::AttributeProto* ii = find_attr(im.node(), "ignore_index");
  std::vector<int64_t> flat;
  std::vector<double> scale;
  double weight_sum = 0;
  for (size_t j = 0; j < t->ints.size(); ++j) {
    const int64_t n = static_cast<int64_t>(j) / std::max<int64_t>(inner, 1), d = static_cast<int64_t>(j) % std::max<int64_t>(inner, 1);
    const int64_t cls = t->ints[j];
    if (ii && cls == ii->i()) {
      flat.push_back(-1);
      scale.push_back(0.0);
      continue;
    }
    if (cls < 0 || cls >= c) return im.fail(fmt::format("target {} is outside [0, {})", cls, c));
    flat.push_back((n * c + cls) * inner + d);
    const double wt = w ? w->values[static_cast<size_t>(cls)] : 1.0;
    scale.push_back(-wt);
    weight_sum += wt;
  }
  DENOTE_ASSIGN_OR_RETURN(Val g, take_flat(im, Val{std::nullopt, x, xs}, t->shape, std::move(flat), 0.0));
  HostTensor s;
  s.shape = t->shape;
  s.values = std::move(scale);
  DENOTE_ASSIGN_OR_RETURN(int64_t sc, im.emit_const(s));
  DENOTE_ASSIGN_OR_RETURN(int64_t loss, im.emit(Op::MulElem, {g.id, sc}));
  if (reduction == "none") return loss;
  if (reduction != "sum" && reduction != "mean") return im.fail("reduction '" + reduction + "' is not supported");
  DENOTE_ASSIGN_OR_RETURN(int64_t total, im.emit(Op::Sum, {loss}));
  if (reduction == "sum") return total;
  DENOTE_ASSIGN_OR_RETURN(int64_t den, im.emit_scalar(weight_sum, {}));
  return im.emit(Op::Div, {total, den});
}

Status map_nll(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, nll(im, x, 1, 2));
  return im.set_output(0, y);
}

// SoftmaxCrossEntropyLoss: log_softmax over axis 1, then the NLL above; output 1 = the log-probabilities.
Status map_sce(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  if (im.shape(x).size() < 2) return im.fail("scores must be [N, C, ...]");
  DENOTE_ASSIGN_OR_RETURN(int64_t lp, im.emit(Op::LogSoftmax, {x}, AxisAttrs{1}));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, nll(im, lp, 1, 2));
  DENOTE_RETURN_IF_ERROR(im.set_output(0, y));
  return im.set_output(1, lp);
}

// ---- ThresholdedRelu: x where x > alpha, else 0. step = relu(sign(x - alpha)) is exactly 1 or 0
// (x - alpha rounds to 0 only when x = alpha); for alpha >= 0 the kept value is relu(x) * step,
// which is 0 (not nan) at x = -inf.
Status map_thresholded_relu(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double alpha, attr_float(im, "alpha", 1.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.emit_scalar(alpha, {}));
  DENOTE_ASSIGN_OR_RETURN(int64_t d, im.binary(Op::Sub, x, a));
  DENOTE_ASSIGN_OR_RETURN(int64_t s, im.emit(Op::Sign, {d}));
  DENOTE_ASSIGN_OR_RETURN(int64_t step, im.emit(Op::Relu, {s}));
  int64_t kept = x;
  if (alpha >= 0) { DENOTE_ASSIGN_OR_RETURN(kept, im.emit(Op::Relu, {x})); }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::MulElem, {kept, step}));
  return im.set_output(0, y);
}

// ---- Shrink: x - bias where x > lambd, x + bias where x < -lambd, else 0 (two selections as above)
Status map_shrink(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double bias, attr_float(im, "bias", 0.0));
  DENOTE_ASSIGN_OR_RETURN(double lambd, attr_float(im, "lambd", 0.5));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  auto side = [&](bool upper) -> Result<int64_t> {
    DENOTE_ASSIGN_OR_RETURN(int64_t l, im.emit_scalar(upper ? lambd : -lambd, {}));
    DENOTE_ASSIGN_OR_RETURN(int64_t d, upper ? im.binary(Op::Sub, x, l) : im.binary(Op::Sub, l, x));
    DENOTE_ASSIGN_OR_RETURN(int64_t s, im.emit(Op::Sign, {d}));
    DENOTE_ASSIGN_OR_RETURN(int64_t step, im.emit(Op::Relu, {s}));
    DENOTE_ASSIGN_OR_RETURN(int64_t b, im.emit_scalar(upper ? bias : -bias, {}));
    DENOTE_ASSIGN_OR_RETURN(int64_t v, im.binary(Op::Sub, x, b));
    return im.emit(Op::MulElem, {v, step});
  };
  DENOTE_ASSIGN_OR_RETURN(int64_t hi, side(true));
  DENOTE_ASSIGN_OR_RETURN(int64_t lo, side(false));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Add, {hi, lo}));
  return im.set_output(0, y);
}

// Sub, Mul, Div: integer constants folded on the host (shape arithmetic), otherwise the 1:1 mapping.
template <char kOp, Op kIr>
Status map_arith(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(bool folded, fold_int_binary(im, kOp));
  if (folded) return ok_status();
  return map_binary<kIr>(im);
}

// Neg: integer constants folded on the host (shape arithmetic), otherwise `neg`.
Status map_neg(Importer& im) {
  if (const HostTensor* c = im.const_input(0); c && c->is_int() && c->dtype != onnx::TensorProto::BOOL) {
    HostTensor t = *c;
    for (size_t j = 0; j < t.ints.size(); ++j) {
      t.ints[j] = static_cast<int64_t>(0 - static_cast<uint64_t>(t.ints[j]));
      t.values[j] = static_cast<double>(t.ints[j]);
    }
    return im.set_output_const(0, std::move(t));
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Neg, {x}));
  return im.set_output(0, y);
}

// ---- ArgMax / ArgMin / Hardmax: the index of the first (or last) extreme entry along an axis,
// computed exactly with small integers: with m the maximum (max_pool over the axis moved last),
// sign(m - x_j) is 0 at the maxima and 1 elsewhere, so min_j (j + (n + 1) sign(m - x_j)) is the first
// maximum's index and max_j (j - (n + 1) sign(m - x_j)) the last one's. ArgMin is ArgMax of -x.
// The result keeps the axis with extent 1 (as keepdims=1).
Result<int64_t> arg_extreme(Importer& im, int64_t x, size_t axis, bool is_min, bool last) {
  const Shape s = im.shape(x);
  const int64_t n = s[axis];
  if (n == 0) return im.fail("the reduced axis is empty");
  std::vector<int64_t> perm;
  for (size_t i = 0; i < s.size(); ++i)
    if (i != axis) perm.push_back(static_cast<int64_t>(i));
  perm.push_back(static_cast<int64_t>(axis));
  int64_t t = x;
  if (axis + 1 != s.size()) { DENOTE_ASSIGN_OR_RETURN(t, im.emit(Op::Permute, {x}, PermAttrs{perm})); }
  if (is_min) { DENOTE_ASSIGN_OR_RETURN(t, im.emit(Op::Neg, {t})); }
  const WindowConfig whole{1, {n}, {1}, {0}};
  DENOTE_ASSIGN_OR_RETURN(int64_t m, im.emit(Op::MaxPool, {t}, whole));
  DENOTE_ASSIGN_OR_RETURN(int64_t d, im.binary(Op::Sub, m, t));
  DENOTE_ASSIGN_OR_RETURN(int64_t sg, im.emit(Op::Sign, {d}));
  HostTensor iota;
  iota.shape = {n};
  for (int64_t j = 0; j < n; ++j) iota.values.push_back(static_cast<double>(j));
  DENOTE_ASSIGN_OR_RETURN(int64_t j, im.emit_const(iota));
  DENOTE_ASSIGN_OR_RETURN(int64_t big, im.emit_scalar(static_cast<double>(n + 1), {}));
  DENOTE_ASSIGN_OR_RETURN(int64_t pen, im.binary(Op::MulElem, sg, big));
  DENOTE_ASSIGN_OR_RETURN(int64_t v, im.binary(last ? Op::Sub : Op::Add, j, pen));
  if (!last) { DENOTE_ASSIGN_OR_RETURN(v, im.emit(Op::Neg, {v})); }
  DENOTE_ASSIGN_OR_RETURN(int64_t r, im.emit(Op::MaxPool, {v}, whole));
  if (!last) { DENOTE_ASSIGN_OR_RETURN(r, im.emit(Op::Neg, {r})); }
  Shape keep = s;
  keep[axis] = 1;
  return im.reshape(r, keep);  // the other axes kept their order, so this is the un-permute
}

template <bool kMin>
Status map_arg(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape s = im.shape(x);
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, s.size(), "axis"));
  DENOTE_ASSIGN_OR_RETURN(int64_t keepdims, attr_int(im, "keepdims", 1));
  DENOTE_ASSIGN_OR_RETURN(int64_t last, attr_int(im, "select_last_index", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, arg_extreme(im, x, static_cast<size_t>(axis), kMin, last != 0));
  if (!keepdims) {
    Shape out = s;
    out.erase(out.begin() + axis);
    DENOTE_ASSIGN_OR_RETURN(y, im.reshape(y, out));
  }
  // The typed import gives the output its ONNX type INT64 (an exact cast of the small integer);
  // the float import keeps the index as a float value.
  if (im.typed) {
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Cast, {y}, CastAttrs{typed::dtype_name(typed::DType::integer(64, true)),
                                                                "toward-zero"}));
  }
  return im.set_output(0, y);
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere: 1 - |sign(j - argmax)| (exact).
Status map_hardmax(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  const Shape s = im.shape(x);
  const bool coerce = im.opset() < 13;
  DENOTE_ASSIGN_OR_RETURN(int64_t a0, attr_int(im, "axis", coerce ? 1 : -1));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, norm_axis(im, a0, s.size(), "axis"));
  int64_t t = x;
  if (coerce) {
    const size_t a = static_cast<size_t>(axis);
    DENOTE_ASSIGN_OR_RETURN(t, im.reshape(x, Shape{dims_product(s, 0, a), dims_product(s, a, s.size())}));
    axis = 1;
  }
  const Shape ts = im.shape(t);
  DENOTE_ASSIGN_OR_RETURN(int64_t am, arg_extreme(im, t, static_cast<size_t>(axis), false, false));
  Shape jshape(ts.size(), 1);
  jshape[static_cast<size_t>(axis)] = ts[static_cast<size_t>(axis)];
  HostTensor iota;
  iota.shape = jshape;
  for (int64_t j = 0; j < ts[static_cast<size_t>(axis)]; ++j) iota.values.push_back(static_cast<double>(j));
  DENOTE_ASSIGN_OR_RETURN(int64_t j, im.emit_const(iota));
  DENOTE_ASSIGN_OR_RETURN(int64_t jb, im.broadcast(j, ts));
  DENOTE_ASSIGN_OR_RETURN(int64_t d, im.binary(Op::Sub, jb, am));
  DENOTE_ASSIGN_OR_RETURN(int64_t sg, im.emit(Op::Sign, {d}));
  DENOTE_ASSIGN_OR_RETURN(int64_t ab, im.emit(Op::Abs, {sg}));
  DENOTE_ASSIGN_OR_RETURN(int64_t one, im.emit_scalar(1.0, {}));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(Op::Sub, one, ab));
  if (coerce) { DENOTE_ASSIGN_OR_RETURN(y, im.reshape(y, s)); }
  return im.set_output(0, y);
}

// ---- Range: constant start, limit, delta folded on the host (numpy.arange's count ceil((limit -
// start) / delta), values start + i * delta in the operands' type).
Status map_range(Importer& im) {
  const HostTensor* a = im.const_input(0);
  const HostTensor* b = im.const_input(1);
  const HostTensor* c = im.const_input(2);
  if (!a || !b || !c || a->values.size() != 1 || b->values.size() != 1 || c->values.size() != 1)
    return im.fail("Range needs constant scalar start, limit and delta (computed ones are not supported)");
  HostTensor t;
  t.dtype = a->dtype;
  const bool ints = a->is_int();
  if (ints) {
    const int64_t start = a->ints[0], limit = b->ints[0], delta = c->ints[0];
    if (delta == 0) return im.fail("delta is 0");
    const __int128 span = static_cast<__int128>(limit) - start + delta + (delta > 0 ? -1 : 1);
    const __int128 count = span / delta;
    if (count > kMaxSynthesizedElements) return im.fail("Range is too long");
    const int64_t n = count < 0 ? 0 : static_cast<int64_t>(count);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(start) + static_cast<uint64_t>(i) * static_cast<uint64_t>(delta));
      t.ints.push_back(v);
      t.values.push_back(static_cast<double>(v));
    }
  } else {
    const double start = a->values[0], limit = b->values[0], delta = c->values[0];
    if (!(delta != 0)) return im.fail("delta is 0");
    const double count = std::ceil((limit - start) / delta);
    if (!(count < static_cast<double>(kMaxSynthesizedElements))) return im.fail("Range is too long");
    for (int64_t i = 0; i < static_cast<int64_t>(std::max(0.0, count)); ++i)
      t.values.push_back(start + static_cast<double>(i) * delta);
  }
  t.shape = {static_cast<int64_t>(t.values.size())};
  return im.set_output_const(0, std::move(t));
}

}  // namespace

Status map_resize(Importer& im);          // onnx_map_resize.cc
Status map_conv_transpose(Importer& im);  // onnx_map_convt.cc

std::vector<MapEntry> select_mappers() {
  return {
      {onnx_name(Op::Sub), map_arith<'-', Op::Sub>},
      {onnx_name(Op::MulElem), map_arith<'*', Op::MulElem>},
      {onnx_name(Op::Div), map_arith<'/', Op::Div>},
      {onnx_name(Op::Neg), map_neg},
      {"Where", map_where},
      {"Equal", map_compare<0>},
      {"Less", map_compare<1>},
      {"LessOrEqual", map_compare<2>},
      {"Greater", map_compare<3>},
      {"GreaterOrEqual", map_compare<4>},
      {"Xor", map_compare<5>},
      {"Not", map_not},
      {"EyeLike", map_eye_like},
      {"OneHot", map_one_hot},
      {"NegativeLogLikelihoodLoss", map_nll},
      {"SoftmaxCrossEntropyLoss", map_sce},
      {"ThresholdedRelu", map_thresholded_relu},
      {"Shrink", map_shrink},
      {"Resize", map_resize},
      {"Upsample", map_resize},
      {"ConvTranspose", map_conv_transpose},
      {"ArgMax", map_arg<false>},
      {"ArgMin", map_arg<true>},
      {"Hardmax", map_hardmax},
      {"Range", map_range},
  };
}

}  // namespace denote::onnxio
