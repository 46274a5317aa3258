// torchlean.ir.v1 reader. Attribute fields are read per AttrKind (the op table says which kind an
// op carries) from the record's field list (json_attrs.h); payload fields per payload record form.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include <fmt/format.h>

#include "denote/base/file.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_arrays.h"
#include "denote/io/onnx.h"
#include "json_attrs.h"
#include "json_fields.h"

namespace denote {

using jsonio::json;
using jsonio::Where;

namespace {

Status read_const(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!jsonio::has(j, "values")) return ok_status();
  DENOTE_ASSIGN_OR_RETURN(auto v, jsonio::get_tensor(j, "values", std::get<ValueShapeAttrs>(n.attrs).shape, w));
  p.consts[n.id] = {std::move(v)};
  return ok_status();
}

Status read_linear(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!jsonio::has(j, "weight")) return ok_status();
  LinearRecord<double> r;
  DENOTE_ASSIGN_OR_RETURN(r.out_dim, jsonio::get_int(j, "out_dim", w));
  DENOTE_ASSIGN_OR_RETURN(r.in_dim, jsonio::get_int(j, "in_dim", w));
  if (r.out_dim < 0 || r.in_dim < 0) return w.error("out_dim", "dimensions must be nonnegative");
  DENOTE_ASSIGN_OR_RETURN(r.weight, jsonio::get_tensor(j, "weight", {r.out_dim, r.in_dim}, w));
  DENOTE_ASSIGN_OR_RETURN(r.bias, jsonio::get_tensor(j, "bias", {r.out_dim}, w));
  p.linear[n.id] = std::move(r);
  return ok_status();
}

Status read_conv(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!jsonio::has(j, "weight")) return ok_status();
  ConvRecord<double> r;
  r.config = std::get<ConvConfig>(n.attrs);
  DENOTE_ASSIGN_OR_RETURN(r.input_spatial, jsonio::get_shape(j, "input_spatial", w));
  const ConvConfig& c = r.config;
  // The weight's shape depends on groups: a bad groups value is named as such, not as a weight error.
  if (c.groups < 1 || c.in_channels < 0 || c.out_channels < 0 || c.in_channels % c.groups != 0 ||
      c.out_channels % c.groups != 0)
    return w.error("groups", fmt::format("expected >= 1 dividing in_channels {} and out_channels {}, got {}",
                                         c.in_channels, c.out_channels, c.groups));
  Shape ws{c.out_channels, c.in_channels / c.groups};
  for (int64_t k : r.config.window.kernel) ws.push_back(k);
  if (auto c = checked_numel(ws); !c.ok()) return w.error("weight", c.message());
  DENOTE_ASSIGN_OR_RETURN(r.weight, jsonio::get_tensor(j, "weight", ws, w));
  DENOTE_ASSIGN_OR_RETURN(r.bias, jsonio::get_tensor(j, "bias", {r.config.out_channels}, w));
  p.conv[n.id] = std::move(r);
  return ok_status();
}

Status read_batch_norm(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!jsonio::has(j, "gamma")) return ok_status();
  BatchNormRecord<double> r;
  const Shape c{std::get<BatchNormAttrs>(n.attrs).channels};
  if (c[0] < 0) return w.error("channels", "must be nonnegative");
  DENOTE_ASSIGN_OR_RETURN(r.gamma, jsonio::get_tensor(j, "gamma", c, w));
  DENOTE_ASSIGN_OR_RETURN(r.beta, jsonio::get_tensor(j, "beta", c, w));
  DENOTE_ASSIGN_OR_RETURN(r.mean, jsonio::get_tensor(j, "mean", c, w));
  DENOTE_ASSIGN_OR_RETURN(r.var, jsonio::get_tensor(j, "var", c, w));
  DENOTE_ASSIGN_OR_RETURN(r.eps, jsonio::get_double_or(j, "eps", 1e-5, w));
  p.batch_norm[n.id] = std::move(r);
  return ok_status();
}

Status read_layernorm(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!jsonio::has(j, "gamma")) return ok_status();
  LayerNormRecord<double> r;
  const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
  if (axis < 0 || static_cast<size_t>(axis) > n.out_shape.size())
    return w.error("axis", fmt::format("axis {} out of range for shape {}", axis, to_string(n.out_shape)));
  r.normalized_shape.assign(n.out_shape.begin() + axis, n.out_shape.end());
  DENOTE_ASSIGN_OR_RETURN(r.gamma, jsonio::get_tensor(j, "gamma", r.normalized_shape, w));
  DENOTE_ASSIGN_OR_RETURN(r.beta, jsonio::get_tensor(j, "beta", r.normalized_shape, w));
  DENOTE_ASSIGN_OR_RETURN(r.eps, jsonio::get_double_or(j, "eps", 1e-5, w));
  p.layernorm[n.id] = std::move(r);
  return ok_status();
}

// The serialized payload record of a payload- or parameter-backed op (flags P / W in ops.def),
// told apart by the op's attribute kind: const (value_shape), linear (no attrs), conv,
// batch_norm_eval, layernorm (axis). Custom bodies are code, never serialized.
struct PayloadForm {
  AttrKind attr;
  Status (*read)(const Node&, const json&, const Where&, Payload<double>&);
};
constexpr PayloadForm kPayloadForms[] = {
    {AttrKind::ValueShape, &read_const}, {AttrKind::None, &read_linear},     {AttrKind::Conv, &read_conv},
    {AttrKind::BatchNorm, &read_batch_norm}, {AttrKind::Axis, &read_layernorm},
};

// Reads the payload fields of node n (if it has any) into `p`.
Status read_payload(const Node& n, const json& j, const Where& w, Payload<double>& p) {
  if (!has_flag(n.op, kFlagPayload) && !has_flag(n.op, kFlagParams)) return ok_status();
  for (const PayloadForm& form : kPayloadForms)
    if (form.attr == op_info(n.op).attr) return form.read(n, j, w, p);
  return ok_status();
}

}  // namespace

// Defined in json_lower.cc: multi-axis / keepdim reductions become single-axis reductions.
Result<Model> lower_reductions(const json& nodes, Model model, const std::vector<size_t>& lower_at);

namespace {

Result<Node> read_node(const json& j, size_t index, Payload<double>& payload, bool& needs_lowering,
                       const std::vector<std::vector<double>>* arrays) {
  Where w{fmt::format("nodes[{}]", index), arrays};
  if (!j.is_object()) return w.error("node", "expected an object, got " + std::string(j.type_name()));
  Node n;
  DENOTE_ASSIGN_OR_RETURN(n.id, jsonio::get_int(j, "id", w));
  DENOTE_ASSIGN_OR_RETURN(std::string kind, jsonio::get_string(j, "kind", w));
  auto op = op_from_tag(kind);
  if (!op) return w.error("kind", "unknown op tag '" + kind + "' (see `denote ops`)");
  n.op = *op;
  w.text = fmt::format("nodes[{}] (id {}, kind {})", index, n.id, kind);
  DENOTE_ASSIGN_OR_RETURN(n.parents, jsonio::get_ints(j, "parents", w));
  DENOTE_ASSIGN_OR_RETURN(n.out_shape, jsonio::get_shape(j, "shape", w));
  // TorchLean writes axis reductions with an axis list and keepdim (lowered below when needed).
  const bool reduction = op_info(n.op).family == OpFamily::Reduction && op_info(n.op).attr == AttrKind::Axis;
  if (reduction && !jsonio::has(j, "axis")) {
    DENOTE_ASSIGN_OR_RETURN(auto axes, jsonio::get_ints(j, "axes", w));
    DENOTE_ASSIGN_OR_RETURN(bool keepdim, jsonio::get_bool_or(j, "keepdim", false, w));
    if (axes.empty()) return w.error("axes", "must name at least one axis");
    needs_lowering = needs_lowering || axes.size() > 1 || keepdim;
    n.attrs = AxisAttrs{axes[0]};
  } else {
    DENOTE_ASSIGN_OR_RETURN(n.attrs, jsonio::read_attrs(op_info(n.op).attr, j, w));
  }
  DENOTE_RETURN_IF_ERROR(read_payload(n, j, w, payload));
  return n;
}

// json::parse without exceptions: a syntax error, and also a number too large for a double
// (which nlohmann reports as out_of_range, not parse_error), becomes an error naming the byte.
class DomBuilder : public nlohmann::detail::json_sax_dom_parser<json> {
 public:
  explicit DomBuilder(json& root) : nlohmann::detail::json_sax_dom_parser<json>(root, /*allow_exceptions=*/false) {}
  // Nesting is bounded (kMaxJsonDepth): deeper documents are refused before they are built.
  bool start_object(std::size_t len) { return enter() && json_sax_dom_parser::start_object(len); }
  bool start_array(std::size_t len) { return enter() && json_sax_dom_parser::start_array(len); }
  bool end_object() { --depth_; return json_sax_dom_parser::end_object(); }
  bool end_array() { --depth_; return json_sax_dom_parser::end_array(); }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*token*/, const Exception& e) {
    error = error_status(fmt::format("torchlean.ir.v1: malformed JSON at byte {}: {}", position, e.what()));
    return false;
  }
  Status error;

 private:
  bool enter() {
    if (++depth_ <= jsonio::kMaxJsonDepth) return true;
    error = error_status(fmt::format("torchlean.ir.v1: JSON nested deeper than {} levels", jsonio::kMaxJsonDepth));
    return false;
  }
  size_t depth_ = 0;
};

bool has_parameters(Op op) { return has_flag(op, kFlagPayload) || has_flag(op, kFlagParams); }

// Parameters are keyed by node id, so two nodes with one id would share (and the writer would
// repeat) one record: a node with parameters needs an id no other node has. Other id problems
// (order, gaps, duplicates without parameters) parse, and `check` reports them (issue 13: found by
// fuzz_json_import, a write-read round trip that gave another model).
Status check_unshared_id(const Node& n, size_t index, std::unordered_map<int64_t, size_t>& first_with_id,
                         const std::vector<Node>& earlier) {
  const auto [at, fresh] = first_with_id.emplace(n.id, index);
  if (fresh || (!has_parameters(n.op) && !has_parameters(earlier[at->second].op))) return ok_status();
  const Where w{fmt::format("nodes[{}] (id {}, kind {})", index, n.id, op_tag(n.op))};
  const Status s = w.error("id", fmt::format("id {} is also the id of nodes[{}] (kind {}); a node with parameters "
                                             "needs an id of its own (parameters are keyed by node id)",
                                             n.id, at->second, op_tag(earlier[at->second].op)));
  return s.with_node(n.id, s.message());
}

Result<std::vector<int64_t>> read_ids(const json& root, const char* key) {
  return jsonio::get_ints(root, key, Where{});
}

}  // namespace

namespace {

Result<Model> parse_document(std::string_view text, const std::vector<std::vector<double>>* arrays) {
  json root;
  DomBuilder builder(root);
  if (!json::sax_parse(text.begin(), text.end(), &builder) || !builder.error.ok())
    return builder.error.ok() ? error_status("torchlean.ir.v1: malformed JSON") : builder.error;
  if (!root.is_object()) return error_status("torchlean.ir.v1: the document must be a JSON object");
  Where top{};
  DENOTE_ASSIGN_OR_RETURN(std::string format, jsonio::get_string(root, "format", top));
  if (format != kIrFormat)
    return top.error("format", fmt::format("expected \"{}\", got \"{}\"", kIrFormat, format));
  if (!jsonio::has(root, "nodes") || !root["nodes"].is_array()) return top.error("nodes", "expected an array");
  Model m;
  bool needs_lowering = false;
  std::vector<size_t> lower_at;
  const json& nodes = root["nodes"];
  m.graph.nodes.reserve(nodes.size());
  std::unordered_map<int64_t, size_t> first_with_id;
  for (size_t i = 0; i < nodes.size(); ++i) {
    bool lower = false;
    DENOTE_ASSIGN_OR_RETURN(Node n, read_node(nodes[i], i, m.payload, lower, arrays));
    DENOTE_RETURN_IF_ERROR(check_unshared_id(n, i, first_with_id, m.graph.nodes));
    if (lower) lower_at.push_back(i);
    needs_lowering = needs_lowering || lower;
    m.graph.nodes.push_back(std::move(n));
  }
  DENOTE_ASSIGN_OR_RETURN(m.output_ids, read_ids(root, "output_ids"));
  if (m.output_ids.empty()) return top.error("output_ids", "must not be empty");
  std::vector<int64_t> inputs;
  if (jsonio::has(root, "input_ids")) {
    DENOTE_ASSIGN_OR_RETURN(inputs, read_ids(root, "input_ids"));
  } else {
    DENOTE_ASSIGN_OR_RETURN(int64_t in, jsonio::get_int(root, "input_id", top));
    inputs = {in};
  }
  const std::vector<int64_t> actual = m.graph.input_ids();
  if (inputs != actual)
    return top.error(jsonio::has(root, "input_ids") ? "input_ids" : "input_id",
                     fmt::format("declares inputs [{}] but the input nodes are [{}]", join_ints(inputs), join_ints(actual)));
  for (int64_t id : m.output_ids)
    if (id < 0 || id >= static_cast<int64_t>(m.graph.nodes.size()))
      return top.error("output_ids", fmt::format("id {} is not a node", id));
  if (needs_lowering) return lower_reductions(nodes, std::move(m), lower_at);
  return m;
}

}  // namespace

Result<Model> parse_model_json(std::string_view text) { return parse_document(text, nullptr); }

Result<Model> parse_model_json_with_arrays(std::string_view text, const std::vector<std::vector<double>>& arrays) {
  return parse_document(text, &arrays);
}

Result<Model> read_model_json(std::string_view text) {
  DENOTE_ASSIGN_OR_RETURN(Model m, parse_model_json(text));
  DENOTE_RETURN_IF_ERROR(check_shapes(m.graph));
  return m;
}

// Model, tensor and word files: a regular file of at most 2 GiB (protobuf's own limit for ONNX), read
// with that bound too (a file that grows while read is refused, not read to the end; a .gz file is
// decompressed and the bound applies to what it inflates to). /dev/zero, a pipe or a directory is an
// error naming the path, not gigabytes read and a misleading parse error.
Result<std::string> read_text_file(const std::string& path) { return read_file_bounded(path, uint64_t{2} << 30); }

Result<Model> load_model_file(const std::string& path) {
  const std::string_view name = without_gz(path);  // net.onnx.gz: an ONNX file, decompressed
  const bool json_ext = name.ends_with(".json");
  const bool onnx_ext = name.ends_with(".onnx");
  if (onnx_ext) return load_model_onnx_file(path);
  if (!json_ext)
    return error_status("'" + path + "': unsupported model format (expected a .json torchlean.ir.v1 or .onnx file, or either gzipped)");
  DENOTE_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  auto m = parse_model_json(text);
  if (!m.ok()) return m.status().with_prefix(path + ": ");
  return m;
}

}  // namespace denote
