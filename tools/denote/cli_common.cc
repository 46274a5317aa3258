#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iostream>
#include <limits>
#include <mutex>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "denote/base/eval_options.h"
#include "denote/base/file.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "run_plan.h"

namespace denote::cli {

int fail(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitInvalid;
}

namespace {

std::vector<std::string> g_onnx_notes;

bool is_onnx_path(std::string_view path) { return without_gz(path).ends_with(".onnx"); }  // net.onnx.gz too

std::mutex g_notes_mutex;  // campaign jobs load models on several threads

}  // namespace

OnnxImportOptions& onnx_options() {
  static OnnxImportOptions options = [] {
    OnnxImportOptions o;
    o.notes = &g_onnx_notes;
    return o;
  }();
  return options;
}

void print_onnx_notes() {
  for (const std::string& n : g_onnx_notes) std::cerr << "note: " << n << "\n";
  g_onnx_notes.clear();
}

Result<Model> load_model(const std::string& path, std::vector<int32_t>* input_types) {
  if (!is_onnx_path(path)) return load_model_file(path);
  OnnxImportOptions options = onnx_options();  // a copy: its notes and types are this load's own
  std::vector<std::string> notes;
  options.notes = &notes;
  options.input_elem_types = input_types;
  auto m = load_model_onnx_file(path, options);
  std::lock_guard<std::mutex> lock(g_notes_mutex);
  for (const std::string& n : notes) std::cerr << "note: " << n << "\n";
  return m;
}

Result<Model> load_checked_model(const std::string& path, std::vector<int32_t>* input_types) {
  DENOTE_ASSIGN_OR_RETURN(Model m, load_model(path, input_types));
  DENOTE_RETURN_IF_ERROR(check_shapes(m.graph));
  return m;
}

Result<ModelAndInputs> load_model_and_inputs(const std::string& path, const std::vector<std::string>& input_specs) {
  DENOTE_ASSIGN_OR_RETURN(Model m, load_checked_model(path));
  DENOTE_ASSIGN_OR_RETURN(auto inputs, parse_inputs(m.graph, input_specs));
  return ModelAndInputs{std::move(m), std::move(inputs)};
}

std::string provider_problem(const std::string& provider) {
  if (provider.empty()) return "--provider '': expected auto, prefer:P or only:P";
  auto policy = policy_from_options("cpu", provider, "checked");
  return policy.ok() ? "" : "--provider: " + policy.message();
}

std::string plan_policy(bool given, const std::string& provider, bool native) {
  if (!native || (given && provider == kEvaluator)) return "";
  return given ? provider : "auto";
}

std::string plan_usage_problem(bool given, const std::string& provider, bool native, const std::string& arith) {
  if (!given || provider == kEvaluator) return "";
  if (std::string problem = provider_problem(provider); !problem.empty()) return problem;
  return native ? "" : "--provider runs a kernel plan in f64 or f32 only, not --arith " + arith;
}

void add_onnx_dim_option(CLI::App& app) {
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
    if (sub->get_option_no_throw("--onnx-dim")) continue;
    sub->add_option_function<std::vector<std::string>>(
           "--onnx-dim",
           [](const std::vector<std::string>& specs) {
             for (const std::string& spec : specs) {
               const size_t eq = spec.find('=');
               int64_t v = -1;
               const char* first = spec.data() + (eq == std::string::npos ? 0 : eq + 1);
               const char* last = spec.data() + spec.size();
               auto [ptr, ec] = std::from_chars(first, last, v);
               if (eq == std::string::npos || eq == 0 || ec != std::errc() || ptr != last || v < 0)
                 throw CLI::ValidationError("--onnx-dim", "expected NAME=VALUE with VALUE >= 0, got '" + spec + "'");
               onnx_options().dims[spec.substr(0, eq)] = v;
             }
           },
           "fix a symbolic ONNX input dim, NAME=VALUE (repeatable); a symbolic batch dim (dim 0) reads as 1 without it")
        ->type_name("NAME=VALUE")
        ->take_all()
        ->allow_extra_args(false);
  }
}

std::string json_number(double v) {
  if (std::isnan(v)) return "\"nan\"";
  if (std::isinf(v)) return v > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt::format("{}", v);
}

int usage_error(const std::string& message) {
  std::cerr << "error: " << message << "\n";
  return kExitUsage;
}

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::optional<int64_t> parse_node_id(std::string_view text) {
  int64_t v = 0;
  if (text.empty() || text[0] < '0' || text[0] > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

Result<int64_t> parse_size(std::string_view text) {
  auto bad = [&](std::string_view why) {
    return Status::error(ErrorCode::kInvalidInput,
                         fmt::format("--max-memory '{}': {}; expected a byte count such as 512M, 4G, 1024K or 1000000",
                                     text, why))
        .with_field("max-memory");
  };
  size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
  if (digits == 0) return bad("no digits");
  uint64_t n = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, n);
  if (ec != std::errc() || end != text.data() + digits) return bad("too large");
  std::string suffix;
  for (char c : text.substr(digits)) suffix += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  int shift = 0;
  if (!suffix.empty() && suffix != "B") {
    static constexpr std::string_view kUnits = "KMGT";
    const size_t unit = kUnits.find(suffix[0]);
    const std::string_view rest = std::string_view(suffix).substr(1);
    if (unit == std::string_view::npos || !(rest.empty() || rest == "B" || rest == "IB"))
      return bad("unknown suffix '" + std::string(text.substr(digits)) + "'");
    shift = 10 * static_cast<int>(unit + 1);
  }
  constexpr uint64_t kMax = uint64_t{1} << 62;
  if (n > (kMax >> shift)) return bad("more than 2^62 bytes");
  n <<= shift;
  if (n == 0) return bad("must be at least 1 byte");
  return static_cast<int64_t>(n);
}

int64_t default_max_memory() { return default_max_bytes(); }

void add_max_memory_option(CLI::App* sub, std::string& text) {
  sub->add_option("--max-memory", text,
                  "memory budget of the evaluation: bytes, or with K/M/G/T (e.g. 512M, 4G); default: half of the "
                  "machine's physical memory (auto)");
}

Result<int64_t> max_memory_bytes(const std::string& text) {
  if (text == "auto") return default_max_memory();
  return parse_size(text);
}

namespace {

// A first, validating pass over a JSON literal: counts the numbers so that an overflow (1e400)
// or a syntax error is reported with the element and byte it concerns, never thrown.
class NumberCounter : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit NumberCounter(std::string label) : label_(std::move(label)) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return ++count_, true; }
  bool number_unsigned(number_unsigned_t) override { return ++count_, true; }
  bool number_float(number_float_t, const string_t&) override { return ++count_, true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t byte, const std::string& token, const nlohmann::detail::exception& e) override {
    if (e.id == 406)
      error_ = fmt::format("{}: element {}: {} overflows a double (largest finite magnitude {})", label_, count_,
                           token, std::numeric_limits<double>::max());
    else
      error_ = fmt::format("{}: malformed JSON at byte {}", label_, byte);
    return false;
  }
  const std::string& error() const { return error_; }

 private:
  std::string label_, error_;
  int64_t count_ = 0;
};

// A tensor from a JSON literal: a number (shape []) or nested lists (shape from the nesting).
Result<Tensor<double>> parse_json_tensor(const std::string& text, const std::string& label) {
  NumberCounter counter(label);
  if (!nlohmann::json::sax_parse(text, &counter)) return error_status(counter.error());
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return error_status(label + ": malformed JSON");
  Tensor<double> t;
  const nlohmann::json* level = &j;
  while (level->is_array()) {
    t.shape.push_back(static_cast<int64_t>(level->size()));
    if (level->empty()) break;
    level = &(*level)[0];
  }
  // Flatten row-major with an explicit stack, checking that the nesting is rectangular.
  std::vector<std::pair<const nlohmann::json*, size_t>> stack{{&j, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (depth == t.shape.size()) {
      if (!v->is_number())
        return error_status(fmt::format("{}: element {}: expected a number, got {}", label, t.data.size(),
                                        v->type_name()));
      t.data.push_back(v->get<double>());
      continue;
    }
    if (!v->is_array() || static_cast<int64_t>(v->size()) != t.shape[depth])
      return error_status(label + ": nested lists are not rectangular");
    for (size_t i = v->size(); i > 0; --i) stack.push_back({&(*v)[i - 1], depth + 1});
  }
  return t;
}

}  // namespace

Result<Tensor<double>> parse_tensor(const std::string& text, const std::string& label) {
  if (!text.empty() && text[0] == '@') {
    auto a = read_npy_file(text.substr(1));
    if (!a.ok()) return error_status(label + ": " + a.message());
    return a->tensor;
  }
  return parse_json_tensor(text, label);
}

Result<std::vector<Tensor<double>>> parse_inputs(const Graph& g, const std::vector<std::string>& specs,
                                                 std::string_view option) {
  const std::vector<int64_t> ids = g.input_ids();
  std::vector<Tensor<double>> out(ids.size());
  std::vector<bool> given(ids.size(), false);
  size_t positional = 0;
  for (const std::string& spec : specs) {
    size_t slot = positional;
    std::string text = spec;
    if (auto eq = spec.find('='); eq != std::string::npos && !spec.empty() && spec[0] != '[' && spec[0] != '@') {
      const std::string prefix = spec.substr(0, eq);
      const std::optional<int64_t> id = parse_node_id(prefix);
      if (!id)
        return error_status(fmt::format("{} '{}': expected ID=TENSOR with a decimal node id, got '{}'", option,
                                        spec.substr(0, 80), prefix.substr(0, 40)));
      auto it = std::find(ids.begin(), ids.end(), *id);
      if (it == ids.end()) return error_status(fmt::format("{}: node {} is not an input node", option, *id));
      slot = static_cast<size_t>(it - ids.begin());
      text = spec.substr(eq + 1);
    } else {
      ++positional;
    }
    if (slot >= ids.size())
      return error_status(fmt::format("{}: the graph has only {} input node(s)", option, ids.size()));
    const std::string label = fmt::format("{} for input node {}", option, ids[slot]);
    DENOTE_ASSIGN_OR_RETURN(Tensor<double> t, parse_tensor(text, label));
    const Shape& declared = g.nodes[ids[slot]].out_shape;
    if (t.shape != declared && t.shape.size() <= 1 && static_cast<int64_t>(t.data.size()) == numel(declared))
      t.shape = declared;  // a flat list with the right count takes the declared shape
    if (t.shape != declared)
      return error_status(fmt::format("{}: expected shape {} ({} elements), got shape {} ({} elements)", label,
                                      to_string(declared), numel(declared), to_string(t.shape), t.data.size()));
    out[slot] = std::move(t);
    given[slot] = true;
  }
  for (size_t k = 0; k < ids.size(); ++k)
    if (!given[k]) return error_status(fmt::format("missing {} for input node {}", option, ids[k]));
  return out;
}

void add_model_and_inputs(CLI::App* sub, std::string& path, std::vector<std::string>& inputs) {
  sub->add_option("model", path, "model file (.json torchlean.ir.v1 or .onnx)")->required();
  sub->add_option("--input", inputs,
                  "input tensor: JSON array, @file.npy, or ID=TENSOR; repeat in the order of the input nodes")
      ->allow_extra_args(false);  // a JSON array is one value, not a CLI11 list
}

}  // namespace denote::cli
