// VNN-LIB tokenizer and exact decimal arithmetic (see vnnlib_lex.h), plus the exact comparisons of
// include/denote/verify/vnnlib.h (compare_exact, atom_holds_exact).
#include "vnnlib_lex.h"

#include <mpfr.h>

#include <algorithm>
#include <cmath>
#include <deque>

#include <fmt/format.h>

#include "denote/verify/vnnlib.h"

namespace denote {
namespace vnnlib {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// An owned mpfr_t.
struct Mp {
  explicit Mp(mpfr_prec_t p) { mpfr_init2(v, p); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_t v;
};

// Magnitude comparison of two nonzero decimals.
int compare_magnitude(const Dec& a, const Dec& b) {
  const int64_t pa = static_cast<int64_t>(a.digits.size()) + a.exp;  // position of the leading digit
  const int64_t pb = static_cast<int64_t>(b.digits.size()) + b.exp;
  if (pa != pb) return pa < pb ? -1 : 1;
  const size_t n = std::max(a.digits.size(), b.digits.size());
  for (size_t i = 0; i < n; ++i) {
    const char ca = i < a.digits.size() ? a.digits[i] : '0';
    const char cb = i < b.digits.size() ? b.digits[i] : '0';
    if (ca != cb) return ca < cb ? -1 : 1;
  }
  return 0;
}

void normalize(Dec& d) {
  size_t lead = 0;
  while (lead < d.digits.size() && d.digits[lead] == '0') ++lead;
  d.digits.erase(0, lead);
  while (!d.digits.empty() && d.digits.back() == '0') {
    d.digits.pop_back();
    ++d.exp;
  }
  if (d.digits.empty()) d = Dec{};
}

// Digit strings aligned to exponent e (e <= both exponents).
std::string aligned(const Dec& d, int64_t e) { return d.digits + std::string(static_cast<size_t>(d.exp - e), '0'); }

// Bits that hold 5^k exactly (log2 5 < 2.33), with a margin.
mpfr_prec_t bits_of_pow5(int64_t k) { return static_cast<mpfr_prec_t>(k * 233 / 100 + 8); }

}  // namespace

DecParse parse_decimal(std::string_view s, Dec& out) {
  size_t i = 0;
  Dec d;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) d.neg = s[i++] == '-';
  if (s.size() - i > kMaxNumberChars) return DecParse::kTooLong;
  size_t int_digits = 0, frac_digits = 0;
  std::string digits;
  while (i < s.size() && is_digit(s[i])) digits += s[i++], ++int_digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) digits += s[i++], ++frac_digits;
  }
  if (int_digits + frac_digits == 0) return DecParse::kSyntax;
  int64_t e = 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    bool eneg = false;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) eneg = s[i++] == '-';
    if (i == s.size() || !is_digit(s[i])) return DecParse::kSyntax;
    while (i < s.size() && is_digit(s[i])) {
      e = e * 10 + (s[i++] - '0');
      if (e > kMaxExponentField) return DecParse::kExponentRange;
    }
    if (eneg) e = -e;
  }
  if (i != s.size()) return DecParse::kSyntax;
  d.digits = std::move(digits);
  d.exp = e - static_cast<int64_t>(frac_digits);
  normalize(d);
  out = std::move(d);
  return DecParse::kOk;
}

int compare_dec(const Dec& a, const Dec& b) {
  const int sa = a.zero() ? 0 : (a.neg ? -1 : 1), sb = b.zero() ? 0 : (b.neg ? -1 : 1);
  if (sa != sb) return sa < sb ? -1 : 1;
  if (sa == 0) return 0;
  const int m = compare_magnitude(a, b);
  return sa > 0 ? m : -m;
}

Dec add_dec(const Dec& a, const Dec& b) {
  if (a.zero()) return b;
  if (b.zero()) return a;
  const int64_t e = std::min(a.exp, b.exp);
  std::string x = aligned(a, e), y = aligned(b, e);
  Dec r;
  r.exp = e;
  if (a.neg == b.neg) {
    r.neg = a.neg;
    if (x.size() < y.size()) std::swap(x, y);
    y.insert(0, x.size() - y.size(), '0');
    int carry = 0;
    for (size_t i = x.size(); i-- > 0;) {
      const int s = (x[i] - '0') + (y[i] - '0') + carry;
      x[i] = static_cast<char>('0' + s % 10);
      carry = s / 10;
    }
    if (carry) x.insert(x.begin(), '1');
    r.digits = std::move(x);
  } else {
    const int m = compare_magnitude(a, b);
    if (m == 0) return Dec{};
    if (m < 0) std::swap(x, y);
    r.neg = m > 0 ? a.neg : b.neg;
    y.insert(0, x.size() - y.size(), '0');
    int borrow = 0;
    for (size_t i = x.size(); i-- > 0;) {
      int s = (x[i] - '0') - (y[i] - '0') - borrow;
      borrow = s < 0;
      if (s < 0) s += 10;
      x[i] = static_cast<char>('0' + s);
    }
    r.digits = std::move(x);
  }
  normalize(r);
  return r;
}

Dec negate_dec(Dec a) {
  if (!a.zero()) a.neg = !a.neg;
  return a;
}

std::string dec_text(const Dec& d) {
  if (d.zero()) return "0";
  const int64_t n = static_cast<int64_t>(d.digits.size()), e = d.exp;
  std::string s = d.neg ? "-" : "";
  if (e >= 0 && n + e <= 30) return s + d.digits + std::string(static_cast<size_t>(e), '0');
  if (e < 0 && -e < n) return s + d.digits.substr(0, n + e) + "." + d.digits.substr(n + e);
  if (e < 0 && -e - n <= 20) return s + "0." + std::string(static_cast<size_t>(-e - n), '0') + d.digits;
  s += d.digits[0];
  if (n > 1) {
    s += '.';
    s.append(d.digits, 1, std::string::npos);
  }
  s += 'e';
  s += std::to_string(e + n - 1);
  return s;
}

std::string negate_text(std::string_view text) {
  if (!text.empty() && text[0] == '-') return std::string(text.substr(1));
  std::string r(1, '-');
  r.append(!text.empty() && text[0] == '+' ? text.substr(1) : text);
  return r;
}

void directed_doubles(const Dec& d, double& down, double& up) {
  if (d.zero()) {
    down = up = 0;
    return;
  }
  // mpfr_strtofr rounds correctly in the given direction to 53 bits (MPFR's exponent range is far
  // wider than double's); mpfr_get_d then rounds the same way to double, subnormals and overflow
  // included. Two roundings in one direction equal one, since every double is a 53-bit MPFR number.
  const std::string s = (d.neg ? "-" : "") + d.digits + "e" + std::to_string(d.exp);
  Mp v(53);
  mpfr_strtofr(v.v, s.c_str(), nullptr, 10, MPFR_RNDD);
  down = mpfr_get_d(v.v, MPFR_RNDD);
  mpfr_strtofr(v.v, s.c_str(), nullptr, 10, MPFR_RNDU);
  up = mpfr_get_d(v.v, MPFR_RNDU);
}

// Exactness argument. Let K = max(0, -d.exp), so that d * 10^K = D is an integer. Then
//   sign(sum c_j y_j - d) = sign(sum c_j y_j 2^K 5^K - D).
// Each c_j * y_j is a product of a double and a p-bit number: exact in 53 + p bits (106 for doubles). 5^K is exact in bits_of_pow5(K)
// bits (checked: mpfr_ui_pow_ui returns 0 when exact), and a product of an a-bit and a b-bit number
// is exact in a + b bits; scaling by 2^K is exact. D has L = digits + d.exp + K decimal digits, so it
// is exact in 4 L bits (log2 10 < 4). mpfr_sum rounds the exact sum of its exact operands correctly,
// and correct rounding keeps the sign (zero only for an exact zero: no underflow at MPFR's exponent
// range). A number lexeme has at most kMaxNumberChars characters and an exponent field within
// +-kMaxExponentField, so K and L stay below a few thousand and every precision below 3 * 10^4 bits.
int sign_of_products_minus(const std::vector<std::pair<double, double>>& products, const Dec& d) {
  std::deque<Mp> ys;  // each double held exactly in 53 bits
  std::vector<std::pair<double, mpfr_srcptr>> mp;
  for (const auto& [c, y] : products) {
    Mp& v = ys.emplace_back(53);
    mpfr_set_d(v.v, y, MPFR_RNDN);
    mp.emplace_back(c, v.v);
  }
  return sign_of_products_minus_mp(mp, d);
}

// The same with MPFR factors: c_j * y_j is exact in 53 + prec(y_j) bits.
int sign_of_products_minus_mp(const std::vector<std::pair<double, mpfr_srcptr>>& products, const Dec& d) {
  bool pos_inf = false, neg_inf = false;
  std::vector<std::pair<double, mpfr_srcptr>> finite;
  for (const auto& [c, y] : products) {
    if (std::isnan(c) || mpfr_nan_p(y)) return 2;
    if (c == 0 || mpfr_zero_p(y)) continue;
    if (std::isinf(c) || mpfr_inf_p(y)) {
      ((c > 0) == (mpfr_sgn(y) > 0) ? pos_inf : neg_inf) = true;
      continue;
    }
    finite.emplace_back(c, y);
  }
  if (pos_inf && neg_inf) return 2;
  if (pos_inf) return 1;
  if (neg_inf) return -1;
  const int64_t k = d.exp < 0 ? -d.exp : 0;
  const mpfr_prec_t p5 = bits_of_pow5(k);
  Mp five(p5);
  mpfr_ui_pow_ui(five.v, 5, static_cast<unsigned long>(k), MPFR_RNDN);
  std::deque<Mp> terms;  // Mp neither copies nor moves: a deque keeps them in place
  std::vector<mpfr_ptr> ptrs;
  for (const auto& [c, y] : finite) {
    Mp* t = &terms.emplace_back(53 + mpfr_get_prec(y) + p5);
    mpfr_mul_d(t->v, y, c, MPFR_RNDN);
    mpfr_mul(t->v, t->v, five.v, MPFR_RNDN);
    mpfr_mul_2si(t->v, t->v, static_cast<long>(k), MPFR_RNDN);
  }
  if (!d.zero()) {
    const std::string integer = (d.neg ? "" : "-") + d.digits + std::string(static_cast<size_t>(d.exp + k), '0');
    Mp& t = terms.emplace_back(static_cast<mpfr_prec_t>(4 * integer.size() + 8));
    mpfr_set_str(t.v, integer.c_str(), 10, MPFR_RNDN);
  }
  for (Mp& t : terms) ptrs.push_back(t.v);
  Mp sum(64);
  mpfr_sum(sum.v, ptrs.data(), static_cast<unsigned long>(ptrs.size()), MPFR_RNDN);
  const int s = mpfr_sgn(sum.v);
  return s < 0 ? -1 : (s > 0 ? 1 : 0);
}

// X_<i> / Y_<j>, i without leading zeros, below 10^9.
bool parse_var_name(std::string_view s, char& kind, int64_t& index) {
  if (s.size() < 3 || (s[0] != 'X' && s[0] != 'Y') || s[1] != '_' || s.size() > 11) return false;
  if (s[2] == '0' && s.size() > 3) return false;
  index = 0;
  for (size_t i = 2; i < s.size(); ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    index = index * 10 + (s[i] - '0');
  }
  kind = s[0];
  return true;
}

// Whether a + b is exactly a finite double (the two-sum error term is zero).
bool exact_sum(double a, double b, double& s) {
  s = a + b;
  if (!std::isfinite(s)) return false;
  const double bb = s - a;
  return (a - (s - bb)) + (b - bb) == 0;
}

// ---- tokenizer ----

namespace {

bool is_symbol_char(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c)) return true;
  return std::string_view("~!@$%^&*_-+=<>.?/:").find(c) != std::string_view::npos;
}

bool looks_numeric(std::string_view s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i == s.size()) return false;
  return is_digit(s[i]) || s[i] == '.';
}

std::string printable(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return fmt::format("'{}'", c);
  return fmt::format("byte 0x{:02x}", u);
}

}  // namespace

Status Lexer::error_at(int64_t line, int64_t col, ErrorCode code, std::string_view what,
                       std::string_view expected) const {
  return error_status(code, fmt::format("{}:{}:{}: {}; expected {}", file_, line, col, what, expected));
}

Status Lexer::next(Token& t) {
  for (;;) {
    if (at_ >= src_.size()) {
      t = Token{};
      t.kind = Token::kEnd;
      t.line = line_;
      t.col = col_;
      return ok_status();
    }
    const char c = src_[at_];
    if (c == '\n') {
      ++at_, ++line_, col_ = 1;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++at_, ++col_;
    } else if (c == ';') {
      while (at_ < src_.size() && src_[at_] != '\n') ++at_, ++col_;
    } else {
      break;
    }
  }
  t = Token{};
  t.line = line_;
  t.col = col_;
  const char c = src_[at_];
  if (c == '(' || c == ')') {
    t.kind = c == '(' ? Token::kOpen : Token::kClose;
    t.text = src_.substr(at_, 1);
    ++at_, ++col_;
    return ok_status();
  }
  if (v2_ && punctuation(t)) return ok_status();
  if (v2_ && c == '"') return string_token(t);
  if (!is_symbol_char(c)) {
    if (c == '|' || c == '"')
      return error_at(line_, col_, ErrorCode::kUnsupported,
                      fmt::format("{} (quoted symbols and strings are not supported)", printable(c)),
                      "a symbol, a number, '(' or ')'");
    return error_at(line_, col_, ErrorCode::kInvalidInput, fmt::format("unexpected character {}", printable(c)),
                    "a symbol, a number, '(', ')' or a comment");
  }
  const size_t start = at_;
  while (at_ < src_.size() && is_symbol_char(src_[at_])) ++at_;
  t.text = src_.substr(start, at_ - start);
  col_ += static_cast<int64_t>(at_ - start);
  if (!looks_numeric(t.text)) {
    t.kind = Token::kSymbol;
    return ok_status();
  }
  t.kind = Token::kNumber;
  const std::string quoted = describe(t);
  switch (parse_decimal(t.text, t.number)) {
    case DecParse::kOk:
      return ok_status();
    case DecParse::kTooLong:
      return error_at(t.line, t.col, ErrorCode::kResource,
                      fmt::format("number of {} characters is too long", t.text.size()),
                      fmt::format("at most {} characters after the sign", kMaxNumberChars));
    case DecParse::kExponentRange:
      return error_at(t.line, t.col, ErrorCode::kResource, fmt::format("exponent of number {} out of range", quoted),
                      fmt::format("an exponent within -{0}..{0}", kMaxExponentField));
    case DecParse::kSyntax:
      break;
  }
  return error_at(t.line, t.col, ErrorCode::kInvalidInput, fmt::format("bad number {}", quoted),
                  "a decimal such as 0.5, -1, .25 or 1e-3");
}

bool Lexer::punctuation(Token& t) {
  const char c = src_[at_];
  if (c != '[' && c != ']' && c != ',') return false;
  t.kind = c == '[' ? Token::kLBracket : c == ']' ? Token::kRBracket : Token::kComma;
  t.text = src_.substr(at_, 1);
  ++at_, ++col_;
  return true;
}

// "..." on one line, no escapes (an ONNX node name); the text is what lies between the quotes.
Status Lexer::string_token(Token& t) {
  const size_t start = ++at_;
  while (at_ < src_.size() && src_[at_] != '"' && src_[at_] != '\n') ++at_;
  if (at_ >= src_.size() || src_[at_] != '"')
    return error_at(t.line, t.col, ErrorCode::kInvalidInput, "unterminated string", "'\"' closing it on the same line");
  t.kind = Token::kString;
  t.text = src_.substr(start, at_ - start);
  col_ += static_cast<int64_t>(at_ - start + 2);
  ++at_;
  return ok_status();
}

std::string describe(const Token& t) {
  switch (t.kind) {
    case Token::kOpen:
      return "'('";
    case Token::kClose:
      return "')'";
    case Token::kEnd:
      return "end of file";
    default:
      break;
  }
  if (t.text.size() > 40) return fmt::format("'{}...'", t.text.substr(0, 40));
  return fmt::format("'{}'", t.text);
}

}  // namespace vnnlib

// ---- exact comparisons (public API) ----

int compare_exact(double x, const VnnDecimal& d) {
  if (std::isnan(x)) return 2;
  vnnlib::Dec dec;
  if (vnnlib::parse_decimal(d.text, dec) != vnnlib::DecParse::kOk) {
    // No exact text: decide from the enclosing doubles where they decide.
    if (d.down == d.up) return x < d.down ? -1 : (x > d.down ? 1 : 0);
    if (x <= d.down) return -1;
    if (x >= d.up) return 1;
    return 2;
  }
  return vnnlib::sign_of_products_minus({{1.0, x}}, dec);
}

namespace {

// The atom's right-hand side as one exact decimal; false for an unreadable term.
bool atom_rhs_exact(const VnnAtom& a, vnnlib::Dec& rhs) {
  rhs = vnnlib::Dec{};
  for (const VnnDecimal& t : a.rhs_terms) {
    vnnlib::Dec term;
    if (vnnlib::parse_decimal(t.text, term) != vnnlib::DecParse::kOk) return false;
    rhs = vnnlib::add_dec(rhs, term);
  }
  return true;
}

bool holds_with_sign(const VnnAtom& a, int s) { return s != 2 && (a.strict ? s < 0 : s <= 0); }

}  // namespace

bool atom_holds_exact(const VnnAtom& a, const std::vector<double>& y) {
  vnnlib::Dec rhs;
  if (y.size() != a.coef.size() || !atom_rhs_exact(a, rhs)) return false;
  std::vector<std::pair<double, double>> products;
  products.reserve(y.size());
  for (size_t j = 0; j < y.size(); ++j)
    if (a.coef[j] != 0) products.emplace_back(a.coef[j], y[j]);
  return holds_with_sign(a, vnnlib::sign_of_products_minus(products, rhs));
}

bool atom_holds_on_box(const VnnAtom& a, const std::vector<RealScalar>& lo, const std::vector<RealScalar>& hi) {
  vnnlib::Dec rhs;
  if (lo.size() != a.coef.size() || hi.size() != a.coef.size() || !atom_rhs_exact(a, rhs)) return false;
  // The largest c . y over the box takes hi_j where c_j > 0 and lo_j where c_j < 0.
  std::vector<std::pair<double, mpfr_srcptr>> products;
  for (size_t j = 0; j < lo.size(); ++j) {
    if (mpfr_nan_p(lo[j].get()) || mpfr_nan_p(hi[j].get()) || mpfr_greater_p(lo[j].get(), hi[j].get())) return false;
    if (a.coef[j] != 0) products.emplace_back(a.coef[j], (a.coef[j] > 0 ? hi[j] : lo[j]).get());
  }
  return holds_with_sign(a, vnnlib::sign_of_products_minus_mp(products, rhs));
}

}  // namespace denote
