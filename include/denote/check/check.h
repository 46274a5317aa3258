// Graph validation in two levels. check_well_formed: structure only (ids, arity, parent order,
// attrs kind, declared shapes). check_shapes: structure, then independent shape inference of
// every node compared with its declared shape. Both return the first error (seed semantics);
// diagnose collects every diagnostic, each naming its node. check_model / diagnose_model add the
// model's own checks (payload records against the graph, cast targets), so a model they accept is
// not refused by evaluation for the model itself.
//
//   Status s = check_shapes(g);
//   if (!s.ok()) std::cerr << s.message();   // "IR graph: node 2: outShape mismatch: ..."
#pragma once

#include <cstdint>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/ir/model.h"

namespace denote {

Status check_well_formed(const Graph& g);

// Structural checks of one node (index i of g); what check_well_formed runs per node.
Status check_node_structure(const Graph& g, size_t i);

Status check_shapes(const Graph& g);

// Infers node i's shape from its parents' shapes; the op rule's own error on failure (code kShape
// or kStructure, no node attached: callers attach it).
Result<Shape> infer_shape(const Node& node, std::span<const Shape> parent_shapes);

// Inferred shape of every node (stops at the first error, like check_shapes).
Result<std::vector<Shape>> infer_shapes(const Graph& g);

struct Diagnostic {
  int64_t node = -1;  // -1: graph-level
  std::string message;
  Status status;      // the same error as a value: code, node, field, detail
};

// Every diagnostic of the graph: structural errors per node, then shape errors where the
// parents' shapes are known. Each message carries the node context.
std::vector<Diagnostic> diagnose(const Graph& g);

// diagnose(m.graph), then for every node without a graph diagnostic: its payload record against
// the graph (a missing record; linear out_dim / in_dim against the declared and the input's last
// dims, weight and bias counts; conv config, input_spatial, weight and bias counts; batch_norm_eval
// and layernorm value counts and eps > 0 and finite; const value counts), parameters that are not
// finite (weights, biases, norm parameters; const values may be infinite), and cast targets (a
// known rounding mode and a binary format name, as cast_target, or an int / uint / bool dtype that
// typed execution has, as typed::parse_dtype: `int(0)`, `int(1000000)`, `intx` are errors). Texts: "IR graph: node {i}: {what}
// ({summary})", with the field set (out_dim, in_dim, weight, bias, eps, values, payload, dtype ...).
// Sorted by node; graph-level ones (node -1) last.
std::vector<Diagnostic> diagnose_model(const Model& m);
// The first error: check_shapes, then diagnose_model's first diagnostic.
Status check_model(const Model& m);
// diagnose_model where the const nodes in `typed_consts` carry their values elsewhere (a typed
// model's words: denote/typed/check.h) and need no const record.
std::vector<Diagnostic> diagnose_model(const Model& m, const std::set<int64_t>& typed_consts);

}  // namespace denote
