// The reference provider: one capsule per backend op on the cpu, computed by the generic evaluator's
// rules (fixed-left reductions, accumulation in the value type). Every capsule is checked: shape and
// layout by the evaluator driver's runtime guards, values by the evaluator's test suites.
#include <fmt/format.h>

#include "../eval/evaluator_impl.h"
#include "cpu_capsule.h"
#include "denote/providers/providers.h"
#include "reference_kernel.h"
#include "reference_prepared.h"

namespace denote {

template <class S>
Result<Tensor<S>> reference_kernel(const KernelArgs<S>& k) {
  NativeContextFor<S> ctx;
  const rules::EvalArgs<S> args{k.node, k.parents, k.payload, k.out_shape, nullptr, k.options};
  return detail::eval_fn<NativeContextFor<S>>(k.node.op)(ctx, args);
}

template Result<Tensor<double>> reference_kernel<double>(const KernelArgs<double>&);
template Result<Tensor<float>> reference_kernel<float>(const KernelArgs<float>&);

namespace {

// Backend ops whose reference rule sums: a left fold from zero in the value type.
bool reduces(BackendOp op) {
  using B = BackendOp;
  switch (op) {
    case B::ReduceSum: case B::ReduceMean: case B::Matmul: case B::Linear: case B::Conv: case B::MseLoss:
    case B::Softmax: case B::LogSoftmax: case B::HardMaskedSoftmax: case B::LayerNorm: case B::AvgPool:
      return true;
    default:
      return false;
  }
}

KernelCapsule reference_capsule(BackendOp op) {
  KernelCapsule c = cpu_capsule::checked("reference", op, false);
  c.layout = {"dense row-major tensors in and out; element count = numel(shape)",
              {EvidenceKind::RuntimeGuard, "evaluator driver: produced element count check"}};
  c.value = {"the IR denotation of the op (docs/OPS.md) in the run's scalar context",
             {EvidenceKind::TestSuite, "denote_tests: eval_*_test, golden_torch_test, seed_example_test"}};
  c.numerics.reduction = reduces(op) ? Reduction::FixedLeft : Reduction::NotApplicable;
  c.numerics.accumulation = reduces(op) ? "value" : "n/a";
  c.numerics.tolerance = "exact (this is the reference)";
  return c;
}

}  // namespace

CapsuleModule reference_module() {
  CapsuleModule m{"reference.cpu", "reference", "cpu", {}};
  for (int i = 0; i < kNumBackendOps; ++i) m.capsules.push_back(reference_capsule(static_cast<BackendOp>(i)));
  return m;
}

std::vector<KernelHandler> reference_handlers() {
  std::vector<KernelHandler> out;
  for (int i = 0; i < kNumBackendOps; ++i) {
    const auto op = static_cast<BackendOp>(i);
    out.push_back(KernelHandler{fmt::format("reference.{}", backend_op_name(op)), op, "reference", "cpu",
                                &reference_kernel<double>, &reference_kernel<float>, &reference_prepare<double>,
                                &reference_prepare<float>});
  }
  return out;
}

void register_reference_provider(ProviderList& out) {
  out.push_back(ProviderEntry{"reference", &reference_module, &reference_handlers, &cpu_capsule::cpu_only});
}

}  // namespace denote
