// Eager<Ctx> (program/eager.h): each step is checked like a lowered node (check_step), then the op
// table's evaluation rule runs on the parents' values (detail::apply_table_rule, the same rule
// and error channel denote() runs per node).
#include "denote/program/eager.h"

#include <fmt/format.h>

#include "../eval/node_rule.h"

// node_rule.h declares the F64/F32/Binary instantiations; RealContext's is made by
// DENOTE_INSTANTIATE_EVAL in src/eval/eval_real.cc as well.
namespace denote::detail {
extern template Result<Tensor<RealScalar>> apply_table_rule<RealContext>(RealContext&,
                                                                        const rules::EvalArgs<RealScalar>&);
}  // namespace denote::detail

namespace denote {

template <class Ctx>
Status Eager<Ctx>::fail(const Step& step, int64_t id, const Status& s) {
  Status e = Status::error(s.code(), s.detail());
  if (!s.field().empty()) e = e.with_field(s.field());
  first_error_ = e.with_node(id, fmt::format("program step {} ({}): {}", id, op_tag(step.node.op), s.detail()));
  return first_error_;
}

template <class Ctx>
typename Eager<Ctx>::Value Eager<Ctx>::emit(Step step, std::vector<Value> parents) {
  const int64_t id = steps_++;
  if (!first_error_.ok()) return Value{};
  step.node.id = id;
  auto value = run(step, parents);
  if (value.ok()) return std::move(*value);
  (void)fail(step, id, value.status());
  return Value{};
}

template <class Ctx>
Result<typename Eager<Ctx>::Value> Eager<Ctx>::run(Step& step, const std::vector<Value>& parents) {
  std::vector<Shape> shapes;
  for (const Value& p : parents) shapes.push_back(p.shape);
  DENOTE_ASSIGN_OR_RETURN(const Shape shape, check_step(step, shapes));
  const int64_t count = numel(shape);
  if (count > options_.max_elements)
    return Status::error(ErrorCode::kResource, fmt::format("{} elements exceed the evaluation limit of {}", count,
                                                           options_.max_elements))
        .with_field("outShape");
  const Value* supplied = nullptr;
  if (step.node.op == Op::Input) {
    if (next_input_ >= inputs_.size())
      return Status::error(ErrorCode::kInvalidInput, fmt::format("no input value left: {} supplied", inputs_.size()))
          .with_field("input");
    supplied = &inputs_[next_input_++];
  }
  step.node.out_shape = shape;
  Payload<Scalar> payload;
  store_record(step.record, step.node.id, payload, [&](double v) { return ctx_.from_double(v); });
  std::vector<const Value*> ptrs;
  for (const Value& p : parents) ptrs.push_back(&p);
  const rules::EvalArgs<Scalar> args{step.node, std::span<const Value* const>(ptrs), payload, shape, supplied, options_};
  DENOTE_ASSIGN_OR_RETURN(Value value, detail::apply_table_rule(ctx_, args));
  if (value.shape != shape || value.data.size() != static_cast<size_t>(count))
    return Status::error(ErrorCode::kInternal,
                         "produced shape mismatch: produced=" + to_string(value.shape) + ", inferred=" + to_string(shape))
        .with_field("outShape");
  return value;
}

template class Eager<F64Context>;
template class Eager<F32Context>;
template class Eager<BinaryContext>;
template class Eager<RealContext>;

}  // namespace denote
