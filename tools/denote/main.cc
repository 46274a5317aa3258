// denote: check, print, denote and (later) bound and plan neural-network graphs. See docs/CLI.md.
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include "denote/base/allocator.h"
#include "cli.h"

namespace {

using namespace denote::cli;

// "denote bogus": names the unknown command, suggests the nearest one (edit distance) and lists all.
// Returns kExitOk when argv[1] is an option or a known command.
int check_command_name(CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return kExitOk;
  const std::string_view given = argv[1];
  std::string nearest, all;
  size_t best = std::string::npos;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    const std::string& name = sub->get_name();
    if (name == given) return kExitOk;
    all += (all.empty() ? "" : ", ") + name;
    const size_t d = edit_distance(given, name);
    if (d < best) best = d, nearest = name;
  }
  const std::string hint = " (did you mean '" + nearest + "'?)";
  return usage_error("unknown command '" + std::string(given) + "'" + hint + "; commands: " + all);
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  CLI::App app{"denote: one canonical neural-network graph IR, checked, denoted, bounded and planned"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");
  Command cmd;
  add_demo(app, cmd);
  add_check(app, cmd);
  add_print(app, cmd);
  add_run(app, cmd);
  add_bench(app, cmd);
  add_ops(app, cmd);
  add_scalar(app, cmd);
  add_bounds(app, cmd);
  add_sample(app, cmd);
  add_convert(app, cmd);
  add_plan(app, cmd);
  add_grad(app, cmd);
  add_jvp(app, cmd);
  add_verify(app, cmd);
  add_check_certificate(app, cmd);
  add_mx(app, cmd);
  add_onnx_dim_option(app);
  // No exception leaves main: a stray one (a bug) is "error: internal: ...", exit 1.
  try {
    if (int code = check_command_name(app, argc, argv); code != kExitOk) return code;
    try {
      app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
      int code = app.exit(e);
      return code == 0 ? kExitOk : kExitUsage;
    }
    return cmd.run ? cmd.run() : kExitUsage;
  } catch (const std::exception& e) {
    std::cerr << "error: internal: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "error: internal: unknown exception\n";
  }
  return kExitInvalid;
}
