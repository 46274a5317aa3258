// Providers register themselves through the generated list (CMakeLists.txt: DENOTE_PROVIDERS);
// plan/ sees them only as registered entries. The catalog order (reference first), the environment
// and the handler lists all come from that list.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/plan/executor.h"
#include "denote/plan/registry.h"
#include "denote/providers/providers.h"

namespace denote {
namespace {

TEST(ProviderRegistry, ReferenceIsFirstAndOpenblasIsThereWhenBuilt) {
  const ProviderList& providers = compiled_providers();
  ASSERT_FALSE(providers.empty());
  EXPECT_EQ(providers[0].name, "reference");
  EXPECT_TRUE(provider_built("reference"));
  EXPECT_EQ(provider_built("openblas"), openblas_built());
  EXPECT_FALSE(provider_built("nope"));
  std::vector<std::string> names;
  for (const ProviderEntry& p : providers) names.push_back(p.name);
  const Environment env = detect_environment();
  EXPECT_EQ(env.providers, names);
  EXPECT_EQ(env.devices, std::vector<std::string>{"cpu"});
}

TEST(ProviderRegistry, ModulesAndHandlersComeFromTheList) {
  auto r = standard_registry();
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->modules().size(), compiled_providers().size());
  EXPECT_EQ(r->modules()[0].name, "reference.cpu");
  size_t expected = 0;
  for (const ProviderEntry& p : compiled_providers()) expected += p.handlers().size();
  EXPECT_EQ(standard_handlers().size(), expected);
  EXPECT_EQ(handlers_of("reference").size(), reference_handlers().size());
  EXPECT_EQ(handlers_of("openblas").size(), openblas_handlers().size());
  EXPECT_TRUE(handlers_of("nope").empty());
}

}  // namespace
}  // namespace denote
