// denote grad MODEL --input X [--cotangent C] [--wrt inputs|params|all] [--kernels exact|openblas] [--output ID] [--arith A] [--json]:
//   the gradient of sum(C * output) with respect to every input (and the payload parameters on
//   request), by reverse mode in the chosen arithmetic.
// denote jvp MODEL --input X --tangent T [--output ID] [--arith A] [--json]: the directional
//   derivative of the output along T, by forward mode.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli.h"
#include "context_values.h"
#include "real_budget.h"
#include "denote/autodiff/grad.h"
#include "denote/io/text.h"
#include "denote/scalar/arith.h"

namespace denote::cli {

namespace {

struct DiffCliOptions {
  std::string path;
  std::vector<std::string> inputs;
  std::string cotangent;               // grad
  std::vector<std::string> tangents;   // jvp
  std::string wrt = "inputs";
  std::string kernels = "exact";       // grad
  std::string output;                  // node id; default: the model's only output
  std::string arith = "f64";
  std::string rounding = "nearest-even";
  long precision = 256;
  bool json = false;
  std::string max_memory = "auto";
};

// Everything a command prints, widened to double.
struct DiffResult {
  int64_t output = -1;
  Tensor<double> value;
  std::vector<std::pair<int64_t, Tensor<double>>> inputs;  // (input id, gradient or tangent)
  std::vector<ParamGrad<double>> params;
  Tensor<double> tangent;
  uint32_t flags = 0;
  bool has_flags = false;
};

template <class Ctx, class V>
std::vector<double> to_doubles(Ctx& ctx, const V& values) {
  std::vector<double> r;
  r.reserve(values.size());
  for (const auto& v : values) r.push_back(ctx.to_double(v));
  return r;
}

template <class Ctx>
Tensor<double> to_host(Ctx& ctx, const Tensor<typename Ctx::Scalar>& t) {
  return Tensor<double>(t.shape, to_doubles(ctx, t.data));
}

template <class Ctx>
void read_flags(Ctx& ctx, DiffResult& r) {
  if constexpr (requires { ctx.flags(); }) {
    r.has_flags = true;
    r.flags = ctx.flags();
  }
}

template <class Ctx>
Result<DiffResult> run_grad(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& inputs,
                            const Tensor<double>* cot, int64_t output, const GradOptions& options) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const auto in, tensors_in(ctx, inputs, "input"));
  DENOTE_ASSIGN_OR_RETURN(const Payload<S> payload, payload_in(ctx, m.payload));
  std::optional<Tensor<S>> c;
  if (cot) {
    DENOTE_ASSIGN_OR_RETURN(auto t, tensor_in(ctx, *cot, "cotangent", "cotangent"));
    c = std::move(t);
  }
  DENOTE_ASSIGN_OR_RETURN(auto g, vjp(m.graph, payload, std::span<const Tensor<S>>(in), output,
                                      c ? &*c : nullptr, ctx, options));
  DiffResult r;
  r.output = output;
  r.value = to_host(ctx, g.value);
  for (size_t k = 0; k < g.inputs.size(); ++k) r.inputs.emplace_back(g.input_ids[k], to_host(ctx, g.inputs[k]));
  for (const auto& p : g.params) r.params.push_back({p.node, p.field, p.shape, to_doubles(ctx, p.values)});
  read_flags(ctx, r);
  return r;
}

template <class Ctx>
Result<DiffResult> run_jvp(Ctx& ctx, const Model& m, const std::vector<Tensor<double>>& inputs,
                           const std::vector<Tensor<double>>& tangents, int64_t output, const EvalOptions& options) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const auto in, tensors_in(ctx, inputs, "input"));
  DENOTE_ASSIGN_OR_RETURN(const auto tan, tensors_in(ctx, tangents, "tangent"));
  DENOTE_ASSIGN_OR_RETURN(const Payload<S> payload, payload_in(ctx, m.payload));
  DENOTE_ASSIGN_OR_RETURN(auto t, jvp(m.graph, payload, std::span<const Tensor<S>>(in),
                                      std::span<const Tensor<S>>(tan), output, ctx, options));
  DiffResult r;
  r.output = output;
  r.value = to_host(ctx, t.value);
  r.tangent = to_host(ctx, t.tangent);
  read_flags(ctx, r);
  return r;
}

std::string values_text(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_number(v[i]);
  return out + "]";
}

std::string tensor_fields(const Shape& shape, const std::vector<double>& v) {
  return fmt::format("\"shape\": [{}], \"values\": {}", join_ints(shape), values_text(v));
}

void print_result(const DiffResult& r, const DiffCliOptions& o, bool is_jvp) {
  if (o.json) {
    std::string out = fmt::format("{{\"output\": {}, \"arith\": \"{}\", \"value\": {{{}}}", r.output, o.arith,
                                  tensor_fields(r.value.shape, r.value.data));
    if (is_jvp) {
      out += fmt::format(", \"tangent\": {{{}}}", tensor_fields(r.tangent.shape, r.tangent.data));
    } else {
      out += ", \"gradients\": [";
      for (size_t k = 0; k < r.inputs.size(); ++k)
        out += fmt::format("{}{{\"id\": {}, {}}}", k ? ", " : "", r.inputs[k].first,
                           tensor_fields(r.inputs[k].second.shape, r.inputs[k].second.data));
      out += "], \"params\": [";
      for (size_t k = 0; k < r.params.size(); ++k)
        out += fmt::format("{}{{\"node\": {}, \"field\": \"{}\", {}}}", k ? ", " : "", r.params[k].node,
                           r.params[k].field, tensor_fields(r.params[k].shape, r.params[k].values));
      out += "]";
    }
    // As run --json: the IEEE flags the context raised, by name (none in the native and MPFR contexts).
    std::string flags, all = r.has_flags && r.flags ? flags_to_string(r.flags) + "," : "";
    for (size_t start = 0, comma; (comma = all.find(',', start)) != std::string::npos; start = comma + 1)
      flags += (flags.empty() ? "\"" : ", \"") + all.substr(start, comma - start) + "\"";
    out += ", \"flags\": [" + flags + "]}";
    std::cout << out << "\n";
    return;
  }
  std::cout << fmt::format("output {} {} = {}\n", r.output, to_string(r.value.shape), values_text(r.value.data));
  if (is_jvp) std::cout << fmt::format("tangent {} = {}\n", to_string(r.tangent.shape), values_text(r.tangent.data));
  for (const auto& [id, t] : r.inputs)
    std::cout << fmt::format("grad input {} {} = {}\n", id, to_string(t.shape), values_text(t.data));
  for (const auto& p : r.params)
    std::cout << fmt::format("grad node {} {} {} = {}\n", p.node, p.field, to_string(p.shape), values_text(p.values));
  if (r.has_flags) std::cout << "flags: " << flags_to_string(r.flags) << "\n";
}

// The node whose derivative is taken: --output, else the model's only output.
Result<int64_t> pick_output(const Model& m, const std::string& text) {
  if (text.empty()) {
    if (m.output_ids.size() != 1)
      return error_status(fmt::format("the model has {} outputs; choose one with --output ID", m.output_ids.size()));
    return m.output_ids[0];
  }
  const std::optional<int64_t> id = parse_node_id(text);
  if (!id || *id >= static_cast<int64_t>(m.graph.nodes.size()))
    return error_status(fmt::format("--output '{}': expected a node id below {}", text.substr(0, 40),
                                    m.graph.nodes.size()));
  return *id;
}

// The cotangent: a tensor of the output's shape (a flat list with the right count takes it).
Result<Tensor<double>> parse_cotangent(const std::string& text, const Shape& shape) {
  DENOTE_ASSIGN_OR_RETURN(Tensor<double> t, parse_tensor(text, "--cotangent"));
  if (t.shape != shape && t.shape.size() <= 1 && static_cast<int64_t>(t.data.size()) == numel(shape)) t.shape = shape;
  if (t.shape != shape)
    return error_status(fmt::format("--cotangent: expected the output's shape {} ({} elements), got shape {} ({} "
                                    "elements)",
                                    to_string(shape), numel(shape), to_string(t.shape), t.data.size()));
  return t;
}

int run_command(const DiffCliOptions& o, bool is_jvp) {
  auto budget = max_memory_bytes(o.max_memory);
  if (!budget.ok()) return usage_error(budget.message());
  Result<ArithSpec> spec = parse_arith(o.arith, o.rounding, o.precision);
  if (!spec.ok()) return usage_error(spec.message());
  const std::optional<GradWrt> wrt = parse_grad_wrt(o.wrt);
  if (!wrt) return usage_error(fmt::format("--wrt '{}': expected inputs, params or all", o.wrt.substr(0, 40)));
  const std::optional<GradKernels> kernels = parse_grad_kernels(o.kernels);
  if (!kernels) return usage_error(fmt::format("--kernels '{}': expected exact or openblas", o.kernels.substr(0, 40)));
  auto m = load_checked_model(o.path);
  if (!m.ok()) return fail(m.message());
  // A malformed id is a usage error; an id the model does not have depends on the model: exit 1.
  auto output = pick_output(*m, o.output);
  if (!output.ok()) return !o.output.empty() && parse_node_id(o.output) ? fail(output.message()) : usage_error(output.message());
  auto inputs = parse_inputs(m->graph, o.inputs);
  if (!inputs.ok()) return fail(inputs.message());
  if (Status s = check_real_budget(*m, *inputs, *spec, *budget); !s.ok()) return fail(s.message());
  GradOptions options;
  options.wrt = *wrt;
  options.kernels = *kernels;
  set_max_bytes(options.eval, *budget);
  Result<DiffResult> r = error_status("unreachable");
  if (is_jvp) {
    auto tangents = parse_inputs(m->graph, o.tangents, "--tangent");
    if (!tangents.ok()) return fail(tangents.message());
    r = visit_arith(*spec, [&](auto& ctx) { return run_jvp(ctx, *m, *inputs, *tangents, *output, options.eval); });
  } else {
    std::optional<Tensor<double>> cot;
    if (!o.cotangent.empty()) {
      auto c = parse_cotangent(o.cotangent, m->graph.nodes[static_cast<size_t>(*output)].out_shape);
      if (!c.ok()) return fail(c.message());
      cot = std::move(*c);
    }
    r = visit_arith(*spec, [&](auto& ctx) {
      return run_grad(ctx, *m, *inputs, cot ? &*cot : nullptr, *output, options);
    });
  }
  if (!r.ok()) return fail(r.message());
  print_result(*r, o, is_jvp);
  return kExitOk;
}

void add_common(CLI::App* sub, DiffCliOptions& o) {
  add_model_and_inputs(sub, o.path, o.inputs);
  sub->add_option("--output", o.output, "the node to differentiate (default: the model's only output)");
  sub->add_option("--arith", o.arith,
                  "arithmetic of the whole computation: f64 (default), f32, a binary format (bfloat16, e4m3fn, "
                  "binary(E,F), ...) or real (MPFR)");
  sub->add_option("--rounding", o.rounding, "rounding mode of a binary format (default nearest-even)");
  sub->add_option("--precision", o.precision, "bits of the real (MPFR) context (default 256)");
  add_max_memory_option(sub, o.max_memory);
  sub->add_flag("--json", o.json, "one JSON document on stdout");
}

}  // namespace

void add_grad(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("grad", "reverse mode: the gradient of sum(C * output) w.r.t. inputs and params");
  auto o = std::make_shared<DiffCliOptions>();
  add_common(sub, *o);
  sub->add_option("--cotangent", o->cotangent,
                  "C, shaped like the output: JSON array or @file.npy (default: all ones)");
  sub->add_option("--wrt", o->wrt, "inputs (default), params (payload weights, biases, norm parameters), all");
  sub->add_option("--kernels", o->kernels,
                  "exact (default: the context's arithmetic, fixed order) or openblas (f32/f64 linear nodes as "
                  "gemm: faster at large batch, within the gemm error bound instead of bit-exact)");
  sub->callback([&cmd, o] { cmd.run = [o] { return run_command(*o, false); }; });
}

void add_jvp(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("jvp", "forward mode: the derivative of the output along input tangents");
  auto o = std::make_shared<DiffCliOptions>();
  add_common(sub, *o);
  sub->add_option("--tangent", o->tangents,
                  "input tangent: JSON array, @file.npy, or ID=TENSOR; one per input node, like --input")
      ->allow_extra_args(false);
  sub->callback([&cmd, o] { cmd.run = [o] { return run_command(*o, true); }; });
}

}  // namespace denote::cli
