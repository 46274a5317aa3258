#include "denote/program/builder.h"

#include "denote/check/check.h"

namespace denote {

int64_t GraphBuilder::add(Op op, std::vector<int64_t> parents, Attrs attrs, std::optional<Shape> declared) {
  const int64_t id = static_cast<int64_t>(model_.graph.nodes.size());
  Node n{id, std::move(parents), op, std::move(attrs), declared.value_or(Shape{})};
  if (first_error_.ok()) {
    model_.graph.nodes.push_back(n);
    Status s = check_node_structure(model_.graph, id);
    model_.graph.nodes.pop_back();
    if (s.ok() && !declared) {
      std::vector<Shape> shapes;
      for (int64_t p : n.parents) shapes.push_back(model_.graph.nodes[p].out_shape);
      auto inferred = infer_shape(n, shapes);
      if (inferred.ok()) n.out_shape = *inferred;
      else s = inferred.status().with_prefix("node " + std::to_string(id) + ": ");
    }
    if (!s.ok()) first_error_ = s;
  }
  model_.graph.nodes.push_back(std::move(n));
  return id;
}

int64_t GraphBuilder::input(Shape shape) { return add(Op::Input, {}, NoAttrs{}, std::move(shape)); }

int64_t GraphBuilder::constant(Shape shape, std::vector<double> values) {
  int64_t id = add(Op::Const, {}, ValueShapeAttrs{shape});
  model_.payload.consts[id] = {std::move(values)};
  return id;
}

int64_t GraphBuilder::linear(int64_t x, int64_t out_dim, std::vector<double> weight, std::vector<double> bias) {
  Shape out;
  if (x >= 0 && x < static_cast<int64_t>(model_.graph.nodes.size())) out = model_.graph.nodes[x].out_shape;
  if (out.empty()) out.push_back(0);
  const int64_t in_dim = out.back();
  out.back() = out_dim;
  int64_t id = add(Op::Linear, {x}, NoAttrs{}, out);
  model_.payload.linear[id] = {out_dim, in_dim, std::move(weight), std::move(bias)};
  return id;
}

int64_t GraphBuilder::conv(int64_t x, ConvConfig config, std::vector<double> weight, std::vector<double> bias) {
  Shape spatial;
  if (x >= 0 && x < static_cast<int64_t>(model_.graph.nodes.size())) {
    const Shape& in = model_.graph.nodes[x].out_shape;
    for (size_t i = static_cast<size_t>(std::max<int64_t>(config.channel_axis + 1, 0)); i < in.size(); ++i)
      spatial.push_back(in[i]);
  }
  int64_t id = add(Op::Conv, {x}, config);
  model_.payload.conv[id] = {config, spatial, std::move(weight), std::move(bias)};
  return id;
}

Result<Model> GraphBuilder::build(std::vector<int64_t> output_ids) {
  if (!first_error_.ok()) return first_error_.with_prefix("builder: ");
  model_.output_ids = std::move(output_ids);
  return model_;
}

}  // namespace denote
