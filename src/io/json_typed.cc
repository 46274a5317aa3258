// The dtype/words extension of torchlean.ir.v1 (include/denote/io/json_typed.h). The document is
// read twice: parse_model_json builds the graph, then this file reads "dtype" and "words" of the
// input and const nodes from the same text.
#include "denote/io/json_typed.h"

#include <fmt/format.h>

#include "denote/check/check.h"
#include "denote/io/json.h"
#include "json_attrs.h"
#include "json_fields.h"

namespace denote {

using jsonio::json;
using jsonio::Where;

namespace {

Result<Word> word_of(const json& v) {
  if (v.is_string()) return parse_word(v.get<std::string>());
  if (v.is_number_unsigned()) return Word::of(v.get<uint64_t>());
  if (v.is_number_integer() && v.get<int64_t>() >= 0) return Word::of(static_cast<uint64_t>(v.get<int64_t>()));
  return error_status(fmt::format("expected a hex string, a decimal string or a nonnegative integer, got {}",
                                  jsonio::quote(v)));
}

Result<std::vector<Word>> words_of(const json& arr) {
  if (!arr.is_array()) return error_status("expected an array of words");
  std::vector<Word> out;
  out.reserve(arr.size());
  for (size_t i = 0; i < arr.size(); ++i) {
    auto w = word_of(arr[i]);
    if (!w.ok()) return error_status(fmt::format("word {}: {}", i, w.message()));
    out.push_back(std::move(*w));
  }
  return out;
}

Status read_typed_fields(const json& j, const Node& n, const Where& w, TypedModel& tm) {
  if (!jsonio::has(j, "dtype")) {
    if (n.op == Op::Const && jsonio::has(j, "words")) return w.error("dtype", "words need a dtype");
    return ok_status();
  }
  DENOTE_ASSIGN_OR_RETURN(std::string name, jsonio::get_string(j, "dtype", w));
  auto t = typed::parse_dtype(name);
  if (!t.ok()) return w.error("dtype", t.message());
  if (n.op == Op::Input) {
    tm.input_dtypes[n.id] = *t;
    return ok_status();
  }
  if (!jsonio::has(j, "words")) return w.error("words", "a typed const needs its element words");
  auto ws = words_of(j["words"]);
  if (!ws.ok()) return w.error("words", ws.message());
  auto v = typed::load(*t, std::get<ValueShapeAttrs>(n.attrs).shape, *ws);
  if (!v.ok()) return w.error("words", v.message());
  tm.consts[n.id] = std::move(*v);
  return ok_status();
}

// The dtype/words fields of node n (input and const nodes only); an error is attributed to n.
Status read_typed_node(const json& j, const Node& n, size_t index, TypedModel& tm) {
  if (n.op != Op::Input && n.op != Op::Const) return ok_status();
  const Where w{fmt::format("nodes[{}] (id {}, kind {})", index, n.id, op_tag(n.op))};
  const Status s = read_typed_fields(j, n, w, tm);
  return s.ok() ? s : s.with_node(n.id, s.message());
}

json parse_quietly(std::string_view text) { return json::parse(text.begin(), text.end(), nullptr, false); }

}  // namespace

Result<TypedModel> parse_typed_model_json(std::string_view text) {
  TypedModel tm;
  DENOTE_ASSIGN_OR_RETURN(tm.model, parse_model_json(text));
  const json root = parse_quietly(text);
  if (root.is_discarded() || !root.is_object() || !root.contains("nodes") || !root["nodes"].is_array())
    return error_status("torchlean.ir.v1: malformed JSON");
  const json& nodes = root["nodes"];
  if (nodes.size() != tm.model.graph.size())
    return error_status("torchlean.ir.v1: typed models cannot use multi-axis or keepdim reductions");
  for (size_t i = 0; i < nodes.size(); ++i)
    DENOTE_RETURN_IF_ERROR(read_typed_node(nodes[i], tm.model.graph.nodes[i], i, tm));
  return tm;
}

Result<TypedModel> read_typed_model_json(std::string_view text) {
  DENOTE_ASSIGN_OR_RETURN(TypedModel tm, parse_typed_model_json(text));
  DENOTE_RETURN_IF_ERROR(check_shapes(tm.model.graph));
  return tm;
}

std::string write_typed_model_json(const TypedModel& tm) {
  return jsonio::write_model_json_with(tm.model, [&tm](const Node& n, jsonio::ojson& j) {
    if (auto t = tm.input_dtypes.find(n.id); t != tm.input_dtypes.end() && n.op == Op::Input)
      j["dtype"] = typed::dtype_name(t->second);
    if (auto c = tm.consts.find(n.id); c != tm.consts.end() && n.op == Op::Const) {
      j["dtype"] = typed::dtype_name(c->second.dtype);
      jsonio::ojson words = jsonio::ojson::array();
      for (const Word& w : typed::words(c->second)) words.push_back(to_hex(w));
      j["words"] = std::move(words);
    }
  });
}

bool has_typed_nodes(std::string_view text) {
  const json root = parse_quietly(text);
  if (root.is_discarded() || !root.is_object() || !root.contains("nodes") || !root["nodes"].is_array()) return false;
  for (const json& n : root["nodes"]) {
    if (!n.is_object() || !n.contains("dtype") || !n.contains("kind") || !n["kind"].is_string()) continue;
    const std::string kind = n["kind"].get<std::string>();
    if (kind == "input" || kind == "const") return true;
  }
  return false;
}

Result<std::vector<Word>> parse_word_list(std::string_view json_text) {
  const json v = parse_quietly(json_text);
  if (v.is_discarded()) return error_status(fmt::format("malformed word list '{}'", json_text.substr(0, 60)));
  return words_of(v);
}

}  // namespace denote
