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

// The real environment: reference always, openblas when built with OpenBLAS, cuda when built with
// nvcc (DENOTE_HAVE_CUDA) and cuda_device_count() > 0; devices: cpu, plus cuda under the same test.
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

// The maintained modules in catalog order: reference.cpu, openblas.cpu (when built with OpenBLAS),
// cuda.cuda (when built with nvcc). Registered, not yet filtered by availability.
Result<CapsuleRegistry> standard_registry();

// The maintained modules themselves (src/providers/).
CapsuleModule reference_module();
bool openblas_built();
CapsuleModule openblas_module();  // empty capsule list when OpenBLAS is not built

}  // namespace denote
