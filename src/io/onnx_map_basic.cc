// ONNX -> IR mapping of elementwise ops, constants, casts and contractions (Gemm, MatMul, with
// MatMul + Add fused into `linear` when the weight and bias are initializers: x W, and W x for a
// vector x).
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "onnx_import.h"
#include "onnx_index.h"

namespace denote::onnxio {
namespace {

using onnx::TensorProto;

// Output `out` is input `in` unchanged (Identity, Dropout in inference, Cast to DOUBLE).
Status alias(Importer& im, int out, int in) {
  if (const HostTensor* c = im.const_input(in)) return im.set_output_const(out, *c);
  DENOTE_ASSIGN_OR_RETURN(int64_t id, im.input(in));
  return im.set_output(out, id);
}

template <Op kOp>
Status map_unary(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(kOp, {x}));
  return im.set_output(0, y);
}

Result<int64_t> scale(Importer& im, int64_t x, double factor) {
  if (factor == 1.0) return x;
  DENOTE_ASSIGN_OR_RETURN(int64_t c, im.emit_scalar(factor, {}));
  return im.binary(Op::MulElem, x, c);
}

// If input k is a MatMul-made linear node and the other operand a constant bias row, the Add
// becomes that linear node's bias (the same arithmetic: inner product, then + b).
bool try_fuse_bias(Importer& im, int k) {
  const HostTensor* b = im.const_input(1 - k);
  if (!b || im.const_input(k) || !im.has_input(k)) return false;
  auto id = im.input(k);
  // The MatMul's value must reach only this Add: one name, read once (no alias used elsewhere).
  if (!id.ok() || !im.fusable_linear.count(*id) || im.names_of(*id) != 1 || im.use_count(im.node().input(k)) != 1)
    return false;
  const Shape& ys = im.shape(*id);
  if (b->shape.empty() || b->shape.size() > ys.size() || b->shape.back() != ys.back()) return false;
  for (size_t i = 0; i + 1 < b->shape.size(); ++i)
    if (b->shape[i] != 1) return false;
  im.model().payload.linear[*id].bias = b->values;
  im.fusable_linear.erase(*id);
  return im.set_output(0, *id).ok();
}

Status map_add(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(bool folded, fold_int_binary(im, '+'));
  if (folded) return ok_status();
  if (try_fuse_bias(im, 0) || try_fuse_bias(im, 1)) return ok_status();
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(Op::Add, a, b));
  return im.set_output(0, y);
}

// Max, Min, Sum, Mean: a left fold with broadcasting; Mean divides by the operand count.
template <Op kOp, bool kMean = false>
Status map_variadic(Importer& im) {
  if (im.input_count() < 1) return im.fail("needs at least one input");
  DENOTE_ASSIGN_OR_RETURN(int64_t acc, im.input(0));
  for (int k = 1; k < im.input_count(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(k));
    DENOTE_ASSIGN_OR_RETURN(acc, im.binary(kOp, acc, x));
  }
  if (kMean && im.input_count() > 1) {
    DENOTE_ASSIGN_OR_RETURN(int64_t n, im.emit_scalar(static_cast<double>(im.input_count()), {}));
    DENOTE_ASSIGN_OR_RETURN(acc, im.binary(Op::Div, acc, n));
  }
  return im.set_output(0, acc);
}

// Bound of Clip: attribute before opset 11, optional scalar input from 11 on.
Result<std::optional<double>> clip_bound(Importer& im, int input, const char* attr, double absent) {
  if (im.opset() < 11) {
    DENOTE_ASSIGN_OR_RETURN(double v, attr_float(im, attr, absent));
    if (v == absent) return std::optional<double>{};
    return std::optional<double>{v};
  }
  if (!im.has_input(input)) return std::optional<double>{};
  const HostTensor* c = im.const_input(input);
  if (c && c->values.size() != 1) return im.fail(fmt::format("{} must be a scalar", attr));
  if (!c) return std::optional<double>{std::nan("")};  // computed: max_elem / min_elem below
  return std::optional<double>{c->values[0]};
}

// Clip with a bound computed by the graph: max_elem / min_elem against the broadcast bound.
Result<int64_t> clip_computed(Importer& im, int64_t y, int input, Op op) {
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(input));
  return im.binary(op, y, b);
}

Status map_clip(Importer& im) {
  const double inf = std::numeric_limits<double>::infinity();
  DENOTE_ASSIGN_OR_RETURN(auto lo, clip_bound(im, 1, "min", -std::numeric_limits<float>::max()));
  DENOTE_ASSIGN_OR_RETURN(auto hi, clip_bound(im, 2, "max", std::numeric_limits<float>::max()));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.input(0));
  if (lo && std::isnan(*lo)) {
    DENOTE_ASSIGN_OR_RETURN(y, clip_computed(im, y, 1, Op::MaxElem));
  } else if (lo && *lo != -inf) {
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::ClampMin, {y}, ClampAttrs{*lo}));
  }
  if (hi && std::isnan(*hi)) {
    DENOTE_ASSIGN_OR_RETURN(y, clip_computed(im, y, 2, Op::MinElem));
  } else if (hi && *hi != inf) {  // min(y, hi) = -max(-y, -hi), exact
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Neg, {y}));
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::ClampMin, {y}, ClampAttrs{-*hi}));
    DENOTE_ASSIGN_OR_RETURN(y, im.emit(Op::Neg, {y}));
  }
  return im.set_output(0, y);
}

Result<Shape> input_shape(Importer& im, int i) {
  if (const HostTensor* c = im.const_input(i)) return c->shape;
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(i));
  return im.shape(x);
}

Status map_identity(Importer& im) { return alias(im, 0, 0); }

Status map_dropout(Importer& im) {
  bool training = false;
  if (im.opset() < 7) {
    DENOTE_ASSIGN_OR_RETURN(int64_t is_test, attr_int(im, "is_test", 0));
    training = is_test == 0;
  } else if (im.has_input(2)) {
    const HostTensor* t = im.const_input(2);
    if (!t || t->values.size() != 1) return im.fail("training_mode must be a constant scalar");
    training = t->values[0] != 0.0;
  }
  if (training) return im.fail("training mode is not supported (inference only)");
  if (im.wants_output(1)) {  // the mask: all true in inference
    DENOTE_ASSIGN_OR_RETURN(Shape s, input_shape(im, 0));
    auto n = checked_numel(s);
    if (!n.ok() || *n > kMaxSynthesizedElements) return im.fail("mask is too large");
    HostTensor mask = int_tensor(s, std::vector<int64_t>(static_cast<size_t>(*n), 1));
    mask.dtype = TensorProto::BOOL;
    DENOTE_RETURN_IF_ERROR(im.set_output_const(1, std::move(mask)));
  }
  return alias(im, 0, 0);
}

Result<HostTensor> constant_value(Importer& im) {
  const auto& n = im.node();
  if (n.attribute_size() != 1) return im.fail("expects exactly one value attribute");
  const auto& a = n.attribute(0);
  HostTensor t;
  if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) {
    auto h = tensor_from_proto(a.t());
    if (!h.ok()) return im.fail(h.message());
    return *h;
  }
  if (a.name() == "value_float" && a.type() == onnx::AttributeProto::FLOAT) {
    t.dtype = TensorProto::FLOAT;
    t.values = {static_cast<double>(a.f())};
  } else if (a.name() == "value_floats" && a.type() == onnx::AttributeProto::FLOATS) {
    t.dtype = TensorProto::FLOAT;
    for (float f : a.floats()) t.values.push_back(f);
    t.shape = {static_cast<int64_t>(t.values.size())};
  } else if (a.name() == "value_int" && a.type() == onnx::AttributeProto::INT) {
    t = int_tensor({}, {a.i()});
  } else if (a.name() == "value_ints" && a.type() == onnx::AttributeProto::INTS) {
    t = int_tensor({a.ints_size()}, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
  } else {
    return im.fail(fmt::format("attribute '{}' is not supported (tensor, float(s) and int(s) values only)", a.name()));
  }
  return t;
}

Status map_constant(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(HostTensor t, constant_value(im));
  return im.set_output_const(0, std::move(t));
}

// A constant converted on the host: integers truncate toward zero, as numpy's astype does.
Result<HostTensor> cast_host(Importer& im, const HostTensor& in, int32_t to) {
  HostTensor t;
  t.shape = in.shape;
  t.dtype = to;
  for (double v : in.values) {
    if (to == TensorProto::FLOAT) t.values.push_back(static_cast<float>(v));
    else if (is_real_dtype(to)) t.values.push_back(v);
    else if (to == TensorProto::BOOL) t.ints.push_back(v != 0.0), t.values.push_back(v != 0.0);
    else if (!(std::fabs(v) < 9.2e18)) return im.fail("constant value out of range for " + dtype_name(to));
    else t.ints.push_back(static_cast<int64_t>(v)), t.values.push_back(std::trunc(v));
  }
  if (!t.is_int() && !is_real_dtype(to)) return im.fail("cast of a constant to " + dtype_name(to) + " is not supported");
  if (in.is_int() && t.is_int()) t.ints = in.ints;  // exact for 64-bit integers
  return t;
}

Status cast_to(Importer& im, int64_t to);

Status map_cast(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t to, attr_int(im, "to", 0));
  return cast_to(im, to);
}

// CastLike: Cast to the element type of input 1, which the float import knows for constants.
Status map_cast_like(Importer& im) {
  const HostTensor* like = im.const_input(1);
  if (!like)
    return im.fail("CastLike needs the element type of its second input: give it as a constant (the float import "
                   "does not track the element types of graph inputs)");
  return cast_to(im, like->dtype);
}

Status cast_to(Importer& im, int64_t to) {
  if (const HostTensor* c = im.const_input(0)) {
    DENOTE_ASSIGN_OR_RETURN(HostTensor t, cast_host(im, *c, static_cast<int32_t>(to)));
    return im.set_output_const(0, std::move(t));
  }
  if (to == TensorProto::DOUBLE) return alias(im, 0, 0);
  std::string dtype;
  if (to == TensorProto::FLOAT) dtype = "binary32";
  else if (to == TensorProto::FLOAT16) dtype = "binary16";
  else if (to == TensorProto::BFLOAT16) dtype = "bfloat16";
  else return im.fail("cast to " + dtype_name(static_cast<int32_t>(to)) + " is not supported (real-valued tensors only)");
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Cast, {x}, CastAttrs{dtype, "nearest-even"}));
  return im.set_output(0, y);
}

Status map_shape(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape s, input_shape(im, 0));
  const int64_t r = static_cast<int64_t>(s.size());
  DENOTE_ASSIGN_OR_RETURN(int64_t start, attr_int(im, "start", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t end, attr_int(im, "end", r));
  start = std::clamp(start < 0 ? start + r : start, int64_t{0}, r);
  end = std::clamp(end < 0 ? end + r : end, int64_t{0}, r);
  std::vector<int64_t> dims(s.begin() + start, s.begin() + std::max(start, end));
  const int64_t n = static_cast<int64_t>(dims.size());
  return im.set_output_const(0, int_tensor({n}, std::move(dims)));
}

Status map_size(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(Shape s, input_shape(im, 0));
  return im.set_output_const(0, int_tensor({}, {numel(s)}));
}

Status map_constant_of_shape(Importer& im) {
  const HostTensor* s = im.const_input(0);
  if (!s || !s->is_int() || s->shape.size() != 1) return im.fail("the shape input must be a constant 1-D integer tensor");
  HostTensor fill;
  fill.dtype = TensorProto::FLOAT;
  fill.values = {0.0};
  if (const auto* a = find_attr(im.node(), "value")) {
    auto h = tensor_from_proto(a->t());
    if (!h.ok() || h->values.size() != 1) return im.fail("attribute 'value' must be a one-element tensor");
    fill = *h;
  }
  Shape shape(s->ints.begin(), s->ints.end());
  auto n = checked_numel(shape);
  if (!n.ok() || *n > kMaxSynthesizedElements) return im.fail("shape " + to_string(shape) + " is invalid or too large");
  HostTensor t;
  t.shape = shape;
  t.dtype = fill.dtype;
  t.values.assign(static_cast<size_t>(*n), fill.values[0]);
  if (fill.is_int()) t.ints.assign(static_cast<size_t>(*n), fill.ints[0]);
  return im.set_output_const(0, std::move(t));
}

Status map_gelu(Importer& im) {
  const auto* a = find_attr(im.node(), "approximate");
  if (a && a->s() != "none") return im.fail("approximate='" + a->s() + "' is not supported (exact erf form only)");
  return map_unary<Op::Gelu>(im);
}

// A linear node y = x W^T + b over the last axis of x, W [n, k] row-major.
Result<int64_t> emit_linear(Importer& im, int64_t x, int64_t n, int64_t k, std::vector<double> w,
                            std::vector<double> b) {
  Shape out = im.shape(x);
  if (out.empty() || out.back() != k)
    return im.fail(fmt::format("inner dims mismatch: {} vs weight [{}, {}]", to_string(out), k, n));
  if (n > kMaxSynthesizedElements) return im.fail(fmt::format("output width {} is too large", n));
  out.back() = n;
  DENOTE_ASSIGN_OR_RETURN(int64_t id, im.emit(Op::Linear, {x}, NoAttrs{}, out));
  im.model().payload.linear[id] = LinearRecord<double>{n, k, std::move(w), std::move(b)};
  return id;
}

// Row-major [rows, cols] -> [cols, rows].
std::vector<double> transposed(const std::vector<double>& v, int64_t rows, int64_t cols) {
  std::vector<double> t(v.size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) t[static_cast<size_t>(c * rows + r)] = v[static_cast<size_t>(r * cols + c)];
  return t;
}

// W x with W a constant [n, k] and x a vector [k] (nn4sys's learned indices write their layers this
// way): the linear node y = W x, before W is materialised as a constant node; -1 when not that form.
Result<int64_t> weight_first_linear(Importer& im) {
  const HostTensor* w = im.const_input(0);
  if (!w || w->shape.size() != 2 || im.const_input(1) || w->shape[0] > kMaxSynthesizedElements) return int64_t{-1};
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(1));
  const Shape xs = im.shape(x);
  if (xs.size() != 1 || xs[0] != w->shape[1]) return int64_t{-1};
  const int64_t n = w->shape[0], k = w->shape[1];
  return emit_linear(im, x, n, k, w->values, std::vector<double>(static_cast<size_t>(n)));
}

Status map_matmul(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(const int64_t wx, weight_first_linear(im));
  if (wx >= 0) {
    if (im.wants_output(0) && im.use_count(im.node().output(0)) == 1) im.fusable_linear.insert(wx);
    return im.set_output(0, wx);
  }
  const HostTensor* w = im.const_input(1);
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  if (w && w->shape.size() == 2 && !im.shape(a).empty() && w->shape[1] <= kMaxSynthesizedElements) {
    const int64_t k = w->shape[0], n = w->shape[1];
    DENOTE_ASSIGN_OR_RETURN(
        int64_t y, emit_linear(im, a, n, k, transposed(w->values, k, n), std::vector<double>(static_cast<size_t>(n))));
    if (im.wants_output(0) && im.use_count(im.node().output(0)) == 1) im.fusable_linear.insert(y);
    return im.set_output(0, y);
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Matmul, {a, b}));
  return im.set_output(0, y);
}

// Gemm's bias when C is one row broadcast over all M rows (shape [], [1], [N] or [1, N]).
std::optional<std::vector<double>> gemm_row_bias(const HostTensor* c, int64_t n, double beta) {
  if (!c) return std::vector<double>(static_cast<size_t>(n), 0.0);
  if (c->shape.size() > 2 || (c->shape.size() == 2 && c->shape[0] != 1)) return std::nullopt;
  if (!c->shape.empty() && c->shape.back() != n && c->shape.back() != 1) return std::nullopt;
  std::vector<double> b(static_cast<size_t>(n));
  for (int64_t j = 0; j < n; ++j) b[static_cast<size_t>(j)] = beta * c->values[c->values.size() == 1 ? 0 : static_cast<size_t>(j)];
  return b;
}

Status map_gemm(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(double alpha, attr_float(im, "alpha", 1.0));
  DENOTE_ASSIGN_OR_RETURN(double beta, attr_float(im, "beta", 1.0));
  DENOTE_ASSIGN_OR_RETURN(int64_t trans_a, attr_int(im, "transA", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t trans_b, attr_int(im, "transB", 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  if (im.shape(a).size() != 2) return im.fail("A must be 2-D, got " + to_string(im.shape(a)));
  if (trans_a) { DENOTE_ASSIGN_OR_RETURN(a, im.emit(Op::Transpose, {a}, TransposeAttrs{0, 1})); }
  const HostTensor* w = im.const_input(1);
  const HostTensor* c = im.has_input(2) ? im.const_input(2) : nullptr;
  std::optional<std::vector<double>> bias;
  if (w && w->shape.size() == 2 && (trans_b ? w->shape[0] : w->shape[1]) <= kMaxSynthesizedElements)
    bias = gemm_row_bias(c, trans_b ? w->shape[0] : w->shape[1], beta);
  if (bias && (c || !im.has_input(2))) {
    const int64_t n = trans_b ? w->shape[0] : w->shape[1], k = trans_b ? w->shape[1] : w->shape[0];
    std::vector<double> wt = trans_b ? w->values : transposed(w->values, k, n);
    for (double& v : wt) v *= alpha;
    DENOTE_ASSIGN_OR_RETURN(int64_t y, emit_linear(im, a, n, k, std::move(wt), std::move(*bias)));
    return im.set_output(0, y);
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  if (im.shape(b).size() != 2) return im.fail("B must be 2-D, got " + to_string(im.shape(b)));
  if (trans_b) { DENOTE_ASSIGN_OR_RETURN(b, im.emit(Op::Transpose, {b}, TransposeAttrs{0, 1})); }
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Matmul, {a, b}));
  DENOTE_ASSIGN_OR_RETURN(y, scale(im, y, alpha));
  if (im.has_input(2)) {
    DENOTE_ASSIGN_OR_RETURN(int64_t cc, im.input(2));
    DENOTE_ASSIGN_OR_RETURN(cc, scale(im, cc, beta));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(Op::Add, y, cc));
  }
  return im.set_output(0, y);
}


// The 1:1 import of an onnx_direct op (ops.def): its ONNX op type maps back to it; nullptr where
// the op needs a hand-written mapper (not unary and not elementwise binary).
template <Op kOp>
constexpr MapFn direct_mapper() {
  constexpr const OpInfo& info = kOpTable[static_cast<size_t>(kOp)];
  if constexpr (info.onnx.how != OnnxExport::Direct) return nullptr;
  else if constexpr (info.max_parents == 1) return map_unary<kOp>;
  else if constexpr (info.min_parents == 2 && info.max_parents == 2 && (info.flags & kFlagElementwise))
    return map_binary<kOp>;
  else return nullptr;
}

constexpr MapFn kDirectMappers[] = {
#define DENOTE_OP(name, ...) direct_mapper<Op::name>(),
#include "denote/ir/ops.def"
#undef DENOTE_OP
};

}  // namespace

std::vector<MapEntry> direct_mappers() {
  std::vector<MapEntry> out;
  for (const OpInfo& info : kOpTable)
    if (const MapFn fn = kDirectMappers[static_cast<size_t>(info.op)]) out.push_back({info.onnx.name, fn});
  return out;
}

// ONNX op types named in ops.def's onnx column are spelled there (onnx_name), never here.
std::vector<MapEntry> basic_mappers() {
  return {
      {"Gelu", map_gelu},  // ONNX Gelu is opset 20; export writes opset 17, so gelu has no onnx column
      {onnx_name(Op::Add), map_add}, {onnx_name(Op::MaxElem), map_variadic<Op::MaxElem>},
      {onnx_name(Op::MinElem), map_variadic<Op::MinElem>}, {"Sum", map_variadic<Op::Add>},
      {"Mean", map_variadic<Op::Add, true>},
      {"Clip", map_clip}, {onnx_name(Op::Detach), map_identity}, {"Dropout", map_dropout}, {"Constant", map_constant},
      {onnx_name(Op::Cast), map_cast}, {"CastLike", map_cast_like}, {"Shape", map_shape}, {"Size", map_size},
      {"ConstantOfShape", map_constant_of_shape},
      {onnx_name(Op::Matmul), map_matmul}, {onnx_name(Op::Linear), map_gemm},
  };
}

}  // namespace denote::onnxio
