// libFuzzer target: the `denote scalar` line protocol (tools/denote/cmd_scalar.cc). An input is the
// text of stdin: it is cut into lines by the CLI's own reader (with its 65536-character line limit)
// and every line is answered by the CLI's own evaluate_line. Every line must give exactly one
// answer, `0x... FLAGS` or `error: MESSAGE`, on one line, never a crash (ASan + UBSan watch).
//
// The line functions live in an anonymous namespace of the CLI source, so this target compiles
// that file into itself (the CLI's `main` is elsewhere); it fuzzes exactly what `denote scalar` runs,
// except sin/cos lines of arguments above 2^4096 (slow by design, see kFuzzTrigExponent).
//
//   TARGET=scalar_line scripts/fuzz.sh 60
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>

#include "../tools/denote/cmd_scalar.cc"  // NOLINT(bugprone-suspicious-include)

namespace {

// sin/cos of a huge argument reduce it modulo pi with about log2|x| bits of MPFR: the CLI allows
// arguments up to 2^(2^21) (about a second a line, a documented bound, docs/CLI.md). Such lines
// would bring the fuzzer down to a few executions a second without reaching other code, so the
// target answers sin/cos lines only up to 2^4096 (binary64 and every format with E <= 13 entirely).
constexpr int64_t kFuzzTrigExponent = 4096;

bool slow_trig_line(const std::string& line) {
  std::istringstream in(line);
  std::string op, dtype, mode, arg;
  if (!(in >> op >> dtype >> mode >> arg) || (op != "sin" && op != "cos")) return false;
  auto t = denote::typed::parse_dtype(dtype);
  auto w = denote::parse_word(arg);
  if (!t.ok() || !t->is_binary() || !w.ok() || w->limbs.size() > 1) return false;
  const denote::BinaryFormat& f = t->format;
  const uint64_t field = (w->low() >> f.frac_bits) & ((uint64_t{1} << f.exp_bits) - 1);
  return static_cast<int64_t>(field) - f.bias > kFuzzTrigExponent;
}

// One answer: "error: ..." or "0x<hex> <flags>" (flags "-" or a comma list of names), no newline.
bool well_formed(const std::string& out) {
  if (out.find('\n') != std::string::npos) return false;
  if (out.rfind("error: ", 0) == 0) return true;
  if (out.size() < 5 || out[0] != '0' || out[1] != 'x') return false;
  const size_t space = out.find(' ');
  if (space == std::string::npos || space < 3 || space + 1 >= out.size()) return false;
  for (size_t i = 2; i < space; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(out[i]))) return false;
  for (size_t i = space + 1; i < out.size(); ++i) {
    const char c = out[i];
    if (!(c == '-' || c == ',' || (c >= 'a' && c <= 'z'))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  std::string line;
  for (size_t length = 0; denote::cli::read_line(in, line, length);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (length > denote::cli::kMaxLineChars) continue;  // answered by the length error, not evaluated
    if (slow_trig_line(line)) continue;
    const std::string out = denote::cli::evaluate_line(line);
    if (!well_formed(out)) __builtin_trap();
  }
  return 0;
}
