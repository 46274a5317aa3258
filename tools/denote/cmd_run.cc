// denote run MODEL --input T [--arith A] [--rounding R] [--trace] [--json]: denote the graph.
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/io/text.h"

namespace denote::cli {

namespace {

struct RunOptions {
  std::string path;
  std::vector<std::string> inputs;
  std::string arith = "f64";
  std::string rounding = "nearest-even";
  bool trace = false;
  bool json = false;
};

std::string values_json(const Tensor<double>& t) {
  std::string out = "[";
  for (size_t i = 0; i < t.data.size(); ++i) out += (i ? ", " : "") + json_number(t.data[i]);
  return out + "]";
}

std::string entry_json(int64_t id, const Tensor<double>& t) {
  return fmt::format("{{\"id\": {}, \"shape\": [{}], \"values\": {}}}", id, join_ints(t.shape), values_json(t));
}

// Widens a value table to double for printing.
template <class S>
std::vector<Tensor<double>> widen(const ValueTable<S>& table) {
  std::vector<Tensor<double>> out;
  out.reserve(table.size());
  for (const auto& t : table) out.emplace_back(t.shape, std::vector<double>(t.data.begin(), t.data.end()));
  return out;
}

template <class Ctx>
Result<std::vector<Tensor<double>>> evaluate(const Model& m, const std::vector<Tensor<double>>& inputs) {
  using S = typename Ctx::Scalar;
  Ctx ctx;
  std::vector<Tensor<S>> in;
  for (const auto& t : inputs) in.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  Payload<S> payload = convert_payload<S>(m.payload, [&](double v) { return ctx.from_double(v); });
  DENOTE_ASSIGN_OR_RETURN(auto table, denote_all(m.graph, payload, std::span<const Tensor<S>>(in), ctx));
  return widen(table);
}

void print_text(const Model& m, const std::vector<Tensor<double>>& table, const RunOptions& o) {
  if (o.trace)
    for (const Node& n : m.graph.nodes)
      std::cout << fmt::format("{}: {} {} = {}\n", n.id, describe(n), to_string(n.out_shape),
                               values_json(table[n.id]));
  for (int64_t id : m.output_ids)
    std::cout << fmt::format("output {} {} = {}\n", id, to_string(table[id].shape), values_json(table[id]));
}

void print_json(const Model& m, const std::vector<Tensor<double>>& table, const RunOptions& o) {
  std::string out = fmt::format("{{\"arith\": \"{}\", \"rounding\": \"{}\", \"outputs\": [", o.arith, o.rounding);
  for (size_t k = 0; k < m.output_ids.size(); ++k)
    out += (k ? ", " : "") + entry_json(m.output_ids[k], table[m.output_ids[k]]);
  out += "]";
  if (o.trace) {
    out += ", \"trace\": [";
    for (const Node& n : m.graph.nodes) out += (n.id ? ", " : "") + entry_json(n.id, table[n.id]);
    out += "]";
  }
  out += ", \"flags\": []}";  // the native contexts do not track IEEE flags
  std::cout << out << "\n";
}

int run(const RunOptions& o) {
  if (o.arith != "f64" && o.arith != "f32")
    return fail("--arith " + o.arith + ": only f64 and f32 are available in this build (software binary formats "
                "and MPFR are not implemented yet)");
  if (o.rounding != "nearest-even")
    return fail("--rounding " + o.rounding + ": the native f64/f32 contexts round to nearest-even only");
  auto m = load_model(o.path);
  if (!m.ok()) return fail(m.message());
  if (Status s = check_shapes(m->graph); !s.ok()) return fail(s.message());
  auto inputs = parse_inputs(m->graph, o.inputs);
  if (!inputs.ok()) return fail(inputs.message());
  auto table = o.arith == "f64" ? evaluate<F64Context>(*m, *inputs) : evaluate<F32Context>(*m, *inputs);
  if (!table.ok()) return fail(table.message());
  if (o.json) print_json(*m, *table, o);
  else print_text(*m, *table, o);
  return kExitOk;
}

}  // namespace

void add_run(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("run", "denote the graph at the given inputs");
  auto o = std::make_shared<RunOptions>();
  sub->add_option("model", o->path, "model file (.json torchlean.ir.v1)")->required();
  sub->add_option("--input", o->inputs,
                  "input tensor: JSON array, @file.npy, or ID=TENSOR; repeat in the order of the input nodes")
      ->allow_extra_args(false);  // a JSON array is one value, not a CLI11 list
  sub->add_option("--arith", o->arith, "scalar interpretation: f64 (default) or f32");
  sub->add_option("--rounding", o->rounding, "rounding mode (native contexts: nearest-even)");
  sub->add_flag("--trace", o->trace, "print the whole value table");
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->callback([&cmd, o] { cmd.run = [o] { return run(*o); }; });
}

}  // namespace denote::cli
