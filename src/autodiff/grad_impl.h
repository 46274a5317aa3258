// Internal: the two derivative walks over the one graph walk (src/eval/walk.h), generic over the
// scalar context. Included once per context by src/autodiff/grad_<ctx>.cc.
//
// Reverse mode (vjp): a forward walk over the output's ancestors keeps every value (the tape);
// a reverse walk then runs each node's VJP from the output back, accumulating the cotangents of
// parents in the context's arithmetic and freeing each node's value and cotangent once it ran.
// Forward mode (jvp): one forward walk whose values are (value, tangent) pairs; liveness frees both.
// The diff column of ops.def decides what happens at a node: its rules (Rule), nothing (Zero: the
// gradient stops), an error naming the node (None) when a gradient must pass, or the end (Leaf).
#pragma once

#include <algorithm>

#include <fmt/format.h>

#include "denote/autodiff/grad.h"
#include "../eval/evaluator_impl.h"
#include "diff_args.h"
#include "diff_pointwise.h"
#include "diff_layout.h"
#include "diff_reduction.h"
#include "diff_contraction.h"
#include "diff_window.h"
#include "diff_normalization.h"

namespace denote::ad {

template <class Ctx>
using JvpFn = Result<Tensor<typename Ctx::Scalar>> (*)(Ctx&, const DiffArgs<typename Ctx::Scalar>&,
                                                       std::span<const Tensor<typename Ctx::Scalar>* const>);
template <class Ctx>
using VjpFn = Status (*)(Ctx&, const DiffArgs<typename Ctx::Scalar>&, const Tensor<typename Ctx::Scalar>&,
                         VjpOut<typename Ctx::Scalar>&);

// The jvp and vjp columns for context Ctx, generated from the diff column (no rule: nullptr).
#define DENOTE_DIFF_ENTRY_Rule(kind, name) &kind##_##name<Ctx>
#define DENOTE_DIFF_ENTRY_Zero(kind, name) nullptr
#define DENOTE_DIFF_ENTRY_None(kind, name) nullptr
#define DENOTE_DIFF_ENTRY_Leaf(kind, name) nullptr

template <class Ctx>
JvpFn<Ctx> jvp_fn(Op op) {
  static constexpr JvpFn<Ctx> kJvp[] = {
#define DENOTE_OP(name, tag, minp, maxp, family, attr, flags, onnx, diff, ...) DENOTE_DIFF_ENTRY_##diff(jvp, name),
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kJvp[static_cast<size_t>(op)];
}

template <class Ctx>
VjpFn<Ctx> vjp_fn(Op op) {
  static constexpr VjpFn<Ctx> kVjp[] = {
#define DENOTE_OP(name, tag, minp, maxp, family, attr, flags, onnx, diff, ...) DENOTE_DIFF_ENTRY_##diff(vjp, name),
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  return kVjp[static_cast<size_t>(op)];
}

// The context's error channel (binary formats: an operation without a value) as a Status.
template <class Ctx>
Status take_context_error(Ctx& ctx) {
  if constexpr (requires(Ctx& c) { c.take_error(); }) {
    if (std::string err = ctx.take_error(); !err.empty()) return Status::error(ErrorCode::kEval, err);
  }
  (void)ctx;
  return ok_status();
}

// Whether node `id` has payload parameters (a record of any kind).
template <class S>
bool has_params(const Payload<S>& p, int64_t id) {
  return p.consts.count(id) || p.linear.count(id) || p.conv.count(id) || p.batch_norm.count(id) ||
         p.layernorm.count(id);
}

inline Status no_derivative(const Node& n) {
  return diff_error(fmt::format("{} has no derivative, and a gradient must flow through it to an input or "
                                "parameter (detach its parents or the consumer to stop the gradient)",
                                op_tag(n.op)),
                    "op");
}

inline constexpr std::string_view kGradLayer = "IR grad";

// ---- forward mode

template <class S>
struct Dual {
  Tensor<S> v;
  Tensor<S> t;
  bool has_t = false;  // false: the tangent is zero (the value does not depend on the inputs)
};

template <class Ctx>
struct DualPass {
  using S = typename Ctx::Scalar;
  using Value = Dual<S>;
  Ctx& ctx;
  const Payload<S>& payload;
  const EvalOptions& options;

  static const Shape& shape_of(const Value& d) { return d.v.shape; }
  static bool well_sized(const Value& d) {
    const auto n = static_cast<size_t>(numel(d.v.shape));
    return d.v.data.size() == n && (!d.has_t || (d.t.shape == d.v.shape && d.t.data.size() == n));
  }
  int64_t bytes_per_element() const {
    detail::EvalPass<Ctx, detail::TableRule<Ctx>> base{ctx, payload, options, {}};
    return 2 * base.bytes_per_element();
  }

  Result<Value> visit(const Node& n, std::span<const Value* const> parents, const Shape& out_shape,
                      const Value* supplied) {
    std::vector<const Tensor<S>*> values;
    values.reserve(parents.size());
    for (const Value* p : parents) values.push_back(&p->v);
    rules::EvalArgs<S> ea{n, values, payload, out_shape, supplied ? &supplied->v : nullptr, options};
    detail::TableRule<Ctx> rule;
    DENOTE_ASSIGN_OR_RETURN(Tensor<S> v, detail::apply_rule(ctx, ea, rule));
    Value out{std::move(v), {}, false};
    if (supplied) {
      if (supplied->t.shape != out.v.shape || !supplied->has_t)
        return diff_error(fmt::format("tangent shape mismatch: expected {}, got {}", to_string(out.v.shape),
                                      to_string(supplied->t.shape)),
                          "tangent");
      out.t = supplied->t;
      out.has_t = true;
      return out;
    }
    const bool any = std::any_of(parents.begin(), parents.end(), [](const Value* p) { return p->has_t; });
    if (!any || op_info(n.op).diff == Diff::Zero || op_info(n.op).diff == Diff::Leaf) return out;
    if (op_info(n.op).diff == Diff::None) return no_derivative(n);
    DENOTE_ASSIGN_OR_RETURN(out.t, tangent_of(n, parents, values, out.v));
    out.has_t = true;
    return out;
  }

  Result<Tensor<S>> tangent_of(const Node& n, std::span<const Value* const> parents,
                               const std::vector<const Tensor<S>*>& values, const Tensor<S>& value) {
    std::vector<Tensor<S>> zero_tangents;
    zero_tangents.reserve(parents.size());
    std::vector<const Tensor<S>*> tangents;
    for (const Value* p : parents) {
      if (p->has_t) {
        tangents.push_back(&p->t);
      } else {
        zero_tangents.push_back(zeros(ctx, p->v.shape));
        tangents.push_back(&zero_tangents.back());
      }
    }
    DiffArgs<S> da{n, values, value, payload, options};
    auto t = jvp_fn<Ctx>(n.op)(ctx, da, tangents);
    DENOTE_RETURN_IF_ERROR(take_context_error(ctx));
    if (t.ok() && t->shape != value.shape)
      return Status::error(ErrorCode::kInternal, fmt::format("jvp rule produced shape {} for a value of shape {}",
                                                             to_string(t->shape), to_string(value.shape)));
    return t;
  }
};

template <class Ctx>
Result<Tangent<typename Ctx::Scalar>> run_jvp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                              std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                              std::span<const Tensor<typename Ctx::Scalar>> tangents,
                                              int64_t output_id, Ctx& ctx, const EvalOptions& options) {
  using S = typename Ctx::Scalar;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  if (output_id < 0 || static_cast<size_t>(output_id) >= g.nodes.size())
    return Status::error(ErrorCode::kInvalidInput, fmt::format("IR grad: output id out of bounds: {}", output_id));
  if (tangents.size() != inputs.size())
    return Status::error(ErrorCode::kInvalidInput,
                         fmt::format("IR grad: expected {} tangents (one per input), got {}", inputs.size(),
                                     tangents.size()));
  std::vector<Dual<S>> duals;
  duals.reserve(inputs.size());
  for (size_t k = 0; k < inputs.size(); ++k) duals.push_back({inputs[k], tangents[k], true});
  const std::vector<bool> needed = walk::ancestors(g, output_id);
  std::vector<bool> keep(g.nodes.size(), false);
  keep[static_cast<size_t>(output_id)] = true;
  walk::Config cfg;
  cfg.options = options;
  cfg.structure_checked = true;
  cfg.needed = &needed;
  cfg.keep = &keep;
  DualPass<Ctx> pass{ctx, payload, options};
  std::vector<Dual<S>> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(g, pass, std::span<const Dual<S>>(duals), cfg, table, present));
  Dual<S>& out = table[static_cast<size_t>(output_id)];
  Tangent<S> r;
  r.tangent = out.has_t ? std::move(out.t) : zeros(ctx, out.v.shape);
  r.value = std::move(out.v);
  return r;
}

// ---- reverse mode

// The tape's rule: the op table's, except a linear node under GradKernels::Blas (f32, f64), whose
// value is one gemm (src/autodiff/blas_linear.h).
template <class Ctx>
struct TapeRule {
  bool blas = false;
  Result<Tensor<typename Ctx::Scalar>> operator()(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a) const {
    using S = typename Ctx::Scalar;
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
      // A contraction with parameters (linear: its record is the payload's linear entry for the node).
      const bool dense = op_info(a.node.op).family == OpFamily::Contraction && has_flag(a.node.op, kFlagParams);
      if (blas && dense && a.parents.size() == 1) {
        const LinearRecord<S>* rec = find_record(a.payload.linear, a.node.id);
        const Tensor<S>& x = *a.parents[0];
        if (rec && !x.shape.empty() && x.shape.back() == rec->in_dim && a.out_shape.back() == rec->out_dim &&
            rec->weight.size() == static_cast<size_t>(rec->out_dim * rec->in_dim) &&
            rec->bias.size() == static_cast<size_t>(rec->out_dim)) {
          const int64_t rows = numel(x.shape.begin(), x.shape.end() - 1);
          if (rows >= kBlasMinRows) {
            Tensor<S> y(a.out_shape, blas_linear_bias_rows(*rec, rows));
            if (blas_linear_forward(*rec, rows, x.data.data(), y.data.data())) return y;
          }
        }
      }
    }
    return detail::TableRule<Ctx>{}(ctx, a);
  }
};

// The tape: the evaluation pass, budgeting each value twice (its cotangent comes later).
template <class Ctx>
struct TapePass : detail::EvalPass<Ctx, TapeRule<Ctx>> {
  int64_t bytes_per_element() const { return 2 * detail::EvalPass<Ctx, TapeRule<Ctx>>::bytes_per_element(); }
};

template <class S>
struct Reverse {
  std::vector<Tensor<S>> values;  // the tape
  std::vector<bool> present;
  std::vector<bool> req;          // the node depends on something the gradient is taken with respect to
  std::vector<Tensor<S>> cot;
  std::vector<bool> has_cot;
  // Scratch reused by every node's VJP (no allocation per node once grown).
  std::vector<const Tensor<S>*> values_scratch;
  VjpOut<S> out_scratch;
};

// Which nodes need a gradient: inputs (wrt inputs), parameterised nodes (wrt params) and everything
// that reads one, among the output's ancestors.
template <class S>
std::vector<bool> requires_grad(const Graph& g, const Payload<S>& payload, const std::vector<bool>& needed,
                                GradWrt wrt) {
  const bool want_inputs = wrt != GradWrt::Params, want_params = wrt != GradWrt::Inputs;
  std::vector<bool> req(g.nodes.size(), false);
  for (const Node& n : g.nodes) {
    if (!needed[static_cast<size_t>(n.id)]) continue;
    bool r = (n.op == Op::Input && want_inputs) || (want_params && has_params(payload, n.id));
    for (int64_t p : n.parents) r = r || req[static_cast<size_t>(p)];
    req[static_cast<size_t>(n.id)] = r;
  }
  return req;
}

// Node p's cotangent plus d (the first contribution is moved in).
template <class Ctx>
void add_cotangent(Ctx& ctx, Reverse<typename Ctx::Scalar>& st, size_t p, Tensor<typename Ctx::Scalar>&& d) {
  if (st.has_cot[p]) {
    accumulate(ctx, st.cot[p], d);
  } else {
    st.cot[p] = std::move(d);
    st.has_cot[p] = true;
  }
}

template <class Ctx>
Status vjp_node(Ctx& ctx, const Node& n, const Payload<typename Ctx::Scalar>& payload, const GradOptions& options,
                Reverse<typename Ctx::Scalar>& st, std::vector<ParamGrad<typename Ctx::Scalar>>& params) {
  using S = typename Ctx::Scalar;
  const auto id = static_cast<size_t>(n.id);
  std::vector<const Tensor<S>*>& values = st.values_scratch;
  VjpOut<S>& out = st.out_scratch;
  values.clear();
  out.want.clear();
  out.parents.clear();
  out.params.clear();
  for (int64_t p : n.parents) {
    values.push_back(&st.values[static_cast<size_t>(p)]);
    out.want.push_back(st.req[static_cast<size_t>(p)]);
  }
  out.parents.resize(n.parents.size());
  out.want_params = options.wrt != GradWrt::Inputs && has_params(payload, n.id);
  DiffArgs<S> da{n, values, st.values[id], payload, options.eval, options.kernels == GradKernels::Blas};
  DENOTE_RETURN_IF_ERROR(vjp_fn<Ctx>(n.op)(ctx, da, st.cot[id], out));
  DENOTE_RETURN_IF_ERROR(take_context_error(ctx));
  for (size_t k = 0; k < n.parents.size(); ++k) {
    if (!out.want[k]) continue;
    const auto p = static_cast<size_t>(n.parents[k]);
    if (out.parents[k].shape != st.values[p].shape)
      return Status::error(ErrorCode::kInternal, fmt::format("vjp rule produced shape {} for parent {} of shape {}",
                                                             to_string(out.parents[k].shape), p,
                                                             to_string(st.values[p].shape)));
    add_cotangent(ctx, st, p, std::move(out.parents[k]));
  }
  for (auto& pg : out.params) params.push_back(std::move(pg));
  return ok_status();
}

// GradOptions::step_window at a step op: the cotangent to its parent is cot / w where |x| < w, 0 elsewhere.
template <class Ctx>
void step_surrogate(Ctx& ctx, const Node& n, double w, Reverse<typename Ctx::Scalar>& st) {
  using S = typename Ctx::Scalar;
  if constexpr (std::is_same_v<S, double> || std::is_same_v<S, float>) {
    const auto id = static_cast<size_t>(n.id), p = static_cast<size_t>(n.parents[0]);
    if (!st.req[p]) return;
    const Tensor<S>& x = st.values[p];
    Tensor<S> d(x.shape, std::vector<S>(x.data.size(), S(0)));
    for (size_t i = 0; i < d.data.size() && i < st.cot[id].data.size(); ++i)
      if (std::fabs(static_cast<double>(x.data[i])) < w) d.data[i] = static_cast<S>(static_cast<double>(st.cot[id].data[i]) / w);
    add_cotangent(ctx, st, p, std::move(d));
  }
}

// One node of the reverse walk: its rule, or what its diff column says.
template <class Ctx>
Status reverse_visit(Ctx& ctx, const Node& n, const Payload<typename Ctx::Scalar>& payload,
                     const GradOptions& options, Reverse<typename Ctx::Scalar>& st,
                     std::vector<ParamGrad<typename Ctx::Scalar>>& params) {
  const auto id = static_cast<size_t>(n.id);
  if (!st.req[id] || !st.has_cot[id]) return ok_status();
  const Diff diff = op_info(n.op).diff;
  if (diff == Diff::Leaf) {
    if (n.op == Op::Const && options.wrt != GradWrt::Inputs)
      params.push_back({n.id, "value", st.cot[id].shape, st.cot[id].data});
    return ok_status();  // inputs are read by the caller
  }
  if (diff == Diff::None) return no_derivative(n);
  if (diff == Diff::Rule) DENOTE_RETURN_IF_ERROR(vjp_node(ctx, n, payload, options, st, params));
  if (diff == Diff::Zero && options.step_window > 0 && is_step_op(n.op)) step_surrogate(ctx, n, options.step_window, st);
  st.cot[id] = {};
  st.values[id] = {};
  return ok_status();
}

template <class Ctx>
Status seed_cotangent(Ctx& ctx, Reverse<typename Ctx::Scalar>& st, int64_t output_id,
                      const Tensor<typename Ctx::Scalar>* cotangent) {
  const auto out = static_cast<size_t>(output_id);
  const Shape& shape = st.values[out].shape;
  if (cotangent && (cotangent->shape != shape || cotangent->data.size() != static_cast<size_t>(numel(shape))))
    return Status::error(ErrorCode::kInvalidInput,
                         fmt::format("IR grad: cotangent shape mismatch: expected {} (the output's shape), got {}",
                                     to_string(shape), to_string(cotangent->shape)))
        .with_field("cotangent");
  st.cot[out] = cotangent ? *cotangent : Tensor<typename Ctx::Scalar>::filled(shape, ctx.one());
  st.has_cot[out] = true;
  return ok_status();
}

// vjp_lent: the caller's input tensors, moved into the tape for the call and back when it ends
// (on every return path), so the tape holds no copy of them.
template <class S>
struct LentInputs {
  Tensor<S>* lent = nullptr;  // nullptr: vjp, the inputs are copied into the tape
  const Graph& g;
  Reverse<S>& st;
  ~LentInputs() {
    if (!lent) return;
    const std::vector<int64_t> ids = g.input_ids();
    for (size_t k = 0; k < ids.size(); ++k) {
      const auto id = static_cast<size_t>(ids[k]);
      if (id < st.present.size() && st.present[id]) lent[k] = std::move(st.values[id]);
    }
  }
};

template <class Ctx>
Result<Gradients<typename Ctx::Scalar>> run_vjp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                                int64_t output_id, const Tensor<typename Ctx::Scalar>* cotangent,
                                                Ctx& ctx, const GradOptions& options,
                                                Tensor<typename Ctx::Scalar>* lent = nullptr) {
  using S = typename Ctx::Scalar;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  if (output_id < 0 || static_cast<size_t>(output_id) >= g.nodes.size())
    return Status::error(ErrorCode::kInvalidInput, fmt::format("IR grad: output id out of bounds: {}", output_id));
  const std::vector<bool> needed = walk::ancestors(g, output_id);
  walk::Config cfg;
  cfg.options = options.eval;
  cfg.structure_checked = true;
  cfg.needed = &needed;
  TapePass<Ctx> tape{{ctx, payload, options.eval, TapeRule<Ctx>{options.kernels == GradKernels::Blas}, lent}};
  Reverse<S> st;
  const LentInputs<S> give_back{lent, g, st};
  DENOTE_RETURN_IF_ERROR(walk::forward(g, tape, inputs, cfg, st.values, st.present));
  st.req = requires_grad(g, payload, needed, options.wrt);
  st.cot.resize(g.nodes.size());
  st.has_cot.assign(g.nodes.size(), false);
  DENOTE_RETURN_IF_ERROR(seed_cotangent(ctx, st, output_id, cotangent));
  Gradients<S> r;
  r.output = output_id;
  r.value = st.values[static_cast<size_t>(output_id)];
  DENOTE_RETURN_IF_ERROR(walk::reverse(g, kGradLayer, [&](const Node& n) {
    return n.id > output_id ? ok_status() : reverse_visit(ctx, n, payload, options, st, r.params);
  }));
  r.input_ids = g.input_ids();
  if (options.wrt != GradWrt::Params)
    for (size_t k = 0; k < r.input_ids.size(); ++k) {
      const auto id = static_cast<size_t>(r.input_ids[k]);
      r.inputs.push_back(st.has_cot[id] ? std::move(st.cot[id]) : zeros(ctx, st.present[id] ? st.values[id].shape
                                                                                              : inputs[k].shape));
    }
  std::stable_sort(r.params.begin(), r.params.end(),
                   [](const ParamGrad<S>& a, const ParamGrad<S>& b) { return a.node < b.node; });
  return r;
}

}  // namespace denote::ad

namespace denote {

template <class Ctx>
Result<Gradients<typename Ctx::Scalar>> vjp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                            std::span<const Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                            const Tensor<typename Ctx::Scalar>* cotangent, Ctx& ctx,
                                            const GradOptions& options) {
  return ad::run_vjp(g, payload, inputs, output_id, cotangent, ctx, options);
}

template <class Ctx>
Result<Gradients<typename Ctx::Scalar>> vjp_lent(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                 std::span<Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                                 const Tensor<typename Ctx::Scalar>* cotangent, Ctx& ctx,
                                                 const GradOptions& options) {
  return ad::run_vjp(g, payload, std::span<const Tensor<typename Ctx::Scalar>>(inputs.data(), inputs.size()),
                     output_id, cotangent, ctx, options, inputs.data());
}

template <class Ctx>
Result<Tangent<typename Ctx::Scalar>> jvp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                          std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                          std::span<const Tensor<typename Ctx::Scalar>> tangents, int64_t output_id,
                                          Ctx& ctx, const EvalOptions& options) {
  return ad::run_jvp(g, payload, inputs, tangents, output_id, ctx, options);
}

}  // namespace denote

#define DENOTE_INSTANTIATE_GRAD(Ctx)                                                                            \
  template Result<Gradients<Ctx::Scalar>> vjp<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,                    \
                                                   std::span<const Tensor<Ctx::Scalar>>, int64_t,                \
                                                   const Tensor<Ctx::Scalar>*, Ctx&, const GradOptions&);        \
  template Result<Gradients<Ctx::Scalar>> vjp_lent<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,               \
                                                        std::span<Tensor<Ctx::Scalar>>, int64_t,                 \
                                                        const Tensor<Ctx::Scalar>*, Ctx&, const GradOptions&);   \
  template Result<Tangent<Ctx::Scalar>> jvp<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,                      \
                                                 std::span<const Tensor<Ctx::Scalar>>,                           \
                                                 std::span<const Tensor<Ctx::Scalar>>, int64_t, Ctx&,            \
                                                 const EvalOptions&);
