// The checked kernel planner: after the structural check, chooses an admissible capsule for every
// node that needs runtime work, under a policy {device, provider: auto | prefer P | only P,
// assurance: checked | external}. The plan keeps node identity, so it can be audited against the
// graph. See docs/PLANNING.md.
//
//   CapsuleRegistry here = standard_registry()->available(detect_environment());
//   PlanPolicy policy;                                   // cpu, auto, checked
//   Result<GraphKernelPlan> plan = plan_graph(g, here, policy);
//   std::cout << plan_report(*plan);                     // "1: linear -> reference.linear provider=..."
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/plan/capsule.h"
#include "denote/plan/registry.h"

namespace denote {

enum class ProviderMode : uint8_t { Auto, Prefer, Only };
enum class Assurance : uint8_t { Checked, External };  // external also accepts trusted-external capsules

struct PlanPolicy {
  std::string device = "cpu";
  ProviderMode mode = ProviderMode::Auto;
  std::string provider;  // for Prefer / Only
  Assurance assurance = Assurance::Checked;
};

// "auto" | "prefer:P" | "only:P" into policy.mode/provider; "checked" | "external" into assurance.
Status parse_provider_policy(std::string_view text, PlanPolicy& policy);
Status parse_assurance(std::string_view text, PlanPolicy& policy);
std::string describe(const PlanPolicy& policy);  // "device=cpu provider=prefer:openblas assurance=checked"

struct PlanEntry {
  int64_t node_id = 0;
  BackendOp op = BackendOp::Add;
  KernelCapsule capsule;
};

// One entry per node with runtime work, in node id order.
struct GraphKernelPlan {
  std::string device;
  std::vector<PlanEntry> entries;
};

// The capsule of `catalog` admissible for `op` under `policy`: prefer:P takes P's first; otherwise (auto,
// prefer:P's fallback, only:P) the one whose provider ranks fastest (provider_speed), catalog order on a
// tie. Error: "no admissible kernel capsule for op {op} on device {device}".
Result<KernelCapsule> select_capsule(const std::vector<const KernelCapsule*>& catalog, BackendOp op,
                                     const PlanPolicy& policy);

// Runs check_well_formed, then selects a capsule per runtime node from `available`.
Result<GraphKernelPlan> plan_graph(const Graph& g, const CapsuleRegistry& available, const PlanPolicy& policy);

// One line per entry: "{id}: {op} -> {capsule} provider={p} device={d} trust={t} reduction={r}".
std::string plan_report(const GraphKernelPlan& plan);
// {"device": "cpu", "nodes": [{"id": 1, "op": "linear", "capsule": ..., "provider": ..., "device": ...,
//  "trust": ..., "reduction": ...}, ...]}
std::string plan_json(const GraphKernelPlan& plan);

}  // namespace denote
