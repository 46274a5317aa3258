// The checked kernel planner: policy parsing, capsule selection, the plan and its report.
#include "denote/plan/planner.h"

#include <fmt/format.h>

#include "denote/check/check.h"

namespace denote {

namespace {

bool admissible(const KernelCapsule& c, BackendOp op, const PlanPolicy& policy) {
  if (c.op != op || c.device != policy.device || !c.supports_forward) return false;
  if (c.trust == Trust::TrustedExternal && policy.assurance != Assurance::External) return false;
  if (policy.mode == ProviderMode::Only && c.provider != policy.provider) return false;
  return true;
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

}  // namespace

Status parse_provider_policy(std::string_view text, PlanPolicy& policy) {
  if (text == "auto") {
    policy.mode = ProviderMode::Auto;
    policy.provider.clear();
    return ok_status();
  }
  for (auto [prefix, mode] : {std::pair{std::string_view("prefer:"), ProviderMode::Prefer},
                              std::pair{std::string_view("only:"), ProviderMode::Only}}) {
    if (text.substr(0, prefix.size()) == prefix && text.size() > prefix.size()) {
      policy.mode = mode;
      policy.provider = std::string(text.substr(prefix.size()));
      return ok_status();
    }
  }
  return error_status(fmt::format("provider policy `{}`: expected auto, prefer:PROVIDER or only:PROVIDER", text));
}

Status parse_assurance(std::string_view text, PlanPolicy& policy) {
  if (text == "checked") policy.assurance = Assurance::Checked;
  else if (text == "external") policy.assurance = Assurance::External;
  else return error_status(fmt::format("assurance `{}`: expected checked or external", text));
  return ok_status();
}

std::string describe(const PlanPolicy& p) {
  std::string provider = p.mode == ProviderMode::Auto     ? std::string("auto")
                         : p.mode == ProviderMode::Prefer ? "prefer:" + p.provider
                                                          : "only:" + p.provider;
  return fmt::format("device={} provider={} assurance={}", p.device, provider,
                     p.assurance == Assurance::Checked ? "checked" : "external");
}

Result<KernelCapsule> select_capsule(const std::vector<const KernelCapsule*>& catalog, BackendOp op,
                                     const PlanPolicy& policy) {
  if (policy.mode == ProviderMode::Prefer)
    for (const KernelCapsule* c : catalog)
      if (c->provider == policy.provider && admissible(*c, op, policy)) return *c;
  // auto, and prefer:P's fallback: the fastest-ranked provider's admissible capsule, catalog order on a
  // tie (only:P admits P's capsules alone).
  const KernelCapsule* best = nullptr;
  for (const KernelCapsule* c : catalog)
    if (admissible(*c, op, policy) && (!best || provider_speed(c->provider) > provider_speed(best->provider))) best = c;
  if (best) return *best;
  return error_status(
      fmt::format("no admissible kernel capsule for op {} on device {}", backend_op_name(op), policy.device));
}

Result<GraphKernelPlan> plan_graph(const Graph& g, const CapsuleRegistry& available, const PlanPolicy& policy) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  const std::vector<const KernelCapsule*> catalog = available.catalog();
  GraphKernelPlan plan{policy.device, {}};
  for (const Node& n : g.nodes) {
    const std::optional<BackendOp> op = backend_op_of(n.op);
    if (!op) continue;
    DENOTE_ASSIGN_OR_RETURN(KernelCapsule c, select_capsule(catalog, *op, policy));
    plan.entries.push_back(PlanEntry{n.id, *op, std::move(c)});
  }
  return plan;
}

std::string plan_report(const GraphKernelPlan& plan) {
  std::string out;
  for (const PlanEntry& e : plan.entries)
    out += fmt::format("{}: {} -> {} provider={} device={} trust={} reduction={}\n", e.node_id,
                       backend_op_name(e.op), e.capsule.name, e.capsule.provider, e.capsule.device,
                       trust_name(e.capsule.trust), reduction_name(e.capsule.numerics.reduction));
  return out;
}

std::string plan_json(const GraphKernelPlan& plan) {
  std::string out = fmt::format("{{\"device\": {}, \"nodes\": [", json_string(plan.device));
  for (size_t i = 0; i < plan.entries.size(); ++i) {
    const PlanEntry& e = plan.entries[i];
    out += fmt::format(
        "{}{{\"id\": {}, \"op\": {}, \"capsule\": {}, \"provider\": {}, \"device\": {}, \"trust\": {}, "
        "\"reduction\": {}}}",
        i ? ", " : "", e.node_id, json_string(backend_op_name(e.op)), json_string(e.capsule.name),
        json_string(e.capsule.provider), json_string(e.capsule.device), json_string(trust_name(e.capsule.trust)),
        json_string(reduction_name(e.capsule.numerics.reduction)));
  }
  return out + "]}";
}

}  // namespace denote
