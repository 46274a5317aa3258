// src/verify/fast_eval.h: a compiled plan for screening candidate points.
#include "verify/fast_eval.h"

#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/plan/planner.h"
#include "denote/plan/registry.h"

namespace denote::verify_detail {

namespace {

template <class S>
class PlanEval final : public FastEval {
 public:
  PlanEval(CompiledPlan<S> plan, Shape shape) : plan_(std::move(plan)), shape_(std::move(shape)) {}
  bool eval(const std::vector<double>& x, std::vector<double>& y) override {
    in_.assign(x.begin(), x.end());
    const InputView<S> view{std::span<const int64_t>(shape_), std::span<const S>(in_)};
    if (!plan_.run(std::span<const InputView<S>>(&view, 1)).ok()) return false;
    const std::span<const S> out = plan_.output(0);
    y.assign(out.begin(), out.end());
    return true;
  }

 private:
  CompiledPlan<S> plan_;
  Shape shape_;
  std::vector<S> in_;
};

template <class S>
std::unique_ptr<FastEval> compile_for(const Model& m, const BoundPlan& bound) {
  const Payload<S> payload = convert_payload<S>(m.payload, [](double v) { return static_cast<S>(v); });
  auto plan = compile_plan<S>(bound, m.graph, payload, std::span<const int64_t>(m.output_ids));
  if (!plan.ok()) return nullptr;
  const Shape shape = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
  return std::make_unique<PlanEval<S>>(std::move(*plan), shape);
}

}  // namespace

std::unique_ptr<FastEval> FastEval::of(const Model& m, const ArithSpec& arith) {
  if (m.graph.input_ids().size() != 1 || m.output_ids.size() != 1 || (!arith.is_f32() && !arith.is_f64())) return nullptr;
  PlanPolicy policy;
  if (!parse_provider_policy("prefer:avx2", policy).ok()) return nullptr;
  auto registry = standard_registry();
  if (!registry.ok()) return nullptr;
  auto plan = plan_graph(m.graph, registry->available(detect_environment()), policy);
  if (!plan.ok()) return nullptr;
  auto bound = bind_plan(*plan, standard_handlers());
  if (!bound.ok()) return nullptr;
  return arith.is_f32() ? compile_for<float>(m, *bound) : compile_for<double>(m, *bound);
}

}  // namespace denote::verify_detail
