// The capsule registry: registration with duplicate detection, availability filtering, the
// compiled provider list and the environment of this build and machine.
#include "denote/plan/registry.h"

#include <algorithm>

#include <fmt/format.h>

#include "denote/plan/executor.h"

namespace denote {

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

const ProviderList& compiled_providers() {
  static const ProviderList kProviders = [] {
    ProviderList out;
    register_compiled_providers(out);
    return out;
  }();
  return kProviders;
}

bool provider_built(std::string_view name) {
  for (const ProviderEntry& p : compiled_providers())
    if (p.name == name) return true;
  return false;
}

int provider_speed(std::string_view name) {
  for (const ProviderEntry& p : compiled_providers())
    if (p.name == name) return p.speed;
  return 0;
}

std::vector<KernelHandler> handlers_of(std::string_view provider) {
  for (const ProviderEntry& p : compiled_providers())
    if (p.name == provider && p.handlers) return p.handlers();
  return {};
}

Environment detect_environment() {
  Environment env{{}, {"cpu"}};
  for (const ProviderEntry& p : compiled_providers()) {
    env.providers.push_back(p.name);
    if (!p.devices) continue;
    for (std::string& d : p.devices())
      if (!contains(env.devices, d)) env.devices.push_back(std::move(d));
  }
  return env;
}

Result<CapsuleRegistry> standard_registry() {
  CapsuleRegistry r;
  for (const ProviderEntry& p : compiled_providers())
    if (p.module) DENOTE_RETURN_IF_ERROR(r.add(p.module()));
  return r;
}

std::vector<KernelHandler> standard_handlers() {
  std::vector<KernelHandler> out;
  for (const ProviderEntry& p : compiled_providers()) {
    if (!p.handlers) continue;
    for (KernelHandler& h : p.handlers()) out.push_back(std::move(h));
  }
  return out;
}

}  // namespace denote
