// denote run MODEL --input-words ID=DTYPE:[w0,w1,...] [--rounding R] [--trace] [--json]: the typed
// reference interpreter (include/denote/typed/interp.h) on a torchlean.ir.v1 model with dtypes.
#include "run_typed.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_typed.h"
#include "denote/io/onnx.h"
#include "denote/typed/interp.h"

namespace denote::cli {

namespace {

struct WordsSpec {
  int64_t id = -1;  // -1: positional
  typed::DType dtype;
  std::vector<Word> words;
};

Result<WordsSpec> parse_spec(const std::string& spec) {
  WordsSpec s;
  std::string rest = spec;
  const size_t eq = rest.find('=');
  if (eq != std::string::npos && eq > 0 && rest.find_first_not_of("0123456789") == eq) {
    const std::optional<int64_t> id = parse_node_id(std::string_view(rest).substr(0, eq));
    if (!id) return error_status(fmt::format("--input-words {}: node id {} is too large", spec, rest.substr(0, eq)));
    s.id = *id;
    rest = rest.substr(eq + 1);
  }
  const size_t colon = rest.find(':');
  if (colon == std::string::npos)
    return error_status(fmt::format("--input-words {}: expected [ID=]DTYPE:[w0,w1,...]", spec));
  auto t = typed::parse_dtype(rest.substr(0, colon));
  if (!t.ok()) return error_status(fmt::format("--input-words {}: {}", spec, t.message()));
  s.dtype = *t;
  auto w = parse_word_list(rest.substr(colon + 1));
  if (!w.ok()) return error_status(fmt::format("--input-words {}: {}", spec, w.message()));
  s.words = std::move(*w);
  return s;
}

// The input tensors in input-node order; fills the model's missing input dtypes from the specs.
Result<std::vector<typed::TypedTensor>> load_inputs(TypedModel& tm, const std::vector<std::string>& specs) {
  const std::vector<int64_t> ids = tm.model.graph.input_ids();
  if (specs.size() != ids.size())
    return error_status(fmt::format("the graph has {} input node(s), got {} --input-words", ids.size(), specs.size()));
  std::vector<typed::TypedTensor> out(ids.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(WordsSpec s, parse_spec(specs[k]));
    const int64_t id = s.id >= 0 ? s.id : ids[k];
    const auto pos = std::find(ids.begin(), ids.end(), id);
    if (pos == ids.end())
      return error_status(fmt::format("--input-words {}: node {} is not an input node", specs[k], id));
    auto declared = tm.input_dtypes.find(id);
    if (declared != tm.input_dtypes.end() && !(declared->second == s.dtype))
      return error_status(fmt::format("--input-words {}: node {} has dtype {}", specs[k], id,
                                      typed::dtype_name(declared->second)));
    tm.input_dtypes[id] = s.dtype;
    auto t = typed::load(s.dtype, tm.model.graph.nodes[static_cast<size_t>(id)].out_shape, s.words);
    if (!t.ok()) return error_status(fmt::format("--input-words {}: {}", specs[k], t.message()));
    out[static_cast<size_t>(pos - ids.begin())] = std::move(*t);
  }
  return out;
}

std::string list_text(const typed::TypedTensor& t, bool values) {
  std::string out = "[";
  for (int64_t i = 0; i < t.size(); ++i) {
    const Word w = typed::word_at(t, i);
    out += (i ? ", " : "") + (values ? typed::format_element(t.dtype, w) : to_hex(w));
  }
  return out + "]";
}

std::string quoted_list(const typed::TypedTensor& t, bool values) {
  std::string out = "[";
  for (int64_t i = 0; i < t.size(); ++i) {
    const Word w = typed::word_at(t, i);
    out += fmt::format("{}\"{}\"", i ? ", " : "", values ? typed::format_element(t.dtype, w) : to_hex(w));
  }
  return out + "]";
}

std::string entry_json(int64_t id, const typed::TypedTensor& t) {
  return fmt::format("{{\"id\": {}, \"shape\": [{}], \"dtype\": \"{}\", \"words\": {}, \"values\": {}}}", id,
                     join_ints(t.shape), typed::dtype_name(t.dtype), quoted_list(t, false), quoted_list(t, true));
}

void print_text(const TypedModel& tm, const typed::TypedRun& run, bool trace) {
  auto line = [&](const std::string& head, const typed::TypedTensor& t) {
    std::cout << fmt::format("{} {} {} = words {} values {}\n", head, to_string(t.shape), typed::dtype_name(t.dtype),
                             list_text(t, false), list_text(t, true));
  };
  if (trace)
    for (const Node& n : tm.model.graph.nodes) line(fmt::format("{}: {}", n.id, describe(n)), run.table[n.id]);
  for (int64_t id : tm.model.output_ids) line(fmt::format("output {}", id), run.table[id]);
  std::cout << "flags: " << flags_to_string(run.flags) << "\n";
}

void print_json(const TypedModel& tm, const typed::TypedRun& run, const TypedRunRequest& r) {
  std::string out = fmt::format("{{\"typed\": true, \"rounding\": \"{}\", \"outputs\": [", r.rounding);
  for (size_t k = 0; k < tm.model.output_ids.size(); ++k)
    out += (k ? ", " : "") + entry_json(tm.model.output_ids[k], run.table[tm.model.output_ids[k]]);
  out += "]";
  if (r.trace) {
    out += ", \"trace\": [";
    for (const Node& n : tm.model.graph.nodes) out += (n.id ? ", " : "") + entry_json(n.id, run.table[n.id]);
    out += "]";
  }
  std::string flags;
  if (run.flags != 0) {
    const std::string all = flags_to_string(run.flags);
    flags = "\"";
    for (char c : all) flags += c == ',' ? std::string("\", \"") : std::string(1, c);
    flags += "\"";
  }
  std::cout << out << ", \"flags\": [" << flags << "]}\n";
}

}  // namespace

bool wants_typed_run(const std::string& path, const std::vector<std::string>& input_words) {
  if (!input_words.empty()) return true;
  auto text = read_text_file(path);
  return text.ok() && has_typed_nodes(*text);
}

int run_typed(const TypedRunRequest& r) {
  const std::optional<Rounding> mode = parse_rounding(r.rounding);
  if (!mode) {
    std::cerr << "error: --rounding " << r.rounding << ": expected nearest-even, toward-zero, upward, downward (or "
              << "nearest-away)\n";
    return kExitUsage;
  }
  auto text = read_text_file(r.path);
  if (!text.ok()) return fail(text.message());
  // .onnx: integer/bool/float tensors through the typed import (docs/ONNX.md, "Typed import").
  const bool onnx = r.path.size() >= 5 && r.path.compare(r.path.size() - 5, 5, ".onnx") == 0;
  auto tm = onnx ? read_typed_model_onnx(*text, onnx_options()) : read_typed_model_json(*text);
  print_onnx_notes();
  if (!tm.ok()) return fail(tm.message());
  auto inputs = load_inputs(*tm, r.input_words);
  if (!inputs.ok()) return fail(inputs.message());
  typed::TypedOptions o;
  o.rounding = *mode;
  set_max_bytes(o, r.max_bytes);
  auto run = typed::eval_typed(*tm, *inputs, o);
  if (!run.ok()) return fail(run.message());
  if (r.json) print_json(*tm, *run, r);
  else print_text(*tm, *run, r.trace);
  return kExitOk;
}

}  // namespace denote::cli
