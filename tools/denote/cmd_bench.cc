// denote bench MODEL --input X [--repeat N] [--warmup N] [--arith A] [--rounding R] [--precision BITS]
// [--provider P] [--threads N] [--max-memory SIZE] [--steps] [--json]: call latency, like onnxruntime_perf_test
// and trtexec. Loads the model, converts inputs and parameters and (with --provider) plans, binds and
// compiles once; then times --warmup untimed and --repeat timed calls. Without --provider each call
// is the evaluator (denote_outputs) in any --arith `run` accepts; with it, a compiled kernel plan
// (f64/f32) on --threads threads.
#include <algorithm>
#include <chrono>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "context_values.h"
#include "real_budget.h"
#include "denote/eval/eval.h"
#include "denote/scalar/arith.h"
#include "policy_cli.h"
#include "run_plan.h"

namespace denote::cli {

namespace {

struct BenchOptions {
  std::string path;
  std::vector<std::string> inputs;
  std::string arith = "f64";
  std::string rounding = "nearest-even";
  long precision = 256;
  std::string provider;
  bool provider_given = false;
  int threads = 1;
  int repeat = 10;
  int warmup = 1;
  std::string max_memory = "auto";
  bool json = false;
  bool steps = false;
  std::string accumulate, policy;  // a precision policy (policy_cli.h)
};

struct Timings {
  std::vector<double> seconds;  // one per timed call
  int threads = 1;
};

// `warmup` untimed calls, then `repeat` timed ones; the first failing call's error.
template <class Call>
Result<Timings> time_calls(int warmup, int repeat, Call&& call) {
  for (int i = 0; i < warmup; ++i) DENOTE_RETURN_IF_ERROR(call());
  Timings t;
  for (int i = 0; i < repeat; ++i) {
    const auto start = std::chrono::steady_clock::now();
    DENOTE_RETURN_IF_ERROR(call());
    t.seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return t;
}

// The evaluator in ctx: inputs and parameters enter the context once, through from_double.
template <class Ctx>
Result<Timings> bench_evaluator(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& inputs,
                                const EvalOptions& options, const BenchOptions& o) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const std::vector<Tensor<S>> in, tensors_in(ctx, inputs, "input"));
  DENOTE_ASSIGN_OR_RETURN(const Payload<S> payload, payload_in(ctx, m.payload));
  const std::span<const Tensor<S>> args(in);
  return time_calls(o.warmup, o.repeat, [&]() -> Status {
    auto table = denote_outputs(m.graph, payload, args, std::span<const int64_t>(m.output_ids), ctx, options);
    return table.ok() ? ok_status() : table.status();
  });
}

std::string seconds_text(double s) {
  if (s < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (s < 1.0) return fmt::format("{:.3f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}

// plan: the kernel plan's provider policy when a plan ran, else empty.
void print_timings(const Timings& t, const BenchOptions& o, const std::string& plan = "") {
  std::vector<double> v = t.seconds;
  std::sort(v.begin(), v.end());
  const double median = v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  const std::string how = !plan.empty()           ? "plan " + plan
                          : !o.policy.empty()     ? "policy " + o.policy
                          : !o.accumulate.empty() ? "accumulate " + o.accumulate
                          : is_mx_spec(o.arith)   ? "MX runner"
                                                  : std::string(kEvaluator);
  if (o.json) {
    std::cout << fmt::format("{{\"calls\": {}, \"min_s\": {:.9g}, \"median_s\": {:.9g}, \"max_s\": {:.9g}, "
                             "\"threads\": {}, \"arith\": \"{}\", \"provider\": \"{}\", \"engine\": \"{}\"}}\n",
                             v.size(), v.front(), median, v.back(), t.threads, o.arith, plan, how);
    return;
  }
  std::cout << fmt::format("{} calls ({}, {}, {} thread{}): min {}, median {}, max {}\n", v.size(), o.arith, how,
                           t.threads, t.threads == 1 ? "" : "s", seconds_text(v.front()), seconds_text(median),
                           seconds_text(v.back()));
}

// Option errors that need no file: exit 2.
std::string usage_problem(const BenchOptions& o) {
  if (o.repeat < 1) return fmt::format("--repeat {}: expected at least 1", o.repeat);
  if (o.warmup < 0) return fmt::format("--warmup {}: expected at least 0", o.warmup);
  if (o.threads < 1 || o.threads > 256) return fmt::format("--threads {}: expected 1 to 256", o.threads);
  return "";
}

// --accumulate, --policy or an MX --arith: the prepared policy's calls (the lowering or the MX
// weights' quantization once, like the evaluator's parameter conversion).
int bench_policy(const BenchOptions& o, int64_t budget) {
  const PolicyArgs args{o.arith, o.accumulate, o.policy, o.rounding, o.provider_given};
  if (std::string problem = policy_usage_problem(args); !problem.empty()) return usage_error(problem);
  if (o.threads != 1) return usage_error("--threads: a precision policy runs on one thread");
  auto loaded = load_model_and_inputs(o.path, o.inputs);
  if (!loaded.ok()) return fail(loaded.message());
  Result<PolicyRunner> runner = prepare_policy(loaded->model, args);
  if (!runner.ok()) return fail(runner.message());
  const std::span<const Tensor<double>> in(loaded->inputs);
  const std::span<const int64_t> ids(loaded->model.output_ids);
  Result<Timings> t = time_calls(o.warmup, o.repeat, [&]() -> Status {
    Result<PolicyValues> v = runner->run(in, ids, budget);
    return v.ok() ? ok_status() : v.status();
  });
  if (!t.ok()) return fail(t.message());
  print_timings(*t, o);
  return kExitOk;
}

bool wants_evaluator(const BenchOptions& o) { return o.provider_given && o.provider == kEvaluator; }

// Option errors once the arithmetic is known (exit 2).
std::string engine_problem(const BenchOptions& o, const ArithSpec& spec) {
  if (std::string problem = plan_usage_problem(o.provider_given, o.provider, spec.native(), o.arith); !problem.empty())
    return problem;
  if ((wants_evaluator(o) || !spec.native()) && o.threads != 1 && spec.kind != ArithKind::Binary)
    return "--threads needs a kernel plan (f64 or f32) or a software binary --arith (the f64, f32 and real "
           "evaluators run on one thread)";
  return "";
}

// f64 and f32 time a kernel plan: the one asked for, or by default `auto` (the evaluator where no plan
// runs the model); `--provider evaluator` and the other arithmetics time the evaluator. plan: the policy
// of the plan that ran, empty when the evaluator did.
Result<Timings> time_model(const Model& m, const std::vector<Tensor<double>>& inputs, const BenchOptions& o,
                           const ArithSpec& spec, const EvalOptions& options, std::string& plan) {
  plan = plan_policy(o.provider_given, o.provider, spec.native());
  auto run = plan.empty() ? Result<CompiledRun>(error_status("no plan"))
                          : compile_run(m, inputs, plan, spec, o.threads, options);
  if (run.ok()) {
    if (o.steps) std::cerr << run->report;
    Result<Timings> t = time_calls(o.warmup, o.repeat, run->call);
    if (t.ok()) t->threads = run->threads;
    return t;
  }
  if (o.provider_given && !wants_evaluator(o)) return run.status();
  if (o.threads != 1 && spec.kind != ArithKind::Binary)
    return error_status("--threads: no kernel plan runs this model (" + run.message() +
                        "), and the evaluator runs on one thread");
  plan.clear();
  Result<Timings> t = visit_arith(spec, [&](auto& ctx) {
    if constexpr (std::is_same_v<std::decay_t<decltype(ctx)>, BinaryContext>) ctx.set_threads(o.threads);
    return bench_evaluator(ctx, m, inputs, options, o);
  });
  if (t.ok()) t->threads = o.threads;
  return t;
}

int run_bench(const BenchOptions& o) {
  auto budget = max_memory_bytes(o.max_memory);
  if (!budget.ok()) return usage_error(budget.message());
  if (std::string problem = usage_problem(o); !problem.empty()) return usage_error(problem);
  if (wants_policy({o.arith, o.accumulate, o.policy, o.rounding, o.provider_given})) return bench_policy(o, *budget);
  Result<ArithSpec> spec = parse_arith(o.arith, o.rounding, o.precision);
  if (!spec.ok()) return usage_error(spec.message());
  if (std::string problem = engine_problem(o, *spec); !problem.empty()) return usage_error(problem);
  auto loaded = load_model_and_inputs(o.path, o.inputs);
  if (!loaded.ok()) return fail(loaded.message());
  if (Status s = check_real_budget(loaded->model, loaded->inputs, *spec, *budget); !s.ok()) return fail(s.message());
  EvalOptions options;
  set_max_bytes(options, *budget);
  std::string plan;
  Result<Timings> t = time_model(loaded->model, loaded->inputs, o, *spec, options, plan);
  if (!t.ok()) return fail(t.message());
  print_timings(*t, o, plan);
  return kExitOk;
}

}  // namespace

void add_bench(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("bench", "time repeated calls of a model (evaluator, or a compiled kernel plan)");
  auto o = std::make_shared<BenchOptions>();
  add_model_and_inputs(sub, o->path, o->inputs);
  sub->add_option("--repeat", o->repeat, "timed calls (default 10)");
  sub->add_option("--warmup", o->warmup, "untimed calls first (default 1)");
  sub->add_option("--arith", o->arith, "scalar interpretation, as for `run` (default f64); with --provider f64 or f32");
  sub->add_option("--rounding", o->rounding, "rounding mode of a binary format (default nearest-even)");
  sub->add_option("--precision", o->precision, "bits of the real (MPFR) context (default 256)");
  sub->add_option("--accumulate", o->accumulate, "a precision policy's accumulation format, as for `run`");
  sub->add_option("--policy", o->policy, "a precision policy file, as for `run`");
  sub->add_option("--provider", o->provider,
                  "f64/f32 compiled kernel plan: auto (the default), prefer:P or only:P; or evaluator (the generic evaluator)")
      ->each([o](const std::string&) { o->provider_given = true; });
  sub->add_option("--threads", o->threads,
                  "threads of the compiled plan, or of a software binary --arith's linear/matmul (default 1)");
  add_max_memory_option(sub, o->max_memory);
  sub->add_flag("--steps", o->steps, "print the compiled plan's steps to stderr (with --provider)");
  sub->add_flag("--json", o->json,
                "one JSON document: {\"calls\", \"min_s\", \"median_s\", \"max_s\", \"threads\", \"arith\", \"provider\"}");
  sub->callback([&cmd, o] { cmd.run = [o] { return run_bench(*o); }; });
}

}  // namespace denote::cli
