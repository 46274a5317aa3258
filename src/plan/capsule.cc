// Backend op names, the IR -> backend op map, and the capsule enums' names.
#include "denote/plan/capsule.h"

#include <array>

namespace denote {

namespace {

constexpr std::array<std::string_view, kNumBackendOps> kBackendNames = {
#define DENOTE_BACKEND_NAME(name, text) text,
    DENOTE_BACKEND_OPS(DENOTE_BACKEND_NAME)
#undef DENOTE_BACKEND_NAME
};

}  // namespace

std::string_view backend_op_name(BackendOp op) { return kBackendNames[static_cast<size_t>(op)]; }

std::optional<BackendOp> backend_op_from_name(std::string_view name) {
  for (size_t i = 0; i < kBackendNames.size(); ++i)
    if (kBackendNames[i] == name) return static_cast<BackendOp>(i);
  return std::nullopt;
}

namespace {

// The IR op -> backend op column, one row per op in ops.def order (checked at compile time below);
// kNone: no runtime work (input, const, detach).
struct BackendRow {
  Op op;
  std::optional<BackendOp> backend;
};
constexpr std::optional<BackendOp> kNone = std::nullopt;
using B = BackendOp;
constexpr BackendRow kBackendOf[] = {
    {Op::Input, kNone},
    {Op::Const, kNone},
    {Op::RandUniform, B::RandUniform},
    {Op::Custom, B::Custom},
    {Op::Permute, B::Permute},
    {Op::Transpose, B::Permute},
    {Op::Detach, kNone},
    {Op::BroadcastTo, B::Broadcast},
    {Op::Reshape, B::Reshape},
    {Op::Flatten, B::Reshape},
    {Op::Concat, B::Concat},
    {Op::Gather, B::Gather},
    {Op::Add, B::Add},
    {Op::Sub, B::Sub},
    {Op::MulElem, B::Mul},
    {Op::MaxElem, B::Max},
    {Op::MinElem, B::Min},
    {Op::Div, B::Div},
    {Op::DivTrunc, B::DivTrunc},
    {Op::DivFloor, B::DivFloor},
    {Op::Remainder, B::Remainder},
    {Op::Pow, B::Pow},
    {Op::MseLoss, B::MseLoss},
    {Op::SafeLog, B::SafeLog},
    {Op::BernoulliMask, B::BernoulliMask},
    {Op::Abs, B::Abs},
    {Op::Sqrt, B::Sqrt},
    {Op::Inv, B::Inv},
    {Op::Relu, B::Relu},
    {Op::Tanh, B::Tanh},
    {Op::Sigmoid, B::Sigmoid},
    {Op::Exp, B::Exp},
    {Op::Log, B::Log},
    {Op::Sin, B::Sin},
    {Op::Cos, B::Cos},
    {Op::Softplus, B::Softplus},
    {Op::Neg, B::Neg},
    {Op::Rsqrt, B::Rsqrt},
    {Op::Erf, B::Erf},
    {Op::Gelu, B::Gelu},
    {Op::ClampMin, B::ClampMin},
    {Op::Cast, B::Cast},
    {Op::MxCast, B::MxCast},
    {Op::Floor, B::Floor},
    {Op::Ceil, B::Ceil},
    {Op::Round, B::Round},
    {Op::Sign, B::Sign},
    {Op::ReduceSum, B::ReduceSum},
    {Op::ReduceMean, B::ReduceMean},
    {Op::Sum, B::ReduceSum},
    {Op::Matmul, B::Matmul},
    {Op::Linear, B::Linear},
    {Op::Conv, B::Conv},
    {Op::MaxPool, B::MaxPool},
    {Op::AvgPool, B::AvgPool},
    {Op::BatchNormEval, B::BatchNorm},
    {Op::Softmax, B::Softmax},
    {Op::LogSoftmax, B::LogSoftmax},
    {Op::HardMaskedSoftmax, B::HardMaskedSoftmax},
    {Op::Layernorm, B::LayerNorm},
};

constexpr bool rows_follow_ops_def() {
  if (std::size(kBackendOf) != static_cast<size_t>(kNumOps)) return false;
  for (size_t i = 0; i < std::size(kBackendOf); ++i)
    if (kBackendOf[i].op != static_cast<Op>(i)) return false;
  return true;
}
static_assert(rows_follow_ops_def(), "kBackendOf must have one row per op, in ops.def order");

}  // namespace

std::optional<BackendOp> backend_op_of(Op op) { return kBackendOf[static_cast<size_t>(op)].backend; }

std::string_view trust_name(Trust t) { return t == Trust::Checked ? "checked" : "trusted-external"; }

std::string_view reduction_name(Reduction r) {
  switch (r) {
    case Reduction::FixedLeft: return "fixed-left";
    case Reduction::ImplementationDefined: return "implementation-defined";
    case Reduction::NotApplicable: return "n/a";
  }
  return "n/a";
}

std::string describe(const Evidence& e) {
  switch (e.kind) {
    case EvidenceKind::RuntimeGuard: return "runtime guard: " + e.name;
    case EvidenceKind::TestSuite: return "test suite: " + e.name;
    case EvidenceKind::TrustedBoundary: return "trusted boundary: " + e.name;
  }
  return e.name;
}

bool bit_identical_policies(const NumericalPolicy& a, const NumericalPolicy& b) {
  auto exact = [](const NumericalPolicy& p) {
    return p.reduction == Reduction::NotApplicable || p.reduction == Reduction::FixedLeft;
  };
  if (!exact(a) || !exact(b)) return false;
  if (a.reduction == Reduction::NotApplicable && b.reduction == Reduction::NotApplicable) return true;
  return a.reduction == b.reduction && a.accumulation == b.accumulation;
}

}  // namespace denote
