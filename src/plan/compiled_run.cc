// Running a compiled plan (denote/plan/compiled.h): the inputs are checked as denote_all checks them,
// then every step runs its chunks (on the pool when it has more than one); generic steps copy their
// parents into tensors they keep and call the handler's ordinary kernel.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "compiled_impl.h"
#include "../eval/walk.h"
#include "../ops/eval_args.h"

namespace denote {

template <class S>
Status CompiledPlanImpl<S>::run_generic(Step<S>& st) {
  for (size_t i = 0; i < st.parent_values.size(); ++i)
    std::copy_n(st.in_ptrs[i], st.parent_values[i].data.size(), st.parent_values[i].data.begin());
  const Shape& out_shape = st.node.out_shape;
  Result<Tensor<S>> v = st.generic(KernelArgs<S>{st.node, std::span<const Tensor<S>* const>(st.parent_ptrs), payload,
                                                 out_shape, options});
  if (!v.ok()) return walk::attach_node(st.node, v.status(), "IR eval");
  if (v->shape != out_shape || v->data.size() != static_cast<size_t>(numel(out_shape)))
    return walk::node_error(st.node, ErrorCode::kShape, "IR eval",
                            "produced shape mismatch: produced=" + to_string(v->shape) +
                                ", declared=" + to_string(out_shape),
                            "outShape");
  std::copy(v->data.begin(), v->data.end(), slot_ptr[static_cast<size_t>(st.out_slot)]);
  return ok_status();
}

template <class S>
Status CompiledPlanImpl<S>::run_step(Step<S>& st) {
  for (size_t i = 0; i < st.in_slots.size(); ++i) st.in_ptrs[i] = slot_ptr[static_cast<size_t>(st.in_slots[i])];
  if (st.generic) return run_generic(st);
  S* out = slot_ptr[static_cast<size_t>(st.out_slot)];
  const std::span<const S* const> in(st.in_ptrs);
  const PreparedKernel<S>& k = st.prepared;
  if (!pool || k.chunks <= 1) {
    for (int64_t c = 0; c < k.chunks; ++c) k.run(KernelCall<S>{in, out, c, scratch[0].data(), &st.epilogue});
    return ok_status();
  }
  struct Job {
    const PreparedKernel<S>* k;
    std::span<const S* const> in;
    S* out;
    std::vector<std::vector<S>>* scratch;
    const Epilogue<S>* epilogue;
  } job{&k, in, out, &scratch, &st.epilogue};
  pool->parallel_for(
      k.chunks,
      [](void* ctx, int64_t c, int worker) {
        const Job& j = *static_cast<const Job*>(ctx);
        j.k->run(KernelCall<S>{j.in, j.out, c, (*j.scratch)[static_cast<size_t>(worker)].data(), j.epilogue});
      },
      &job);
  return ok_status();
}

template <class S>
Status CompiledPlanImpl<S>::bind_input(size_t k, std::span<const int64_t> shape, const S* data, size_t count) {
  const Node& n = graph.nodes[static_cast<size_t>(input_nodes[k])];
  if (!std::equal(shape.begin(), shape.end(), n.out_shape.begin(), n.out_shape.end()))
    return walk::attach_node(n, rules::eval_error("input shape mismatch: expected " + to_string(n.out_shape) +
                                                      ", got " + to_string(Shape(shape.begin(), shape.end())), "input"),
                             "IR eval");
  if (count != static_cast<size_t>(numel(n.out_shape)))
    return walk::attach_node(n, rules::eval_error(fmt::format("input has {} values for shape {}", count,
                                                              to_string(n.out_shape)), "input"),
                             "IR eval");
  for (size_t i = 0; i < slots.size(); ++i)
    if (slots[i].kind == SlotKind::Input && slots[i].index == static_cast<int64_t>(k))
      slot_ptr[i] = const_cast<S*>(data);  // inputs are only read
  return ok_status();
}

template <class S>
template <class In>
Status CompiledPlanImpl<S>::run(std::span<const In> inputs) {
  if (inputs.size() != input_nodes.size())
    return Status::error(ErrorCode::kInvalidInput,
                         fmt::format("IR eval: expected {} input tensors, got {}", input_nodes.size(), inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k)
    DENOTE_RETURN_IF_ERROR(bind_input(k, std::span<const int64_t>(inputs[k].shape), inputs[k].data.data(),
                                      inputs[k].data.size()));
  for (Step<S>& st : steps) DENOTE_RETURN_IF_ERROR(run_step(st));
  return ok_status();
}

template <class S>
CompiledPlan<S>::CompiledPlan() = default;
template <class S>
CompiledPlan<S>::CompiledPlan(std::unique_ptr<CompiledPlanImpl<S>> impl) : impl_(std::move(impl)) {}
template <class S>
CompiledPlan<S>::CompiledPlan(CompiledPlan&&) noexcept = default;
template <class S>
CompiledPlan<S>& CompiledPlan<S>::operator=(CompiledPlan&&) noexcept = default;
template <class S>
CompiledPlan<S>::~CompiledPlan() = default;

template <class S>
Status CompiledPlan<S>::run(std::span<const Tensor<S>> inputs) {
  if (!impl_) return error_status("compile plan: the plan is empty (compile_plan)");
  return impl_->run(inputs);
}

template <class S>
Status CompiledPlan<S>::run(std::span<const InputView<S>> inputs) {
  if (!impl_) return error_status("compile plan: the plan is empty (compile_plan)");
  return impl_->run(inputs);
}

template <class S>
size_t CompiledPlan<S>::output_count() const {
  return impl_ ? impl_->outputs.size() : 0;
}

template <class S>
int64_t CompiledPlan<S>::output_id(size_t k) const {
  return impl_->outputs.at(k);
}

template <class S>
const Shape& CompiledPlan<S>::output_shape(size_t k) const {
  return impl_->graph.nodes[static_cast<size_t>(impl_->outputs.at(k))].out_shape;
}

template <class S>
std::span<const S> CompiledPlan<S>::output(size_t k) const {
  const int slot = impl_->node_slot[static_cast<size_t>(impl_->outputs.at(k))];
  return {impl_->slot_ptr[static_cast<size_t>(slot)], static_cast<size_t>(numel(output_shape(k)))};
}

template <class S>
std::vector<Tensor<S>> CompiledPlan<S>::outputs() const {
  std::vector<Tensor<S>> out;
  for (size_t k = 0; k < output_count(); ++k) {
    const std::span<const S> v = output(k);
    out.emplace_back(output_shape(k), std::vector<S>(v.begin(), v.end()));
  }
  return out;
}

template <class S>
int CompiledPlan<S>::threads() const {
  return impl_ ? impl_->threads : 1;
}

template <class S>
int64_t CompiledPlan<S>::arena_bytes() const {
  int64_t bytes = 0;
  if (impl_)
    for (const auto& b : impl_->buffers) bytes += static_cast<int64_t>(b.size() * sizeof(S));
  return bytes;
}

template <class S>
int64_t CompiledPlan<S>::generic_steps() const {
  int64_t n = 0;
  if (impl_)
    for (const Step<S>& st : impl_->steps) n += st.generic ? 1 : 0;
  return n;
}

template <class S>
std::string CompiledPlan<S>::report() const {
  std::string out;
  if (!impl_) return out;
  for (size_t s = 0; s < impl_->steps.size(); ++s) {
    const Step<S>& st = impl_->steps[s];
    const Slot& sl = impl_->slots[static_cast<size_t>(st.out_slot)];
    const std::string how = st.generic ? "generic, allocates per call"
                                       : fmt::format("{} chunk{}", st.prepared.chunks, st.prepared.chunks == 1 ? "" : "s");
    out += fmt::format("step {}: {} -> buffer {} ({}, {})\n", s, st.label, sl.index, st.kernel, how);
  }
  out += fmt::format("{} buffers, {} bytes; {} thread{}\n", impl_->buffers.size(), arena_bytes(), impl_->threads,
                     impl_->threads == 1 ? "" : "s");
  return out;
}

template class CompiledPlan<double>;
template class CompiledPlan<float>;
template struct CompiledPlanImpl<double>;
template struct CompiledPlanImpl<float>;

}  // namespace denote
