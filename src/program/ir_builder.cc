// IrBuilder (program/ir_builder.h): steps checked by check_step, appended through GraphBuilder,
// the whole model checked by check_model at the end.
#include "denote/program/ir_builder.h"

#include <fmt/format.h>

#include "denote/check/check.h"

namespace denote {

Shape IrBuilder::shape_of(Value v) const {
  if (v < 0 || v >= size()) return {};
  return b_.model().graph.nodes[static_cast<size_t>(v)].out_shape;
}

int64_t IrBuilder::size() const {
  return static_cast<int64_t>(b_.model().graph.nodes.size());
}

Status IrBuilder::fail(const Node& n, const Status& s) {
  Status e = Status::error(s.code(), s.detail());
  if (!s.field().empty()) e = e.with_field(s.field());
  first_error_ = e.with_node(n.id, fmt::format("IR graph: node {}: {} ({})", n.id, s.detail(), summary(n)));
  return first_error_;
}

IrBuilder::Value IrBuilder::emit(Step step, std::vector<Value> parents) {
  if (!first_error_.ok()) return -1;
  Node& n = step.node;
  n.id = size();
  n.parents = parents;
  std::vector<Shape> shapes;
  for (Value p : parents) {
    if (p < 0 || p >= n.id) {
      (void)fail(n, Status::error(ErrorCode::kStructure, fmt::format("parent {} is not a node of this program", p))
                        .with_field("parents"));
      return -1;
    }
    shapes.push_back(shape_of(p));
  }
  auto shape = check_step(step, shapes);
  if (!shape.ok()) {
    (void)fail(n, shape.status());
    return -1;
  }
  const int64_t id = b_.add(n.op, std::move(parents), n.attrs, *shape);
  if (!b_.first_error().ok()) {
    (void)fail(n, b_.first_error());
    return -1;
  }
  store_record(step.record, id, b_.payload(), [](double v) { return v; });
  return id;
}

Result<Model> IrBuilder::finish(std::vector<Value> outputs) {
  if (!first_error_.ok()) return first_error_;
  DENOTE_ASSIGN_OR_RETURN(Model m, b_.build(std::move(outputs)));
  DENOTE_RETURN_IF_ERROR(check_model(m));
  return m;
}

}  // namespace denote
