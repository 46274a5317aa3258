// Steps (program/step.h): one interpreter call as a node, and its check through the same functions
// `denote check` runs (check_node_structure, infer_shape, check_model) on a one-node model whose
// parents are inputs of the parents' shapes.
#include "denote/program/step.h"

#include <fmt/format.h>

#include <string_view>

#include "denote/check/check.h"

namespace denote {

namespace {

Step make_step(Op op, Attrs attrs, StepRecord record = {}) {
  Step s;
  s.node.op = op;
  s.node.attrs = std::move(attrs);
  s.record = std::move(record);
  return s;
}

// The interpreter method that takes an op's parameters or declared shape (apply() cannot).
struct MethodHint {
  Op op;
  std::string_view method;
};
constexpr MethodHint kMethods[] = {
    {Op::Input, "input"},         {Op::Const, "constant"},     {Op::Linear, "linear"},
    {Op::Conv, "conv"},           {Op::BatchNormEval, "batch_norm"},
};

// Why apply() cannot emit `op` (ok when it can).
Status apply_refusal(Op op) {
  for (const MethodHint& h : kMethods)
    if (h.op == op)
      return Status::error(ErrorCode::kInvalidInput,
                           fmt::format("{}: takes parameters or a declared shape: use the interpreter's {}()",
                                       op_tag(op), h.method))
          .with_field("op");
  if (has_flag(op, kFlagPayload) || has_flag(op, kFlagRandom))
    return Status::error(ErrorCode::kUnsupported, fmt::format("{}: not available in programs", op_tag(op)))
        .with_field("op");
  return ok_status();
}

// The error without node context: code, field and the rule's own text.
Status bare(const Status& s) {
  if (s.ok()) return s;
  Status out = Status::error(s.code(), s.detail());
  return s.field().empty() ? out : out.with_field(s.field());
}

}  // namespace

Step input_step(Shape shape) {
  Step s = make_step(Op::Input, NoAttrs{});
  s.node.out_shape = std::move(shape);
  s.declared = true;
  return s;
}

Step op_step(Op op, Attrs attrs) {
  Step s = make_step(op, std::move(attrs));
  s.refused = apply_refusal(op);
  return s;
}

Step const_step(Shape shape, std::vector<double> values) {
  return make_step(Op::Const, ValueShapeAttrs{std::move(shape)}, ConstRecord<double>{std::move(values)});
}

Step linear_step(const Shape& in, int64_t out_dim, std::vector<double> weight, std::vector<double> bias) {
  const int64_t in_dim = in.empty() ? 0 : in.back();
  Step s = make_step(Op::Linear, NoAttrs{}, LinearRecord<double>{out_dim, in_dim, std::move(weight), std::move(bias)});
  s.node.out_shape = in.empty() ? Shape{out_dim} : in;
  s.node.out_shape.back() = out_dim;
  s.declared = true;
  return s;
}

Step conv_step(const Shape& in, ConvConfig config, std::vector<double> weight, std::vector<double> bias) {
  Shape spatial;
  for (int64_t i = config.channel_axis + 1; i >= 1 && i < static_cast<int64_t>(in.size()); ++i)
    spatial.push_back(in[static_cast<size_t>(i)]);
  ConvRecord<double> r{config, std::move(spatial), std::move(weight), std::move(bias)};
  return make_step(Op::Conv, std::move(config), std::move(r));
}

Step batch_norm_step(int64_t channel_axis, std::vector<double> gamma, std::vector<double> beta,
                     std::vector<double> mean, std::vector<double> var, double eps) {
  const auto channels = static_cast<int64_t>(gamma.size());
  return make_step(Op::BatchNormEval, BatchNormAttrs{channel_axis, channels},
                   BatchNormRecord<double>{std::move(gamma), std::move(beta), std::move(mean), std::move(var), eps});
}

Step layernorm_step(const Shape& in, int64_t axis, std::vector<double> gamma, std::vector<double> beta, double eps) {
  Shape normalized;
  if (axis >= 0 && axis <= static_cast<int64_t>(in.size())) normalized.assign(in.begin() + axis, in.end());
  return make_step(Op::Layernorm, AxisAttrs{axis},
                   LayerNormRecord<double>{std::move(normalized), std::move(gamma), std::move(beta), eps});
}

Result<Shape> check_step(const Step& step, std::span<const Shape> parent_shapes) {
  if (!step.refused.ok()) return step.refused;
  Model mini;
  const auto k = static_cast<int64_t>(parent_shapes.size());
  for (int64_t i = 0; i < k; ++i)
    mini.graph.nodes.push_back(Node{i, {}, Op::Input, NoAttrs{}, parent_shapes[static_cast<size_t>(i)]});
  Node n = step.node;
  n.id = k;
  n.parents.clear();
  for (int64_t i = 0; i < k; ++i) n.parents.push_back(i);
  if (!step.declared) n.out_shape.clear();
  mini.graph.nodes.push_back(n);
  DENOTE_RETURN_IF_ERROR(bare(check_node_structure(mini.graph, static_cast<size_t>(k))));
  auto inferred = infer_shape(n, parent_shapes);
  if (!inferred.ok()) return bare(inferred.status());
  if (!step.declared) mini.graph.nodes.back().out_shape = *inferred;
  store_record(step.record, k, mini.payload, [](double v) { return v; });
  mini.output_ids = {k};
  DENOTE_RETURN_IF_ERROR(bare(check_model(mini)));
  return mini.graph.nodes.back().out_shape;
}

}  // namespace denote
