// denote: check, print, denote and (later) bound and plan neural-network graphs. See docs/CLI.md.
#include <iostream>

#include "cli.h"

int main(int argc, char** argv) {
  using namespace denote::cli;
  CLI::App app{"denote: one canonical neural-network graph IR, checked, denoted, bounded and planned"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "help for every subcommand");
  Command cmd;
  add_demo(app, cmd);
  add_check(app, cmd);
  add_print(app, cmd);
  add_run(app, cmd);
  add_ops(app, cmd);
  add_scalar(app, cmd);
  add_bounds(app, cmd);
  add_sample(app, cmd);
  add_convert(app, cmd);
  add_plan(app, cmd);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? kExitOk : kExitUsage;
  }
  return cmd.run ? cmd.run() : kExitUsage;
}
