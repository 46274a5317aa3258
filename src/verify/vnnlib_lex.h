// Internal to the VNN-LIB parser (src/verify/vnnlib.cc): exact decimals, their directed doubles,
// the exact sign of a sum of products minus a decimal (MPFR), and the tokenizer.
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "denote/base/status.h"

namespace denote::vnnlib {

// A decimal number exactly: (neg ? -1 : 1) * digits * 10^exp, digits an integer without leading or
// trailing zeros (trailing zeros move into exp). Zero: digits empty, neg false, exp 0.
struct Dec {
  bool neg = false;
  std::string digits;
  int64_t exp = 0;
  bool zero() const { return digits.empty(); }
};

// Limits on one number lexeme (characters after the sign; the exponent field's magnitude) (keeps every exact computation small: at most a few thousand bits).
inline constexpr size_t kMaxNumberChars = 1000;
inline constexpr int64_t kMaxExponentField = 1000;

enum class DecParse { kOk, kSyntax, kTooLong, kExponentRange };
// [+-]? (digits [. digits*] | . digits) ([eE] [+-]? digits)?
DecParse parse_decimal(std::string_view s, Dec& out);

int compare_dec(const Dec& a, const Dec& b);  // sign of a - b, exact
Dec add_dec(const Dec& a, const Dec& b);      // exact
Dec negate_dec(Dec a);
std::string dec_text(const Dec& d);                 // a canonical text parse_decimal reads back
std::string negate_text(std::string_view text);     // "-0.5" <-> "0.5", "+1" -> "-1"
// The doubles just below and above d (equal when d is a double); outside the double range: the
// largest finite double and infinity (or the zero and the smallest subnormal) on either side.
void directed_doubles(const Dec& d, double& down, double& up);

// sign(sum_j c_j * y_j - d), exactly: -1, 0, 1; 2 when a term is NaN or +inf and -inf both occur.
int sign_of_products_minus(const std::vector<std::pair<double, double>>& products, const Dec& d);
// The same with MPFR factors y_j (any precision; NaN and infinities as above).
int sign_of_products_minus_mp(const std::vector<std::pair<double, mpfr_srcptr>>& products, const Dec& d);

// X_<i> / Y_<j> (kind 'X' or 'Y'), the index without leading zeros and below 10^9.
bool parse_var_name(std::string_view s, char& kind, int64_t& index);
// Whether a + b is exactly a finite double (s = a + b).
bool exact_sum(double a, double b, double& s);

// Tokens. Positions are 1-based line and column (bytes).
struct Token {
  // kLBracket, kRBracket, kComma, kString: VNN-LIB 2.0 only (Lexer::set_v2): X[0, 1], "onnx_name".
  enum Kind { kOpen, kClose, kSymbol, kNumber, kEnd, kLBracket, kRBracket, kComma, kString } kind = kEnd;
  std::string_view text;
  int64_t line = 1, col = 1;
  Dec number;  // for kNumber
};

class Lexer {
 public:
  Lexer(std::string_view src, std::string_view file) : src_(src), file_(file) {}
  // The next token, or an error (a character outside the accepted set, a malformed number).
  Status next(Token& t);
  Status error_at(int64_t line, int64_t col, ErrorCode code, std::string_view what, std::string_view expected) const;
  const std::string& file() const { return file_; }
  // VNN-LIB 2.0 (after its version line): '[', ']', ',' and double-quoted strings are tokens too.
  void set_v2(bool on) { v2_ = on; }

 private:
  bool punctuation(Token& t);
  Status string_token(Token& t);
  bool v2_ = false;
  std::string_view src_;
  std::string file_;
  size_t at_ = 0;
  int64_t line_ = 1, col_ = 1;
};

// How a token reads in an error message: 'text' (cut to 40 characters), '(' , ')' or end of file.
std::string describe(const Token& t);

}  // namespace denote::vnnlib
