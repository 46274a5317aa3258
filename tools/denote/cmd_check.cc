// denote check MODEL [--json]: structural then shape check, every diagnostic printed.
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "denote/check/check.h"

namespace denote::cli {

void add_check(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("check", "structural then shape check; prints every diagnostic; exit 1 if any");
  auto path = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  sub->add_option("model", *path, "model file (.json torchlean.ir.v1)")->required();
  sub->add_flag("--json", *json, "one JSON document on stdout");
  sub->callback([&cmd, path, json] {
    cmd.run = [path, json]() -> int {
      auto m = load_model(*path);
      std::vector<Diagnostic> diags;
      if (!m.ok()) diags.push_back({m.status().node(), m.message(), m.status()});
      else diags = diagnose(m->graph);
      if (*json) {
        nlohmann::ordered_json out;
        out["ok"] = diags.empty();
        out["diagnostics"] = nlohmann::ordered_json::array();
        for (const auto& d : diags) {
          nlohmann::ordered_json j;
          j["node"] = d.node < 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(d.node);
          j["code"] = std::string(error_code_name(d.status.code()));
          j["field"] = d.status.field().empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(d.status.field());
          j["message"] = d.message;
          out["diagnostics"].push_back(j);
        }
        std::cout << out.dump(2) << "\n";
      }
      for (const auto& d : diags) std::cerr << d.message << "\n";
      if (!diags.empty()) return kExitInvalid;
      if (!*json) std::cout << "ok: " << m->graph.size() << " nodes pass the structural and shape checks\n";
      return kExitOk;
    };
  });
}

}  // namespace denote::cli
