// ONNX export: one or a few ONNX nodes per IR node, payload values as DOUBLE initializers (so
// they survive exactly), ir_version 8, default-domain opset 17. Each op's export function comes
// from kExportOf (ops.def order) and every ONNX op type from ops.def's onnx column. IR ops without
// an ONNX counterpart (custom, random sources, hard_masked_softmax ...) are an error naming the node.
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <numeric>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "denote/check/check.h"
#include "denote/io/onnx.h"

namespace denote {
namespace {

constexpr int64_t kExportOpset = 17;

class Exporter {
 public:
  explicit Exporter(const Model& m, onnx::GraphProto* g) : m_(m), g_(g) {}

  Status run();

  // One export function per op (or family), selected by kExportOf in ops.def order.
  Status export_none(const Node& n) { return fail(n, "has no ONNX counterpart", ErrorCode::kUnsupported); }
  Status export_direct(const Node& n);  // ops.def's onnx_direct: one node, the same inputs
  Status export_input(const Node& n);
  Status export_const(const Node& n);
  Status export_permute(const Node& n);
  Status export_transpose(const Node& n);
  Status export_broadcast(const Node& n);
  Status export_reshape(const Node& n);  // reshape and flatten
  Status export_concat(const Node& n);
  Status export_gather(const Node& n);
  Status export_rsqrt(const Node& n);
  Status export_clamp_min(const Node& n);
  Status export_cast(const Node& n);
  Status export_reduce_sum(const Node& n);
  Status export_reduce_mean(const Node& n);
  Status export_sum(const Node& n);
  Status export_axis_op(const Node& n);  // softmax, log_softmax
  Status export_linear(const Node& n);
  Status export_conv(const Node& n);
  Status export_max_pool(const Node& n) { return export_pool(n, false); }
  Status export_avg_pool(const Node& n) { return export_pool(n, true); }
  Status export_batch_norm(const Node& n);
  Status export_layernorm(const Node& n);

 private:
  Status export_pool(const Node& n, bool include_pad);
  // ONNX Conv / pooling / BatchNormalization want [N, C, ...]: other layouts are reshaped to
  // `nc` before the op and back to the node's shape after it. Returns the op's input name.
  std::string to_nc(const Node& n, const Shape& nc);
  std::string nc_output(const Node& n, const Shape& nc_out);   // the op's output name
  void finish_nc(const Node& n, const std::string& produced);  // reshapes it back after the op

  std::string name(int64_t id) const { return fmt::format("n{}", id); }
  std::string in(const Node& n, size_t k = 0) const { return name(n.parents[k]); }
  std::string fresh() { return fmt::format("t{}", counter_++); }
  onnx::NodeProto* add(std::string_view op, std::vector<std::string> inputs, std::string output);
  std::string init(const Shape& shape, const std::vector<double>& values, std::string nm = "");
  std::string init_ints(const std::vector<int64_t>& values);
  Status fail(const Node& n, const std::string& what, ErrorCode code = ErrorCode::kEval) const {
    return error_status(code, fmt::format("onnx export: node {} ({}): {}", n.id, op_tag(n.op), what));
  }

  const Model& m_;
  onnx::GraphProto* g_;
  int64_t counter_ = 0;
};

void set_int(onnx::NodeProto* n, const char* key, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void set_float(onnx::NodeProto* n, const char* key, double v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(static_cast<float>(v));
}

void set_ints(onnx::NodeProto* n, const char* key, const std::vector<int64_t>& v) {
  auto* a = n->add_attribute();
  a->set_name(key);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_type(onnx::ValueInfoProto* v, const Shape& shape) {
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::DOUBLE);
  auto* s = t->mutable_shape();
  for (int64_t d : shape) s->add_dim()->set_dim_value(d);
}

onnx::NodeProto* Exporter::add(std::string_view op, std::vector<std::string> inputs, std::string output) {
  auto* n = g_->add_node();
  n->set_op_type(std::string(op));
  n->set_name(fmt::format("{}_{}", op, g_->node_size() - 1));
  for (auto& i : inputs) n->add_input(std::move(i));
  n->add_output(std::move(output));
  return n;
}

std::string Exporter::init(const Shape& shape, const std::vector<double>& values, std::string nm) {
  auto* t = g_->add_initializer();
  if (nm.empty()) nm = fresh();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::DOUBLE);
  for (int64_t d : shape) t->add_dims(d);
  std::string raw(values.size() * sizeof(double), '\0');
  if (!values.empty()) std::memcpy(raw.data(), values.data(), raw.size());
  t->set_raw_data(std::move(raw));
  return nm;
}

std::string Exporter::init_ints(const std::vector<int64_t>& values) {
  auto* t = g_->add_initializer();
  const std::string nm = fresh();
  t->set_name(nm);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return nm;
}

Status Exporter::export_direct(const Node& n) {
  std::vector<std::string> ins;
  for (size_t k = 0; k < n.parents.size(); ++k) ins.push_back(in(n, k));
  add(onnx_name(n.op), ins, name(n.id));
  return ok_status();
}

Status Exporter::export_input(const Node& n) {
  auto* v = g_->add_input();
  v->set_name(name(n.id));
  set_type(v, n.out_shape);
  return ok_status();
}

Status Exporter::export_const(const Node& n) {
  const auto* r = find_record(m_.payload.consts, n.id);
  if (!r || static_cast<int64_t>(r->values.size()) != numel(n.out_shape)) return fail(n, "missing or malformed const payload");
  init(n.out_shape, r->values, name(n.id));
  return ok_status();
}

Status Exporter::export_permute(const Node& n) {
  set_ints(add(onnx_name(n.op), {in(n)}, name(n.id)), "perm", std::get<PermAttrs>(n.attrs).perm);
  return ok_status();
}

Status Exporter::export_transpose(const Node& n) {
  const auto& t = std::get<TransposeAttrs>(n.attrs);
  std::vector<int64_t> perm(n.out_shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[static_cast<size_t>(t.axis1)], perm[static_cast<size_t>(t.axis2)]);
  set_ints(add(onnx_name(n.op), {in(n)}, name(n.id)), "perm", perm);
  return ok_status();
}

Status Exporter::export_broadcast(const Node& n) {
  add(onnx_name(n.op), {in(n), init_ints(n.out_shape)}, name(n.id));
  return ok_status();
}

Status Exporter::export_reshape(const Node& n) {
  auto* r = add(onnx_name(n.op), {in(n), init_ints(n.out_shape)}, name(n.id));
  if (std::find(n.out_shape.begin(), n.out_shape.end(), 0) != n.out_shape.end()) set_int(r, "allowzero", 1);
  return ok_status();
}

Status Exporter::export_concat(const Node& n) {
  std::vector<std::string> parts;
  for (size_t k = 0; k < n.parents.size(); ++k) parts.push_back(in(n, k));
  set_int(add(onnx_name(n.op), parts, name(n.id)), "axis", std::get<AxisAttrs>(n.attrs).axis);
  return ok_status();
}

Status Exporter::export_gather(const Node& n) {  // Gather along the axis with 1-D int64 indices
  const auto& g = std::get<GatherAttrs>(n.attrs);
  set_int(add(onnx_name(n.op), {in(n), init_ints(g.indices)}, name(n.id)), "axis", g.axis);
  return ok_status();
}

Status Exporter::export_rsqrt(const Node& n) {  // 1 / sqrt(x)
  const std::string t = fresh();
  add(onnx_name(Op::Sqrt), {in(n)}, t);
  add(onnx_name(Op::Inv), {t}, name(n.id));
  return ok_status();
}

Status Exporter::export_clamp_min(const Node& n) {  // max(x, bound)
  add(onnx_name(Op::MaxElem), {in(n), init({}, {std::get<ClampAttrs>(n.attrs).bound})}, name(n.id));
  return ok_status();
}

Status Exporter::export_cast(const Node& n) {
  const auto& c = std::get<CastAttrs>(n.attrs);
  const std::string out = name(n.id);
  if (c.rounding != "nearest-even" || (c.dtype != "binary32" && c.dtype != "f32" && c.dtype != "binary64" && c.dtype != "f64"))
    return fail(n, "only casts to binary32 / binary64 with nearest-even export", ErrorCode::kUnsupported);
  if (c.dtype == "binary64" || c.dtype == "f64") {
    add(onnx_name(Op::Detach), {in(n)}, out);  // Identity
    return ok_status();
  }
  const std::string t = fresh();
  set_int(add(onnx_name(n.op), {in(n)}, t), "to", onnx::TensorProto::FLOAT);
  set_int(add(onnx_name(n.op), {t}, out), "to", onnx::TensorProto::DOUBLE);
  return ok_status();
}

Status Exporter::export_reduce_sum(const Node& n) {
  const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
  set_int(add(onnx_name(n.op), {in(n), init_ints({axis})}, name(n.id)), "keepdims", 0);
  return ok_status();
}

Status Exporter::export_reduce_mean(const Node& n) {  // opset 17: axes is an attribute
  auto* r = add(onnx_name(n.op), {in(n)}, name(n.id));
  set_ints(r, "axes", {std::get<AxisAttrs>(n.attrs).axis});
  set_int(r, "keepdims", 0);
  return ok_status();
}

Status Exporter::export_sum(const Node& n) {  // every axis
  set_int(add(onnx_name(n.op), {in(n)}, name(n.id)), "keepdims", 0);
  return ok_status();
}

Status Exporter::export_axis_op(const Node& n) {
  set_int(add(onnx_name(n.op), {in(n)}, name(n.id)), "axis", std::get<AxisAttrs>(n.attrs).axis);
  return ok_status();
}

Status Exporter::export_linear(const Node& n) {
  const auto* r = find_record(m_.payload.linear, n.id);
  if (!r) return fail(n, "missing linear payload");
  if (static_cast<int64_t>(r->weight.size()) != r->out_dim * r->in_dim ||
      static_cast<int64_t>(r->bias.size()) != r->out_dim)
    return fail(n, "linear payload sizes do not match out_dim and in_dim");
  const std::string b = init({r->out_dim}, r->bias);
  if (m_.graph.nodes[static_cast<size_t>(n.parents[0])].out_shape.size() == 2) {
    set_int(add(onnx_name(n.op), {in(n), init({r->out_dim, r->in_dim}, r->weight), b}, name(n.id)), "transB", 1);
    return ok_status();
  }
  std::vector<double> wt(r->weight.size());  // [in, out] for MatMul
  for (int64_t o = 0; o < r->out_dim; ++o)
    for (int64_t k = 0; k < r->in_dim; ++k)
      wt[static_cast<size_t>(k * r->out_dim + o)] = r->weight[static_cast<size_t>(o * r->in_dim + k)];
  const std::string t = fresh();
  add(onnx_name(Op::Matmul), {in(n), init({r->in_dim, r->out_dim}, wt)}, t);
  add(onnx_name(Op::Add), {t, b}, name(n.id));
  return ok_status();
}

const Shape& parent_shape(const Model& m, const Node& n) {
  return m.graph.nodes[static_cast<size_t>(n.parents[0])].out_shape;
}

// [prod(shape[:a]), shape[a], shape[a+1:]...]
Shape nc_shape(const Shape& s, size_t a) {
  Shape out{std::accumulate(s.begin(), s.begin() + static_cast<std::ptrdiff_t>(a), int64_t{1}, std::multiplies<>())};
  out.insert(out.end(), s.begin() + static_cast<std::ptrdiff_t>(a), s.end());
  return out;
}

std::string Exporter::to_nc(const Node& n, const Shape& nc) {
  if (parent_shape(m_, n) == nc) return in(n);
  const std::string t = fresh();
  add(onnx_name(Op::Reshape), {in(n), init_ints(nc)}, t);
  return t;
}

std::string Exporter::nc_output(const Node& n, const Shape& nc_out) {
  return nc_out == n.out_shape ? name(n.id) : fresh();
}

void Exporter::finish_nc(const Node& n, const std::string& produced) {
  if (produced != name(n.id)) add(onnx_name(Op::Reshape), {produced, init_ints(n.out_shape)}, name(n.id));
}

Status Exporter::export_conv(const Node& n) {
  const auto& c = std::get<ConvConfig>(n.attrs);
  const auto* r = find_record(m_.payload.conv, n.id);
  if (!r) return fail(n, "missing conv payload");
  const Shape& ps = parent_shape(m_, n);
  if (c.channel_axis < 0 || static_cast<int64_t>(ps.size()) != c.channel_axis + 1 + c.window.spatial_rank)
    return fail(n, "input rank does not match channel_axis and spatial_rank");
  const Shape nc = nc_shape(ps, static_cast<size_t>(c.channel_axis));
  Shape ws{c.out_channels, c.groups > 0 ? c.in_channels / c.groups : 0};
  ws.insert(ws.end(), c.window.kernel.begin(), c.window.kernel.end());
  const std::string x = to_nc(n, nc);
  const std::string out = nc_output(n, nc_shape(n.out_shape, static_cast<size_t>(c.channel_axis)));
  auto* node = add(onnx_name(n.op), {x, init(ws, r->weight), init({c.out_channels}, r->bias)}, out);
  std::vector<int64_t> pads = c.window.padding, dil;
  for (size_t i = 0; i < c.window.kernel.size(); ++i) {
    pads.push_back(c.padding_after_at(i));
    dil.push_back(c.dilation_at(i));
  }
  set_ints(node, "kernel_shape", c.window.kernel);
  set_ints(node, "strides", c.window.stride);
  set_ints(node, "pads", pads);
  set_ints(node, "dilations", dil);
  set_int(node, "group", c.groups);
  finish_nc(n, out);
  return ok_status();
}

Status Exporter::export_pool(const Node& n, bool include_pad) {
  const auto& w = std::get<WindowConfig>(n.attrs);
  const Shape& ps = parent_shape(m_, n);
  if (static_cast<int64_t>(ps.size()) < w.spatial_rank || w.spatial_rank < 1) return fail(n, "bad spatial_rank");
  if (std::find(n.out_shape.begin(), n.out_shape.end(), 0) != n.out_shape.end())
    return fail(n, "a window larger than the padded input (an empty axis) has no ONNX counterpart",
                ErrorCode::kUnsupported);
  // [lead..., spatial...] -> [1, prod(lead), spatial...]
  const size_t lead = ps.size() - static_cast<size_t>(w.spatial_rank);
  auto nc_of = [&](const Shape& s) {
    Shape out = nc_shape(s, lead);
    if (lead == 2) return s;
    out.insert(out.begin(), 1);
    return out;
  };
  const std::string x = to_nc(n, nc_of(ps));
  const std::string out = nc_output(n, nc_of(n.out_shape));
  auto* node = add(onnx_name(n.op), {x}, out);
  std::vector<int64_t> pads = w.padding;
  pads.insert(pads.end(), w.padding.begin(), w.padding.end());
  set_ints(node, "kernel_shape", w.kernel);
  set_ints(node, "strides", w.stride);
  set_ints(node, "pads", pads);
  if (include_pad) set_int(node, "count_include_pad", 1);
  finish_nc(n, out);
  return ok_status();
}

// ONNX epsilons are float32 attributes. batch_norm_eval computes sqrt(var + eps), so an eps
// that float32 cannot hold is folded into var (the same sum) with epsilon 0; layernorm's eps is
// rounded to float32.
Status Exporter::export_batch_norm(const Node& n) {
  const auto& a = std::get<BatchNormAttrs>(n.attrs);
  const auto* r = find_record(m_.payload.batch_norm, n.id);
  if (!r) return fail(n, "missing batch_norm_eval payload");
  const Shape& ps = parent_shape(m_, n);
  if (a.channel_axis < 0 || a.channel_axis >= static_cast<int64_t>(ps.size())) return fail(n, "bad channel_axis");
  Shape nc = nc_shape(ps, static_cast<size_t>(a.channel_axis));  // [N, C, rest...]
  std::vector<double> var = r->var;
  double eps = r->eps;
  if (static_cast<double>(static_cast<float>(eps)) != eps) {
    for (double& v : var) v += eps;
    eps = 0.0;
  }
  const Shape c{a.channels};
  const std::string x = to_nc(n, nc), out = nc_output(n, nc);
  set_float(add(onnx_name(n.op), {x, init(c, r->gamma), init(c, r->beta), init(c, r->mean), init(c, var)}, out),
            "epsilon", eps);
  finish_nc(n, out);
  return ok_status();
}

Status Exporter::export_layernorm(const Node& n) {
  const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
  if (axis < 0 || axis > static_cast<int64_t>(n.out_shape.size())) return fail(n, "bad axis");
  const Shape normalized(n.out_shape.begin() + axis, n.out_shape.end());
  int64_t w = 1;  // element count of normalized, 0 if a dim is 0 (no overflowing suffix product)
  for (int64_t d : normalized) w = (w == 0 || d == 0) ? 0 : (__builtin_mul_overflow(w, d, &w) ? INT64_MAX : w);
  const auto* p = find_record(m_.payload.layernorm, n.id);
  if (!p && w > (int64_t{1} << 24)) return fail(n, "normalized shape too large for default parameters");
  const size_t width = static_cast<size_t>(w);
  LayerNormRecord<double> r = p ? *p : LayerNormRecord<double>{normalized, std::vector<double>(width, 1.0),
                                                               std::vector<double>(width, 0.0), 1e-5};
  if (r.gamma.size() != width || r.beta.size() != width) return fail(n, "layernorm payload sizes mismatch");
  auto* node = add(onnx_name(n.op), {in(n), init(normalized, r.gamma), init(normalized, r.beta)}, name(n.id));
  set_int(node, "axis", axis);
  set_float(node, "epsilon", r.eps);
  return ok_status();
}

// The export function of each op, one row per ops.def row in its order (checked below).
using ExportFn = Status (Exporter::*)(const Node&);
struct ExportRow {
  Op op;
  ExportFn fn;
};
using E = Exporter;
constexpr ExportRow kExportOf[] = {
    {Op::Input, &E::export_input},
    {Op::Const, &E::export_const},
    {Op::RandUniform, &E::export_none},
    {Op::Custom, &E::export_none},
    {Op::Permute, &E::export_permute},
    {Op::Transpose, &E::export_transpose},
    {Op::Detach, &E::export_direct},
    {Op::BroadcastTo, &E::export_broadcast},
    {Op::Reshape, &E::export_reshape},
    {Op::Flatten, &E::export_reshape},
    {Op::Concat, &E::export_concat},
    {Op::Gather, &E::export_gather},
    {Op::Add, &E::export_direct},
    {Op::Sub, &E::export_direct},
    {Op::MulElem, &E::export_direct},
    {Op::MaxElem, &E::export_direct},
    {Op::MinElem, &E::export_direct},
    {Op::Div, &E::export_direct},
    {Op::DivTrunc, &E::export_none},
    {Op::DivFloor, &E::export_none},
    {Op::Remainder, &E::export_none},
    {Op::Pow, &E::export_direct},
    {Op::MseLoss, &E::export_none},
    {Op::SafeLog, &E::export_none},
    {Op::BernoulliMask, &E::export_none},
    {Op::Abs, &E::export_direct},
    {Op::Sqrt, &E::export_direct},
    {Op::Inv, &E::export_direct},
    {Op::Relu, &E::export_direct},
    {Op::Tanh, &E::export_direct},
    {Op::Sigmoid, &E::export_direct},
    {Op::Exp, &E::export_direct},
    {Op::Log, &E::export_direct},
    {Op::Sin, &E::export_direct},
    {Op::Cos, &E::export_direct},
    {Op::Softplus, &E::export_direct},
    {Op::Neg, &E::export_direct},
    {Op::Rsqrt, &E::export_rsqrt},
    {Op::Erf, &E::export_direct},
    {Op::Gelu, &E::export_none},  // ONNX Gelu needs opset 20; export writes opset 17
    {Op::ClampMin, &E::export_clamp_min},
    {Op::Cast, &E::export_cast},
    {Op::MxCast, &E::export_none},
    {Op::Floor, &E::export_direct},
    {Op::Ceil, &E::export_direct},
    {Op::Round, &E::export_direct},
    {Op::Sign, &E::export_direct},
    {Op::ReduceSum, &E::export_reduce_sum},
    {Op::ReduceMean, &E::export_reduce_mean},
    {Op::Sum, &E::export_sum},
    {Op::Matmul, &E::export_direct},
    {Op::Linear, &E::export_linear},
    {Op::Conv, &E::export_conv},
    {Op::MaxPool, &E::export_max_pool},
    {Op::AvgPool, &E::export_avg_pool},
    {Op::BatchNormEval, &E::export_batch_norm},
    {Op::Softmax, &E::export_axis_op},
    {Op::LogSoftmax, &E::export_axis_op},
    {Op::HardMaskedSoftmax, &E::export_none},
    {Op::Layernorm, &E::export_layernorm},
};

// One row per op in ops.def order; export_direct exactly for onnx_direct ops, export_none exactly
// for kOnnxNone ones, and a named ONNX op type wherever a row writes onnx_name(n.op).
constexpr bool rows_follow_ops_def() {
  if (std::size(kExportOf) != static_cast<size_t>(kNumOps)) return false;
  for (size_t i = 0; i < std::size(kExportOf); ++i) {
    const ExportRow& row = kExportOf[i];
    if (row.op != static_cast<Op>(i)) return false;
    if ((row.fn == &E::export_direct) != (onnx_export(row.op) == OnnxExport::Direct)) return false;
    if ((row.fn == &E::export_none) != (onnx_export(row.op) == OnnxExport::None)) return false;
    if (onnx_export(row.op) == OnnxExport::Direct && onnx_name(row.op).empty()) return false;
  }
  return true;
}
static_assert(rows_follow_ops_def(), "kExportOf must have one row per op, in ops.def order, matching its onnx column");

Status Exporter::run() {
  for (const Node& n : m_.graph.nodes) DENOTE_RETURN_IF_ERROR((this->*kExportOf[static_cast<size_t>(n.op)].fn)(n));
  if (m_.output_ids.empty()) return error_status(ErrorCode::kStructure, "onnx export: the model has no outputs");
  for (size_t k = 0; k < m_.output_ids.size(); ++k) {
    const int64_t id = m_.output_ids[k];
    if (id < 0 || id >= static_cast<int64_t>(m_.graph.nodes.size()))
      return error_status(ErrorCode::kStructure, fmt::format("onnx export: output id {} is out of range", id));
    const std::string out = fmt::format("output{}", k);  // distinct names even for repeated ids
    add(onnx_name(Op::Detach), {name(id)}, out);         // Identity
    auto* v = g_->add_output();
    v->set_name(out);
    set_type(v, m_.graph.nodes[static_cast<size_t>(id)].out_shape);
  }
  return ok_status();
}

}  // namespace

Result<std::string> write_model_onnx(const Model& model) {
  // The exporter reads attrs, parents and shapes as the checker guarantees them: an unchecked
  // model is rejected with the checker's first error instead of crashing.
  DENOTE_RETURN_IF_ERROR(check_shapes(model.graph));
  onnx::ModelProto mp;
  mp.set_ir_version(8);
  mp.set_producer_name("denote");
  auto* opset = mp.add_opset_import();
  opset->set_domain("");
  opset->set_version(kExportOpset);
  auto* g = mp.mutable_graph();
  g->set_name("denote");
  Exporter ex(model, g);
  DENOTE_RETURN_IF_ERROR(ex.run());
  std::string out;
  if (!mp.SerializeToString(&out)) return error_status("onnx export: serialization failed (model over 2 GiB?)");
  return out;
}

Status write_model_onnx_file(const std::string& path, const Model& model) {
  DENOTE_ASSIGN_OR_RETURN(std::string bytes, write_model_onnx(model));
  std::ofstream f(path, std::ios::binary);
  if (!f) return error_status("cannot write file '" + path + "'");
  f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!f) return error_status("cannot write file '" + path + "'");
  return ok_status();
}

}  // namespace denote
