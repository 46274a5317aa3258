// Internal: IBP's pass over the one graph walk (src/eval/walk.h) and run_ibp_with, shared by
// src/bounds/ibp.cc (hardware and binary-format endpoints) and src/bounds/ibp_real.cc (MPFR
// endpoints), so that each endpoint policy is instantiated in its own translation unit.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "bounds/ibp_conv.h"
#include "bounds/ibp_dense.h"
#include "bounds/ibp_rules.h"
#include "bounds/kernel_ops.h"
#include "denote/bounds/ibp.h"

namespace denote::ibp {

// IBP is evaluation over the interval context, except that a node whose rule fails (no sound box)
// or whose parent has no box gets a note instead of stopping the walk.
template <class E>
using DenseMap = std::map<int64_t, ibp::DenseLinear<typename E::Value>>;

template <class E>
struct IbpPass : detail::EvalPass<IntervalContext<E>, detail::TableRule<IntervalContext<E>>> {
  using Base = detail::EvalPass<IntervalContext<E>, detail::TableRule<IntervalContext<E>>>;
  std::vector<std::string>* notes;
  const DenseMap<E>* dense = nullptr;  // IbpPrepared's linear nodes
  const ConvMap* conv = nullptr;       // and its conv nodes' plans
  Result<typename Base::Value> visit(const Node& n, std::span<const typename Base::Value* const> parents,
                                     const Shape& out_shape, const typename Base::Value* supplied) {
    if constexpr (ibp::kHardwareEndpoints<E>) {
      if (dense && is_dense(n.op) && parents.size() == 1)
        if (auto it = dense->find(n.id); it != dense->end())
          if (auto y = ibp::dense_linear(this->ctx, it->second, *parents[0], out_shape)) return std::move(*y);
      if (bound_kernel(n.op) == BoundKernel::Conv && parents.size() == 1) {  // midpoint-radius on the batched conv (ibp_conv.h)
        const ConvBoxes* prepared = nullptr;
        if (conv)
          if (auto it = conv->find(n.id); it != conv->end()) prepared = &it->second;
        if (auto y = ibp::interval_conv(this->ctx, n, this->payload, *parents[0], out_shape, prepared)) return std::move(*y);
      }
    }
    return Base::visit(n, parents, out_shape, supplied);
  }
  Status on_error(const Node& n, const Status& s) {
    // Running out of the memory budget is no property of the box: the run stops.
    if (s.code() == ErrorCode::kResource) return s;
    // A missing parent box is a short note; the rule errors keep their full text.
    (*notes)[static_cast<size_t>(n.id)] = s.field() == "parents" ? s.detail() : s.message();
    return ok_status();
  }
};

template <class E>
Result<IbpResult<Interval<typename E::Value>>> run_ibp_with(const Graph& g,
                                                            const Payload<Interval<typename E::Value>>& payload,
                                                            std::span<const Tensor<Interval<typename E::Value>>> inputs,
                                                            IntervalContext<E>& ctx, const EvalOptions& options,
                                                            const DenseMap<E>* dense, const ConvMap* conv = nullptr) {
  using S = Interval<typename E::Value>;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  const std::vector<int64_t> input_ids = g.input_ids();
  if (inputs.size() != input_ids.size())
    return error_status(fmt::format("IR bounds: expected {} input boxes, got {}", input_ids.size(), inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].shape != g.nodes[input_ids[k]].out_shape ||
        inputs[k].data.size() != static_cast<size_t>(numel(inputs[k].shape)))
      return error_status(fmt::format("IR bounds: input box {} has shape {}, node {} declares {}", k,
                                      to_string(inputs[k].shape), input_ids[k],
                                      to_string(g.nodes[input_ids[k]].out_shape)))
          .with_field("input");
  IbpResult<S> out;
  out.notes.resize(g.nodes.size());
  IbpPass<E> pass{{ctx, payload, options, {}}, &out.notes, dense, conv};
  walk::Config cfg;
  cfg.options = options;
  cfg.structure_checked = true;
  cfg.value_noun = "box";
  ValueTable<S> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(g, pass, inputs, cfg, table, present));
  out.boxes.resize(g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i)
    if (present[i]) out.boxes[i] = std::move(table[i]);
  return out;
}

}  // namespace denote::ibp

namespace denote {

template <class E>
Result<IbpResult<Interval<typename E::Value>>> run_ibp(const Graph& g,
                                                       const Payload<Interval<typename E::Value>>& payload,
                                                       std::span<const Tensor<Interval<typename E::Value>>> inputs,
                                                       IntervalContext<E>& ctx, const EvalOptions& options) {
  return ibp::run_ibp_with(g, payload, inputs, ctx, options, nullptr);
}

#define DENOTE_INSTANTIATE_IBP(E)                                                                             \
  template Result<IbpResult<Interval<E::Value>>> run_ibp<E>(const Graph&, const Payload<Interval<E::Value>>&, \
                                                            std::span<const Tensor<Interval<E::Value>>>,      \
                                                            IntervalContext<E>&, const EvalOptions&);

}  // namespace denote
