// Derivatives of a graph, in any scalar context (F64Context, F32Context, BinaryContext,
// RealContext): reverse mode (vjp: the gradient of sum(C * output) with respect to every input
// and, on request, the payload parameters) and forward mode (jvp: the directional derivative of
// the output along tangents of the inputs). Every op's rules come from the diff column of the op
// table (include/denote/ir/ops.def, src/autodiff/); all arithmetic is the context's own, so a
// gradient in bfloat16 rounds every step to bfloat16. docs/AUTODIFF.md has the conventions at
// non-differentiable points (PyTorch's).
//
//   F64Context ctx;
//   Result<Gradients<double>> g = vjp(graph, payload, inputs, /*output_id=*/5, nullptr, ctx);
//   // g->inputs[0]: d sum(y) / d x0, shaped like input 0
//   Result<Tangent<double>> d = jvp(graph, payload, inputs, tangents, 5, ctx);
//   // d->tangent: J(x) t, shaped like the output
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"
#include "denote/tensor/tensor.h"

namespace denote {

// What vjp differentiates with respect to.
enum class GradWrt : uint8_t { Inputs, Params, All };
// "inputs", "params", "all"; nullopt otherwise.
std::optional<GradWrt> parse_grad_wrt(std::string_view text);

// How vjp computes linear nodes. Exact: the context's arithmetic in the forward rule's fixed order
// (bit-reproducible; every context). Blas: in F32Context and F64Context, each linear node's forward
// value and VJP are one OpenBLAS gemm from 4 rows up (blocked sums: within the gemm error bound of the exact order,
// not bit for bit); other contexts, other ops and a build without OpenBLAS use the exact rules.
enum class GradKernels : uint8_t { Exact, Blas };
// "exact", "openblas"; nullopt otherwise.
std::optional<GradKernels> parse_grad_kernels(std::string_view text);
// Whether this build has the OpenBLAS path (libopenblas-dev at configure time).
bool grad_blas_available();

struct GradOptions {
  GradWrt wrt = GradWrt::Inputs;
  GradKernels kernels = GradKernels::Exact;
  EvalOptions eval;
  // A surrogate, not a derivative: w > 0 lets the cotangent through the step ops (is_step_op: sign, floor,
  // ceil, round; their derivative is 0 wherever it exists) as 1/w where the op's input x has |x| < w, 0
  // elsewhere (a straight-through estimator, auto_LiRPA's SignMerge backward), for attacks on binarized
  // networks (verify's descents). f32 and f64 contexts only (the others keep the zero); 0 (default): none.
  double step_window = 0;
};

// The gradient of one payload record field of one node.
template <class S>
struct ParamGrad {
  int64_t node = -1;
  std::string field;  // "weight", "bias" (linear, conv; batch_norm_eval and layernorm: gamma, beta), "value" (const)
  Shape shape;
  std::vector<S> values;  // row-major
};

template <class S>
struct Gradients {
  int64_t output = -1;
  Tensor<S> value;                 // the output's value
  std::vector<int64_t> input_ids;  // Graph::input_ids(), the order of `inputs`
  std::vector<Tensor<S>> inputs;   // d sum(C * y) / d input k (empty unless wrt inputs)
  // One entry per parameter field the output depends on, by node id then field (wrt params only);
  // a parameter the output does not read has no entry.
  std::vector<ParamGrad<S>> params;
};

template <class S>
struct Tangent {
  Tensor<S> value;    // the output's value
  Tensor<S> tangent;  // d output along the input tangents, shaped like the output
};

// Reverse mode. `cotangent`: C, shaped like the output (nullptr: all ones). The output and what
// it depends on are evaluated once (the tape), then every node's VJP runs from the output back.
// Errors: the evaluation's, a cotangent of the wrong shape, and `IR grad: node {i}: ...` where a
// gradient must flow through an op without a derivative (random sources, custom bodies, casts to
// integer dtypes).
template <class Ctx>
Result<Gradients<typename Ctx::Scalar>> vjp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                            std::span<const Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                            const Tensor<typename Ctx::Scalar>* cotangent, Ctx& ctx,
                                            const GradOptions& options = {});

// vjp without copying the inputs into the tape: the caller lends its input tensors, which are moved
// into the tape for the call and moved back before it returns (on success and on error alike), so
// `inputs` holds the same tensors afterwards. For callers that differentiate large batches many
// times (a 1024 x 784 f64 batch is 6.4 MB, a copy per call).
template <class Ctx>
Result<Gradients<typename Ctx::Scalar>> vjp_lent(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                 std::span<Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                                 const Tensor<typename Ctx::Scalar>* cotangent, Ctx& ctx,
                                                 const GradOptions& options = {});

// Forward mode: `tangents` has one tensor per input (Graph::input_ids() order), shaped like it.
// One forward walk carries values and tangents together and frees both after their last reader.
template <class Ctx>
Result<Tangent<typename Ctx::Scalar>> jvp(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                          std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                          std::span<const Tensor<typename Ctx::Scalar>> tangents, int64_t output_id,
                                          Ctx& ctx, const EvalOptions& options = {});

#define DENOTE_DECLARE_GRAD(Ctx)                                                                                 \
  extern template Result<Gradients<Ctx::Scalar>> vjp<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,             \
                                                          std::span<const Tensor<Ctx::Scalar>>, int64_t,         \
                                                          const Tensor<Ctx::Scalar>*, Ctx&, const GradOptions&); \
  extern template Result<Gradients<Ctx::Scalar>> vjp_lent<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,        \
                                                               std::span<Tensor<Ctx::Scalar>>, int64_t,          \
                                                               const Tensor<Ctx::Scalar>*, Ctx&,                 \
                                                               const GradOptions&);                              \
  extern template Result<Tangent<Ctx::Scalar>> jvp<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,               \
                                                        std::span<const Tensor<Ctx::Scalar>>,                    \
                                                        std::span<const Tensor<Ctx::Scalar>>, int64_t, Ctx&,     \
                                                        const EvalOptions&);
DENOTE_DECLARE_GRAD(F64Context)
DENOTE_DECLARE_GRAD(F32Context)
DENOTE_DECLARE_GRAD(BinaryContext)
DENOTE_DECLARE_GRAD(RealContext)
#undef DENOTE_DECLARE_GRAD

}  // namespace denote
