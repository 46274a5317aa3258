// Binding and execution: a plan's capsules become executable only when bound to handlers that
// implement the same backend op, on the same device, from the same provider. A bound plan runs like
// denote_all (same checks, same error texts for bad inputs, same value table shape) with each runtime
// node computed by its bound handler. Value types: double (F64Context) and float (F32Context).
//
//   DENOTE_ASSIGN_OR_RETURN(BoundPlan bound, bind_plan(plan, standard_handlers()));
//   Result<ValueTable<float>> table = execute_plan<float>(bound, graph, payload_f32, inputs);
#pragma once

#include <span>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/eval/eval.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/plan/capsule.h"
#include "denote/plan/planner.h"
#include "denote/plan/prepared.h"
#include "denote/tensor/tensor.h"

namespace denote {

// What a handler receives for one node. The executor has already run the node's shape rule on the
// actual parents: out_shape is the inferred (== declared) shape and the element limit holds.
template <class S>
struct KernelArgs {
  const Node& node;
  std::span<const Tensor<S>* const> parents;
  const Payload<S>& payload;
  const Shape& out_shape;
  const EvalOptions& options;
};

template <class S>
using KernelFn = Result<Tensor<S>> (*)(const KernelArgs<S>&);

// Executable code for one backend op; f64/f32 may be null when the handler lacks that value type.
struct KernelHandler {
  std::string name;  // binds to the capsule of the same name in bind_plan
  BackendOp op = BackendOp::Add;
  std::string provider;
  std::string device;
  KernelFn<double> f64 = nullptr;
  KernelFn<float> f32 = nullptr;
  // Optional allocation-free forms for compiled plans (denote/plan/prepared.h, denote/plan/compiled.h).
  PrepareFn<double> prepare64 = nullptr;
  PrepareFn<float> prepare32 = nullptr;
};

struct BoundKernel {
  KernelCapsule capsule;
  KernelHandler handler;
};

// Succeeds only when op, provider and device agree. Errors:
//   handler `h` implements `a`, but capsule `c` implements `b`
//   handler `h` runs on device `a`, but capsule `c` runs on device `b`
//   handler `h` comes from provider `a`, but capsule `c` comes from provider `b`
Result<BoundKernel> bind_kernel(const KernelCapsule& capsule, const KernelHandler& handler);

struct BoundPlan {
  GraphKernelPlan plan;
  std::vector<BoundKernel> kernels;  // kernels[i] runs plan.entries[i]
};

// Binds every entry to the handler named like its capsule. Error: "no handler for capsule `c`".
Result<BoundPlan> bind_plan(const GraphKernelPlan& plan, const std::vector<KernelHandler>& handlers);

// The handlers of every provider compiled into this build (the registration list, plan/registry.h).
std::vector<KernelHandler> standard_handlers();

// Runs the bound plan: the structural check, the input count, then every node in id order with the
// evaluator's per-node driver (shape rule, element limit, produced-vs-declared check); nodes without
// runtime work (input, const, detach) use the reference rules. Errors as denote_all, plus
// "kernel plan: ..." when the plan does not fit the graph or a handler lacks the value type.
template <class S>
Result<ValueTable<S>> execute_plan(const BoundPlan& bound, const Graph& g, const Payload<S>& payload,
                                   std::span<const Tensor<S>> inputs, const EvalOptions& options = {});

extern template Result<ValueTable<double>> execute_plan<double>(const BoundPlan&, const Graph&,
                                                                const Payload<double>&,
                                                                std::span<const Tensor<double>>, const EvalOptions&);
extern template Result<ValueTable<float>> execute_plan<float>(const BoundPlan&, const Graph&, const Payload<float>&,
                                                              std::span<const Tensor<float>>, const EvalOptions&);

}  // namespace denote
