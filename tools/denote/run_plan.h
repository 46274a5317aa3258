// The CLI's kernel-plan helpers: planning a model under the command-line policy strings, and
// executing it through the bound plan (`denote plan`, `denote run --provider`).
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

// A compiled plan (denote/plan/compiled.h) of `m` for `denote bench`: `call` runs it once on the
// inputs (converted to f64 or f32 once, here); `report` is the compiled plan's step list.
struct CompiledRun {
  std::function<Status()> call;
  std::string report;
  int threads = 1;
};

// Plans `m` with the --provider policy, binds and compiles it with `threads` threads in `arith` (f64
// or f32 only, error as run_plan's).
Result<CompiledRun> compile_run(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& provider,
                                const ArithSpec& arith, int threads, const EvalOptions& options = {});

}  // namespace denote::cli
