// Graph validation in two levels. check_well_formed: structure only (ids, arity, parent order,
// attrs kind, declared shapes). check_shapes: structure, then independent shape inference of
// every node compared with its declared shape. Both return the first error (seed semantics);
// diagnose collects every diagnostic, each naming its node.
//
//   Status s = check_shapes(g);
//   if (!s.ok()) std::cerr << s.message();   // "IR graph: node 2: outShape mismatch: ..."
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/graph.h"

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

}  // namespace denote
