// ONNX import driver: parses the ModelProto, checks opset, op support and name discipline
// (topological order, dangling and duplicate names) up front, then maps initializers, graph
// inputs and nodes into IR nodes in file order. The Importer methods live here too.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"
#include "onnx_import.h"

namespace denote {
namespace onnxio {

Status Importer::fail(const std::string& message) const {
  if (!node_) return error_status("onnx: " + message);
  return error_status(fmt::format("onnx: node {} ('{}', {}): {}", index_, node_->name(), node_->op_type(), message));
}

Status Importer::synthesize(int64_t n, std::string_view what) {
  if (n > kMaxSynthesizedElements)
    return fail(fmt::format("{} of {} elements is too large (at most {} elements)", what, n, kMaxSynthesizedElements));
  synthesized_ += n;
  if (synthesized_ > options_.max_synthesized_elements)
    return fail(fmt::format("{} of {} elements brings what the import creates beyond the file's data to {} elements; "
                            "expected at most {} (OnnxImportOptions::max_synthesized_elements)",
                            what, n, synthesized_, options_.max_synthesized_elements));
  return ok_status();
}

Status Importer::define(const std::string& name, Value v, const std::string& what) {
  if (values_.count(name)) return fail(fmt::format("{} '{}' is defined twice", what, name));
  if (v.node >= 0) ++names_per_node_[v.node];
  values_.emplace(name, std::move(v));
  return ok_status();
}

Status Importer::define_const(const std::string& name, HostTensor t, const std::string& what) {
  return define(name, Value{-1, std::move(t)}, what);
}

Status Importer::define_node(const std::string& name, int64_t id, const std::string& what) {
  return define(name, Value{id, std::nullopt}, what);
}

Result<int64_t> Importer::value_node(const std::string& name) {
  auto it = values_.find(name);
  if (it == values_.end()) return fail(fmt::format("'{}' is not defined", name));
  if (it->second.node >= 0) return it->second.node;
  DENOTE_ASSIGN_OR_RETURN(int64_t id, emit_const(*it->second.constant));
  it->second.node = id;
  return id;
}

Result<int64_t> Importer::input(int i) {
  if (!has_input(i)) return fail(fmt::format("input {} is missing", i));
  return value_node(node_->input(i));
}

const HostTensor* Importer::const_input(int i) const {
  if (!has_input(i)) return nullptr;
  auto it = values_.find(node_->input(i));
  return it == values_.end() || !it->second.constant ? nullptr : &*it->second.constant;
}

Status Importer::set_output(int i, int64_t id) {
  if (!wants_output(i)) return ok_status();
  return define_node(node_->output(i), id, "output");
}

Status Importer::set_output_const(int i, HostTensor t) {
  if (!wants_output(i)) return ok_status();
  if (node_->op_type() != "Constant")  // a Constant's value is the file's data
    DENOTE_RETURN_IF_ERROR(synthesize(static_cast<int64_t>(t.values.size()), "value of output '" + node_->output(i) + "'"));
  return define_const(node_->output(i), std::move(t), "output");
}

int64_t Importer::use_count(const std::string& name) const {
  auto it = uses_.find(name);
  return it == uses_.end() ? 0 : it->second;
}

void Importer::count_uses(const onnx::GraphProto& g) {
  for (const auto& n : g.node())
    for (const auto& in : n.input())
      if (!in.empty()) ++uses_[in];
  for (const auto& out : g.output()) ++uses_[out.name()];
}

Result<int64_t> Importer::emit(Op op, std::vector<int64_t> parents, Attrs attrs, std::optional<Shape> declared) {
  auto& nodes = model_.graph.nodes;
  const int64_t id = static_cast<int64_t>(nodes.size());
  nodes.push_back(Node{id, std::move(parents), op, std::move(attrs), declared.value_or(Shape{})});
  Status s = check_node_structure(model_.graph, static_cast<size_t>(id));
  if (s.ok() && !declared) {
    std::vector<Shape> shapes;
    for (int64_t p : nodes.back().parents) shapes.push_back(nodes[static_cast<size_t>(p)].out_shape);
    auto inferred = infer_shape(nodes.back(), shapes);
    if (inferred.ok()) nodes.back().out_shape = *inferred;
    else s = inferred.status();
  }
  if (!s.ok()) {
    nodes.pop_back();
    return fail(s.message());
  }
  return id;
}

Result<int64_t> Importer::emit_const(const HostTensor& t) {
  DENOTE_ASSIGN_OR_RETURN(int64_t id, emit(Op::Const, {}, ValueShapeAttrs{t.shape}));
  model_.payload.consts[id] = ConstRecord<double>{t.values};
  if (typed) const_tensors[id] = t;
  return id;
}

Result<int64_t> Importer::emit_scalar(double v, const Shape& shape) {
  auto n = checked_numel(shape);
  if (!n.ok()) return fail("constant of shape " + to_string(shape) + " is too large");
  DENOTE_RETURN_IF_ERROR(synthesize(*n, "constant of shape " + to_string(shape)));
  HostTensor t;
  t.shape = shape;
  t.values.assign(static_cast<size_t>(*n), v);
  return emit_const(t);
}

Result<int64_t> Importer::broadcast(int64_t id, const Shape& to) {
  if (shape(id) == to) return id;
  return emit(Op::BroadcastTo, {id}, BroadcastAttrs{shape(id), to});
}

Result<int64_t> Importer::reshape(int64_t id, const Shape& to) {
  if (shape(id) == to) return id;
  return emit(Op::Reshape, {id}, ReshapeAttrs{shape(id), to});
}

Result<int64_t> Importer::binary(Op op, int64_t a, int64_t b) {
  auto to = broadcast_shapes(shape(a), shape(b));
  if (!to)
    return fail(fmt::format("operand shapes {} and {} do not broadcast", to_string(shape(a)), to_string(shape(b))));
  DENOTE_ASSIGN_OR_RETURN(int64_t x, broadcast(a, *to));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, broadcast(b, *to));
  return emit(op, {x, y});
}

}  // namespace onnxio

namespace {

using onnxio::Importer;
using onnxio::MapFn;

const std::map<std::string, MapFn, std::less<>>& mapper_table() {
  static const auto* table = [] {
    auto* t = new std::map<std::string, MapFn, std::less<>>();
    for (auto list : {onnxio::basic_mappers(), onnxio::layout_mappers(), onnxio::nn_mappers(), onnxio::act_mappers(),
                      onnxio::index_mappers(), onnxio::select_mappers()})
      for (const auto& e : list) (*t)[std::string(e.op_type)] = e.fn;
    for (const auto& e : onnxio::direct_mappers()) t->emplace(std::string(e.op_type), e.fn);
    return t;
  }();
  return *table;
}

bool default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

Result<int64_t> find_opset(const onnx::ModelProto& m) {
  int64_t opset = -1;
  for (const auto& o : m.opset_import()) {
    if (!default_domain(o.domain())) continue;
    // The same version twice (VNN-COMP 2023 dist_shift lists 11 and 11) is one opset, as for onnxruntime;
    // two versions are a contradiction.
    if (opset >= 0 && opset != o.version())
      return error_status(fmt::format("onnx: opset_import lists the default domain twice (versions {} and {})", opset,
                                      o.version()));
    opset = o.version();
  }
  if (opset < 0) return error_status("onnx: the model imports no opset of the default domain (opset_import)");
  if (opset < 1 || opset > kOnnxMaxOpset)
    return error_status(fmt::format("onnx: opset {} is not supported (supported: 1 to {})", opset, kOnnxMaxOpset));
  return opset;
}

// ModelProto.ir_version is required; IR versions run from 1 (ONNX 1.0) upward by one per format
// change, so anything outside 1..kOnnxMaxIrVersion is not an ONNX file denote can read.
constexpr int64_t kOnnxMaxIrVersion = 64;

Status check_ir_version(const onnx::ModelProto& m) {
  if (!m.has_ir_version()) return error_status("onnx: the model has no ir_version (ModelProto.ir_version is required)");
  if (m.ir_version() < 1 || m.ir_version() > kOnnxMaxIrVersion)
    return error_status(fmt::format("onnx: ir_version {} is not an ONNX IR version (expected 1 to {})", m.ir_version(),
                                    kOnnxMaxIrVersion));
  return ok_status();
}

std::string node_label(const onnx::NodeProto& n, int i) {
  const std::string op = default_domain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type();
  return fmt::format("node {} ('{}', {})", i, n.name(), op);
}

// Every node whose op the importer does not map, listed at once.
Status check_ops(const onnx::GraphProto& g, const std::set<std::string>& extra_ops) {
  std::vector<std::string> nodes;
  std::set<std::string> ops;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (default_domain(n.domain()) && (mapper_table().count(n.op_type()) || extra_ops.count(n.op_type()))) continue;
    nodes.push_back(node_label(n, i));
    ops.insert(default_domain(n.domain()) ? n.op_type() : n.domain() + "::" + n.op_type());
  }
  if (nodes.empty()) return ok_status();
  return error_status(fmt::format("onnx: unsupported ops: {} (at {})", fmt::join(ops, ", "), fmt::join(nodes, ", ")));
}

// Names must be defined before use (ONNX requires topological order; we reject, not sort) and
// produced once.
Status check_names(const onnx::GraphProto& g) {
  std::map<std::string, int> producer;  // -1: initializer or graph input
  for (int k = 0; k < g.initializer_size(); ++k) {
    const std::string& name = g.initializer(k).name();
    if (name.empty()) return error_status(fmt::format("onnx: initializer {} has no name", k));
    if (!producer.emplace(name, -1).second) return error_status(fmt::format("onnx: initializer '{}' is defined twice", name));
  }
  std::set<std::string> inputs;
  for (int k = 0; k < g.input_size(); ++k) {
    const std::string& name = g.input(k).name();
    if (name.empty()) return error_status(fmt::format("onnx: graph input {} has no name", k));
    if (!inputs.insert(name).second) return error_status(fmt::format("onnx: graph input '{}' is listed twice", name));
    producer.emplace(name, -1);  // an initializer may also be listed as an input (a constant)
  }
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& out : g.node(i).output()) {
      if (out.empty()) continue;
      auto [it, fresh] = producer.emplace(out, i);
      if (!fresh)
        return error_status(fmt::format("onnx: {}: output '{}' is already produced by {}", node_label(g.node(i), i), out,
                                        it->second < 0 ? "an initializer or graph input"
                                                       : node_label(g.node(it->second), it->second)));
    }
  for (int i = 0; i < g.node_size(); ++i)
    for (const auto& in : g.node(i).input()) {
      if (in.empty()) continue;
      auto it = producer.find(in);
      if (it == producer.end())
        return error_status(fmt::format("onnx: {}: input '{}' is not produced by any node, initializer or graph input",
                                        node_label(g.node(i), i), in));
      if (it->second >= i)
        return error_status(fmt::format("onnx: {}: input '{}' is produced by a later {} (nodes must be in "
                                        "topological order)", node_label(g.node(i), i), in,
                                        node_label(g.node(it->second), it->second)));
    }
  return ok_status();
}

Result<Shape> static_shape(const onnx::ValueInfoProto& v, const OnnxImportOptions& options) {
  const auto& tt = v.type().tensor_type();
  if (!tt.has_shape()) return error_status("has no shape (denote needs static shapes)");
  Shape s;
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    const std::string what = d.has_dim_param() ? "symbolic ('" + d.dim_param() + "')" : "unknown";
    if (d.has_dim_value() && d.dim_value() >= 0) {
      s.push_back(d.dim_value());
    } else if (d.has_dim_value()) {
      return error_status(fmt::format("dim {} is negative ({})", k, d.dim_value()));
    } else if (auto it = options.dims.find(d.dim_param()); d.has_dim_param() && it != options.dims.end()) {
      if (it->second < 0) return error_status(fmt::format("dim {} ('{}') is fixed to {} (< 0)", k, it->first, it->second));
      s.push_back(it->second);
    } else if (k == 0 && options.symbolic_batch_as_one) {
      s.push_back(1);
      if (options.notes)
        options.notes->push_back(fmt::format("onnx: graph input '{}': dim 0 is {}; read as 1 (a batch of 1{})", v.name(),
                                             what, d.has_dim_param() ? "; --onnx-dim " + d.dim_param() + "=N fixes it" : ""));
    } else if (options.unknown_dims_as_one) {
      s.push_back(1);
    } else {
      return error_status(fmt::format("dim {} is {} (denote needs static shapes; fix a symbolic dim with --onnx-dim "
                                      "NAME=VALUE, or read unknown dims as 1: --onnx-unknown-dims-as-one)",
                                      k, what));
    }
  }
  return s;
}

Status add_initializers(Importer& im, const onnx::GraphProto& g) {
  if (g.sparse_initializer_size() > 0) return error_status("onnx: sparse initializers are not supported");
  for (const auto& t : g.initializer()) {
    auto h = onnxio::tensor_from_proto(t);
    if (!h.ok()) return h.status().with_prefix("onnx: initializer: ");
    DENOTE_RETURN_IF_ERROR(im.define_const(t.name(), std::move(*h), "initializer"));
  }
  return ok_status();
}

// A graph input given a constant value through OnnxImportOptions::constant_inputs.
Status bind_input(Importer& im, const onnx::ValueInfoProto& v, const Tensor<double>& value) {
  auto shape = static_shape(v, im.options());
  if (!shape.ok()) return shape.status();
  if (*shape != value.shape)
    return error_status("constant value has shape " + to_string(value.shape) + ", declared " + to_string(*shape));
  if (static_cast<int64_t>(value.data.size()) != numel(value.shape))
    return error_status("constant value has " + std::to_string(value.data.size()) + " elements");
  onnxio::HostTensor t;
  t.shape = value.shape;
  t.values = value.data;
  t.dtype = v.type().tensor_type().elem_type();
  if (t.is_int())
    for (double d : value.data) {
      if (!(std::fabs(d) < 9.2e18)) return error_status("constant value out of integer range");
      t.ints.push_back(static_cast<int64_t>(d));
    }
  return im.define_const(v.name(), std::move(t), "graph input");
}

Status add_inputs(Importer& im, const onnx::GraphProto& g) {
  for (const auto& v : g.input()) {
    if (im.defined(v.name())) continue;  // an initializer listed as input: a constant
    const std::string where = "onnx: graph input '" + v.name() + "': ";
    if (!v.type().has_tensor_type()) return error_status(where + "only tensor types are supported");
    const int32_t et = v.type().tensor_type().elem_type();
    if (auto it = im.options().constant_inputs.find(v.name()); it != im.options().constant_inputs.end()) {
      DENOTE_RETURN_IF_ERROR(bind_input(im, v, it->second).with_prefix(where));
      continue;
    }
    if (!im.typed && !onnxio::is_real_dtype(et) && et != onnx::TensorProto::FLOAT16 && et != onnx::TensorProto::BFLOAT16)
      return error_status(where + "element type " + onnxio::dtype_name(et) +
                          " is not supported by the float import (FLOAT, DOUBLE, FLOAT16, BFLOAT16); integer and bool "
                          "models run through the typed import (denote run --input-words)");
    auto shape = static_shape(v, im.options());
    if (!shape.ok()) return shape.status().with_prefix(where);
    DENOTE_ASSIGN_OR_RETURN(int64_t id, im.emit(Op::Input, {}, NoAttrs{}, *shape));
    if (im.typed) im.input_types[id] = et;
    if (im.options().input_elem_types) im.options().input_elem_types->push_back(et);
    DENOTE_RETURN_IF_ERROR(im.define_node(v.name(), id, "graph input"));
  }
  return ok_status();
}

// Node i is the last node of a GELU pattern: one gelu node of the pattern's input.
Status map_gelu_pattern(Importer& im, const std::string& x) {
  DENOTE_ASSIGN_OR_RETURN(int64_t in, im.value_node(x));
  DENOTE_ASSIGN_OR_RETURN(int64_t y, im.emit(Op::Gelu, {in}));
  return im.set_output(0, y);
}

Status map_nodes(Importer& im, const onnx::GraphProto& g, MapFn dispatch) {
  std::map<int, std::string> gelu_at;  // final node -> x
  std::set<int> skipped;               // the pattern's other nodes
  for (const auto& m : onnxio::find_gelu_patterns(g)) {
    gelu_at[m.final_node] = m.x;
    skipped.insert(m.members.begin(), m.members.end());
  }
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    im.begin_node(&n, static_cast<size_t>(i));
    if (skipped.count(i)) continue;
    if (auto it = gelu_at.find(i); it != gelu_at.end()) {
      DENOTE_RETURN_IF_ERROR(map_gelu_pattern(im, it->second));
      continue;
    }
    DENOTE_RETURN_IF_ERROR(dispatch ? dispatch(im) : mapper_table().find(n.op_type())->second(im));
    for (int k = 0; k < n.output_size(); ++k)
      if (im.wants_output(k) && !im.defined(n.output(k)))
        return im.fail(fmt::format("output {} ('{}') is not supported", k, n.output(k)));
  }
  im.begin_node(nullptr, 0);
  return ok_status();
}

bool is_float_type(int32_t et) {
  return onnxio::is_real_dtype(et) || et == onnx::TensorProto::FLOAT16 || et == onnx::TensorProto::BFLOAT16;
}

// A graph output's declared element type (0: not declared) against the value the import computes:
// the float import computes real values (a float type); the typed import knows each node's type
// (floating types are not told apart: any float type fits a float value).
Status check_output_type(Importer& im, int32_t declared, int64_t id) {
  if (declared == onnx::TensorProto::UNDEFINED) return ok_status();
  if (!im.typed) {
    if (is_float_type(declared)) return ok_status();
    return error_status(fmt::format("declared element type {} but the float import computes floating-point values",
                                    onnxio::dtype_name(declared)));
  }
  DENOTE_ASSIGN_OR_RETURN(int32_t computed, onnxio::typed_value_type(im, id));
  if (computed == declared || (is_float_type(computed) && is_float_type(declared))) return ok_status();
  return error_status(fmt::format("declared element type {} but the graph computes {}", onnxio::dtype_name(declared),
                                  onnxio::dtype_name(computed)));
}

Status add_outputs(Importer& im, const onnx::GraphProto& g) {
  if (g.output_size() == 0) return error_status("onnx: the graph has no outputs");
  std::set<std::string> seen;
  for (const auto& v : g.output()) {
    const std::string where = "onnx: graph output '" + v.name() + "': ";
    if (!seen.insert(v.name()).second) return error_status(where + "listed twice");
    if (!im.defined(v.name())) return error_status(where + "not produced by any node, initializer or input");
    DENOTE_ASSIGN_OR_RETURN(int64_t id, im.value_node(v.name()));
    im.model().output_ids.push_back(id);
    if (!v.type().has_tensor_type()) continue;
    DENOTE_RETURN_IF_ERROR(check_output_type(im, v.type().tensor_type().elem_type(), id).with_prefix(where));
    if (!v.type().tensor_type().has_shape()) continue;
    OnnxImportOptions strict;
    strict.symbolic_batch_as_one = false;  // a symbolic output dim is not checked
    auto declared = static_shape(v, strict);
    if (declared.ok() && *declared != im.shape(id))
      return error_status(where + fmt::format("declared shape {} but the graph computes {}", to_string(*declared),
                                              to_string(im.shape(id))));
  }
  return ok_status();
}

}  // namespace

namespace onnxio {

MapFn find_mapper(std::string_view op_type) {
  auto it = mapper_table().find(op_type);
  return it == mapper_table().end() ? nullptr : it->second;
}

// Every fixed symbolic dim (--onnx-dim NAME=VALUE) names a symbolic dim of some graph input: a typo
// would otherwise be ignored and the dim read as 1 or refused with another message.
Status check_fixed_dims(const onnx::GraphProto& g, const OnnxImportOptions& options) {
  if (options.dims.empty()) return ok_status();
  std::set<std::string> names;
  for (const auto& v : g.input())
    for (const auto& d : v.type().tensor_type().shape().dim())
      if (d.has_dim_param()) names.insert(d.dim_param());
  for (const auto& [name, value] : options.dims)
    if (!names.count(name)) {
      std::string known;
      for (const auto& n : names) known += (known.empty() ? "'" : ", '") + n + "'";
      return error_status(ErrorCode::kInvalidInput,
                          fmt::format("onnx: --onnx-dim {}={}: no graph input has a symbolic dim '{}' (the model's: {})",
                                      name, value, name, known.empty() ? "none" : known))
          .with_field("onnx-dim");
    }
  return ok_status();
}

Result<std::unique_ptr<Importer>> import_graph(std::string_view bytes, const OnnxImportOptions& options,
                                               MapFn dispatch, const std::set<std::string>& extra_ops) {
  onnx::ModelProto mp;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) || !mp.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return error_status("onnx: not a valid ONNX model (protobuf parse failed: truncated or not a ModelProto)");
  if (!mp.has_graph()) return error_status("onnx: the model has no graph (not an ONNX model?)");
  DENOTE_ASSIGN_OR_RETURN(int64_t opset, find_opset(mp));
  DENOTE_RETURN_IF_ERROR(check_ir_version(mp));
  const onnx::GraphProto& g = mp.graph();
  DENOTE_RETURN_IF_ERROR(check_ops(g, extra_ops));
  DENOTE_RETURN_IF_ERROR(check_names(g));
  DENOTE_RETURN_IF_ERROR(check_fixed_dims(g, options));
  auto im = std::make_unique<Importer>(opset, options);
  im->typed = dispatch != nullptr;
  im->count_uses(g);
  DENOTE_RETURN_IF_ERROR(add_initializers(*im, g));
  DENOTE_RETURN_IF_ERROR(add_inputs(*im, g));
  DENOTE_RETURN_IF_ERROR(map_nodes(*im, g, dispatch));
  DENOTE_RETURN_IF_ERROR(add_outputs(*im, g));
  return im;
}

}  // namespace onnxio

std::optional<ArithSpec> arith_of_onnx_inputs(const std::vector<int32_t>& types) {
  auto all = [&](int32_t t) {
    return !types.empty() && std::all_of(types.begin(), types.end(), [t](int32_t e) { return e == t; });
  };
  if (all(onnx::TensorProto::FLOAT)) return ArithSpec::f32();
  if (all(onnx::TensorProto::DOUBLE)) return ArithSpec::f64();
  return std::nullopt;
}

Result<Model> read_model_onnx(std::string_view bytes, const OnnxImportOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(std::unique_ptr<Importer> im, onnxio::import_graph(bytes, options));
  return std::move(im->model());
}

Result<Model> load_model_onnx_file(const std::string& path, const OnnxImportOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(std::string bytes, read_text_file(path));  // bounded, regular files only
  auto m = read_model_onnx(bytes, options);
  if (!m.ok()) return m.status().with_prefix(path + ": ");
  return m;
}

std::vector<std::string> onnx_supported_ops() {
  std::vector<std::string> out;
  for (const auto& [name, fn] : mapper_table()) out.push_back(name);
  return out;
}

}  // namespace denote
