// denote scalar: the bit-level batch evaluator of docs/CLI.md. Reads `OP DTYPE ROUNDING ARG...`
// lines from stdin and writes one line per input line: `RESULT_WORD FLAGS` or `error: MESSAGE`.
// A bad line never stops the batch; the exit status is 0 once stdin is exhausted. DTYPE is a binary
// format, bool, int8..uint64, int(W) or uint(W) (docs/TYPED.md); integer ops report no flags.
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_ops.h"
#include "denote/typed/cast.h"
#include "denote/typed/dtype.h"
#include "denote/typed/int_ops.h"

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
  bool saturate = false;  // cast_sat: overflow gives +-max (flag saturated), ONNX Cast saturate=1
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
    {"cast_sat", nullptr, nullptr, false, true, true},
};

const OpEntry* find_op(std::string_view name) {
  for (const OpEntry& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

size_t arity(const OpEntry& op) { return op.fma ? 3 : op.binary ? 2 : 1; }

// `0x` + hex digits (any length: wide integer words), then the dtype's width check.
Result<Word> parse_hex_word(const typed::DType& t, std::string_view s) {
  const bool hex = s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
  auto w = hex ? parse_word(s) : Result<Word>(error_status(""));
  if (!w.ok()) return error_status(fmt::format("malformed word '{}' (expected hex like 0x3f80)", s));
  DENOTE_RETURN_IF_ERROR(typed::check_word(t, *w));
  return w;
}

// The IR op an integer/bool line means: add, sub, mul, min, max name the elementwise ops; the
// others are IR tags (div_trunc, pow, exp ...). fma has none.
std::optional<Op> int_op_of(std::string_view name) {
  if (name == "add") return Op::Add;
  if (name == "sub") return Op::Sub;
  if (name == "mul") return Op::MulElem;
  if (name == "min") return Op::MinElem;
  if (name == "max") return Op::MaxElem;
  return op_from_tag(name);
}

// Integer pow modulo 2^W costs one W-bit squaring per exponent bit (int(65536) with a 65536-bit
// exponent: seconds). A line may ask for at most kMaxPowWork = exponent bits x W: every width up to
// 8192 bits is unrestricted, int(65536) takes exponents below 2^1024.
constexpr int64_t kMaxPowWork = int64_t{1} << 26;

std::string pow_work_error(const typed::DType& t, const Word& exponent) {
  const bool negative = t.is_signed && exponent.bit_length() == t.width;  // cheap rule: no squarings
  const int64_t bits = exponent.bit_length();
  if (negative || t.width <= 64 || bits * t.width <= kMaxPowWork) return "";
  return fmt::format("error: pow: a {}-bit exponent in {} is {} bit-squarings, above the scalar line limit of 2^26 "
                     "(exponent bits x width)",
                     bits, typed::dtype_name(t), bits * t.width);
}

// sin/cos reduce the argument modulo pi with about log2|x| extra bits: binary(30,F) reaches 2^(2^29),
// hours of MPFR. A line may ask for |x| < 2^(2^21 + 1) (binary(E,F) with E <= 22 entirely: about a
// second on the build machine).
constexpr int64_t kMaxTrigExponent = int64_t{1} << 21;

std::string trig_work_error(const OpEntry& op, const BinaryFormat& f, uint64_t w) {
  if (op.name != "sin" && op.name != "cos") return "";
  const FloatClass c = classify(f, w);
  if (c != FloatClass::Normal) return "";
  const int64_t field = static_cast<int64_t>((w >> f.frac_bits) & ((uint64_t{1} << f.exp_bits) - 1));
  const int64_t e = field - f.bias;
  if (e <= kMaxTrigExponent) return "";
  return fmt::format("error: {}: the argument is about 2^{}, above the scalar line limit of 2^{} (its argument "
                     "reduction needs that many bits)",
                     op.name, e, kMaxTrigExponent);
}

std::string int_answer(const OpEntry& op, const typed::DType& t, const Word* a) {
  const std::optional<Op> iop = int_op_of(op.name);
  if (!iop) return fmt::format("error: {} is not defined on {}", op.name, typed::dtype_name(t));
  if (typed::is_int_power(*iop))
    if (std::string e = pow_work_error(t, a[1]); !e.empty()) return e;
  auto r = typed::apply_words(*iop, t, a[0], a[1]);
  if (!r.ok()) return "error: " + r.message();
  return to_hex(*r) + " -";
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
    if (arrow == std::string::npos) return fmt::format("error: {}: expected SRC->DST, got '{}'", op->name, tok[1]);
    src = tok[1].substr(0, arrow);
    dst = tok[1].substr(arrow + 2);
  }
  auto from = typed::parse_dtype(src);
  if (!from.ok()) return "error: " + from.message();
  Result<typed::DType> to = *from;
  if (op->cast && !(to = typed::parse_dtype(dst)).ok()) return "error: " + to.message();
  const std::optional<Rounding> mode = parse_rounding(tok[2]);
  if (!mode) return fmt::format("error: unknown rounding mode '{}'", tok[2]);
  if (tok.size() - 3 != arity(*op))
    return fmt::format("error: {} takes {} argument(s), got {}", op->name, arity(*op), tok.size() - 3);
  Word a[3];
  for (size_t k = 0; k < arity(*op); ++k) {
    auto w = parse_hex_word(*from, tok[3 + k]);
    if (!w.ok()) return "error: " + w.message();
    a[k] = *w;
  }
  if (op->saturate) {
    if (!from->is_binary() || !to->is_binary())
      return fmt::format("error: cast_sat: a saturating conversion is between binary formats, got {}->{}",
                         typed::dtype_name(*from), typed::dtype_name(*to));
    FpEnv env{*mode, 0, {}};
    return answer(fp_convert(from->format, to->format, env, a[0].low(), /*saturate=*/true), env);
  }
  if (op->cast) {
    auto r = typed::cast_word(*from, *to, *mode, a[0]);
    if (!r.ok()) return "error: " + r.message();
    return fmt::format("{} {}", to_hex(r->word), flags_to_string(r->flags));
  }
  if (!from->is_binary()) return int_answer(*op, *from, a);
  FpEnv env{*mode, 0, {}};
  const BinaryFormat& f = from->format;
  if (op->fma) return answer(fp_fma(f, env, a[0].low(), a[1].low(), a[2].low()), env);
  if (op->binary) return answer(op->binary(f, env, a[0].low(), a[1].low()), env);
  if (std::string e = trig_work_error(*op, f, a[0].low()); !e.empty()) return e;
  return answer(op->unary(f, env, a[0].low()), env);
}

// The longest useful line: op, SRC->DST, mode and two int(65536) words (2 x 16386 characters), with
// room to spare; a longer line is answered by an error without being kept in memory.
constexpr size_t kMaxLineChars = 65536;

// Reads one line (without its '\n') into `line`, keeping at most kMaxLineChars characters;
// `length` is the full length. False at the end of the input.
bool read_line(std::istream& in, std::string& line, size_t& length) {
  line.clear();
  length = 0;
  std::streambuf* buf = in.rdbuf();
  for (int c = buf->sbumpc(); c != std::char_traits<char>::eof(); c = buf->sbumpc()) {
    if (c == '\n') return true;
    if (++length <= kMaxLineChars) line.push_back(static_cast<char>(c));
  }
  return length > 0;
}

int run_scalar() {
  std::string line;
  for (size_t length = 0; read_line(std::cin, line, length);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string out = length > kMaxLineChars
                                ? fmt::format("error: line of {} characters exceeds the limit of {}", length, kMaxLineChars)
                                : evaluate_line(line);
    std::cout << out << std::endl;  // flushed: a driver may wait for each answer
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
