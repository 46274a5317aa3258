#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"

namespace denote::cli {

int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitInvalid;
}

Result<Model> load_model(const std::string& path) { return load_model_file(path); }

std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt::format("{}", v);
}

namespace {

// A tensor from a JSON literal: a number (shape []) or nested lists (shape from the nesting).
Result<Tensor<double>> parse_json_tensor(const std::string& text) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    return error_status(fmt::format("--input: malformed JSON at byte {}", e.byte));
  }
  Tensor<double> t;
  const nlohmann::json* level = &j;
  while (level->is_array()) {
    t.shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
    level = &(*level)[0];
  }
  // Flatten row-major with an explicit stack, checking that the nesting is rectangular.
  std::vector<std::pair<const nlohmann::json*, size_t>> stack{{&j, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (depth == t.shape.size()) {
      if (!v->is_number()) return error_status("--input: expected numbers, got " + std::string(v->type_name()));
      t.data.push_back(v->get<double>());
      continue;
    }
    if (!v->is_array() || static_cast<int64_t>(v->size()) != t.shape[depth])
      return error_status("--input: nested lists are not rectangular");
    for (size_t i = v->size(); i > 0; --i) stack.push_back({&(*v)[i - 1], depth + 1});
  }
  return t;
}

Result<Tensor<double>> parse_tensor(const std::string& text) {
  if (!text.empty() && text[0] == '@') {
    DENOTE_ASSIGN_OR_RETURN(NpyArray a, read_npy_file(text.substr(1)));
    return a.tensor;
  }
  return parse_json_tensor(text);
}

}  // namespace

Result<std::vector<Tensor<double>>> parse_inputs(const Graph& g, const std::vector<std::string>& specs) {
  const std::vector<int64_t> ids = g.input_ids();
  std::vector<Tensor<double>> out(ids.size());
  std::vector<bool> given(ids.size(), false);
  size_t positional = 0;
  for (const std::string& spec : specs) {
    size_t slot = positional;
    std::string text = spec;
    if (auto eq = spec.find('='); eq != std::string::npos && spec[0] != '[' && spec[0] != '@') {
      int64_t id = -1;
      try {
        id = std::stoll(spec.substr(0, eq));
      } catch (...) {
        return error_status("--input " + spec + ": expected ID=TENSOR");
      }
      auto it = std::find(ids.begin(), ids.end(), id);
      if (it == ids.end()) return error_status(fmt::format("--input: node {} is not an input node", id));
      slot = static_cast<size_t>(it - ids.begin());
      text = spec.substr(eq + 1);
    } else {
      ++positional;
    }
    if (slot >= ids.size()) return error_status(fmt::format("--input: the graph has only {} input node(s)", ids.size()));
    DENOTE_ASSIGN_OR_RETURN(Tensor<double> t, parse_tensor(text));
    const Shape& declared = g.nodes[ids[slot]].out_shape;
    if (t.shape != declared && t.shape.size() <= 1 && static_cast<int64_t>(t.data.size()) == numel(declared))
      t.shape = declared;  // a flat list with the right count takes the declared shape
    out[slot] = std::move(t);
    given[slot] = true;
  }
  for (size_t k = 0; k < ids.size(); ++k)
    if (!given[k]) return error_status(fmt::format("missing --input for input node {}", ids[k]));
  return out;
}

}  // namespace denote::cli
