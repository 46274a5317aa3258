// denote print MODEL [--dot]: the listing, or GraphViz DOT.
#include <iostream>

#include "cli.h"
#include "denote/io/text.h"

namespace denote::cli {

void add_print(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("print", "print the graph listing, or GraphViz DOT with --dot");
  auto path = std::make_shared<std::string>();
  auto dot = std::make_shared<bool>(false);
  sub->add_option("model", *path, "model file (.json torchlean.ir.v1 or .onnx)")->required();
  sub->add_flag("--dot", *dot, "GraphViz DOT instead of the listing");
  sub->callback([&cmd, path, dot] {
    cmd.run = [path, dot]() -> int {
      auto m = load_model(*path);
      if (!m.ok()) return fail(m.message());
      std::cout << (*dot ? format_dot(m->graph) : format_listing(m->graph));
      return kExitOk;
    };
  });
}

}  // namespace denote::cli
