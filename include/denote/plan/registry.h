// The capsule registry: capsule modules (one per provider), registered with duplicate detection, then
// filtered by what this build and machine have. Registered != available != selectable != executable
// (docs/PLANNING.md).
//
//   DENOTE_ASSIGN_OR_RETURN(CapsuleRegistry all, standard_registry());   // registered
//   CapsuleRegistry here = all.available(detect_environment());          // available
//   std::vector<const KernelCapsule*> cat = here.catalog();              // module order, then capsule order
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/plan/capsule.h"

namespace denote {

// A provider's capsules for one device.
struct CapsuleModule {
  std::string name;      // e.g. "reference.cpu"
  std::string provider;  // every capsule's provider
  std::string device;    // every capsule's device
  std::vector<KernelCapsule> capsules;
};

// What this build and this machine have: the providers compiled in, and the devices present at run
// time. A module is available when both its provider and its device are listed.
struct Environment {
  std::vector<std::string> providers;
  std::vector<std::string> devices;
};

// The real environment: every compiled provider (reference always, openblas when built with
// OpenBLAS ...); devices: cpu, plus whatever devices the providers report present.
Environment detect_environment();

class CapsuleRegistry {
 public:
  // Errors: "capsule registry: duplicate module `m`", "capsule registry: duplicate capsule `c`",
  // "capsule registry: capsule `c` in module `m` belongs to provider `p` / device `d`".
  Status add(CapsuleModule module);
  const std::vector<CapsuleModule>& modules() const { return modules_; }
  // The modules available in `env` (registration order kept).
  CapsuleRegistry available(const Environment& env) const;
  // Every capsule in catalog order: module registration order, then the module's order.
  std::vector<const KernelCapsule*> catalog() const;
  const KernelCapsule* find(const std::string& capsule_name) const;

 private:
  std::vector<CapsuleModule> modules_;
};

struct KernelHandler;  // denote/plan/executor.h

// A kernel provider as it registers itself. plan/ names no provider: each provider file
// (src/providers/<name>.cc) defines `void register_<name>_provider(ProviderList&)`, and the build
// generates the list that calls them (CMakeLists.txt: DENOTE_PROVIDERS, provider_list.cc).
//
//   void register_reference_provider(ProviderList& out) {
//     out.push_back({"reference", &reference_module, &reference_handlers, &cpu_only});
//   }
struct ProviderEntry {
  std::string name;                          // the provider of its capsules, e.g. "openblas"
  CapsuleModule (*module)() = nullptr;       // its capsule module
  std::vector<KernelHandler> (*handlers)() = nullptr;  // its handlers (bind_plan)
  std::vector<std::string> (*devices)() = nullptr;     // the devices present at run time, e.g. {"cpu"}
  // Its rank for the `auto` policy (and prefer:P's fallback): for each op the admissible capsule of
  // the highest-ranked provider that has one is taken (docs/PLANNING.md, docs/PERF.md's plan rows):
  // reference 0, openblas 1, avx2 2.
  int speed = 0;
};
using ProviderList = std::vector<ProviderEntry>;

// Calls every compiled-in provider's registration, in catalog order (defined by the generated list).
void register_compiled_providers(ProviderList& out);

// The providers compiled into this build, in catalog order (reference first).
const ProviderList& compiled_providers();
bool provider_built(std::string_view name);
// A compiled provider's ProviderEntry::speed; 0 for one not compiled in.
int provider_speed(std::string_view name);
// The handlers of one compiled provider (empty when it is not built), e.g. handlers_of("reference").
std::vector<KernelHandler> handlers_of(std::string_view provider);

// The compiled providers' modules in catalog order: reference.cpu, then openblas.cpu (when built
// with OpenBLAS) and any other registered provider. Registered, not yet filtered by availability.
Result<CapsuleRegistry> standard_registry();

}  // namespace denote
