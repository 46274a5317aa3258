// Compiling a bound plan (denote/plan/compiled.h): the graph walk (src/eval/walk.h) builds the
// steps (prepared kernels, views, fused pointwise stages, generic fallbacks), a second sweep over the
// steps computes liveness, a third assigns temporaries to arena buffers (best fit among the free ones).
#include <fmt/format.h>

#include <algorithm>

#include "compiled_impl.h"
#include "denote/check/check.h"
#include "denote/plan/native_context.h"
#include "plan_internal.h"
#include "../eval/evaluator_impl.h"
#include "../eval/walk.h"

namespace denote {

namespace {

template <class S>
struct Builder {
  CompiledPlanImpl<S>& cp;
  const std::vector<const BoundKernel*>& by_node;
  const CompileOptions& compile;
  std::vector<int64_t> readers;     // per node: how many needed nodes read it
  std::vector<bool> is_output;
  std::vector<int> producer;        // per node: the step whose output it is, -1 otherwise

  int new_slot(SlotKind kind, int64_t index, int64_t size) {
    cp.slots.push_back(Slot{kind, index, size, -1, false});
    return static_cast<int>(cp.slots.size()) - 1;
  }

  // Evaluates a node without runtime work and without parents (const) once, with its reference rule.
  Status add_constant(const Node& n) {
    using Ctx = NativeContextFor<S>;
    Ctx ctx;
    const rules::EvalArgs<S> args{n, {}, cp.payload, n.out_shape, nullptr, cp.options};
    Result<Tensor<S>> v = detail::eval_fn<Ctx>(n.op)(ctx, args);
    if (!v.ok()) return walk::attach_node(n, v.status(), "IR eval");
    cp.node_slot[n.id] = new_slot(SlotKind::Const, static_cast<int64_t>(cp.consts.size()), numel(n.out_shape));
    cp.consts.push_back(std::move(v->data));
    return ok_status();
  }

  // Appends n to the epilogue of the step producing its only parent, when that is allowed.
  bool try_fuse(const Node& n, const PreparedKernel<S>& k, const std::string& capsule) {
    if (!compile.fuse || !k.pointwise || n.parents.size() != 1) return false;
    const int64_t p = n.parents[0];
    const int s = producer[static_cast<size_t>(p)];
    if (s < 0 || readers[static_cast<size_t>(p)] != 1 || is_output[static_cast<size_t>(p)]) return false;
    Step<S>& st = cp.steps[static_cast<size_t>(s)];
    if (!st.prepared.takes_epilogue || st.out_node != p) return false;
    if (st.epilogue.stages.empty() && k.is_relu) st.epilogue.first_is_relu = true;
    st.epilogue.stages.push_back(k.pointwise);
    st.label += fmt::format(" + {}[{}]", op_tag(n.op), n.id);
    st.kernel += " + " + capsule;
    st.out_node = n.id;
    producer[static_cast<size_t>(n.id)] = s;
    cp.node_slot[n.id] = st.out_slot;
    return true;
  }

  void add_step(const Node& n, const BoundKernel& bk, std::optional<PreparedKernel<S>> k) {
    Step<S> st;
    st.label = fmt::format("{}[{}]", op_tag(n.op), n.id);
    st.kernel = bk.capsule.name;
    st.out_node = n.id;
    for (int64_t p : n.parents) st.in_slots.push_back(cp.node_slot[static_cast<size_t>(p)]);
    st.out_slot = new_slot(SlotKind::Temp, 0, numel(n.out_shape));
    st.in_ptrs.resize(n.parents.size());
    if (k) {
      st.prepared = std::move(*k);
    } else {
      st.generic = detail::handler_fn<S>(bk.handler);
      st.node = n;
      st.parent_values.resize(n.parents.size());
      for (size_t i = 0; i < n.parents.size(); ++i) {
        st.parent_values[i].shape = cp.graph.nodes[static_cast<size_t>(n.parents[i])].out_shape;
        st.parent_values[i].data.resize(static_cast<size_t>(numel(st.parent_values[i].shape)));
      }
      for (const Tensor<S>& t : st.parent_values) st.parent_ptrs.push_back(&t);
    }
    cp.node_slot[n.id] = st.out_slot;
    producer[static_cast<size_t>(n.id)] = static_cast<int>(cp.steps.size());
    cp.steps.push_back(std::move(st));
  }

  Status add_node(const Node& n, const std::vector<Shape>& parent_shapes) {
    const BoundKernel* bk = by_node[static_cast<size_t>(n.id)];
    if (!bk) {
      if (n.op == Op::Input) {
        const auto pos = std::find(cp.input_nodes.begin(), cp.input_nodes.end(), n.id) - cp.input_nodes.begin();
        cp.node_slot[n.id] = new_slot(SlotKind::Input, pos, numel(n.out_shape));
        return ok_status();
      }
      if (n.parents.size() == 1) {  // detach: the identity, a view
        cp.node_slot[n.id] = cp.node_slot[static_cast<size_t>(n.parents[0])];
        return ok_status();
      }
      return add_constant(n);
    }
    if (bk->capsule.op == BackendOp::Reshape) {  // reshape, flatten: the parent's buffer, another shape
      cp.node_slot[n.id] = cp.node_slot[static_cast<size_t>(n.parents[0])];
      return ok_status();
    }
    std::optional<PreparedKernel<S>> k;
    if (PrepareFn<S> prepare = detail::handler_prepare<S>(bk->handler)) {
      k = prepare(PrepareArgs<S>{n, parent_shapes, cp.payload, n.out_shape});
    }
    if (k && try_fuse(n, *k, bk->capsule.name)) return ok_status();
    add_step(n, *bk, std::move(k));
    return ok_status();
  }
};

// The builder as a pass of the one graph walk (src/eval/walk.h): its values are the nodes' shapes.
// The arena's bytes are checked after liveness (allocate), so the walk reserves none.
struct ShapeValue {
  Shape shape;
};

template <class S>
struct CompilePass {
  using Value = ShapeValue;
  Builder<S>& b;
  std::vector<Shape> shapes;
  static const Shape& shape_of(const Value& v) { return v.shape; }
  static bool well_sized(const Value&) { return true; }
  int64_t bytes_per_element() const { return 0; }
  Result<Value> visit(const Node& n, std::span<const Value* const> parents, const Shape& out_shape, const Value*) {
    shapes.clear();
    for (const Value* p : parents) shapes.push_back(p->shape);
    DENOTE_RETURN_IF_ERROR(b.add_node(n, shapes));
    return Value{out_shape};
  }
};

// Marks the nodes the outputs need; error as denote_outputs' for an id outside the graph.
Result<std::vector<bool>> needed_nodes(const Graph& g, std::span<const int64_t> output_ids) {
  std::vector<bool> needed(g.nodes.size(), false);
  for (int64_t id : output_ids) {
    if (id < 0 || static_cast<size_t>(id) >= g.nodes.size())
      return error_status(ErrorCode::kInvalidInput, fmt::format("IR eval: outputId out of bounds: {}", id));
    const std::vector<bool> a = walk::ancestors(g, id);
    for (size_t i = 0; i < a.size(); ++i) needed[i] = needed[i] || a[i];
  }
  return needed;
}

// The last step reading each slot; outputs are pinned.
template <class S>
void compute_liveness(CompiledPlanImpl<S>& cp) {
  for (size_t s = 0; s < cp.steps.size(); ++s)
    for (int slot : cp.steps[s].in_slots) cp.slots[static_cast<size_t>(slot)].last_reader = static_cast<int>(s);
  for (int64_t id : cp.outputs) cp.slots[static_cast<size_t>(cp.node_slot[static_cast<size_t>(id)])].pinned = true;
}

// Best fit: each step's output takes the smallest free buffer that holds it (or a new one); a
// temporary's buffer is free again after its last reader.
template <class S>
void assign_buffers(CompiledPlanImpl<S>& cp) {
  std::vector<int64_t> capacity;
  std::vector<bool> busy;
  std::vector<std::vector<int>> release(cp.steps.size() + 1);
  for (size_t i = 0; i < cp.slots.size(); ++i) {
    const Slot& sl = cp.slots[i];
    if (sl.kind == SlotKind::Temp && !sl.pinned && sl.last_reader >= 0)
      release[static_cast<size_t>(sl.last_reader) + 1].push_back(static_cast<int>(i));
  }
  for (size_t s = 0; s < cp.steps.size(); ++s) {
    for (int slot : release[s]) busy[static_cast<size_t>(cp.slots[static_cast<size_t>(slot)].index)] = false;
    Slot& out = cp.slots[static_cast<size_t>(cp.steps[s].out_slot)];
    int best = -1;
    for (size_t b = 0; b < capacity.size(); ++b)
      if (!busy[b] && capacity[b] >= out.size && (best < 0 || capacity[b] < capacity[static_cast<size_t>(best)]))
        best = static_cast<int>(b);
    if (best < 0) {
      best = static_cast<int>(capacity.size());
      capacity.push_back(out.size);
      busy.push_back(false);
    }
    busy[static_cast<size_t>(best)] = true;
    out.index = best;
    // A value nobody reads (and no output) is dead after its own step.
    if (out.last_reader < 0 && !out.pinned) release[s + 1].push_back(cp.steps[s].out_slot);
  }
  for (int64_t c : capacity) cp.buffers.emplace_back(static_cast<size_t>(std::max<int64_t>(c, 1)));
}

template <class S>
Status allocate(CompiledPlanImpl<S>& cp) {
  assign_buffers(cp);
  int64_t scratch = 0, bytes = 0;
  for (const Step<S>& st : cp.steps) scratch = std::max(scratch, st.prepared.scratch);
  cp.scratch.assign(static_cast<size_t>(cp.threads), std::vector<S>(static_cast<size_t>(std::max<int64_t>(scratch, 1))));
  for (const auto& b : cp.buffers) bytes += static_cast<int64_t>(b.size() * sizeof(S));
  bytes += scratch * cp.threads * static_cast<int64_t>(sizeof(S));
  const int64_t budget = effective_max_bytes(cp.options);
  if (budget > 0 && bytes > budget)
    return error_status(ErrorCode::kResource, fmt::format("compile plan: the buffers need {} bytes; the memory budget "
                                                          "is {} bytes (--max-memory)", bytes, budget));
  cp.slot_ptr.assign(cp.slots.size(), nullptr);
  for (size_t i = 0; i < cp.slots.size(); ++i) {
    const Slot& sl = cp.slots[i];
    if (sl.kind == SlotKind::Const) cp.slot_ptr[i] = cp.consts[static_cast<size_t>(sl.index)].data();
    if (sl.kind == SlotKind::Temp) cp.slot_ptr[i] = cp.buffers[static_cast<size_t>(sl.index)].data();
  }
  return ok_status();
}

}  // namespace

template <class S>
Result<CompiledPlan<S>> compile_plan(const BoundPlan& bound, const Graph& g, const Payload<S>& payload,
                                     std::span<const int64_t> output_ids, const CompileOptions& compile,
                                     const EvalOptions& options) {
  if (compile.threads < 1 || compile.threads > 256)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("compile plan: threads {}: expected 1 to 256", compile.threads));
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  DENOTE_RETURN_IF_ERROR(check_shapes(g));
  DENOTE_ASSIGN_OR_RETURN(std::vector<const BoundKernel*> by_node, detail::kernels_by_node<S>(bound, g));
  DENOTE_ASSIGN_OR_RETURN(std::vector<bool> needed, needed_nodes(g, output_ids));
  auto cp = std::make_unique<CompiledPlanImpl<S>>();
  cp->graph = g;
  cp->payload = payload;
  cp->options = options;
  cp->input_nodes = g.input_ids();
  cp->outputs.assign(output_ids.begin(), output_ids.end());
  cp->node_slot.assign(g.nodes.size(), -1);
  cp->threads = compile.threads;
  Builder<S> b{*cp, by_node, compile, std::vector<int64_t>(g.nodes.size(), 0), std::vector<bool>(g.nodes.size(), false),
               std::vector<int>(g.nodes.size(), -1)};
  (void)walk::reverse(g, "", [&](const Node& n) {
    if (needed[static_cast<size_t>(n.id)])
      for (int64_t p : n.parents) ++b.readers[static_cast<size_t>(p)];
    return ok_status();
  });
  for (int64_t id : output_ids) b.is_output[static_cast<size_t>(id)] = true;
  CompilePass<S> pass{b, {}};
  std::vector<ShapeValue> inputs;
  for (int64_t id : cp->input_nodes) inputs.push_back(ShapeValue{g.nodes[static_cast<size_t>(id)].out_shape});
  walk::Config cfg;
  cfg.structure_checked = true;
  cfg.needed = &needed;
  cfg.options = options;
  std::vector<ShapeValue> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(cp->graph, pass, std::span<const ShapeValue>(inputs), cfg, table, present));
  compute_liveness(*cp);
  DENOTE_RETURN_IF_ERROR(allocate(*cp));
  if (compile.threads > 1) cp->pool = std::make_unique<detail::ThreadPool>(compile.threads);
  return CompiledPlan<S>(std::move(cp));
}

template Result<CompiledPlan<double>> compile_plan<double>(const BoundPlan&, const Graph&, const Payload<double>&,
                                                           std::span<const int64_t>, const CompileOptions&,
                                                           const EvalOptions&);
template Result<CompiledPlan<float>> compile_plan<float>(const BoundPlan&, const Graph&, const Payload<float>&,
                                                         std::span<const int64_t>, const CompileOptions&,
                                                         const EvalOptions&);

}  // namespace denote
