// Kernel capsules: the metadata a kernel planner chooses between. A capsule names one backend op on
// one device from one provider and states its contracts (shape, layout, value), the evidence behind
// each, and its numerical policy. A capsule holds no code: running it needs a bound handler
// (denote/plan/executor.h). See docs/PLANNING.md.
//
//   std::optional<BackendOp> op = backend_op_of(Op::Sum);   // BackendOp::ReduceSum
//   backend_op_name(*op);                                    // "reduce_sum"
//   backend_op_of(Op::Input);                                // nullopt: no runtime work
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "denote/ir/op.h"

namespace denote {

// The backend op vocabulary, a closed set (snake_case names). Besides the ops the IR maps to, it has
// the integer-meaning ops (div_trunc, div_floor, remainder, pow, neg, clamp_min) and the float-only
// div, rsqrt, erf, and custom for payload bodies.
#define DENOTE_BACKEND_OPS(X)                                                                                \
  X(Add, "add") X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(DivTrunc, "div_trunc") X(DivFloor, "div_floor")  \
  X(Remainder, "remainder") X(Pow, "pow") X(Neg, "neg") X(Abs, "abs") X(Sqrt, "sqrt") X(Rsqrt, "rsqrt")      \
  X(Inv, "inv") X(Max, "max") X(Min, "min") X(ClampMin, "clamp_min") X(Relu, "relu") X(Gelu, "gelu")          \
  X(Erf, "erf") X(Sigmoid, "sigmoid") X(Tanh, "tanh") X(Softplus, "softplus") X(Exp, "exp") X(Log, "log")     \
  X(Sin, "sin") X(Cos, "cos") X(SafeLog, "safe_log") X(Softmax, "softmax") X(LogSoftmax, "log_softmax")       \
  X(HardMaskedSoftmax, "hard_masked_softmax") X(ReduceSum, "reduce_sum") X(ReduceMean, "reduce_mean")         \
  X(Reshape, "reshape") X(Permute, "permute") X(Broadcast, "broadcast") X(Concat, "concat")                   \
  X(Matmul, "matmul") X(Linear, "linear") X(MseLoss, "mse_loss") X(LayerNorm, "layer_norm")                   \
  X(BatchNorm, "batch_norm") X(Conv, "conv") X(MaxPool, "max_pool") X(AvgPool, "avg_pool")                    \
  X(RandUniform, "rand_uniform") X(BernoulliMask, "bernoulli_mask") X(Cast, "cast") X(Custom, "custom")  \
  X(Gather, "gather") X(MxCast, "mx_cast") X(Floor, "floor") X(Ceil, "ceil") X(Round, "round") X(Sign, "sign")

enum class BackendOp : uint8_t {
#define DENOTE_BACKEND_ENUM(name, text) name,
  DENOTE_BACKEND_OPS(DENOTE_BACKEND_ENUM)
#undef DENOTE_BACKEND_ENUM
};

inline constexpr int kNumBackendOps = 0
#define DENOTE_BACKEND_COUNT(name, text) +1
    DENOTE_BACKEND_OPS(DENOTE_BACKEND_COUNT)
#undef DENOTE_BACKEND_COUNT
    ;

std::string_view backend_op_name(BackendOp op);
std::optional<BackendOp> backend_op_from_name(std::string_view name);
// The backend op of an IR op; nullopt for input, const and detach (no runtime work).
std::optional<BackendOp> backend_op_of(Op op);

enum class Trust : uint8_t { Checked, TrustedExternal };
std::string_view trust_name(Trust t);  // "checked" | "trusted-external"

enum class Reduction : uint8_t { FixedLeft, ImplementationDefined, NotApplicable };
std::string_view reduction_name(Reduction r);  // "fixed-left" | "implementation-defined" | "n/a"

// What backs a contract: a check that runs at run time, a named test suite, or a stated trust
// boundary (with its reason).
enum class EvidenceKind : uint8_t { RuntimeGuard, TestSuite, TrustedBoundary };
struct Evidence {
  EvidenceKind kind = EvidenceKind::RuntimeGuard;
  std::string name;  // guard name, test suite name, or the reason for trusting the boundary
};
std::string describe(const Evidence& e);  // "runtime guard: ...", "test suite: ...", "trusted boundary: ..."

struct Contract {
  std::string statement;
  Evidence evidence;
};

struct NumericalPolicy {
  Reduction reduction = Reduction::NotApplicable;
  // The format sums accumulate in: "value" (the value type of the run: binary64 for f64, binary32
  // for f32) or "n/a". Two capsules compute bit-identical values when both have no reduction or a
  // fixed-left one with the same accumulation format.
  std::string accumulation = "value";
  // The documented error bound against the reference when results may differ ("exact" otherwise).
  std::string tolerance = "exact";
};

struct KernelCapsule {
  std::string name;      // "provider.op", e.g. "openblas.linear"
  BackendOp op = BackendOp::Add;
  std::string provider;  // reference | openblas | cuda
  std::string device;    // cpu | cuda
  Trust trust = Trust::Checked;
  bool supports_forward = true;
  std::string vjp_mode = "none";  // how a reverse pass would be obtained; no provider has one yet
  Contract shape, layout, value;
  NumericalPolicy numerics;
};

// True when the two capsules must produce bit-identical values (see NumericalPolicy).
bool bit_identical_policies(const NumericalPolicy& a, const NumericalPolicy& b);

}  // namespace denote
