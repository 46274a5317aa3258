// The CLI's kernel-plan helpers: planning a model under the command-line policy strings, and
// executing it through the bound plan node by node (`denote run --provider --trace`) or compiled
// (`denote run --provider`, `denote bench --provider`).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/plan/planner.h"
#include "denote/scalar/arith.h"
#include "denote/tensor/tensor.h"

namespace denote::cli {

// The devices a plan can name (--device).
inline constexpr const char* kKnownDevices[] = {"cpu", "cuda"};

// The policy from --device / --provider / --assurance; a malformed string or an unknown device is
// an error naming the option.
Result<PlanPolicy> policy_from_options(const std::string& device, const std::string& provider,
                                       const std::string& assurance);

// Plans `m` with the available maintained modules of this build and machine.
Result<GraphKernelPlan> plan_model(const Model& m, const PlanPolicy& policy);

// Plans, binds and executes `m` in `arith` (f64 or f32 only: "--provider runs a kernel plan in f64
// or f32 only, not --arith A"); the value table widened to double.
Result<std::vector<Tensor<double>>> run_plan(const Model& m, const std::vector<Tensor<double>>& inputs,
                                             const std::string& provider, const ArithSpec& arith,
                                             const EvalOptions& options = {});

// A compiled plan (denote/plan/compiled.h) of `m` for `denote bench` and `denote run --provider`:
// `call` runs it once on the inputs (converted to f64 or f32 once, here); `outputs` widens the last
// call's outputs to double (in the order of m.output_ids); `report` is the compiled plan's step list.
struct CompiledRun {
  std::function<Status()> call;
  std::function<std::vector<Tensor<double>>()> outputs;
  std::string report;
  int threads = 1;
};

// Plans `m` with the --provider policy, binds and compiles it with `threads` threads in `arith` (f64
// or f32 only, error as run_plan's).
Result<CompiledRun> compile_run(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& provider,
                                const ArithSpec& arith, int threads, const EvalOptions& options = {});

// `denote run --provider` without --trace: compile_run on one thread, one call; a table with one
// entry per node in which only the outputs hold values (as denote_outputs'), widened to double.
// The values equal run_plan's bit for bit where the plan's capsules are exact (the reference
// provider), and within each capsule's stated tolerance otherwise.
Result<std::vector<Tensor<double>>> run_compiled(const Model& m, const std::vector<Tensor<double>>& inputs,
                                                 const std::string& provider, const ArithSpec& arith,
                                                 const EvalOptions& options = {});

}  // namespace denote::cli
