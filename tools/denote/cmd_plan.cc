// denote plan MODEL [--device D] [--provider auto|prefer:P|only:P] [--assurance checked|external]
// [--json]: the kernel plan report, one line per node with runtime work (docs/PLANNING.md).
#include <iostream>

#include "cli.h"
#include "run_plan.h"

namespace denote::cli {

namespace {

struct PlanOptions {
  std::string path;
  std::string device = "cpu";
  std::string provider = "auto";
  std::string assurance = "checked";
  bool json = false;
};

int run_plan_command(const PlanOptions& o) {
  auto policy = policy_from_options(o.device, o.provider, o.assurance);
  if (!policy.ok()) {
    std::cerr << "error: " << policy.message() << "\n";
    return kExitUsage;
  }
  auto m = load_model(o.path);
  if (!m.ok()) return fail(m.message());
  auto plan = plan_model(*m, *policy);
  if (!plan.ok()) return fail(plan.message());
  std::cout << (o.json ? plan_json(*plan) + "\n" : plan_report(*plan));
  return kExitOk;
}

}  // namespace

void add_plan(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("plan", "choose a kernel capsule for every node with runtime work");
  auto o = std::make_shared<PlanOptions>();
  sub->add_option("model", o->path, "model file (.json torchlean.ir.v1 or .onnx)")->required();
  sub->add_option("--device", o->device, "device: cpu (default) or cuda");
  sub->add_option("--provider", o->provider, "provider policy: auto (default), prefer:P or only:P");
  sub->add_option("--assurance", o->assurance,
                  "checked (default: checked capsules only) or external (also trusted-external capsules)");
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([&cmd, o] { cmd.run = [o] { return run_plan_command(*o); }; });
}

}  // namespace denote::cli
