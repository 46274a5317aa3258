// ONNX export: one or a few ONNX nodes per IR node, payload values as DOUBLE initializers (so
// they survive exactly), ir_version 8, default-domain opset 17. IR ops without an ONNX
// counterpart (custom, random sources, hard_masked_softmax ...) are an error naming the node.
#include <cmath>
#include <cstring>
#include <fstream>
#include <numeric>

#include <fmt/format.h>
#include <onnx/onnx_pb.h>

#include "denote/io/onnx.h"

namespace denote {
namespace {

constexpr int64_t kExportOpset = 17;

class Exporter {
 public:
  explicit Exporter(const Model& m, onnx::GraphProto* g) : m_(m), g_(g) {}

  Status run();

 private:
  Status export_node(const Node& n);
  Status export_payload_node(const Node& n);
  Status export_layout_node(const Node& n);
  Status export_linear(const Node& n);
  Status export_conv(const Node& n);
  Status export_pool(const Node& n);
  Status export_norm(const Node& n);
  // ONNX Conv / pooling / BatchNormalization want [N, C, ...]: other layouts are reshaped to
  // `nc` before the op and back to the node's shape after it. Returns the op's input name.
  std::string to_nc(const Node& n, const Shape& nc);
  std::string nc_output(const Node& n, const Shape& nc_out);   // the op's output name
  void finish_nc(const Node& n, const std::string& produced);  // reshapes it back after the op

  std::string name(int64_t id) const { return fmt::format("n{}", id); }
  std::string in(const Node& n, size_t k = 0) const { return name(n.parents[k]); }
  std::string fresh() { return fmt::format("t{}", counter_++); }
  onnx::NodeProto* add(const std::string& op, std::vector<std::string> inputs, std::string output);
  std::string init(const Shape& shape, const std::vector<double>& values, std::string nm = "");
  std::string init_ints(const std::vector<int64_t>& values);
  Status fail(const Node& n, const std::string& what) const {
    return error_status(fmt::format("onnx export: node {} ({}): {}", n.id, op_tag(n.op), what));
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

onnx::NodeProto* Exporter::add(const std::string& op, std::vector<std::string> inputs, std::string output) {
  auto* n = g_->add_node();
  n->set_op_type(op);
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

const char* simple_op(Op op) {
  switch (op) {
    case Op::Add: return "Add";
    case Op::Sub: return "Sub";
    case Op::MulElem: return "Mul";
    case Op::Div: return "Div";
    case Op::Pow: return "Pow";
    case Op::MaxElem: return "Max";
    case Op::MinElem: return "Min";
    case Op::Abs: return "Abs";
    case Op::Sqrt: return "Sqrt";
    case Op::Inv: return "Reciprocal";
    case Op::Relu: return "Relu";
    case Op::Tanh: return "Tanh";
    case Op::Sigmoid: return "Sigmoid";
    case Op::Exp: return "Exp";
    case Op::Log: return "Log";
    case Op::Sin: return "Sin";
    case Op::Cos: return "Cos";
    case Op::Softplus: return "Softplus";
    case Op::Neg: return "Neg";
    case Op::Erf: return "Erf";
    case Op::Detach: return "Identity";
    case Op::Matmul: return "MatMul";
    default: return nullptr;
  }
}

Status Exporter::export_layout_node(const Node& n) {
  const std::string out = name(n.id);
  switch (n.op) {
    case Op::Permute: set_ints(add("Transpose", {in(n)}, out), "perm", std::get<PermAttrs>(n.attrs).perm); break;
    case Op::Transpose: {
      const auto& t = std::get<TransposeAttrs>(n.attrs);
      std::vector<int64_t> perm(n.out_shape.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[static_cast<size_t>(t.axis1)], perm[static_cast<size_t>(t.axis2)]);
      set_ints(add("Transpose", {in(n)}, out), "perm", perm);
      break;
    }
    case Op::BroadcastTo: add("Expand", {in(n), init_ints(n.out_shape)}, out); break;
    case Op::Reshape: case Op::Flatten: {
      auto* r = add("Reshape", {in(n), init_ints(n.out_shape)}, out);
      if (std::find(n.out_shape.begin(), n.out_shape.end(), 0) != n.out_shape.end()) set_int(r, "allowzero", 1);
      break;
    }
    case Op::Concat: {
      std::vector<std::string> parts;
      for (size_t k = 0; k < n.parents.size(); ++k) parts.push_back(in(n, k));
      set_int(add("Concat", parts, out), "axis", std::get<AxisAttrs>(n.attrs).axis);
      break;
    }
    case Op::ReduceSum:
      set_int(add("ReduceSum", {in(n), init_ints({std::get<AxisAttrs>(n.attrs).axis})}, out), "keepdims", 0);
      break;
    case Op::ReduceMean: {
      auto* r = add("ReduceMean", {in(n)}, out);
      set_ints(r, "axes", {std::get<AxisAttrs>(n.attrs).axis});
      set_int(r, "keepdims", 0);
      break;
    }
    case Op::Sum: set_int(add("ReduceSum", {in(n)}, out), "keepdims", 0); break;
    case Op::Softmax: set_int(add("Softmax", {in(n)}, out), "axis", std::get<AxisAttrs>(n.attrs).axis); break;
    case Op::LogSoftmax: set_int(add("LogSoftmax", {in(n)}, out), "axis", std::get<AxisAttrs>(n.attrs).axis); break;
    default: return fail(n, "has no ONNX counterpart");
  }
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
    set_int(add("Gemm", {in(n), init({r->out_dim, r->in_dim}, r->weight), b}, name(n.id)), "transB", 1);
    return ok_status();
  }
  std::vector<double> wt(r->weight.size());  // [in, out] for MatMul
  for (int64_t o = 0; o < r->out_dim; ++o)
    for (int64_t k = 0; k < r->in_dim; ++k)
      wt[static_cast<size_t>(k * r->out_dim + o)] = r->weight[static_cast<size_t>(o * r->in_dim + k)];
  const std::string t = fresh();
  add("MatMul", {in(n), init({r->in_dim, r->out_dim}, wt)}, t);
  add("Add", {t, b}, name(n.id));
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
  add("Reshape", {in(n), init_ints(nc)}, t);
  return t;
}

std::string Exporter::nc_output(const Node& n, const Shape& nc_out) {
  return nc_out == n.out_shape ? name(n.id) : fresh();
}

void Exporter::finish_nc(const Node& n, const std::string& produced) {
  if (produced != name(n.id)) add("Reshape", {produced, init_ints(n.out_shape)}, name(n.id));
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
  auto* node = add("Conv", {x, init(ws, r->weight), init({c.out_channels}, r->bias)}, out);
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

Status Exporter::export_pool(const Node& n) {
  const auto& w = std::get<WindowConfig>(n.attrs);
  const Shape& ps = parent_shape(m_, n);
  if (static_cast<int64_t>(ps.size()) < w.spatial_rank || w.spatial_rank < 1) return fail(n, "bad spatial_rank");
  if (std::find(n.out_shape.begin(), n.out_shape.end(), 0) != n.out_shape.end())
    return fail(n, "a window larger than the padded input (an empty axis) has no ONNX counterpart");
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
  auto* node = add(n.op == Op::MaxPool ? "MaxPool" : "AveragePool", {x}, out);
  std::vector<int64_t> pads = w.padding;
  pads.insert(pads.end(), w.padding.begin(), w.padding.end());
  set_ints(node, "kernel_shape", w.kernel);
  set_ints(node, "strides", w.stride);
  set_ints(node, "pads", pads);
  if (n.op == Op::AvgPool) set_int(node, "count_include_pad", 1);
  finish_nc(n, out);
  return ok_status();
}

// ONNX epsilons are float32 attributes. batch_norm_eval computes sqrt(var + eps), so an eps
// that float32 cannot hold is folded into var (the same sum) with epsilon 0; layernorm's eps is
// rounded to float32.
Status Exporter::export_norm(const Node& n) {
  if (n.op == Op::BatchNormEval) {
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
    set_float(add("BatchNormalization", {x, init(c, r->gamma), init(c, r->beta), init(c, r->mean), init(c, var)}, out),
              "epsilon", eps);
    finish_nc(n, out);
    return ok_status();
  }
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
  auto* node = add("LayerNormalization", {in(n), init(normalized, r.gamma), init(normalized, r.beta)}, name(n.id));
  set_int(node, "axis", axis);
  set_float(node, "epsilon", r.eps);
  return ok_status();
}

Status Exporter::export_payload_node(const Node& n) {
  switch (n.op) {
    case Op::Const: {
      const auto* r = find_record(m_.payload.consts, n.id);
      if (!r || static_cast<int64_t>(r->values.size()) != numel(n.out_shape)) return fail(n, "missing or malformed const payload");
      init(n.out_shape, r->values, name(n.id));
      return ok_status();
    }
    case Op::Linear: return export_linear(n);
    case Op::Conv: return export_conv(n);
    case Op::MaxPool: case Op::AvgPool: return export_pool(n);
    case Op::BatchNormEval: case Op::Layernorm: return export_norm(n);
    default: return export_layout_node(n);
  }
}

Status Exporter::export_node(const Node& n) {
  const std::string out = name(n.id);
  if (n.op == Op::Input) {
    auto* v = g_->add_input();
    v->set_name(out);
    set_type(v, n.out_shape);
    return ok_status();
  }
  if (const char* op = simple_op(n.op)) {
    std::vector<std::string> ins;
    for (size_t k = 0; k < n.parents.size(); ++k) ins.push_back(in(n, k));
    add(op, ins, out);
    return ok_status();
  }
  switch (n.op) {
    case Op::Rsqrt: {
      const std::string t = fresh();
      add("Sqrt", {in(n)}, t);
      add("Reciprocal", {t}, out);
      return ok_status();
    }
    case Op::ClampMin: add("Max", {in(n), init({}, {std::get<ClampAttrs>(n.attrs).bound})}, out); return ok_status();
    case Op::Cast: {
      const auto& c = std::get<CastAttrs>(n.attrs);
      if (c.rounding != "nearest-even" || (c.dtype != "binary32" && c.dtype != "f32" && c.dtype != "binary64" && c.dtype != "f64"))
        return fail(n, "only casts to binary32 / binary64 with nearest-even export");
      if (c.dtype == "binary64" || c.dtype == "f64") {
        add("Identity", {in(n)}, out);
        return ok_status();
      }
      const std::string t = fresh();
      set_int(add("Cast", {in(n)}, t), "to", onnx::TensorProto::FLOAT);
      set_int(add("Cast", {t}, out), "to", onnx::TensorProto::DOUBLE);
      return ok_status();
    }
    default: return export_payload_node(n);
  }
}

Status Exporter::run() {
  for (size_t i = 0; i < m_.graph.nodes.size(); ++i) {
    const Node& n = m_.graph.nodes[i];
    if (n.id != static_cast<int64_t>(i)) return error_status(fmt::format("onnx export: node {}: id {} != index", i, n.id));
    for (int64_t p : n.parents)
      if (p < 0 || p >= n.id) return fail(n, fmt::format("parent {} is not < {}", p, n.id));
    DENOTE_RETURN_IF_ERROR(export_node(n));
  }
  if (m_.output_ids.empty()) return error_status("onnx export: the model has no outputs");
  for (size_t k = 0; k < m_.output_ids.size(); ++k) {
    const int64_t id = m_.output_ids[k];
    if (id < 0 || id >= static_cast<int64_t>(m_.graph.nodes.size()))
      return error_status(fmt::format("onnx export: output id {} is out of range", id));
    const std::string out = fmt::format("output{}", k);  // distinct names even for repeated ids
    add("Identity", {name(id)}, out);
    auto* v = g_->add_output();
    v->set_name(out);
    set_type(v, m_.graph.nodes[static_cast<size_t>(id)].out_shape);
  }
  return ok_status();
}

}  // namespace

Result<std::string> write_model_onnx(const Model& model) {
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
