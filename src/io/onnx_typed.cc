// Typed ONNX import (include/denote/io/onnx.h, docs/ONNX.md "Typed import"): the shared import
// driver with a dispatcher that knows each IR node's ONNX element type. Ops whose float mapping is
// also right for integers (wrapping Add/Sub/Mul, Neg, Abs, Max, Min, Sum, layout ops, constants)
// reuse the float mappers; Div, Mod, Pow, Clip, Cast, And, Or on integers/bool get mappings here;
// every other op on an integer or bool operand is an error naming the ONNX node. Constants keep
// their exact element words (typed::TypedTensor).
#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>
#include <iterator>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "denote/io/onnx.h"
#include "denote/typed/cast.h"
#include "onnx_import.h"

namespace denote {
namespace onnxio {
namespace {

using onnx::TensorProto;
using typed::DType;

// ONNX op types only the typed import maps (integer Mod, bool And / Or).
constexpr std::string_view kAnd = "And", kMod = "Mod", kOr = "Or";
constexpr std::string_view kTypedOnlyOps[] = {kAnd, kMod, kOr};

// Element type of an IR node: input / const types as recorded, a cast's target, else parent 0's.
Result<int32_t> node_type(Importer& im, int64_t id);

// Operand i's element type (a constant's own type, without materializing it).
Result<int32_t> operand_type(Importer& im, int i) {
  if (const HostTensor* c = im.const_input(i)) return c->dtype;
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(i));
  return node_type(im, x);
}

// The float mapper of `op_type` (an error, not a crash, when there is none).
Status run_mapper(Importer& im, std::string_view op_type) {
  const MapFn fn = find_mapper(op_type);
  if (!fn) return im.fail(fmt::format("no mapper for {}", op_type));
  return fn(im);
}

bool is_float_type(int32_t et) {
  return et == TensorProto::FLOAT || et == TensorProto::DOUBLE || et == TensorProto::FLOAT16 ||
         et == TensorProto::BFLOAT16;
}

Status unsupported_on(const Importer& im, int32_t et, const std::string& why = "") {
  return im.fail(fmt::format("{} on {} tensors is not supported by the typed import{}", im.node().op_type(),
                             dtype_name(et), why.empty() ? "" : " (" + why + ")"));
}

int32_t type_of_dtype(const DType& t) {
  if (t.is_bool()) return TensorProto::BOOL;
  if (t.is_binary()) {
    const std::string n = typed::dtype_name(t);
    if (n == "binary32") return TensorProto::FLOAT;
    if (n == "binary16") return TensorProto::FLOAT16;
    if (n == "bfloat16") return TensorProto::BFLOAT16;
    return TensorProto::DOUBLE;
  }
  switch (t.width) {
    case 8: return t.is_signed ? TensorProto::INT8 : TensorProto::UINT8;
    case 16: return t.is_signed ? TensorProto::INT16 : TensorProto::UINT16;
    case 32: return t.is_signed ? TensorProto::INT32 : TensorProto::UINT32;
    default: return t.is_signed ? TensorProto::INT64 : TensorProto::UINT64;
  }
}

// A cast node's target type (an error for a cast the importer did not write).
Result<int32_t> cast_target_type(const Node& n) {
  const auto* c = std::get_if<CastAttrs>(&n.attrs);
  if (!c) return error_status(ErrorCode::kInternal, fmt::format("onnx: node {}: cast without cast attrs", n.id));
  DENOTE_ASSIGN_OR_RETURN(DType t, typed::parse_dtype(c->dtype));
  return type_of_dtype(t);
}

Result<int32_t> node_type(Importer& im, int64_t id) {
  const auto& nodes = im.model().graph.nodes;
  if (id < 0 || static_cast<size_t>(id) >= nodes.size())
    return error_status(ErrorCode::kInternal, fmt::format("onnx: node id {} is out of range", id));
  for (size_t k = im.node_types.size(); k <= static_cast<size_t>(id); ++k) {
    const Node& n = nodes[k];
    int32_t t = TensorProto::DOUBLE;
    if (n.op == Op::Input) t = im.input_types.count(n.id) ? im.input_types.at(n.id) : t;
    else if (n.op == Op::Const) t = im.const_tensors.count(n.id) ? im.const_tensors.at(n.id).dtype : t;
    else if (n.op == Op::Cast) { DENOTE_ASSIGN_OR_RETURN(t, cast_target_type(n)); }
    else if (!n.parents.empty()) t = im.node_types[static_cast<size_t>(n.parents[0])];
    im.node_types.push_back(t);
  }
  return im.node_types[static_cast<size_t>(id)];
}

// A cast node of x to `to` (nearest-even; toward zero into an integer, as numpy's astype); our cast
// rules decide what is allowed (int -> other int and anything -> bool are not).
Result<int64_t> emit_cast(Importer& im, int64_t x, int32_t to) {
  DENOTE_ASSIGN_OR_RETURN(int32_t from, node_type(im, x));
  if (from == to) return x;
  DENOTE_ASSIGN_OR_RETURN(DType s, onnx_dtype(from));
  DENOTE_ASSIGN_OR_RETURN(DType t, onnx_dtype(to));
  if (Status c = typed::check_cast(s, t); !c.ok()) return im.fail(c.message());
  const char* mode = t.is_int() ? "toward-zero" : "nearest-even";
  return im.emit(Op::Cast, {x}, CastAttrs{typed::dtype_name(t), mode});
}

// A constant integer tensor converted to another integer type whose range holds every value.
std::optional<HostTensor> fold_int_cast(const HostTensor& c, int32_t to) {
  auto s = onnx_dtype(c.dtype), t = onnx_dtype(to);
  if (!s.ok() || !t.ok() || !s->is_int() || !t->is_int()) return std::nullopt;
  for (int64_t v : c.ints) {
    if (c.dtype == TensorProto::UINT64 && v < 0) return std::nullopt;  // above INT64_MAX
    const bool fits = t->width == 64 ? (t->is_signed || v >= 0)
                      : t->is_signed ? v >= -(int64_t{1} << (t->width - 1)) && v < (int64_t{1} << (t->width - 1))
                                     : v >= 0 && v < (int64_t{1} << t->width);
    if (!fits) return std::nullopt;
  }
  HostTensor out = c;
  out.dtype = to;
  return out;
}

Status map_cast(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t to64, attr_int(im, "to", 0));
  const int32_t to = static_cast<int32_t>(to64);
  DENOTE_ASSIGN_OR_RETURN(int32_t from, operand_type(im, 0));
  if (from == to) return run_mapper(im, onnx_name(Op::Detach));  // Identity
  if (const HostTensor* c = im.const_input(0))
    if (auto folded = fold_int_cast(*c, to)) return im.set_output_const(0, std::move(*folded));
  if (!onnx_dtype(to).ok()) return im.fail("cast to " + dtype_name(to) + " is not supported");
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, emit_cast(im, x, to));
  return im.set_output(0, y);
}

// Mod: fmod = 0 takes the divisor's sign (remainder); fmod = 1 the dividend's, which for signed
// ints is a - trunc(a / b) * b (exact with wrapping arithmetic, also for min % -1 = 0).
Status map_mod(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int32_t et, operand_type(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int64_t fmod, attr_int(im, "fmod", 0));
  auto t = onnx_dtype(et);
  if (!t.ok() || !t->is_int()) return unsupported_on(im, et, is_float_type(et) ? "the IR has no floating-point fmod" : "");
  if (fmod == 0 || !t->is_signed) return map_binary<Op::Remainder>(im);
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  DENOTE_ASSIGN_OR_RETURN(int64_t q, im.binary(Op::DivTrunc, a, b));
  DENOTE_ASSIGN_OR_RETURN(int64_t p, im.binary(Op::MulElem, q, b));
  DENOTE_ASSIGN_OR_RETURN(int64_t r, im.binary(Op::Sub, a, p));
  return im.set_output(0, r);
}

// Pow: int ** int is the wrapping integer pow (nonnegative exponents; negative ones follow
// docs/TYPED.md, numpy rejects them); int ** float is computed in binary64 and truncated back to
// the base's type (numpy: power in float64, then astype); float ** int casts the exponent.
Status map_pow(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int32_t tb, operand_type(im, 0));
  DENOTE_ASSIGN_OR_RETURN(int32_t te, operand_type(im, 1));
  DENOTE_ASSIGN_OR_RETURN(int64_t a, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t b, im.input(1));
  if (tb == TensorProto::BOOL || te == TensorProto::BOOL) return unsupported_on(im, TensorProto::BOOL);
  if (is_float_type(tb)) {
    DENOTE_ASSIGN_OR_RETURN(b, emit_cast(im, b, tb));
    DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(Op::Pow, a, b));
    return im.set_output(0, y);
  }
  if (!is_float_type(te)) {
    if (tb != te) return im.fail(fmt::format("Pow of {} by {}: integer operands of different types are not "
                                             "supported", dtype_name(tb), dtype_name(te)));
    DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(Op::Pow, a, b));
    return im.set_output(0, y);
  }
  DENOTE_ASSIGN_OR_RETURN(int64_t fa, emit_cast(im, a, TensorProto::DOUBLE));
  DENOTE_ASSIGN_OR_RETURN(int64_t fb, emit_cast(im, b, TensorProto::DOUBLE));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.binary(Op::Pow, fa, fb));
  DENOTE_ASSIGN_OR_RETURN(y, emit_cast(im, y, tb));
  return im.set_output(0, y);
}

// Clip of integers: max_elem with min, min_elem with max (the bounds are inputs from opset 11).
Status map_clip_int(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.input(0));
  if (im.has_input(1)) {
    DENOTE_ASSIGN_OR_RETURN(int64_t lo, im.input(1));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(Op::MaxElem, y, lo));
  }
  if (im.has_input(2)) {
    DENOTE_ASSIGN_OR_RETURN(int64_t hi, im.input(2));
    DENOTE_ASSIGN_OR_RETURN(y, im.binary(Op::MinElem, y, hi));
  }
  return im.set_output(0, y);
}

// And / Or of bool tensors: min_elem / max_elem (logical and / or, docs/TYPED.md).
template <Op kOp>
Status map_logic(Importer& im) {
  DENOTE_ASSIGN_OR_RETURN(int32_t et, operand_type(im, 0));
  if (et != TensorProto::BOOL) return unsupported_on(im, et);
  return map_binary<kOp>(im);
}

// MaxPool of integers up to 32 bits: the float mapping in binary64 between exact casts. Every value
// is exact in binary64 and the pool selects one of them, so the cast back is exact too (a window of
// padding only would give -inf, which the cast back reports as an error).
Status map_selection_via_binary64(Importer& im, int32_t et) {
  const Result<DType> dt = onnx_dtype(et);
  if (!dt.ok()) return unsupported_on(im, et);
  const DType& t = *dt;
  if (!t.is_int() || t.width > 32) return unsupported_on(im, et, "values above 2^53 are not exact in binary64");
  if (im.input_count() != 1 || !im.has_input(0)) return unsupported_on(im, et);
  for (int k = 1; k < im.node().output_size(); ++k)
    if (im.wants_output(k)) return im.fail("only output 0 is supported for integer tensors");
  DENOTE_ASSIGN_OR_RETURN(int64_t x, im.input(0));
  DENOTE_ASSIGN_OR_RETURN(int64_t fx, emit_cast(im, x, TensorProto::DOUBLE));
  // The float mapper runs on a copy of the node that reads and writes internal names.
  const onnx::NodeProto* original = &im.node();
  const size_t index = im.node_index();
  onnx::NodeProto copy = *original;
  const std::string in = fmt::format("\x01typed_in_{}", index), out = fmt::format("\x01typed_out_{}", index);
  copy.set_input(0, in);
  if (copy.output_size() == 0)  // no outputs at all: the mapper still checks the node; nothing is bound
    copy.add_output(out);
  else
    copy.set_output(0, out);
  DENOTE_RETURN_IF_ERROR(im.define_node(in, fx, "typed operand"));
  im.begin_node(&copy, index);
  Status s = run_mapper(im, copy.op_type());
  im.begin_node(original, index);
  DENOTE_RETURN_IF_ERROR(s);
  DENOTE_ASSIGN_OR_RETURN(int64_t fy, im.value_node(out));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, emit_cast(im, fy, et));
  return im.set_output(0, y);
}

// Ops whose float mapping is exact for integer and bool operands too: the ONNX op types of IR ops
// with an integer meaning or that only move words (ops.def's onnx column and flags), and the
// shape-level ops below (no IR counterpart of their own).
bool int_safe(const std::string& op) {
  for (const OpInfo& info : kOpTable)
    if (!info.onnx.name.empty() && info.onnx.name == op && (info.flags & (kFlagInteger | kFlagStorageOnly)))
      return true;
  static const std::set<std::string, std::less<>> kShapeOps = {
      "Sum", "Flatten", "Squeeze", "Unsqueeze", "Shape", "Size", "Constant", "ConstantOfShape",
      // element moves and selections decided at import time (onnx_map_index.cc, onnx_map_select.cc)
      "Slice", "GatherElements", "GatherND", "Split", "Pad", "Tile", "DepthToSpace", "SpaceToDepth", "Trilu",
      "Compress", "ReverseSequence", "Where", "Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not",
      "Xor", "EyeLike", "OneHot", "Range"};
  return kShapeOps.count(op) != 0;
}

// Constants the float mappers synthesize are DOUBLE; under a node of another float type they take
// that type (ONNX operands of one op share their type, so a DOUBLE constant there is synthesized).
void retype_synthesized(Importer& im, size_t first, int32_t et) {
  if (!is_float_type(et) || et == TensorProto::DOUBLE) return;
  for (size_t id = first; id < im.model().graph.size(); ++id) {
    auto it = im.const_tensors.find(static_cast<int64_t>(id));
    if (it != im.const_tensors.end() && it->second.dtype == TensorProto::DOUBLE) it->second.dtype = et;
  }
}

Status dispatch(Importer& im) {
  const std::string& op = im.node().op_type();
  if (op == onnx_name(Op::Cast)) return map_cast(im);
  if (op == onnx_name(Op::Pow)) return map_pow(im);
  if (op == kAnd) return map_logic<Op::MinElem>(im);
  if (op == kMod) return map_mod(im);
  if (op == kOr) return map_logic<Op::MaxElem>(im);
  int32_t et = -1;
  if (im.input_count() > 0 && im.has_input(0)) { DENOTE_ASSIGN_OR_RETURN(et, operand_type(im, 0)); }
  const bool int_like = et >= 0 && !is_float_type(et);
  if (int_like && op == onnx_name(Op::Div)) {
    if (et == TensorProto::BOOL) return unsupported_on(im, et);
    return map_binary<Op::DivTrunc>(im);
  }
  if (int_like && op == "Clip") return map_clip_int(im);
  if (int_like && op == onnx_name(Op::MaxPool)) return map_selection_via_binary64(im, et);
  if (int_like && !int_safe(op)) return unsupported_on(im, et);
  const size_t first = im.model().graph.size();
  DENOTE_RETURN_IF_ERROR(run_mapper(im, op));
  retype_synthesized(im, first, et);
  return ok_status();
}

// A tensor's element word j: ints as two's complement in the width, bools 0/1, floats encoded
// in their format from the exact double value (rounded to nearest-even when synthesized).
Result<Word> host_word(const HostTensor& h, const DType& t, const DType& f64, const DType& f32, size_t j) {
  if (!t.is_binary() && j >= h.ints.size()) return error_status("integer values are missing");
  if (t.is_bool()) return Word::of(h.ints[j] != 0 ? 1 : 0);
  if (t.is_int()) {
    const uint64_t bits = static_cast<uint64_t>(h.ints[j]);
    return Word::of(t.width >= 64 ? bits : bits & ((uint64_t{1} << t.width) - 1));
  }
  const double v = h.values[j];
  if (t == f64) return Word::of(std::bit_cast<uint64_t>(v));
  // binary32 holds a float tensor's values exactly: its bits, as the cast gives them (NaN excepted).
  if (t == f32 && !std::isnan(v) && static_cast<double>(static_cast<float>(v)) == v)
    return Word::of(std::bit_cast<uint32_t>(static_cast<float>(v)));
  DENOTE_ASSIGN_OR_RETURN(typed::CastResult r,
                          typed::cast_word(f64, t, Rounding::NearestEven, Word::of(std::bit_cast<uint64_t>(v))));
  return r.word;
}

Result<typed::TypedTensor> typed_from_host(const HostTensor& h) {
  DENOTE_ASSIGN_OR_RETURN(DType t, onnx_dtype(h.dtype));
  DENOTE_ASSIGN_OR_RETURN(DType f64, typed::parse_dtype("binary64"));
  DENOTE_ASSIGN_OR_RETURN(DType f32, typed::parse_dtype("binary32"));
  if (typed::limb_count(t) == 1) {  // one limb an element: no Word each
    std::vector<uint64_t> values;
    values.reserve(h.values.size());
    for (size_t j = 0; j < h.values.size(); ++j) {
      DENOTE_ASSIGN_OR_RETURN(Word w, host_word(h, t, f64, f32, j));
      values.push_back(w.low());
    }
    return typed::load_narrow(t, h.shape, std::move(values));
  }
  std::vector<Word> ws;
  ws.reserve(h.values.size());
  for (size_t j = 0; j < h.values.size(); ++j) {
    DENOTE_ASSIGN_OR_RETURN(Word w, host_word(h, t, f64, f32, j));
    ws.push_back(std::move(w));
  }
  return typed::load(t, h.shape, ws);
}

}  // namespace
}  // namespace onnxio

Result<typed::DType> onnx_dtype(int32_t data_type) {
  using T = onnx::TensorProto;
  switch (data_type) {
    case T::FLOAT: return typed::parse_dtype("binary32");
    case T::DOUBLE: return typed::parse_dtype("binary64");
    case T::FLOAT16: return typed::parse_dtype("binary16");
    case T::BFLOAT16: return typed::parse_dtype("bfloat16");
    case T::BOOL: return typed::DType::boolean();
    case T::INT8: return typed::DType::integer(8, true);
    case T::INT16: return typed::DType::integer(16, true);
    case T::INT32: return typed::DType::integer(32, true);
    case T::INT64: return typed::DType::integer(64, true);
    case T::UINT8: return typed::DType::integer(8, false);
    case T::UINT16: return typed::DType::integer(16, false);
    case T::UINT32: return typed::DType::integer(32, false);
    case T::UINT64: return typed::DType::integer(64, false);
    default: return error_status("onnx: element type " + onnxio::dtype_name(data_type) + " has no typed dtype");
  }
}

namespace onnxio {
Result<int32_t> typed_value_type(Importer& im, int64_t id) { return node_type(im, id); }
}  // namespace onnxio

Result<TypedModel> read_typed_model_onnx(std::string_view bytes, const OnnxImportOptions& options) {
  const std::set<std::string> typed_only(std::begin(onnxio::kTypedOnlyOps), std::end(onnxio::kTypedOnlyOps));
  DENOTE_ASSIGN_OR_RETURN(std::unique_ptr<onnxio::Importer> im,
                          onnxio::import_graph(bytes, options, onnxio::dispatch, typed_only));
  TypedModel tm;
  for (const auto& [id, et] : im->input_types) {
    auto t = onnx_dtype(et);
    if (!t.ok()) return error_status(fmt::format("onnx: graph input (node {}): {}", id, t.message()));
    tm.input_dtypes[id] = *t;
  }
  for (const auto& [id, h] : im->const_tensors) {
    auto t = onnxio::typed_from_host(h);
    if (!t.ok()) return error_status(fmt::format("onnx: constant (node {}): {}", id, t.message()));
    tm.consts[id] = std::move(*t);
  }
  tm.model = std::move(im->model());
  return tm;
}

Result<typed::TypedTensor> read_onnx_typed_tensor(std::string_view bytes) {
  onnx::TensorProto t;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return error_status("onnx: not a valid TensorProto (protobuf parse failed)");
  auto h = onnxio::tensor_from_proto(t);
  if (!h.ok()) return h.status().with_prefix("onnx: ");
  return onnxio::typed_from_host(*h);
}

std::vector<std::string> onnx_typed_supported_ops() {
  std::vector<std::string> out = onnx_supported_ops();
  for (std::string_view op : onnxio::kTypedOnlyOps) out.emplace_back(op);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace denote
