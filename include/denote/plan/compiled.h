// Compiled plans: a bound kernel plan turned, once, into a list of steps over buffers the plan owns,
// for repeated calls (serving, `denote bench`). Compiling
//   - keeps only the nodes the outputs need;
//   - runs each node through its handler's prepared form (denote/plan/prepared.h) when it has one,
//     else through the handler's ordinary kernel (a "generic" step, which allocates per call);
//   - makes reshape / flatten views of their parent's buffer (no copy);
//   - fuses an exact unary elementwise node (relu, tanh, ...) into the output pass of the kernel that
//     produces its only parent (linear, conv, batch_norm, elementwise, pooling: bias + relu in the
//     GEMM's epilogue) and chains consecutive ones;
//   - assigns intermediate values to arena buffers by liveness (a buffer is reused once every reader
//     of its value has run); every buffer is allocated at compile time, so a call allocates nothing
//     when every step is prepared;
//   - runs each step's chunks on a thread pool of `threads` threads. Chunks are fixed by the shapes,
//     so a plan's results are bit-identical for every thread count.
// Values equal execute_plan's for the same bound plan: bit for bit for exact capsules and the
// reference provider, within the capsule's tolerance for implementation-defined contractions.
//
//   DENOTE_ASSIGN_OR_RETURN(CompiledPlan<float> cp, compile_plan<float>(bound, g, payload, outputs, {.threads = 2}));
//   DENOTE_RETURN_IF_ERROR(cp.run(inputs));
//   std::span<const float> y = cp.output(0);
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/plan/executor.h"

namespace denote {

struct CompileOptions {
  int threads = 1;   // 1 .. 256; the calling thread is one of them
  bool fuse = true;  // false: one step per node (for tests and reports)
};

template <class S>
struct CompiledPlanImpl;  // src/plan/compiled_impl.h

// An input read in place (no copy): its shape and its row-major values, both owned by the caller and
// alive for the call (the Python module passes a C-contiguous numpy array's buffer this way).
template <class S>
struct InputView {
  std::span<const int64_t> shape;
  std::span<const S> data;
};

template <class S>
class CompiledPlan {
 public:
  CompiledPlan();
  explicit CompiledPlan(std::unique_ptr<CompiledPlanImpl<S>> impl);
  CompiledPlan(CompiledPlan&&) noexcept;
  CompiledPlan& operator=(CompiledPlan&&) noexcept;
  ~CompiledPlan();

  // One call: the inputs in the order of the graph's input nodes, each of its node's declared shape
  // (errors as denote_all's: "IR eval: expected 1 inputs, got 2", "IR eval: node 0: input shape
  // mismatch: expected [5], got [4] (...)"). Outputs stay valid until the next run.
  Status run(std::span<const Tensor<S>> inputs);
  // The same call on inputs read in place (the same checks and errors).
  Status run(std::span<const InputView<S>> inputs);
  size_t output_count() const;
  int64_t output_id(size_t k) const;
  const Shape& output_shape(size_t k) const;
  std::span<const S> output(size_t k) const;
  std::vector<Tensor<S>> outputs() const;  // copies

  int threads() const;
  int64_t arena_bytes() const;   // bytes of the intermediate buffers (inputs and constants excluded)
  int64_t generic_steps() const; // steps that run a handler's ordinary kernel (and allocate per call)
  // One line per step: "step 2: linear[3] + relu[4] -> buffer 1 (openblas.linear, 8 chunks)".
  std::string report() const;

 private:
  std::unique_ptr<CompiledPlanImpl<S>> impl_;
};

// Compiles `bound` (bind_plan) for graph g with `payload` (copied: the plan owns its parameters)
// and the outputs `output_ids`. Runs check_well_formed and check_shapes; evaluates const nodes once;
// errors as denote_all's for the graph and payload, "kernel plan: ..." as execute_plan's when the
// plan does not fit the graph, "compile plan: threads N: expected 1 to 256" for a bad thread count,
// and the walker's memory-budget error when the arena exceeds options' budget.
template <class S>
Result<CompiledPlan<S>> compile_plan(const BoundPlan& bound, const Graph& g, const Payload<S>& payload,
                                     std::span<const int64_t> output_ids, const CompileOptions& compile = {},
                                     const EvalOptions& options = {});

extern template class CompiledPlan<double>;
extern template class CompiledPlan<float>;
extern template Result<CompiledPlan<double>> compile_plan<double>(const BoundPlan&, const Graph&, const Payload<double>&,
                                                                  std::span<const int64_t>, const CompileOptions&,
                                                                  const EvalOptions&);
extern template Result<CompiledPlan<float>> compile_plan<float>(const BoundPlan&, const Graph&, const Payload<float>&,
                                                                std::span<const int64_t>, const CompileOptions&,
                                                                const EvalOptions&);

}  // namespace denote
