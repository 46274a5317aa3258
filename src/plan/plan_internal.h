// Internal: pieces of the plan executor shared with the plan compiler (src/plan/compiled.cc).
#pragma once

#include <vector>

#include "denote/plan/executor.h"

namespace denote::detail {

// The bound kernel of every node (null for nodes without runtime work), after checking that the plan
// fits the graph: one entry per runtime node, with the node's backend op and a kernel for S. Errors:
// "kernel plan: ..." (docs/PLANNING.md).
template <class S>
Result<std::vector<const BoundKernel*>> kernels_by_node(const BoundPlan& bound, const Graph& g);

template <class S>
KernelFn<S> handler_fn(const KernelHandler& h) {
  if constexpr (std::is_same_v<S, double>) return h.f64;
  else return h.f32;
}

template <class S>
PrepareFn<S> handler_prepare(const KernelHandler& h) {
  if constexpr (std::is_same_v<S, double>) return h.prepare64;
  else return h.prepare32;
}

}  // namespace denote::detail
