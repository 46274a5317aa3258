// denote run MODEL --input T [--arith A] [--rounding R] [--precision BITS] [--provider P] [--trace] [--json]:
// denote the graph in hardware f64/f32, a software binary format (exact rounding in any of the
// modes, IEEE flags reported), or MPFR at a chosen precision. With --provider, a kernel plan in
// f64/f32: compiled (run_compiled, the path `denote bench` times), or node by node with --trace.
#include <iostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "context_values.h"
#include "real_budget.h"
#include "run_typed.h"
#include "denote/eval/eval.h"
#include "denote/io/text.h"
#include "denote/scalar/arith.h"
#include "denote/typed/policy.h"
#include "policy_cli.h"
#include "run_plan.h"

namespace denote::cli {

namespace {

struct RunOptions {
  std::string path;
  std::vector<std::string> inputs;
  std::vector<std::string> input_words;  // typed models (run_typed.cc)
  std::string arith = "f64";
  std::string rounding = "nearest-even";
  long precision = 256;
  bool trace = false;
  bool json = false;
  std::string provider;  // run through a kernel plan (run_plan.cc) when provider_given
  bool provider_given = false;
  std::string max_memory = "auto";  // --max-memory SIZE or auto
  std::string accumulate;           // a precision policy: --arith is its storage format
  std::string policy;               // --policy FILE.json: a precision policy file
};

// The value table widened to double, and the flags the context raised (binary formats only).
struct Evaluated {
  std::vector<Tensor<double>> table;
  bool has_flags = false;
  uint32_t flags = 0;
  std::string engine;  // "plan auto", "plan prefer:P", ... or "evaluator" (the JSON's "engine")
};

std::string values_json(const Tensor<double>& t) {
  std::string out = "[";
  for (size_t i = 0; i < t.data.size(); ++i) out += (i ? ", " : "") + json_number(t.data[i]);
  return out + "]";
}

std::string entry_json(int64_t id, const Tensor<double>& t) {
  return fmt::format("{{\"id\": {}, \"shape\": [{}], \"values\": {}}}", id, join_ints(t.shape), values_json(t));
}

// Inputs and parameters enter the context through from_double (rounded in the context's mode);
// values leave it through to_double (exact for every format up to binary64).
template <class Ctx>
Result<Evaluated> evaluate(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& inputs,
                           const EvalOptions& options, bool whole_table) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const std::vector<Tensor<S>> in, tensors_in(ctx, inputs, "input"));
  DENOTE_ASSIGN_OR_RETURN(const Payload<S> payload, payload_in(ctx, m.payload));
  // Without --trace only the outputs are kept: every other value is freed after its last reader.
  const std::span<const Tensor<S>> args(in);
  DENOTE_ASSIGN_OR_RETURN(auto table, whole_table
                                          ? denote_all(m.graph, payload, args, ctx, options)
                                          : denote_outputs(m.graph, payload, args,
                                                           std::span<const int64_t>(m.output_ids), ctx, options));
  Evaluated out;
  for (const auto& t : table) {
    std::vector<double> data;
    data.reserve(t.data.size());
    for (const S& v : t.data) data.push_back(ctx.to_double(v));
    out.table.emplace_back(t.shape, std::move(data));
  }
  if constexpr (requires { ctx.flags(); }) {
    out.has_flags = true;
    out.flags = ctx.flags();
  }
  return out;
}

std::vector<std::string> flag_names(uint32_t flags) {
  std::vector<std::string> names;
  if (flags == 0) return names;
  const std::string all = flags_to_string(flags);
  for (size_t start = 0; start <= all.size();) {
    size_t comma = all.find(',', start);
    if (comma == std::string::npos) comma = all.size();
    names.push_back(all.substr(start, comma - start));
    start = comma + 1;
  }
  return names;
}

void print_text(const Model& m, const Evaluated& e, const RunOptions& o) {
  if (o.trace)
    for (const Node& n : m.graph.nodes)
      std::cout << fmt::format("{}: {} {} = {}\n", n.id, describe(n), to_string(n.out_shape),
                               values_json(e.table[n.id]));
  for (int64_t id : m.output_ids)
    std::cout << fmt::format("output {} {} = {}\n", id, to_string(e.table[id].shape), values_json(e.table[id]));
  if (e.has_flags) std::cout << "flags: " << flags_to_string(e.flags) << "\n";
}

void print_json(const Model& m, const Evaluated& e, const RunOptions& o) {
  std::string out = fmt::format("{{\"arith\": \"{}\", ", o.arith);
  if (!o.accumulate.empty()) out += fmt::format("\"accumulate\": \"{}\", ", o.accumulate);
  if (!o.policy.empty()) out += fmt::format("\"policy\": {}, ", nlohmann::json(o.policy).dump());
  out += fmt::format("\"rounding\": \"{}\", ", o.rounding);
  if (!e.engine.empty()) out += fmt::format("\"engine\": \"{}\", ", e.engine);
  out += "\"outputs\": [";
  for (size_t k = 0; k < m.output_ids.size(); ++k)
    out += (k ? ", " : "") + entry_json(m.output_ids[k], e.table[m.output_ids[k]]);
  out += "]";
  if (o.trace) {
    out += ", \"trace\": [";
    for (const Node& n : m.graph.nodes) out += (n.id ? ", " : "") + entry_json(n.id, e.table[n.id]);
    out += "]";
  }
  // The native and MPFR contexts do not track IEEE flags: an empty list.
  std::string flags;
  for (const std::string& name : flag_names(e.flags)) flags += (flags.empty() ? "\"" : ", \"") + name + "\"";
  out += ", \"flags\": [" + flags + "]}";
  std::cout << out << "\n";
}

// --accumulate, --policy, an MX --arith (policy_cli.h): the prepared policy at the inputs.
int run_with_policy(const RunOptions& o, int64_t budget) {
  const PolicyArgs args{o.arith, o.accumulate, o.policy, o.rounding, o.provider_given};
  if (std::string problem = policy_usage_problem(args); !problem.empty()) return usage_error(problem);
  auto loaded = load_model_and_inputs(o.path, o.inputs);
  if (!loaded.ok()) return fail(loaded.message());
  const Model& m = loaded->model;
  Result<PolicyRunner> runner = prepare_policy(m, args);
  if (!runner.ok()) return fail(runner.message());
  std::vector<int64_t> ids = m.output_ids;
  if (o.trace)
    for (const Node& n : m.graph.nodes) ids.push_back(n.id);
  Result<PolicyValues> v = runner->run(loaded->inputs, ids, budget);
  if (!v.ok()) return fail(v.message());
  Evaluated e{std::vector<Tensor<double>>(m.graph.size()), true, v->flags, ""};
  for (size_t k = 0; k < ids.size(); ++k) e.table[static_cast<size_t>(ids[k])] = std::move(v->values[k]);
  if (o.json) print_json(m, e, o);
  else print_text(m, e, o);
  return kExitOk;
}

// f64 and f32 run on a kernel plan: the one asked for, or by default `auto` (the fastest admissible
// capsule per op); --trace needs every node's value: the plan node by node, else the compiled plan
// (outputs only). The default falls back to the evaluator where no plan runs the model;
// `--provider evaluator` and the other arithmetics take the evaluator. Evaluated::engine says which ran.
Result<Evaluated> evaluate_model(const Model& m, const std::vector<Tensor<double>>& inputs, const RunOptions& o,
                                 const ArithSpec& spec, const EvalOptions& options) {
  const std::string plan = plan_policy(o.provider_given, o.provider, spec.native());
  if (!plan.empty()) {
    auto table = o.trace ? run_plan(m, inputs, plan, spec, options) : run_compiled(m, inputs, plan, spec, options);
    if (table.ok()) return Evaluated{std::move(*table), false, 0, "plan " + plan};
    if (o.provider_given) return table.status();
  }
  DENOTE_ASSIGN_OR_RETURN(Evaluated e,
                          visit_arith(spec, [&](auto& ctx) { return evaluate(ctx, m, inputs, options, o.trace); }));
  e.engine = kEvaluator;
  return e;
}

int run(const RunOptions& o) {
  auto budget = max_memory_bytes(o.max_memory);
  if (!budget.ok()) return usage_error(budget.message());
  if (wants_policy({o.arith, o.accumulate, o.policy, o.rounding, o.provider_given})) return run_with_policy(o, *budget);
  if (wants_typed_run(o.path, o.input_words))
    return run_typed({o.path, o.input_words, o.rounding, o.trace, o.json, *budget});
  // --arith/--rounding/--precision/--provider are checked before any file is read (usage errors, exit 2).
  Result<ArithSpec> spec = parse_arith(o.arith, o.rounding, o.precision);
  if (!spec.ok()) return usage_error(spec.message());
  if (std::string problem = plan_usage_problem(o.provider_given, o.provider, spec->native(), o.arith);
      !problem.empty())
    return usage_error(problem);
  auto loaded = load_model_and_inputs(o.path, o.inputs);
  if (!loaded.ok()) return fail(loaded.message());
  const Model& m = loaded->model;
  if (Status s = check_real_budget(m, loaded->inputs, *spec, *budget); !s.ok()) return fail(s.message());
  EvalOptions options;
  set_max_bytes(options, *budget);
  Result<Evaluated> e = evaluate_model(m, loaded->inputs, o, *spec, options);
  if (!e.ok()) return fail(e.message());
  if (o.json) print_json(m, *e, o);
  else print_text(m, *e, o);
  return kExitOk;
}

}  // namespace

void add_run(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("run", "denote the graph at the given inputs");
  auto o = std::make_shared<RunOptions>();
  add_model_and_inputs(sub, o->path, o->inputs);
  sub->add_option("--input-words", o->input_words,
                  "typed input as element words, ID=DTYPE:[w0,w1,...] (e.g. 0=int8:[1,\"0xff\"]); see docs/TYPED.md")
      ->allow_extra_args(false);
  sub->add_option("--arith", o->arith,
                  "scalar interpretation: f64 (default), f32 (hardware), binary16, bfloat16, binary32, binary64, "
                  "e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e3m2fn, e2m3fn, e2m1fn, e8m0fnu, binary(E,F) (software, "
                  "exactly rounded), real (MPFR); an OCP MX format (mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, "
                  "mxfp4_e2m1, mxint8[,weights=FORMAT][,block=N]): linear layers on MX operands, the rest binary32");
  sub->add_option("--rounding", o->rounding,
                  "rounding mode of a binary format: nearest-even (default), toward-zero, upward, downward, "
                  "nearest-away");
  sub->add_option("--precision", o->precision, "bits of the real (MPFR) context (default 256)");
  sub->add_option("--accumulate", o->accumulate,
                  "a precision policy: every op computes in this format on operands in the --arith (storage) "
                  "format and rounds once to it, e.g. --arith bfloat16 --accumulate binary32 as torch's CPU "
                  "kernels do");
  sub->add_option("--policy", o->policy,
                  "a precision policy file: {\"storage\": F, \"accumulate\": F, \"ops\": {TAG: F}, \"nodes\": "
                  "{\"ID\": F}} (docs/NUMERICS.md, \"Precision policies\")");
  sub->add_option("--provider", o->provider,
                  "f64/f32 kernel plan: auto (the default: the fastest admissible capsule per op), prefer:P or only:P "
                  "(P: reference, openblas, avx2), compiled (denote/plan/compiled.h) or node by node with --trace; "
                  "or evaluator (the generic evaluator, its fixed summation order; every other --arith runs on it)")
      ->each([o](const std::string&) { o->provider_given = true; });
  add_max_memory_option(sub, o->max_memory);
  sub->add_flag("--trace", o->trace, "print the whole value table");
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([&cmd, o] { cmd.run = [o] { return run(*o); }; });
}

}  // namespace denote::cli
