// denote scalar: the bit-level batch evaluator of docs/CLI.md. Reads `OP DTYPE ROUNDING ARG...`
// lines from stdin and writes one line per input line: `RESULT_WORD FLAGS` or `error: MESSAGE`.
// A bad line never stops the batch; the exit status is 0 once stdin is exhausted.
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_ops.h"

namespace denote::cli {

namespace {

using Unary = uint64_t (*)(const BinaryFormat&, FpEnv&, uint64_t);
using Binary = uint64_t (*)(const BinaryFormat&, FpEnv&, uint64_t, uint64_t);

uint64_t clamp_min(const BinaryFormat& f, FpEnv& env, uint64_t x, uint64_t bound) { return fp_max(f, env, x, bound); }

struct OpEntry {
  std::string_view name;
  Unary unary = nullptr;
  Binary binary = nullptr;
  bool fma = false;
  bool cast = false;
};

const OpEntry kOps[] = {
    {"add", nullptr, fp_add},       {"sub", nullptr, fp_sub},       {"mul", nullptr, fp_mul},
    {"div", nullptr, fp_div},       {"sqrt", fp_sqrt},              {"fma", nullptr, nullptr, true},
    {"neg", fp_neg},                {"abs", fp_abs},                {"min", nullptr, fp_min},
    {"max", nullptr, fp_max},       {"exp", fp_exp},                {"log", fp_log},
    {"tanh", fp_tanh},              {"sigmoid", fp_sigmoid},        {"softplus", fp_softplus},
    {"erf", fp_erf},                {"gelu", fp_gelu},              {"sin", fp_sin},
    {"cos", fp_cos},                {"rsqrt", fp_rsqrt},            {"div_trunc", nullptr, fp_div_trunc},
    {"div_floor", nullptr, fp_div_floor}, {"remainder", nullptr, fp_remainder}, {"pow", nullptr, fp_pow},
    {"clamp_min", nullptr, clamp_min},    {"cast", nullptr, nullptr, false, true},
};

const OpEntry* find_op(std::string_view name) {
  for (const OpEntry& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

size_t arity(const OpEntry& op) { return op.fma ? 3 : op.binary ? 2 : 1; }

bool all_digits(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// int8, uint16, int(W), uint(W), bool: the typed-integer dtypes of seed 001 (a later issue).
bool is_integer_dtype(std::string_view s) {
  if (s.starts_with("uint")) s.remove_prefix(4);
  else if (s.starts_with("int")) s.remove_prefix(3);
  else return false;
  if (all_digits(s)) return true;
  return s.size() > 2 && s.front() == '(' && s.back() == ')' && all_digits(s.substr(1, s.size() - 2));
}

Result<BinaryFormat> parse_dtype(std::string_view s) {
  if (s == "bool") return error_status("the bool dtype is not implemented yet");
  if (is_integer_dtype(s)) return error_status("integer dtypes are not implemented yet");
  return parse_format(s);
}

// `0x` + 1..16 hex digits, then the format's width check.
Result<uint64_t> parse_word(const BinaryFormat& f, std::string_view s) {
  std::string_view digits = s;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) digits.remove_prefix(2);
  else return error_status(fmt::format("malformed word '{}' (expected hex like 0x3f80)", s));
  if (digits.empty() || digits.size() > 16 || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
    return error_status(fmt::format("malformed word '{}' (expected hex like 0x3f80)", s));
  const uint64_t w = std::stoull(std::string(digits), nullptr, 16);
  DENOTE_RETURN_IF_ERROR(check_word(f, w));
  return w;
}

std::string answer(uint64_t word, const FpEnv& env) {
  if (!env.error.empty()) return "error: " + env.error;
  return fmt::format("{:#x} {}", word, flags_to_string(env.flags));
}

// One input line -> one output line.
std::string evaluate_line(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> tok;
  for (std::string t; in >> t;) tok.push_back(t);
  if (tok.empty()) return "error: empty line (expected OP DTYPE ROUNDING ARG...)";
  const OpEntry* op = find_op(tok[0]);
  if (!op) return fmt::format("error: unknown op '{}'", tok[0]);
  if (tok.size() < 3) return fmt::format("error: {}: expected OP DTYPE ROUNDING ARG...", tok[0]);
  std::string src = tok[1], dst;
  if (op->cast) {
    const size_t arrow = tok[1].find("->");
    if (arrow == std::string::npos) return fmt::format("error: cast: expected SRC->DST, got '{}'", tok[1]);
    src = tok[1].substr(0, arrow);
    dst = tok[1].substr(arrow + 2);
  }
  auto from = parse_dtype(src);
  if (!from.ok()) return "error: " + from.message();
  Result<BinaryFormat> to = *from;
  if (op->cast && !(to = parse_dtype(dst)).ok()) return "error: " + to.message();
  const std::optional<Rounding> mode = parse_rounding(tok[2]);
  if (!mode) return fmt::format("error: unknown rounding mode '{}'", tok[2]);
  if (tok.size() - 3 != arity(*op))
    return fmt::format("error: {} takes {} argument(s), got {}", op->name, arity(*op), tok.size() - 3);
  uint64_t a[3] = {0, 0, 0};
  for (size_t k = 0; k < arity(*op); ++k) {
    auto w = parse_word(*from, tok[3 + k]);
    if (!w.ok()) return "error: " + w.message();
    a[k] = *w;
  }
  FpEnv env{*mode, 0, {}};
  const BinaryFormat& f = *from;
  if (op->cast) return answer(fp_convert(f, *to, env, a[0]), env);
  if (op->fma) return answer(fp_fma(f, env, a[0], a[1], a[2]), env);
  if (op->binary) return answer(op->binary(f, env, a[0], a[1]), env);
  return answer(op->unary(f, env, a[0]), env);
}

int run_scalar() {
  for (std::string line; std::getline(std::cin, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::cout << evaluate_line(line) << std::endl;  // flushed: a driver may wait for each answer
  }
  return kExitOk;
}

}  // namespace

void add_scalar(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand(
      "scalar",
      "bit-level batch evaluator: reads 'OP DTYPE ROUNDING ARG...' lines from stdin (e.g. 'add bfloat16 "
      "nearest-even 0x3f80 0x3f80'), writes 'RESULT_WORD FLAGS' or 'error: MESSAGE' per line");
  sub->callback([&cmd] { cmd.run = [] { return run_scalar(); }; });
}

}  // namespace denote::cli
