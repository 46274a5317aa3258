// torchlean.ir.v1 writer: attribute fields from each record's field list (json_attrs.h), payload
// fields per payload record.
#include <fmt/format.h>

#include "denote/io/json.h"
#include "json_attrs.h"
#include "json_fields.h"

namespace denote {

using jsonio::json;

namespace {

using jsonio::ojson;

void write_payload(const Node& n, const Payload<double>& p, ojson& j) {
  if (const auto* r = find_record(p.consts, n.id)) {
    const auto* shape = std::get_if<ValueShapeAttrs>(&n.attrs);
    j["values"] = jsonio::tensor_json(r->values, shape ? shape->shape : n.out_shape);
  }
  if (const auto* r = find_record(p.linear, n.id)) {
    j["out_dim"] = r->out_dim;
    j["in_dim"] = r->in_dim;
    j["weight"] = jsonio::tensor_json(r->weight, {r->out_dim, r->in_dim});
    j["bias"] = jsonio::tensor_json(r->bias, {r->out_dim});
  }
  if (const auto* r = find_record(p.conv, n.id)) {
    const ConvConfig& c = r->config;
    Shape ws{c.out_channels, c.groups > 0 ? c.in_channels / c.groups : 0};
    for (int64_t k : c.window.kernel) ws.push_back(k);
    j["input_spatial"] = r->input_spatial;
    j["weight"] = jsonio::tensor_json(r->weight, ws);
    j["bias"] = jsonio::tensor_json(r->bias, {c.out_channels});
  }
  auto vec = [](const std::vector<double>& v) { return jsonio::tensor_json(v, {static_cast<int64_t>(v.size())}); };
  if (const auto* r = find_record(p.batch_norm, n.id)) {
    j["gamma"] = vec(r->gamma);
    j["beta"] = vec(r->beta);
    j["mean"] = vec(r->mean);
    j["var"] = vec(r->var);
    j["eps"] = jsonio::number_json(r->eps);
  }
  if (const auto* r = find_record(p.layernorm, n.id)) {
    j["gamma"] = jsonio::tensor_json(r->gamma, r->normalized_shape);
    j["beta"] = jsonio::tensor_json(r->beta, r->normalized_shape);
    j["eps"] = jsonio::number_json(r->eps);
  }
}

}  // namespace

std::string write_model_json(const Model& model) { return jsonio::write_model_json_with(model, nullptr); }

std::string jsonio::write_model_json_with(const Model& model, const NodeFields& extra) {
  ojson root;
  root["format"] = kIrFormat;
  const std::vector<int64_t> inputs = model.graph.input_ids();
  if (inputs.size() == 1) root["input_id"] = inputs[0];
  else root["input_ids"] = inputs;
  root["output_ids"] = model.output_ids;
  ojson nodes = ojson::array();
  for (const Node& n : model.graph.nodes) {
    ojson j;
    j["id"] = n.id;
    j["kind"] = op_tag(n.op);
    j["parents"] = n.parents;
    j["shape"] = n.out_shape;
    jsonio::write_attrs(n.attrs, j);
    // TorchLean writes reductions with an axis list and keepdim.
    // (get_if: a malformed model whose attrs do not match its op is still written, never a throw.)
    const auto* axis = std::get_if<AxisAttrs>(&n.attrs);
    if (axis && op_info(n.op).family == OpFamily::Reduction && op_info(n.op).attr == AttrKind::Axis) {
      j["axes"] = {axis->axis};
      j["keepdim"] = false;
      j.erase("axis");
    }
    write_payload(n, model.payload, j);
    if (extra) extra(n, j);
    nodes.push_back(std::move(j));
  }
  // One field per line and one node per line: readable, diffable, compact for large weights.
  std::string text = "{\n";
  // (Invalid UTF-8 in a string is replaced, never a throw.)
  auto dump = [](const ojson& v) { return v.dump(-1, ' ', false, json::error_handler_t::replace); };
  for (const auto& [key, value] : root.items()) text += " \"" + key + "\": " + dump(value) + ",\n";
  text += " \"nodes\": [";
  for (size_t i = 0; i < nodes.size(); ++i) text += (i ? ",\n  " : "\n  ") + dump(nodes[i]);
  text += nodes.empty() ? "]\n}\n" : "\n ]\n}\n";
  return text;
}

}  // namespace denote
