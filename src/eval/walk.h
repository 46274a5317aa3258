// Internal: the one graph walk. Every pass over a graph (evaluation, plan execution, IBP, typed
// execution; autodiff and CROWN next) writes hooks, not a loop. The walker owns what every pass
// needs: the structural check, feeding the supplied inputs to the input nodes, each node's shape
// rule applied to its parents' actual values, the produced-vs-declared check, the element limit,
// liveness (freeing values no later node reads), and attaching the node to every error a hook
// returns.
//
// A forward pass is a type with
//   using Value = ...;                                   // e.g. Tensor<S>, TypedTensor
//   static const Shape& shape_of(const Value&);
//   bool well_sized(const Value&) const;                // data length agrees with the shape (may be static)
//   Result<Value> visit(const Node&, std::span<const Value* const> parents, const Shape& out_shape,
//                       const Value* supplied);           // supplied: input nodes only
// and optionally
//   Status on_error(const Node&, const Status& attached); // ok: the node gets no value, go on
//                                                         // (IBP); an error: stop (the default)
//   int64_t bytes_per_element() const;                    // for the memory budget (default 8)
//
//   EvalPass<Ctx> pass{...};
//   walk::Config cfg;                    // layer "IR eval", every node, keep every value
//   Status s = walk::forward(g, pass, std::span(inputs), cfg, table, present);
//
// A reverse walk (walk::reverse) visits nodes from the last id to the first, for passes that pull
// information from children to parents (ancestor marking, VJP, CROWN's backward pass).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/check/check.h"
#include "denote/ir/graph.h"

namespace denote::walk {

struct Config {
  std::string_view layer = "IR eval";       // prefix of the errors the walker renders
  std::string_view inputs_noun = "input tensors";
  std::string_view value_noun = "value";    // "parent {p} has no {value_noun}"
  bool structure_checked = false;           // the caller already ran check_well_formed
  const std::vector<bool>* needed = nullptr;  // visit only the marked nodes (all when null)
  // Liveness: free a value once every node that reads it ran, except the nodes marked in `keep`
  // (all are kept when `keep` is null: the caller asked for the whole table).
  const std::vector<bool>* keep = nullptr;
  EvalOptions options;
};

// `err` attributed to node n: "{layer}: node {id}: {detail} ({summary})". An error that already
// names a node (a nested walk, a seed text) is returned unchanged.
inline Status attach_node(const Node& n, const Status& err, std::string_view layer) {
  if (err.ok() || err.has_node()) return err;
  return err.with_node(n.id, fmt::format("{}: node {}: {} ({})", layer, n.id, err.detail(), summary(n)));
}

// An error of node n raised by the walker itself.
inline Status node_error(const Node& n, ErrorCode code, std::string_view layer, const std::string& what,
                         std::string_view field = {}) {
  Status s = Status::error(code, what);
  if (!field.empty()) s = s.with_field(std::string(field));
  return attach_node(n, s, layer);
}

// The node's shape rule on its parents' actual shapes, the declared shape, the element limit.
inline Result<Shape> check_node_shape(const Node& n, std::span<const Shape> parent_shapes, const Config& cfg) {
  auto inferred = infer_shape(n, parent_shapes);
  if (!inferred.ok()) return attach_node(n, inferred.status().with_code(ErrorCode::kShape), cfg.layer);
  if (*inferred != n.out_shape)
    return node_error(n, ErrorCode::kShape, cfg.layer,
                      "produced shape mismatch: produced=" + to_string(*inferred) + ", declared=" + to_string(n.out_shape),
                      "outShape");
  if (numel(*inferred) > cfg.options.max_elements)
    return node_error(n, ErrorCode::kResource, cfg.layer,
                      fmt::format("{} elements exceed the evaluation limit of {}", numel(*inferred),
                                  cfg.options.max_elements),
                      "outShape");
  return inferred;
}

// "17179869184 bytes (16.0 GiB)"
inline std::string bytes_text(int64_t b) {
  if (b < 1024) return fmt::format("{} bytes", b);
  const char* units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(b) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < std::size(units)) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{} bytes ({:.1f} {})", b, v, units[u]);
}

// The memory the values alive at once take, against the budget (EvalOptions::max_bytes).
struct MemoryBudget {
  int64_t max = 0;
  int64_t live = 0;
  std::vector<int64_t> held;  // bytes of each node's value while it is alive

  // Reserves node n's value, or an error naming the bytes needed, before anything is allocated.
  Status reserve(const Node& n, int64_t elements, int64_t per_element, std::string_view layer) {
    const int64_t need =
        elements > 0 && per_element > INT64_MAX / elements ? INT64_MAX : elements * per_element;
    if (need > max - live)
      return node_error(n, ErrorCode::kResource, layer,
                        fmt::format("the value needs {} ({} elements of {} bytes) with {} alive; the memory budget "
                                    "is {} (--max-memory)",
                                    bytes_text(need), elements, per_element, bytes_text(live), bytes_text(max)),
                        "outShape");
    live += need;
    held[static_cast<size_t>(n.id)] = need;
    return ok_status();
  }
  void release(int64_t id) {
    live -= held[static_cast<size_t>(id)];
    held[static_cast<size_t>(id)] = 0;
  }
};

// For each node, the largest id of a node that reads it (-1: none).
inline std::vector<int64_t> last_reader(const Graph& g) {
  std::vector<int64_t> last(g.nodes.size(), -1);
  for (const Node& n : g.nodes)
    for (int64_t p : n.parents) last[static_cast<size_t>(p)] = n.id;
  return last;
}

// Visits the nodes from the last id down to 0; `visit(node)` returns a Status, attached to the node.
template <class Visit>
Status reverse(const Graph& g, std::string_view layer, Visit&& visit) {
  for (size_t k = g.nodes.size(); k-- > 0;) {
    const Node& n = g.nodes[k];
    Status s = visit(n);
    if (!s.ok()) return attach_node(n, s, layer);
  }
  return ok_status();
}

// Visits the nodes from id 0 up; `visit(node)` returns a Status, attached to the node. For passes that
// keep their own per-node state instead of a value table (CROWN's intermediate bounds, alpha-CROWN's
// slopes); a visit that has nothing left to do returns ok.
template <class Visit>
Status in_order(const Graph& g, std::string_view layer, Visit&& visit) {
  for (const Node& n : g.nodes) {
    Status s = visit(n);
    if (!s.ok()) return attach_node(n, s, layer);
  }
  return ok_status();
}

// Marks `id` and every node it depends on (one reverse sweep; parents have smaller ids).
inline std::vector<bool> ancestors(const Graph& g, int64_t id) {
  std::vector<bool> needed(g.nodes.size(), false);
  needed[static_cast<size_t>(id)] = true;
  (void)reverse(g, "", [&](const Node& n) {
    if (needed[static_cast<size_t>(n.id)])
      for (int64_t p : n.parents) needed[static_cast<size_t>(p)] = true;
    return ok_status();
  });
  return needed;
}

// One node of forward(): gathers the parents, checks the shape, runs the hook, checks the value.
template <class Pass>
Status visit_node(const Graph& g, Pass& pass, const Node& n, const typename Pass::Value* supplied, const Config& cfg,
                  std::vector<typename Pass::Value>& table, std::vector<bool>& present, std::vector<Shape>& shapes,
                  std::vector<const typename Pass::Value*>& parents, MemoryBudget& budget) {
  shapes.resize(n.parents.size());  // assigned in place: the shapes' storage is reused node to node
  parents.clear();
  for (size_t k = 0; k < n.parents.size(); ++k) {
    const auto p = static_cast<size_t>(n.parents[k]);
    if (!present[p])
      return node_error(n, ErrorCode::kEval, cfg.layer, fmt::format("parent {} has no {}", p, cfg.value_noun), "parents");
    shapes[k] = Pass::shape_of(table[p]);
    parents.push_back(&table[p]);
  }
  DENOTE_ASSIGN_OR_RETURN(Shape out_shape, check_node_shape(n, shapes, cfg));
  int64_t per_element = 8;
  if constexpr (requires { pass.bytes_per_element(); }) per_element = pass.bytes_per_element();
  DENOTE_RETURN_IF_ERROR(budget.reserve(n, numel(out_shape), per_element, cfg.layer));
  auto value = pass.visit(n, std::span<const typename Pass::Value* const>(parents), out_shape, supplied);
  if (!value.ok()) {
    budget.release(n.id);
    return attach_node(n, value.status(), cfg.layer);
  }
  if (Pass::shape_of(*value) != n.out_shape || !pass.well_sized(*value)) {
    budget.release(n.id);
    return node_error(n, ErrorCode::kShape, cfg.layer,
                      "produced shape mismatch: produced=" + to_string(Pass::shape_of(*value)) +
                          ", declared=" + to_string(n.out_shape),
                      "outShape");
  }
  table[static_cast<size_t>(n.id)] = std::move(*value);
  present[static_cast<size_t>(n.id)] = true;
  (void)g;
  return ok_status();
}

// Runs `pass` over g in id order. `table[i]` receives node i's value and `present[i]` says whether
// it has one (a node can lack one: not needed, freed after its last reader, or skipped by
// on_error). Returns the first error, attributed to its node.
template <class Pass>
Status forward(const Graph& g, Pass& pass, std::span<const typename Pass::Value> inputs, const Config& cfg,
               std::vector<typename Pass::Value>& table, std::vector<bool>& present) {
  using Value = typename Pass::Value;
  if (!cfg.structure_checked) DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  const size_t want = g.input_ids().size();
  if (inputs.size() != want)
    return Status::error(ErrorCode::kInvalidInput,
                         fmt::format("{}: expected {} {}, got {}", cfg.layer, want, cfg.inputs_noun, inputs.size()));
  table.assign(g.nodes.size(), Value{});
  present.assign(g.nodes.size(), false);
  const std::vector<int64_t> last = cfg.keep ? last_reader(g) : std::vector<int64_t>{};
  std::vector<Shape> shapes;
  std::vector<const Value*> parents;
  MemoryBudget budget{effective_max_bytes(cfg.options), 0, std::vector<int64_t>(g.nodes.size(), 0)};
  size_t next_input = 0;
  for (const Node& n : g.nodes) {
    const Value* supplied = n.op == Op::Input ? &inputs[next_input++] : nullptr;
    if (cfg.needed && !(*cfg.needed)[static_cast<size_t>(n.id)]) continue;
    Status s = visit_node(g, pass, n, supplied, cfg, table, present, shapes, parents, budget);
    if (!s.ok()) {
      if constexpr (requires { pass.on_error(n, s); }) {
        DENOTE_RETURN_IF_ERROR(pass.on_error(n, s));
      } else {
        return s;
      }
    }
    if (cfg.keep)
      for (int64_t p : n.parents)
        if (last[static_cast<size_t>(p)] == n.id && !(*cfg.keep)[static_cast<size_t>(p)]) {
          table[static_cast<size_t>(p)] = Value{};
          present[static_cast<size_t>(p)] = false;
          budget.release(p);
        }
  }
  return ok_status();
}

}  // namespace denote::walk
