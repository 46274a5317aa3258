// Binding capsules to handlers, and executing a bound plan with the evaluator's per-node driver.
#include "denote/plan/executor.h"

#include <fmt/format.h>

#include "denote/plan/native_context.h"
#include "plan_internal.h"
#include "../eval/evaluator_impl.h"

namespace denote {

Result<BoundKernel> bind_kernel(const KernelCapsule& capsule, const KernelHandler& handler) {
  if (handler.op != capsule.op)
    return error_status(fmt::format("handler `{}` implements `{}`, but capsule `{}` implements `{}`", handler.name,
                                    backend_op_name(handler.op), capsule.name, backend_op_name(capsule.op)));
  if (handler.device != capsule.device)
    return error_status(fmt::format("handler `{}` runs on device `{}`, but capsule `{}` runs on device `{}`",
                                    handler.name, handler.device, capsule.name, capsule.device));
  if (handler.provider != capsule.provider)
    return error_status(fmt::format("handler `{}` comes from provider `{}`, but capsule `{}` comes from provider `{}`",
                                    handler.name, handler.provider, capsule.name, capsule.provider));
  return BoundKernel{capsule, handler};
}

Result<BoundPlan> bind_plan(const GraphKernelPlan& plan, const std::vector<KernelHandler>& handlers) {
  BoundPlan bound{plan, {}};
  for (const PlanEntry& e : plan.entries) {
    const KernelHandler* found = nullptr;
    for (const KernelHandler& h : handlers)
      if (h.name == e.capsule.name) found = &h;
    if (!found) return error_status(fmt::format("no handler for capsule `{}`", e.capsule.name));
    DENOTE_ASSIGN_OR_RETURN(BoundKernel k, bind_kernel(e.capsule, *found));
    bound.kernels.push_back(std::move(k));
  }
  return bound;
}

namespace detail {

template <class S>
Result<std::vector<const BoundKernel*>> kernels_by_node(const BoundPlan& bound, const Graph& g) {
  if (bound.kernels.size() != bound.plan.entries.size())
    return error_status("kernel plan: the plan is not bound (bind_plan)");
  std::vector<const BoundKernel*> by_node(g.nodes.size(), nullptr);
  for (size_t i = 0; i < bound.plan.entries.size(); ++i) {
    const PlanEntry& e = bound.plan.entries[i];
    if (e.node_id < 0 || static_cast<size_t>(e.node_id) >= g.nodes.size())
      return error_status(fmt::format("kernel plan: node {} is not in the graph", e.node_id));
    const std::optional<BackendOp> op = backend_op_of(g.nodes[e.node_id].op);
    if (!op || *op != e.op || bound.kernels[i].capsule.op != e.op || by_node[e.node_id])
      return error_status(fmt::format("kernel plan: the entry for node {} does not match the graph", e.node_id));
    if (!handler_fn<S>(bound.kernels[i].handler))
      return error_status(fmt::format("kernel plan: handler `{}` has no {} kernel", bound.kernels[i].handler.name,
                                      std::is_same_v<S, double> ? "f64" : "f32"));
    by_node[e.node_id] = &bound.kernels[i];
  }
  for (const Node& n : g.nodes)
    if (backend_op_of(n.op) && !by_node[n.id])
      return error_status(fmt::format("kernel plan: no kernel for node {}", n.id));
  return by_node;
}

template Result<std::vector<const BoundKernel*>> kernels_by_node<double>(const BoundPlan&, const Graph&);
template Result<std::vector<const BoundKernel*>> kernels_by_node<float>(const BoundPlan&, const Graph&);

}  // namespace detail

namespace {

// A node's rule under a plan: its bound kernel, or (nodes without runtime work: input, const,
// detach) the op table's reference rule.
template <class S>
struct PlanRule {
  using Ctx = NativeContextFor<S>;
  const std::vector<const BoundKernel*>* by_node;
  Result<Tensor<S>> operator()(Ctx& ctx, const rules::EvalArgs<S>& a) const {
    const BoundKernel* k = (*by_node)[static_cast<size_t>(a.node.id)];
    if (!k) return detail::eval_fn<Ctx>(a.node.op)(ctx, a);
    return detail::handler_fn<S>(k->handler)(KernelArgs<S>{a.node, a.parents, a.payload, a.out_shape, a.options});
  }
};

}  // namespace

template <class S>
Result<ValueTable<S>> execute_plan(const BoundPlan& bound, const Graph& g, const Payload<S>& payload,
                                   std::span<const Tensor<S>> inputs, const EvalOptions& options) {
  using Ctx = NativeContextFor<S>;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  DENOTE_ASSIGN_OR_RETURN(std::vector<const BoundKernel*> by_node, detail::kernels_by_node<S>(bound, g));
  Ctx ctx;
  detail::EvalPass<Ctx, PlanRule<S>> pass{ctx, payload, options, PlanRule<S>{&by_node}};
  walk::Config cfg;
  cfg.options = options;
  cfg.structure_checked = true;
  ValueTable<S> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(g, pass, inputs, cfg, table, present));
  return table;
}

template Result<ValueTable<double>> execute_plan<double>(const BoundPlan&, const Graph&, const Payload<double>&,
                                                         std::span<const Tensor<double>>, const EvalOptions&);
template Result<ValueTable<float>> execute_plan<float>(const BoundPlan&, const Graph&, const Payload<float>&,
                                                       std::span<const Tensor<float>>, const EvalOptions&);

}  // namespace denote
