// Planning and plan execution for the CLI (see run_plan.h).
#include "run_plan.h"
#include "denote/plan/provider_check.h"

#include <algorithm>
#include <iterator>
#include <type_traits>

#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/plan/registry.h"

namespace denote::cli {

namespace {

template <class S>
Result<std::vector<Tensor<double>>> execute_widened(const BoundPlan& bound, const Model& m,
                                                    const std::vector<Tensor<double>>& inputs,
                                                    const EvalOptions& options) {
  auto narrow = [](double v) { return static_cast<S>(v); };
  std::vector<Tensor<S>> in;
  for (const auto& t : inputs) {
    std::vector<S> data;
    data.reserve(t.data.size());
    for (double v : t.data) data.push_back(narrow(v));
    in.emplace_back(t.shape, std::move(data));
  }
  const Payload<S> payload = convert_payload<S>(m.payload, narrow);
  DENOTE_ASSIGN_OR_RETURN(auto table, execute_plan<S>(bound, m.graph, payload, std::span<const Tensor<S>>(in), options));
  std::vector<Tensor<double>> out;
  out.reserve(table.size());
  for (const auto& t : table) out.emplace_back(t.shape, std::vector<double>(t.data.begin(), t.data.end()));
  return out;
}

template <class S>
std::vector<Tensor<S>> narrowed(const std::vector<Tensor<double>>& inputs) {
  std::vector<Tensor<S>> in;
  for (const auto& t : inputs) in.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  return in;
}

template <class S>
Result<CompiledRun> compile_widened(const BoundPlan& bound, const Model& m, const std::vector<Tensor<double>>& inputs,
                                    int threads, const EvalOptions& options) {
  const Payload<S> payload = convert_payload<S>(m.payload, [](double v) { return static_cast<S>(v); });
  CompileOptions compile;
  compile.threads = threads;
  DENOTE_ASSIGN_OR_RETURN(CompiledPlan<S> plan, compile_plan<S>(bound, m.graph, payload,
                                                                std::span<const int64_t>(m.output_ids), compile, options));
  auto state = std::make_shared<std::pair<CompiledPlan<S>, std::vector<Tensor<S>>>>(std::move(plan), narrowed<S>(inputs));
  CompiledRun run;
  run.report = state->first.report();
  run.threads = state->first.threads();
  run.call = [state] { return state->first.run(std::span<const Tensor<S>>(state->second)); };
  run.outputs = [state] {
    std::vector<Tensor<double>> out;
    for (size_t k = 0; k < state->first.output_count(); ++k) {
      const std::span<const S> v = state->first.output(k);
      out.emplace_back(state->first.output_shape(k), std::vector<double>(v.begin(), v.end()));
    }
    return out;
  };
  return run;
}

// The plan of `m` under the --provider policy, bound to the standard handlers; arith must be native.
Result<BoundPlan> bound_plan_for(const Model& m, const std::string& provider, const ArithSpec& arith) {
  if (!arith.native())
    return Status::error(ErrorCode::kUnsupported, "--provider runs a kernel plan in f64 or f32 only, not --arith " +
                                                      arith.name)
        .with_field("arith");
  DENOTE_ASSIGN_OR_RETURN(PlanPolicy policy, policy_from_options("cpu", provider, "checked"));
  DENOTE_ASSIGN_OR_RETURN(GraphKernelPlan plan, plan_model(m, policy));
  return bind_plan(plan, standard_handlers());
}

}  // namespace

Result<PlanPolicy> policy_from_options(const std::string& device, const std::string& provider,
                                       const std::string& assurance) {
  PlanPolicy policy;
  if (std::find(std::begin(kKnownDevices), std::end(kKnownDevices), device) == std::end(kKnownDevices)) {
    std::string known;
    for (const char* d : kKnownDevices) known += (known.empty() ? "" : ", ") + std::string(d);
    return Status::error(ErrorCode::kInvalidInput, "--device " + device + ": unknown device (known: " + known + ")")
        .with_field("device");
  }
  policy.device = device;
  DENOTE_RETURN_IF_ERROR(parse_provider_policy(provider, policy));
  DENOTE_RETURN_IF_ERROR(parse_assurance(assurance, policy));
  DENOTE_RETURN_IF_ERROR(check_provider_present(policy, detect_environment()));
  return policy;
}

Result<GraphKernelPlan> plan_model(const Model& m, const PlanPolicy& policy) {
  DENOTE_ASSIGN_OR_RETURN(CapsuleRegistry registered, standard_registry());
  return plan_graph(m.graph, registered.available(detect_environment()), policy);
}

Result<std::vector<Tensor<double>>> run_plan(const Model& m, const std::vector<Tensor<double>>& inputs,
                                             const std::string& provider, const ArithSpec& arith,
                                             const EvalOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(BoundPlan bound, bound_plan_for(m, provider, arith));
  return visit_arith(arith, [&](auto& ctx) -> Result<std::vector<Tensor<double>>> {
    using S = typename std::decay_t<decltype(ctx)>::Scalar;
    if constexpr (std::is_same_v<S, double> || std::is_same_v<S, float>) return execute_widened<S>(bound, m, inputs, options);
    else return Status::error(ErrorCode::kInternal, "internal: a kernel plan runs in a native context only");
  });
}

Result<CompiledRun> compile_run(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& provider,
                                const ArithSpec& arith, int threads, const EvalOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(BoundPlan bound, bound_plan_for(m, provider, arith));
  if (arith.kind == ArithKind::F32) return compile_widened<float>(bound, m, inputs, threads, options);
  return compile_widened<double>(bound, m, inputs, threads, options);
}

Result<std::vector<Tensor<double>>> run_compiled(const Model& m, const std::vector<Tensor<double>>& inputs,
                                                 const std::string& provider, const ArithSpec& arith,
                                                 const EvalOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(CompiledRun run, compile_run(m, inputs, provider, arith, /*threads=*/1, options));
  DENOTE_RETURN_IF_ERROR(run.call());
  std::vector<Tensor<double>> table(m.graph.nodes.size());
  std::vector<Tensor<double>> outputs = run.outputs();
  for (size_t k = 0; k < outputs.size(); ++k) table[static_cast<size_t>(m.output_ids[k])] = std::move(outputs[k]);
  return table;
}

}  // namespace denote::cli
