// denote check MODEL [--json]: structural, shape and model (payload, cast target) checks, every
// diagnostic printed; a typed JSON model (dtype / words fields) is read as typed, as `run` reads it.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_typed.h"
#include "denote/typed/check.h"
#include "denote/typed/interp.h"

namespace denote::cli {
namespace {

bool is_json_path(const std::string& path) {
  return path.size() >= 5 && path.compare(path.size() - 5, 5, ".json") == 0;
}

// Every diagnostic of the model at `path`, and its node count.
std::vector<Diagnostic> diagnose_file(const std::string& path, size_t& nodes) {
  if (is_json_path(path)) {
    auto text = read_text_file(path);
    if (text.ok() && has_typed_nodes(*text)) {
      auto tm = parse_typed_model_json(*text);
      if (!tm.ok()) {
        const Status s = tm.status().with_prefix(path + ": ");
        return {{s.node(), s.message(), s}};
      }
      nodes = tm->model.graph.size();
      return diagnose_typed_model(*tm);
    }
  }
  auto m = load_model(path);
  if (!m.ok()) return {{m.status().node(), m.message(), m.status()}};
  nodes = m->graph.size();
  return diagnose_model(*m);
}

nlohmann::ordered_json or_null(bool present, nlohmann::ordered_json v) {
  return present ? std::move(v) : nlohmann::ordered_json();
}

void print_json(const std::vector<Diagnostic>& diags) {
  nlohmann::ordered_json out;
  out["ok"] = diags.empty();
  out["diagnostics"] = nlohmann::ordered_json::array();
  for (const auto& d : diags) {
    nlohmann::ordered_json j;
    j["node"] = or_null(d.node >= 0, d.node);
    j["code"] = std::string(error_code_name(d.status.code()));
    j["field"] = or_null(!d.status.field().empty(), d.status.field());
    j["message"] = d.message;
    out["diagnostics"].push_back(j);
  }
  // Names from the file (a kind string, an ONNX node name) may hold invalid UTF-8: replace it
  // (U+FFFD) rather than throw.
  std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
}

}  // namespace

void add_check(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand(
      "check", "structural, shape and payload check (what run would refuse); prints every diagnostic; exit 1 if any");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("model", *path, "model file (.json torchlean.ir.v1, typed or not, or .onnx)")->required();
  sub->add_flag("--json", *json, "one JSON document on stdout");
  sub->callback([&cmd, path, json] {
    cmd.run = [path, json]() -> int {
      size_t nodes = 0;
      const std::vector<Diagnostic> diags = diagnose_file(*path, nodes);
      if (*json) print_json(diags);
      for (const auto& d : diags) std::cerr << "error: " << d.message << "\n";
      if (!diags.empty()) return kExitInvalid;
      if (!*json) std::cout << "ok: " << nodes << " nodes pass the structural, shape and payload checks\n";
      return kExitOk;
    };
  });
}

}  // namespace denote::cli
