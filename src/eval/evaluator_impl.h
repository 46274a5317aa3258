// Internal: the generic evaluator. Included once per context by src/eval/eval_<ctx>.cc, which
// explicitly instantiates denote_all/denote for that context.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <string>

#include "denote/check/check.h"
#include "eval_args.h"
#include "../ops/source_eval.h"
#include "../ops/layout_eval.h"
#include "../ops/pointwise_eval.h"
#include "../ops/reduction_eval.h"
#include "../ops/contraction_eval.h"
#include "../ops/window_eval.h"
#include "../ops/normalization_eval.h"

namespace denote {

namespace detail {

template <class Ctx>
using EvalFn = Result<Tensor<typename Ctx::Scalar>> (*)(Ctx&, const rules::EvalArgs<typename Ctx::Scalar>&);

// The eval column of the op table for context Ctx.
template <class Ctx>
EvalFn<Ctx> eval_fn(Op op) {
  static constexpr EvalFn<Ctx> kEval[] = {
#define DENOTE_OP(name, tag, minp, maxp, family, attr, flags, shape, meaning) &rules::eval_##name<Ctx>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kEval[static_cast<size_t>(op)];
}

// A context may replace some op rules with its own: IntervalContext does (src/bounds/ibp_rules.h,
// tighter sound rules for softmax, layernorm, linear ...). nullptr: use the op table's rule.
template <class Ctx>
struct RuleOverride {
  static EvalFn<Ctx> find(Op) { return nullptr; }
};

inline Status eval_node_error(const Node& n, const std::string& what) {
  return error_status(fmt::format("IR eval: node {}: {} ({})", n.id, what, summary(n)));
}

// Evaluates node n whose parents are already in `table`, computing the value with
// `rule(ctx, args)` between the driver's checks (shape rule on the actual parents, element limit,
// error channel, produced-vs-declared shape). eval_node passes the op's eval rule; the kernel
// executor (src/plan) passes a bound handler.
template <class Ctx, class Rule>
Status eval_node_with(const Node& n, ValueTable<typename Ctx::Scalar>& table,
                      const Payload<typename Ctx::Scalar>& payload, const Tensor<typename Ctx::Scalar>* supplied,
                      Ctx& ctx, const EvalOptions& options, std::vector<Shape>& shapes,
                      std::vector<const Tensor<typename Ctx::Scalar>*>& parents, Rule&& rule) {
  using S = typename Ctx::Scalar;
  shapes.clear();
  parents.clear();
  for (int64_t p : n.parents) {
    shapes.push_back(table[p].shape);
    parents.push_back(&table[p]);
  }
  auto inferred = infer_shape(n, shapes);
  if (!inferred.ok()) {
    const std::string& m = inferred.message();
    return m.rfind("IR ", 0) == 0 ? inferred.status() : eval_node_error(n, m);
  }
  if (*inferred != n.out_shape)
    return eval_node_error(n, "produced shape mismatch: produced=" + to_string(*inferred) +
                                  ", declared=" + to_string(n.out_shape));
  if (numel(*inferred) > options.max_elements)
    return eval_node_error(n, fmt::format("{} elements exceed the evaluation limit of {}", numel(*inferred),
                                          options.max_elements));
  rules::EvalArgs<S> args{n, parents, payload, *inferred, supplied, options};
  auto value = rule(ctx, args);
  if (!value.ok()) return value.status();
  // Contexts with an error channel (an operation without a value in a binary format, e.g. 0/0 in a
  // format without NaN) report it here, attributed to the node; the native contexts have none.
  if constexpr (requires(const Ctx& c) { { c.take_error() } -> std::convertible_to<std::string>; }) {
    if (std::string err = ctx.take_error(); !err.empty()) return eval_node_error(n, err);
  }
  if (value->shape != n.out_shape || value->data.size() != static_cast<size_t>(numel(n.out_shape)))
    return eval_node_error(n, "produced shape mismatch: produced=" + to_string(value->shape) +
                                  ", declared=" + to_string(n.out_shape));
  table[n.id] = std::move(*value);
  return ok_status();
}

// Evaluates node n whose parents are already in `table`.
template <class Ctx>
Status eval_node(const Node& n, ValueTable<typename Ctx::Scalar>& table, const Payload<typename Ctx::Scalar>& payload,
                 const Tensor<typename Ctx::Scalar>* supplied, Ctx& ctx, const EvalOptions& options,
                 std::vector<Shape>& shapes, std::vector<const Tensor<typename Ctx::Scalar>*>& parents) {
  EvalFn<Ctx> rule = RuleOverride<Ctx>::find(n.op);
  return eval_node_with(n, table, payload, supplied, ctx, options, shapes, parents,
                        rule ? rule : eval_fn<Ctx>(n.op));
}

// Evaluates the nodes marked in `needed` (all when empty) in id order.
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> run(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                             std::span<const Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                             const EvalOptions& options, const std::vector<bool>& needed,
                                             bool structure_checked = false) {
  if (!structure_checked) DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  const std::vector<int64_t> input_ids = g.input_ids();
  if (inputs.size() != input_ids.size())
    return error_status(fmt::format("IR eval: expected {} input tensors, got {}", input_ids.size(), inputs.size()));
  ValueTable<typename Ctx::Scalar> table(g.nodes.size());
  std::vector<Shape> shapes;
  std::vector<const Tensor<typename Ctx::Scalar>*> parents;
  size_t next_input = 0;
  for (const Node& n : g.nodes) {
    const Tensor<typename Ctx::Scalar>* supplied = n.op == Op::Input ? &inputs[next_input++] : nullptr;
    if (!needed.empty() && !needed[n.id]) continue;
    DENOTE_RETURN_IF_ERROR(eval_node(n, table, payload, supplied, ctx, options, shapes, parents));
  }
  return table;
}

}  // namespace detail

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_all(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                    std::span<const Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                                    const EvalOptions& options) {
  return detail::run(g, payload, inputs, ctx, options, {});
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> denote(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                            std::span<const Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                            Ctx& ctx, const EvalOptions& options) {
  if (output_id < 0 || static_cast<size_t>(output_id) >= g.nodes.size())
    return error_status(fmt::format("IR eval: outputId out of bounds: {}", output_id));
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  // Mark the ancestors of output_id with one backward sweep (parents have smaller ids).
  std::vector<bool> needed(g.nodes.size(), false);
  needed[output_id] = true;
  for (int64_t i = output_id; i >= 0; --i)
    if (needed[i])
      for (int64_t p : g.nodes[i].parents) needed[p] = true;
  DENOTE_ASSIGN_OR_RETURN(auto table, detail::run(g, payload, inputs, ctx, options, needed, /*structure_checked=*/true));
  return std::move(table[output_id]);
}

}  // namespace denote

#define DENOTE_INSTANTIATE_EVAL(Ctx)                                                                             \
  template Result<ValueTable<Ctx::Scalar>> denote_all<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,            \
                                                           std::span<const Tensor<Ctx::Scalar>>, Ctx&,           \
                                                           const EvalOptions&);                                  \
  template Result<Tensor<Ctx::Scalar>> denote<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,                    \
                                                   std::span<const Tensor<Ctx::Scalar>>, int64_t, Ctx&,          \
                                                   const EvalOptions&);
