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

std::optional<BackendOp> backend_op_of(Op op) {
  using B = BackendOp;
  switch (op) {
    case Op::Input: case Op::Const: case Op::Detach: return std::nullopt;
    case Op::RandUniform: return B::RandUniform;
    case Op::Custom: return B::Custom;
    case Op::Permute: case Op::Transpose: return B::Permute;
    case Op::BroadcastTo: return B::Broadcast;
    case Op::Reshape: case Op::Flatten: return B::Reshape;
    case Op::Concat: return B::Concat;
    case Op::Add: return B::Add;
    case Op::Sub: return B::Sub;
    case Op::MulElem: return B::Mul;
    case Op::MaxElem: return B::Max;
    case Op::MinElem: return B::Min;
    case Op::Div: return B::Div;
    case Op::DivTrunc: return B::DivTrunc;
    case Op::DivFloor: return B::DivFloor;
    case Op::Remainder: return B::Remainder;
    case Op::Pow: return B::Pow;
    case Op::MseLoss: return B::MseLoss;
    case Op::SafeLog: return B::SafeLog;
    case Op::BernoulliMask: return B::BernoulliMask;
    case Op::Abs: return B::Abs;
    case Op::Sqrt: return B::Sqrt;
    case Op::Inv: return B::Inv;
    case Op::Relu: return B::Relu;
    case Op::Tanh: return B::Tanh;
    case Op::Sigmoid: return B::Sigmoid;
    case Op::Exp: return B::Exp;
    case Op::Log: return B::Log;
    case Op::Sin: return B::Sin;
    case Op::Cos: return B::Cos;
    case Op::Softplus: return B::Softplus;
    case Op::Neg: return B::Neg;
    case Op::Rsqrt: return B::Rsqrt;
    case Op::Erf: return B::Erf;
    case Op::Gelu: return B::Gelu;
    case Op::ClampMin: return B::ClampMin;
    case Op::Cast: return B::Cast;
    case Op::ReduceSum: case Op::Sum: return B::ReduceSum;
    case Op::ReduceMean: return B::ReduceMean;
    case Op::Matmul: return B::Matmul;
    case Op::Linear: return B::Linear;
    case Op::Conv: return B::Conv;
    case Op::MaxPool: return B::MaxPool;
    case Op::AvgPool: return B::AvgPool;
    case Op::BatchNormEval: return B::BatchNorm;
    case Op::Softmax: return B::Softmax;
    case Op::LogSoftmax: return B::LogSoftmax;
    case Op::HardMaskedSoftmax: return B::HardMaskedSoftmax;
    case Op::Layernorm: return B::LayerNorm;
  }
  return std::nullopt;
}

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
