#include "denote/check/check.h"

#include <fmt/format.h>

#include "../ops/rules.h"

namespace denote {

namespace {

std::string node_prefix(size_t i) { return "IR graph: node " + std::to_string(i) + ": "; }

// "IR graph: node {i}: {what} ({summary})", attributed to node i.
Status node_error(const Node& n, size_t i, const std::string& what, ErrorCode code, const char* field) {
  return Status::error(code, what)
      .with_field(field)
      .with_node(static_cast<int64_t>(i), node_prefix(i) + what + " (" + summary(n) + ")");
}

// A shape rule's error (no node context yet) attributed to node i.
Status attach(const Node& n, size_t i, const Status& s) {
  if (s.ok() || s.has_node()) return s;
  return s.with_code(ErrorCode::kShape)
      .with_node(static_cast<int64_t>(i), node_prefix(i) + s.detail() + " (" + summary(n) + ")");
}

Status check_arity(const Node& n, size_t i) {
  const OpInfo& info = op_info(n.op);
  const int64_t k = static_cast<int64_t>(n.parents.size());
  if (info.max_parents < 0) {
    if (k < info.min_parents)
      return node_error(n, i, fmt::format("bad parent count for {}: expected at least {}, got {}", info.tag,
                                          info.min_parents, k),
                        ErrorCode::kStructure, "parents");
  } else if (k < info.min_parents || k > info.max_parents) {
    return node_error(n, i, fmt::format("bad parent count for {}: expected {}..{}, got {}", info.tag,
                                        info.min_parents, info.max_parents, k),
                      ErrorCode::kStructure, "parents");
  }
  return ok_status();
}

}  // namespace

Status check_node_structure(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  if (n.id != static_cast<int64_t>(i))
    return Status::error(ErrorCode::kStructure,
                         fmt::format("IR graph: id discipline violated at index {}: nodes[{}].id = {}", i, i, n.id))
        .with_field("id")
        .with_node(static_cast<int64_t>(i),
                   fmt::format("IR graph: id discipline violated at index {}: nodes[{}].id = {}", i, i, n.id));
  DENOTE_RETURN_IF_ERROR(check_arity(n, i));
  for (int64_t p : n.parents) {
    if (p < 0 || p >= n.id) return node_error(n, i, fmt::format("parent id {} is not < {}", p, n.id), ErrorCode::kStructure, "parents");
  }
  if (!attrs_match(n.op, n.attrs))
    return node_error(n, i, fmt::format("attrs: {} needs a record of kind {}, got kind {}", op_tag(n.op),
                                        attr_kind_name(op_info(n.op).attr), attr_kind_name(attr_kind_of(n.attrs))),
                      ErrorCode::kStructure, "attrs");
  if (auto c = checked_numel(n.out_shape); !c.ok()) return node_error(n, i, "outShape: " + c.message(), ErrorCode::kStructure, "outShape");
  return ok_status();
}

Status check_well_formed(const Graph& g) {
  for (size_t i = 0; i < g.nodes.size(); ++i) DENOTE_RETURN_IF_ERROR(check_node_structure(g, i));
  return ok_status();
}

Result<Shape> infer_shape(const Node& node, std::span<const Shape> parent_shapes) {
  // The rules index their parents and read their attrs record; refuse what they cannot take.
  const OpInfo& info = op_info(node.op);
  const auto k = static_cast<int64_t>(parent_shapes.size());
  if (k < info.min_parents || (info.max_parents >= 0 && k > info.max_parents))
    return Status::error(ErrorCode::kStructure, fmt::format("{}: bad parent count: got {} shapes", info.tag, k))
        .with_field("parents");
  if (!attrs_match(node.op, node.attrs))
    return Status::error(ErrorCode::kStructure,
                         fmt::format("{}: attrs of kind {} do not fit", info.tag, attr_kind_name(attr_kind_of(node.attrs))))
        .with_field("attrs");
  auto r = rules::infer_fn(node.op)(node, parent_shapes);
  if (!r.ok()) return r.status().with_code(ErrorCode::kShape);
  return r;
}

namespace {

// Shared by check_shapes and infer_shapes: infers node i given the shapes inferred so far.
Result<Shape> infer_checked(const Graph& g, size_t i, const std::vector<Shape>& known, std::vector<Shape>& scratch) {
  const Node& n = g.nodes[i];
  scratch.clear();
  for (int64_t p : n.parents) scratch.push_back(known[p]);
  auto r = infer_shape(n, scratch);
  if (!r.ok()) return attach(n, i, r.status());
  Shape s = std::move(*r);
  if (s != n.out_shape)
    return node_error(n, i, "outShape mismatch: inferred=" + to_string(s) + ", declared=" + to_string(n.out_shape),
                      ErrorCode::kShape, "outShape");
  return s;
}

}  // namespace

Result<std::vector<Shape>> infer_shapes(const Graph& g) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  std::vector<Shape> known;
  known.reserve(g.nodes.size());
  std::vector<Shape> scratch;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    DENOTE_ASSIGN_OR_RETURN(Shape s, infer_checked(g, i, known, scratch));
    known.push_back(std::move(s));
  }
  return known;
}

Status check_shapes(const Graph& g) {
  auto r = infer_shapes(g);
  return r.ok() ? ok_status() : r.status();
}

std::vector<Diagnostic> diagnose(const Graph& g) {
  std::vector<Diagnostic> out;
  // known[i] is false where node i (or something it needs) failed, so its dependents stay quiet.
  std::vector<bool> known(g.nodes.size(), false);
  std::vector<Shape> shapes(g.nodes.size());
  std::vector<Shape> scratch;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (Status s = check_node_structure(g, i); !s.ok()) {
      out.push_back({static_cast<int64_t>(i), s.message(), s});
      continue;
    }
    bool parents_known = true;
    for (int64_t p : n.parents) parents_known = parents_known && known[p];
    if (!parents_known) continue;
    scratch.clear();
    for (int64_t p : n.parents) scratch.push_back(shapes[p]);
    auto s = infer_shape(n, scratch);
    if (!s.ok()) {
      const Status e = attach(n, i, s.status());
      out.push_back({static_cast<int64_t>(i), e.message(), e});
      continue;
    }
    if (*s != n.out_shape) {
      const Status e = node_error(n, i, "outShape mismatch: inferred=" + to_string(*s) + ", declared=" + to_string(n.out_shape),
                                  ErrorCode::kShape, "outShape");
      out.push_back({static_cast<int64_t>(i), e.message(), e});
    }
    // Dependents are checked against the declared shape, which is what they will be given.
    shapes[i] = n.out_shape;
    known[i] = true;
  }
  return out;
}

}  // namespace denote
