// Shared pieces of the denote CLI: subcommand registration, exit codes, model and tensor loading.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "denote/base/status.h"
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

void add_demo(CLI::App& app, Command& cmd);
void add_check(CLI::App& app, Command& cmd);
void add_print(CLI::App& app, Command& cmd);
void add_run(CLI::App& app, Command& cmd);
void add_ops(CLI::App& app, Command& cmd);
void add_scalar(CLI::App& app, Command& cmd);
void add_bounds(CLI::App& app, Command& cmd);
void add_sample(CLI::App& app, Command& cmd);
void add_convert(CLI::App& app, Command& cmd);
void add_plan(CLI::App& app, Command& cmd);

// Prints "error: MESSAGE" to stderr and returns kExitInvalid.
int fail(const std::string& message);

// Loads a model file (structure and fields only; no shape check).
Result<Model> load_model(const std::string& path);

// Parses `--input` values for the graph's input nodes: each is a JSON array / number or @file.npy,
// optionally prefixed "ID=". A flat list (or 1-D file) with the right element count takes the node's shape.
Result<std::vector<Tensor<double>>> parse_inputs(const Graph& g, const std::vector<std::string>& specs);

// A number for JSON output: round-trip precision, non-finite values as "nan"/"inf"/"-inf".
std::string json_number(double v);

}  // namespace denote::cli
