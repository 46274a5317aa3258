// Shared pieces of the denote CLI: subcommand registration, exit codes, model and tensor loading.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "denote/base/status.h"
#include "denote/io/onnx.h"
#include "denote/ir/model.h"
#include "denote/tensor/tensor.h"

namespace denote::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInvalid = 1;  // the input is invalid or a check failed
inline constexpr int kExitUsage = 2;

// Each subcommand file defines one of these; main.cc wires them up. `run` is set by the
// subcommand's setup and called after parsing.
struct Command {
  std::function<int()> run;
};

// The positional model file and the repeatable --input of the commands that evaluate (run, bench,
// grad/jvp/vjp).
void add_model_and_inputs(CLI::App* sub, std::string& path, std::vector<std::string>& inputs);

void add_demo(CLI::App& app, Command& cmd);
void add_check(CLI::App& app, Command& cmd);
void add_print(CLI::App& app, Command& cmd);
void add_run(CLI::App& app, Command& cmd);
void add_bench(CLI::App& app, Command& cmd);
void add_ops(CLI::App& app, Command& cmd);
void add_scalar(CLI::App& app, Command& cmd);
void add_bounds(CLI::App& app, Command& cmd);
void add_sample(CLI::App& app, Command& cmd);
void add_convert(CLI::App& app, Command& cmd);
void add_plan(CLI::App& app, Command& cmd);
void add_grad(CLI::App& app, Command& cmd);
void add_jvp(CLI::App& app, Command& cmd);
void add_verify(CLI::App& app, Command& cmd);
void add_mx(CLI::App& app, Command& cmd);
void add_check_certificate(CLI::App& app, Command& cmd);

// Prints "error: MESSAGE" to stderr and returns kExitInvalid.
int fail(const std::string& message);

// Loads a model file (structure and fields only; no shape check). ONNX files are read with
// onnx_options() (symbolic dims fixed by --onnx-dim; a symbolic batch dim reads as 1); the import's
// notes go to stderr as "note: ..." (whole lines, also when several threads load). input_types, when
// set, receives each graph input's ONNX element type (nothing for a JSON model).
Result<Model> load_model(const std::string& path, std::vector<int32_t>* input_types = nullptr);
// load_model, then the shape check: the first step of every command that evaluates, bounds or verifies.
Result<Model> load_checked_model(const std::string& path, std::vector<int32_t>* input_types = nullptr);
// A shape-checked model and its --input tensors (run, bench).
struct ModelAndInputs {
  Model model;
  std::vector<Tensor<double>> inputs;
};
Result<ModelAndInputs> load_model_and_inputs(const std::string& path, const std::vector<std::string>& input_specs);
// The ONNX import options every command uses (filled by --onnx-dim before the command runs).
OnnxImportOptions& onnx_options();
// Registers --onnx-dim NAME=VALUE (repeatable) on every subcommand of `app` that lacks it.
void add_onnx_dim_option(CLI::App& app);
// Prints the notes an ONNX import collected (and clears them).
void print_onnx_notes();

// Parses `--input` values for the graph's input nodes: each is a JSON array / number or @file.npy,
// optionally prefixed "ID=". A flat list (or 1-D file) with the right element count takes the node's shape;
// any other shape than the declared one is an error. `option` names the option in every message
// ("--input", "--center", "--box LO", "--box HI").
Result<std::vector<Tensor<double>>> parse_inputs(const Graph& g, const std::vector<std::string>& specs,
                                                 std::string_view option = "--input");

// One tensor given as a JSON array / number or @file.npy; `label` starts every message.
Result<Tensor<double>> parse_tensor(const std::string& text, const std::string& label);

// A decimal node id, the whole of `text` (no sign, no junk, no overflow); nullopt otherwise.
std::optional<int64_t> parse_node_id(std::string_view text);

// A byte count: digits with an optional suffix K, M, G, T (powers of 1024; also KB/KiB etc.,
// case-insensitive), e.g. 512M, 4G, 1024K, 1000000. At least 1, at most 2^62.
Result<int64_t> parse_size(std::string_view text);

// The default of --max-memory: half of the machine's physical memory (denote::default_max_bytes).
int64_t default_max_memory();

// Registers --max-memory SIZE on `sub`, storing the text in `text`.
void add_max_memory_option(CLI::App* sub, std::string& text);

// The --max-memory text as bytes: "auto" (the default) gives default_max_memory(); a bad SIZE (the
// empty text too) is an error naming the option.
Result<int64_t> max_memory_bytes(const std::string& text);

// Stores the budget in any options struct that has a `max_bytes` field (EvalOptions, typed options).
template <class Options>
void set_max_bytes(Options& options, int64_t bytes) {
  if constexpr (requires { options.max_bytes = bytes; }) options.max_bytes = bytes;
}

// The usage problem of a --provider text (checked before any file is read), or "" when it names a policy.
std::string provider_problem(const std::string& provider);
// `--provider evaluator` (run, bench): the generic evaluator instead of the default `auto` kernel plan.
inline constexpr std::string_view kEvaluator = "evaluator";
// run's and bench's kernel plan in f64/f32 (native): --provider's policy, or `auto` when not given;
// empty for the evaluator (`--provider evaluator`, every other arithmetic).
std::string plan_policy(bool given, const std::string& provider, bool native);
// Their --provider's usage error, once the arithmetic is known: a malformed policy, or a plan asked for
// in an arithmetic other than f64/f32; empty when fine.
std::string plan_usage_problem(bool given, const std::string& provider, bool native, const std::string& arith);

// Prints "error: MESSAGE" to stderr and returns kExitUsage.
int usage_error(const std::string& message);

// Levenshtein distance (for "did you mean").
size_t edit_distance(std::string_view a, std::string_view b);

// A number for JSON output: round-trip precision, non-finite values as "nan"/"inf"/"-inf".
std::string json_number(double v);

}  // namespace denote::cli
