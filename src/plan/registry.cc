// The capsule registry: registration with duplicate detection, availability filtering, the
// maintained module list and the environment of this build and machine.
#include "denote/plan/registry.h"

#include <algorithm>

#include <fmt/format.h>

namespace denote {

#ifdef DENOTE_HAVE_CUDA
// Defined by a cuda provider built with nvcc: the number of devices present at run time.
int cuda_device_count();
CapsuleModule cuda_module();
#endif

namespace {

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

Status CapsuleRegistry::add(CapsuleModule module) {
  for (const CapsuleModule& m : modules_)
    if (m.name == module.name) return error_status(fmt::format("capsule registry: duplicate module `{}`", m.name));
  std::vector<std::string> seen;
  for (const KernelCapsule& c : module.capsules) {
    if (c.provider != module.provider)
      return error_status(fmt::format("capsule registry: capsule `{}` in module `{}` belongs to provider `{}`", c.name,
                                      module.name, c.provider));
    if (c.device != module.device)
      return error_status(fmt::format("capsule registry: capsule `{}` in module `{}` belongs to device `{}`", c.name,
                                      module.name, c.device));
    if (contains(seen, c.name) || find(c.name))
      return error_status(fmt::format("capsule registry: duplicate capsule `{}`", c.name));
    seen.push_back(c.name);
  }
  modules_.push_back(std::move(module));
  return ok_status();
}

CapsuleRegistry CapsuleRegistry::available(const Environment& env) const {
  CapsuleRegistry out;
  for (const CapsuleModule& m : modules_)
    if (contains(env.providers, m.provider) && contains(env.devices, m.device)) out.modules_.push_back(m);
  return out;
}

std::vector<const KernelCapsule*> CapsuleRegistry::catalog() const {
  std::vector<const KernelCapsule*> out;
  for (const CapsuleModule& m : modules_)
    for (const KernelCapsule& c : m.capsules) out.push_back(&c);
  return out;
}

const KernelCapsule* CapsuleRegistry::find(const std::string& capsule_name) const {
  for (const CapsuleModule& m : modules_)
    for (const KernelCapsule& c : m.capsules)
      if (c.name == capsule_name) return &c;
  return nullptr;
}

Environment detect_environment() {
  Environment env{{"reference"}, {"cpu"}};
  if (openblas_built()) env.providers.push_back("openblas");
#ifdef DENOTE_HAVE_CUDA
  env.providers.push_back("cuda");
  if (cuda_device_count() > 0) env.devices.push_back("cuda");
#endif
  return env;
}

Result<CapsuleRegistry> standard_registry() {
  CapsuleRegistry r;
  DENOTE_RETURN_IF_ERROR(r.add(reference_module()));
  if (openblas_built()) DENOTE_RETURN_IF_ERROR(r.add(openblas_module()));
#ifdef DENOTE_HAVE_CUDA
  DENOTE_RETURN_IF_ERROR(r.add(cuda_module()));
#endif
  return r;
}

}  // namespace denote
