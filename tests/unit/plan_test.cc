// Kernel planning: the backend op map, the registry (duplicates), availability, policies (auto,
// prefer, only; assurance checked / external), the planner on the seed's six-node graph, binding
// errors (exact texts) and the executor against denote_all. Expected texts come from
// SPEC-PLANNING.md and the seed, not from the code under test.
#include <gtest/gtest.h>

#include <algorithm>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/program/examples.h"
#include "denote/plan/executor.h"
#include "denote/plan/planner.h"
#include "denote/plan/registry.h"
#include "denote/providers/providers.h"

namespace denote {
namespace {

CapsuleRegistry available_here() {
  auto r = standard_registry();
  EXPECT_TRUE(r.ok()) << r.message();
  return r->available(detect_environment());
}

KernelCapsule capsule(const std::string& provider, BackendOp op, Trust trust = Trust::Checked,
                      const std::string& device = "cpu") {
  KernelCapsule c;
  c.name = provider + "." + std::string(backend_op_name(op));
  c.op = op;
  c.provider = provider;
  c.device = device;
  c.trust = trust;
  return c;
}

std::vector<std::string> capsule_names(const GraphKernelPlan& p) {
  std::vector<std::string> out;
  for (const PlanEntry& e : p.entries) out.push_back(e.capsule.name);
  return out;
}

std::vector<int64_t> node_ids(const GraphKernelPlan& p) {
  std::vector<int64_t> out;
  for (const PlanEntry& e : p.entries) out.push_back(e.node_id);
  return out;
}

PlanPolicy policy(const std::string& provider, const std::string& assurance = "checked",
                  const std::string& device = "cpu") {
  PlanPolicy p;
  p.device = device;
  EXPECT_TRUE(parse_provider_policy(provider, p).ok());
  EXPECT_TRUE(parse_assurance(assurance, p).ok());
  return p;
}

TEST(PlanVocabulary, IrOpsMapToBackendOps) {
  EXPECT_FALSE(backend_op_of(Op::Input));
  EXPECT_FALSE(backend_op_of(Op::Const));
  EXPECT_FALSE(backend_op_of(Op::Detach));
  EXPECT_EQ(backend_op_of(Op::Sum), BackendOp::ReduceSum);
  EXPECT_EQ(backend_op_of(Op::ReduceSum), BackendOp::ReduceSum);
  EXPECT_EQ(backend_op_of(Op::MulElem), BackendOp::Mul);
  EXPECT_EQ(backend_op_of(Op::MaxElem), BackendOp::Max);
  EXPECT_EQ(backend_op_of(Op::BroadcastTo), BackendOp::Broadcast);
  EXPECT_EQ(backend_op_of(Op::Layernorm), BackendOp::LayerNorm);
  EXPECT_EQ(backend_op_of(Op::Flatten), BackendOp::Reshape);
  EXPECT_EQ(backend_op_of(Op::Transpose), BackendOp::Permute);
  EXPECT_EQ(backend_op_of(Op::BatchNormEval), BackendOp::BatchNorm);
  EXPECT_EQ(backend_op_name(BackendOp::LayerNorm), "layer_norm");
  EXPECT_EQ(backend_op_name(BackendOp::BatchNorm), "batch_norm");
  int mapped = 0;
  for (const OpInfo& info : kOpTable) {
    auto b = backend_op_of(info.op);
    if (!b) continue;
    ++mapped;
    EXPECT_EQ(backend_op_from_name(backend_op_name(*b)), b) << info.tag;
  }
  EXPECT_EQ(mapped, kNumOps - 3);
  EXPECT_FALSE(backend_op_from_name("mul_elem"));
}

TEST(PlanRegistry, DuplicatesAreErrors) {
  CapsuleRegistry r;
  ASSERT_TRUE(r.add(CapsuleModule{"m", "p", "cpu", {capsule("p", BackendOp::Add)}}).ok());
  Status dup_module = r.add(CapsuleModule{"m", "p", "cpu", {}});
  EXPECT_EQ(dup_module.message(), "capsule registry: duplicate module `m`");
  Status dup_capsule = r.add(CapsuleModule{"m2", "p", "cpu", {capsule("p", BackendOp::Add)}});
  EXPECT_EQ(dup_capsule.message(), "capsule registry: duplicate capsule `p.add`");
  Status within = r.add(CapsuleModule{"m3", "p", "cpu", {capsule("p", BackendOp::Sub), capsule("p", BackendOp::Sub)}});
  EXPECT_EQ(within.message(), "capsule registry: duplicate capsule `p.sub`");
  Status foreign = r.add(CapsuleModule{"m4", "p", "cpu", {capsule("q", BackendOp::Mul)}});
  EXPECT_EQ(foreign.message(), "capsule registry: capsule `q.mul` in module `m4` belongs to provider `q`");
  EXPECT_EQ(r.modules().size(), 1u);  // failed additions leave the registry unchanged
}

TEST(PlanRegistry, StandardModulesAndAvailability) {
  auto r = standard_registry();
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_GE(r->modules().size(), 1u);
  EXPECT_EQ(r->modules()[0].name, "reference.cpu");
  EXPECT_EQ(static_cast<int>(r->modules()[0].capsules.size()), kNumBackendOps);
  const Environment env = detect_environment();
  EXPECT_NE(std::find(env.devices.begin(), env.devices.end(), "cpu"), env.devices.end());
#ifndef DENOTE_HAVE_CUDA
  EXPECT_EQ(std::find(env.devices.begin(), env.devices.end(), "cuda"), env.devices.end());
#endif
  // Registered but not built here: filtered out.
  const CapsuleRegistry only_reference = r->available(Environment{{"reference"}, {"cpu"}});
  ASSERT_EQ(only_reference.modules().size(), 1u);
  EXPECT_EQ(only_reference.find("openblas.linear"), nullptr);
  // A module whose device is absent is filtered out too.
  CapsuleRegistry with_gpu;
  ASSERT_TRUE(with_gpu.add(CapsuleModule{"gpu", "gpu", "cuda", {capsule("gpu", BackendOp::Linear, Trust::Checked,
                                                                         "cuda")}})
                  .ok());
  EXPECT_TRUE(with_gpu.available(Environment{{"gpu"}, {"cpu"}}).modules().empty());
  EXPECT_EQ(with_gpu.available(Environment{{"gpu"}, {"cpu", "cuda"}}).modules().size(), 1u);
  if (openblas_built()) {
    EXPECT_NE(r->available(env).find("openblas.linear"), nullptr);
    EXPECT_EQ(r->find("openblas.relu"), nullptr);  // no BLAS routine: not claimed
  }
}

TEST(PlanPolicy, ParsesAndRejects) {
  PlanPolicy p;
  ASSERT_TRUE(parse_provider_policy("prefer:openblas", p).ok());
  EXPECT_EQ(p.mode, ProviderMode::Prefer);
  EXPECT_EQ(p.provider, "openblas");
  ASSERT_TRUE(parse_provider_policy("only:cuda", p).ok());
  EXPECT_EQ(p.mode, ProviderMode::Only);
  EXPECT_EQ(describe(p), "device=cpu provider=only:cuda assurance=checked");
  EXPECT_EQ(parse_provider_policy("prefer:", p).message(),
            "provider policy `prefer:`: expected auto, prefer:PROVIDER or only:PROVIDER");
  EXPECT_FALSE(parse_provider_policy("openblas", p).ok());
  EXPECT_EQ(parse_assurance("trusted", p).message(), "assurance `trusted`: expected checked or external");
}

TEST(PlanPolicy, SelectionOrderAndAssurance) {
  const KernelCapsule a = capsule("alpha", BackendOp::Linear);
  const KernelCapsule b = capsule("beta", BackendOp::Linear);
  const KernelCapsule ext = capsule("vendor", BackendOp::Linear, Trust::TrustedExternal);
  const KernelCapsule gelu = capsule("alpha", BackendOp::Gelu);
  const std::vector<const KernelCapsule*> catalog = {&ext, &a, &b, &gelu};
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("auto"))->name, "alpha.linear");
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("auto", "external"))->name, "vendor.linear");
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("prefer:beta"))->name, "beta.linear");
  // prefer falls back to catalog order; only does not.
  EXPECT_EQ(select_capsule(catalog, BackendOp::Gelu, policy("prefer:beta"))->name, "alpha.gelu");
  EXPECT_EQ(select_capsule(catalog, BackendOp::Gelu, policy("only:beta")).message(),
            "no admissible kernel capsule for op gelu on device cpu");
  // A trusted-external capsule needs assurance external, even when asked for by name.
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("only:vendor")).message(),
            "no admissible kernel capsule for op linear on device cpu");
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("only:vendor", "external"))->name, "vendor.linear");
  EXPECT_EQ(select_capsule(catalog, BackendOp::Linear, policy("auto", "checked", "cuda")).message(),
            "no admissible kernel capsule for op linear on device cuda");
}

// auto takes, per op, the capsule of the fastest-ranked provider that has one (ProviderEntry::speed).
TEST(PlanSixNode, AutoTakesTheFastestProvidersCapsules) {
  const Model m = six_node_model();
  auto plan = plan_graph(m.graph, available_here(), PlanPolicy{});
  ASSERT_TRUE(plan.ok()) << plan.message();
  const CapsuleRegistry here = available_here();  // the catalog points into it
  const std::vector<const KernelCapsule*> catalog = here.catalog();
  for (const PlanEntry& e : plan->entries) {
    std::string fastest;
    int best = -1;
    for (const KernelCapsule* c : catalog)
      if (c->op == e.op && provider_speed(c->provider) > best) best = provider_speed(c->provider), fastest = c->provider;
    EXPECT_EQ(e.capsule.provider, fastest) << backend_op_name(e.op);
  }
  if (provider_built("avx2")) EXPECT_EQ(plan->entries[0].capsule.name, "avx2.linear");
  else if (openblas_built()) EXPECT_EQ(plan->entries[0].capsule.name, "openblas.linear");
  EXPECT_EQ(plan->entries[1].capsule.name, "reference.relu");  // no faster provider has relu
  if (provider_built("avx2")) EXPECT_GT(provider_speed("avx2"), provider_speed("openblas"));
  if (openblas_built()) EXPECT_GT(provider_speed("openblas"), provider_speed("reference"));
  EXPECT_EQ(provider_speed("nope"), 0);
}

TEST(PlanSixNode, ReferencePolicyMatchesTheSeed) {
  const Model m = six_node_model();
  auto plan = plan_graph(m.graph, available_here(), policy("only:reference"));
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(node_ids(*plan), (std::vector<int64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(capsule_names(*plan), (std::vector<std::string>{"reference.linear", "reference.relu", "reference.linear",
                                                            "reference.reduce_sum", "reference.tanh"}));
  EXPECT_EQ(plan_report(*plan),
            "1: linear -> reference.linear provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "2: relu -> reference.relu provider=reference device=cpu trust=checked reduction=n/a\n"
            "3: linear -> reference.linear provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "4: reduce_sum -> reference.reduce_sum provider=reference device=cpu trust=checked reduction=fixed-left\n"
            "5: tanh -> reference.tanh provider=reference device=cpu trust=checked reduction=n/a\n");
  EXPECT_TRUE(plan_json(*plan).starts_with(
            "{\"device\": \"cpu\", \"nodes\": [{\"id\": 1, \"op\": \"linear\", \"capsule\": \"reference.linear\", "
            "\"provider\": \"reference\", \"device\": \"cpu\", \"trust\": \"checked\", \"reduction\": \"fixed-left\"}"))
      << plan_json(*plan);
}

TEST(PlanSixNode, PreferOpenblasMovesOnlyTheLinearNodes) {
  if (!openblas_built()) GTEST_SKIP() << "built without OpenBLAS";
  const Model m = six_node_model();
  auto plan = plan_graph(m.graph, available_here(), policy("prefer:openblas"));
  ASSERT_TRUE(plan.ok()) << plan.message();
  EXPECT_EQ(capsule_names(*plan), (std::vector<std::string>{"openblas.linear", "reference.relu", "openblas.linear",
                                                            "reference.reduce_sum", "reference.tanh"}));
  EXPECT_EQ(plan->entries[0].capsule.numerics.reduction, Reduction::ImplementationDefined);
}

TEST(PlanSixNode, MissingProviderAndBrokenGraphs) {
  const Model m = six_node_model();
  auto cuda = plan_graph(m.graph, available_here(), policy("only:cuda"));
  EXPECT_EQ(cuda.message(), "no admissible kernel capsule for op linear on device cpu");
  auto gpu = plan_graph(m.graph, available_here(), policy("auto", "checked", "cuda"));
  EXPECT_EQ(gpu.message(), "no admissible kernel capsule for op linear on device cuda");
  // The structural check runs first: its message, not a planning one.
  for (const Graph& bad : {six_node_bad_id(), six_node_forward_parent()}) {
    auto plan = plan_graph(bad, available_here(), policy("only:cuda"));
    EXPECT_EQ(plan.message(), check_well_formed(bad).message());
  }
}

TEST(PlanBinding, ExactErrors) {
  const KernelCapsule c = capsule("openblas", BackendOp::Linear);
  KernelHandler h{"h", BackendOp::Matmul, "openblas", "cpu", nullptr, nullptr};
  EXPECT_EQ(bind_kernel(c, h).message(), "handler `h` implements `matmul`, but capsule `openblas.linear` implements "
                                         "`linear`");
  h.op = BackendOp::Linear;
  h.device = "cuda";
  EXPECT_EQ(bind_kernel(c, h).message(),
            "handler `h` runs on device `cuda`, but capsule `openblas.linear` runs on device `cpu`");
  h.device = "cpu";
  h.provider = "reference";
  EXPECT_EQ(bind_kernel(c, h).message(),
            "handler `h` comes from provider `reference`, but capsule `openblas.linear` comes from provider "
            "`openblas`");
  h.provider = "openblas";
  EXPECT_TRUE(bind_kernel(c, h).ok());
  GraphKernelPlan plan{"cpu", {PlanEntry{1, BackendOp::Linear, c}}};
  EXPECT_EQ(bind_plan(plan, reference_handlers()).message(), "no handler for capsule `openblas.linear`");
  // A handler registered under the capsule's name but for another op is refused by bind_kernel.
  std::vector<KernelHandler> wrong = {KernelHandler{"openblas.linear", BackendOp::Add, "openblas", "cpu"}};
  EXPECT_EQ(bind_plan(plan, wrong).message(),
            "handler `openblas.linear` implements `add`, but capsule `openblas.linear` implements `linear`");
}

Result<BoundPlan> bound_plan(const Graph& g, const std::string& provider) {
  DENOTE_ASSIGN_OR_RETURN(GraphKernelPlan plan, plan_graph(g, available_here(), policy(provider)));
  return bind_plan(plan, standard_handlers());
}

TEST(PlanExecutor, SixNodeReferencePlanEqualsDenoteAll) {
  const Model m = six_node_model();
  auto bound = bound_plan(m.graph, "only:reference");
  ASSERT_TRUE(bound.ok()) << bound.message();
  const std::vector<Tensor<double>> x = {Tensor<double>{{4}, six_node_x0()}};
  F64Context ctx;
  auto expected = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(x), ctx);
  auto got = execute_plan<double>(*bound, m.graph, m.payload, x);
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(*got, *expected);
  // The seed's value: tanh(0.0277...) (hand computation in the seed's walkthrough).
  EXPECT_NEAR((*got)[5].data[0], 0.02770, 1e-4);
}

TEST(PlanExecutor, BadInputsGiveTheEvaluatorsErrors) {
  const Model m = six_node_model();
  for (const char* provider : {"auto", "prefer:openblas"}) {
    auto bound = bound_plan(m.graph, provider);
    ASSERT_TRUE(bound.ok()) << bound.message();
    F64Context ctx;
    const std::vector<std::vector<Tensor<double>>> cases = {
        {}, {Tensor<double>{{3}, {1, 2, 3}}}, {Tensor<double>{{4}, {1, 2, 3, 4}}, Tensor<double>{{1}, {1}}}};
    for (const auto& x : cases) {
      auto want = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(x), ctx);
      auto got = execute_plan<double>(*bound, m.graph, m.payload, x);
      ASSERT_FALSE(want.ok());
      EXPECT_EQ(got.message(), want.message()) << provider;
    }
    const std::vector<Tensor<double>> x0 = {Tensor<double>{{4}, six_node_x0()}};
    const Payload<double> swapped = six_node_swapped_payload();
    auto want = denote_all(m.graph, swapped, std::span<const Tensor<double>>(x0), ctx);
    auto got = execute_plan<double>(*bound, m.graph, swapped, x0);
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(got.message(), want.message()) << provider;
    Payload<double> missing = m.payload;
    missing.linear.erase(3);
    want = denote_all(m.graph, missing, std::span<const Tensor<double>>(x0), ctx);
    got = execute_plan<double>(*bound, m.graph, missing, x0);
    EXPECT_EQ(got.message(), want.message()) << provider;
    // The structural check runs before anything else.
    const Graph bad = six_node_bad_id();
    EXPECT_EQ(execute_plan<double>(*bound, bad, m.payload, x0).message(), check_well_formed(bad).message());
  }
}

TEST(PlanExecutor, PlanMustFitTheGraph) {
  const Model m = six_node_model();
  auto bound = bound_plan(m.graph, "only:reference");
  ASSERT_TRUE(bound.ok());
  const std::vector<Tensor<double>> x0 = {Tensor<double>{{4}, six_node_x0()}};
  BoundPlan short_plan = *bound;
  short_plan.plan.entries.pop_back();
  short_plan.kernels.pop_back();
  EXPECT_EQ(execute_plan<double>(short_plan, m.graph, m.payload, x0).message(), "kernel plan: no kernel for node 5");
  BoundPlan shifted = *bound;
  shifted.plan.entries[0].node_id = 2;
  EXPECT_EQ(execute_plan<double>(shifted, m.graph, m.payload, x0).message(),
            "kernel plan: the entry for node 2 does not match the graph");
  // A handler without an f32 kernel binds, but cannot run an f32 plan.
  std::vector<KernelHandler> handlers = reference_handlers();
  for (KernelHandler& h : handlers)
    if (h.op == BackendOp::Relu) h.f32 = nullptr;
  auto plan = plan_graph(m.graph, available_here(), policy("only:reference"));
  ASSERT_TRUE(plan.ok());
  auto f64_only = bind_plan(*plan, handlers);
  ASSERT_TRUE(f64_only.ok());
  const std::vector<Tensor<float>> x32 = {Tensor<float>{{4}, {0.3f, -0.2f, 0.1f, 0.4f}}};
  const Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  EXPECT_EQ(execute_plan<float>(*f64_only, m.graph, p32, x32).message(),
            "kernel plan: handler `reference.relu` has no f32 kernel");
  EXPECT_TRUE(execute_plan<double>(*f64_only, m.graph, m.payload, x0).ok());
  BoundPlan unbound = *bound;
  unbound.kernels.clear();
  EXPECT_EQ(execute_plan<double>(unbound, m.graph, m.payload, x0).message(),
            "kernel plan: the plan is not bound (bind_plan)");
}

}  // namespace
}  // namespace denote
