// Internal: the generic evaluator. Included once per context by src/eval/eval_<ctx>.cc, which
// explicitly instantiates denote_all/denote for that context.
#pragma once

#include <fmt/format.h>

#include <concepts>
#include <string>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "../ops/eval_args.h"
#include "walk.h"
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
#define DENOTE_OP(name, ...) &rules::eval_##name<Ctx>,
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

// BinaryContext's whole-tensor rules through the fast exact formats (linear, matmul, conv,
// add/sub/mul_elem; issue 20), defined in src/eval/eval_binary.cc: the op table's words and flags.
template <>
struct RuleOverride<BinaryContext> {
  static EvalFn<BinaryContext> find(Op op);
};

// Runs `rule(ctx, a)` for a.node and reads the context's error channel (an operation without a
// value in a binary format, e.g. 0/0 in a format without NaN) as the node's error.
template <class Ctx, class Rule>
Result<Tensor<typename Ctx::Scalar>> apply_rule(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a, Rule& rule) {
  constexpr bool kErrorChannel = requires(Ctx& c) {
    { c.take_error() } -> std::convertible_to<std::string>;
  };
  if constexpr (kErrorChannel) (void)ctx.take_error();
  auto value = rule(ctx, a);
  if (!value.ok()) return value.status();
  if constexpr (kErrorChannel) {
    if (std::string err = ctx.take_error(); !err.empty()) return Status::error(ErrorCode::kEval, err);
  }
  return value;
}

// The evaluation pass over the walker (src/eval/walk.h): a node's value is `rule(ctx, args)`,
// then the context's error channel (an operation without a value in a binary format, e.g. 0/0 in
// a format without NaN) is read, attributed to the node. eval passes the op table's rule (or the
// context's override); the kernel executor (src/plan) passes the bound handler.
template <class Ctx, class Rule>
struct EvalPass {
  using S = typename Ctx::Scalar;
  using Value = Tensor<S>;
  Ctx& ctx;
  const Payload<S>& payload;
  const EvalOptions& options;
  Rule rule;
  // denote_*_owned: the caller's input tensors, moved into the table instead of copied (the walk's
  // `supplied` points into them).
  Value* owned_inputs = nullptr;

  static const Shape& shape_of(const Value& v) { return v.shape; }
  static bool well_sized(const Value& v) { return v.data.size() == static_cast<size_t>(numel(v.shape)); }
  // An MPFR scalar owns its limbs besides the struct; the others are plain values.
  int64_t bytes_per_element() const {
    if constexpr (std::is_same_v<S, RealScalar>)
      return static_cast<int64_t>(sizeof(S)) + (static_cast<int64_t>(ctx.bits()) + 63) / 64 * 8;
    else
      return static_cast<int64_t>(sizeof(S));
  }

  Result<Value> visit(const Node& n, std::span<const Value* const> parents, const Shape& out_shape,
                      const Value* supplied) {
    if (owned_inputs && supplied && n.op == Op::Input) {
      const rules::EvalArgs<S> a{n, parents, payload, out_shape, supplied, options};
      DENOTE_RETURN_IF_ERROR(rules::check_supplied(a));
      return std::move(owned_inputs[supplied - owned_inputs]);
    }
    return apply_rule(ctx, rules::EvalArgs<S>{n, parents, payload, out_shape, supplied, options}, rule);
  }
};

// The rule of op for context Ctx: the context's override, else the op table's eval column.
template <class Ctx>
EvalFn<Ctx> node_rule(Op op) {
  EvalFn<Ctx> rule = RuleOverride<Ctx>::find(op);
  return rule ? rule : eval_fn<Ctx>(op);
}

template <class Ctx>
struct TableRule {
  Result<Tensor<typename Ctx::Scalar>> operator()(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a) const {
    return node_rule<Ctx>(a.node.op)(ctx, a);
  }
};

// One node's op-table rule (with the context's override) and error channel; the typed interpreter
// calls it per node. Instantiated with denote_all for every context.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> apply_table_rule(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a) {
  TableRule<Ctx> rule;
  return apply_rule(ctx, a, rule);
}

// Evaluates g with the op table's rules under `cfg` (needed nodes, liveness).
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> run(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                             std::span<const Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                             const walk::Config& cfg, Tensor<typename Ctx::Scalar>* owned = nullptr) {
  EvalPass<Ctx, TableRule<Ctx>> pass{ctx, payload, cfg.options, {}, owned};
  ValueTable<typename Ctx::Scalar> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(g, pass, inputs, cfg, table, present));
  return table;
}

}  // namespace detail

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_all(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                    std::span<const Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                                    const EvalOptions& options) {
  walk::Config cfg;
  cfg.options = options;
  return detail::run(g, payload, inputs, ctx, cfg);
}

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_all_owned(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                          std::vector<Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                                          const EvalOptions& options) {
  walk::Config cfg;
  cfg.options = options;
  return detail::run(g, payload, std::span<const Tensor<typename Ctx::Scalar>>(inputs), ctx, cfg, inputs.data());
}

namespace detail {

// denote_outputs: what output_ids depend on, each other value freed after its last reader.
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> run_outputs(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                     std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                                     std::span<const int64_t> output_ids, Ctx& ctx,
                                                     const EvalOptions& options, Tensor<typename Ctx::Scalar>* owned) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  std::vector<bool> needed(g.nodes.size(), false), keep(g.nodes.size(), false);
  for (int64_t id : output_ids) {
    if (id < 0 || static_cast<size_t>(id) >= g.nodes.size())
      return error_status(ErrorCode::kInvalidInput, fmt::format("IR eval: outputId out of bounds: {}", id));
    const std::vector<bool> a = walk::ancestors(g, id);
    for (size_t i = 0; i < a.size(); ++i) needed[i] = needed[i] || a[i];
    keep[static_cast<size_t>(id)] = true;
  }
  walk::Config cfg;
  cfg.options = options;
  cfg.structure_checked = true;
  cfg.needed = &needed;
  cfg.keep = &keep;
  return run(g, payload, inputs, ctx, cfg, owned);
}

}  // namespace detail

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_outputs(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                        std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                                        std::span<const int64_t> output_ids, Ctx& ctx,
                                                        const EvalOptions& options) {
  return detail::run_outputs(g, payload, inputs, output_ids, ctx, options, nullptr);
}

template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_outputs_owned(const Graph& g,
                                                              const Payload<typename Ctx::Scalar>& payload,
                                                              std::vector<Tensor<typename Ctx::Scalar>> inputs,
                                                              std::span<const int64_t> output_ids, Ctx& ctx,
                                                              const EvalOptions& options) {
  return detail::run_outputs(g, payload, std::span<const Tensor<typename Ctx::Scalar>>(inputs), output_ids, ctx,
                             options, inputs.data());
}

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> denote(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                            std::span<const Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                            Ctx& ctx, const EvalOptions& options) {
  const int64_t ids[] = {output_id};
  DENOTE_ASSIGN_OR_RETURN(auto table, denote_outputs(g, payload, inputs, std::span<const int64_t>(ids), ctx, options));
  return std::move(table[static_cast<size_t>(output_id)]);
}

}  // namespace denote

#define DENOTE_INSTANTIATE_EVAL(Ctx)                                                                             \
  template Result<ValueTable<Ctx::Scalar>> denote_all<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,            \
                                                           std::span<const Tensor<Ctx::Scalar>>, Ctx&,           \
                                                           const EvalOptions&);                                  \
  template Result<Tensor<Ctx::Scalar>> denote<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,                    \
                                                   std::span<const Tensor<Ctx::Scalar>>, int64_t, Ctx&,          \
                                                   const EvalOptions&);                                  \
  template Result<ValueTable<Ctx::Scalar>> denote_outputs<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,        \
                                                               std::span<const Tensor<Ctx::Scalar>>,             \
                                                               std::span<const int64_t>, Ctx&, const EvalOptions&); \
  template Result<ValueTable<Ctx::Scalar>> denote_all_owned<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,      \
                                                                 std::vector<Tensor<Ctx::Scalar>>, Ctx&,         \
                                                                 const EvalOptions&);                            \
  template Result<ValueTable<Ctx::Scalar>> denote_outputs_owned<Ctx>(                                            \
      const Graph&, const Payload<Ctx::Scalar>&, std::vector<Tensor<Ctx::Scalar>>, std::span<const int64_t>, Ctx&, \
      const EvalOptions&);                                                                                       \
  template Result<Tensor<Ctx::Scalar>> detail::apply_table_rule<Ctx>(Ctx&, const rules::EvalArgs<Ctx::Scalar>&);
