// Correctly rounded elementary functions and exact quotient operations on binary-format words.
// Special operands are settled first (exact values go through the core's round_pack); every other
// value is enclosed with MPFR and rounded by the Ziv loop of mpfr_support.h.
//
// Why the Ziv loop terminates and is right for the composites (sigmoid, softplus, gelu): it needs
// the exact value not to be representable at the working precision unless the enclosure collapses
// to it. At a nonzero dyadic x, e^x is transcendental (Lindemann), so sigmoid(x) = 1 / (1 + e^-x)
// is irrational; softplus(x) = log(1 + e^x) rational would make e^q = 1 + e^x with q rational,
// against Lindemann-Weierstrass (e^0, e^q, e^x are linearly independent over the algebraic numbers
// for distinct 0, q, x). For gelu(x) = x Phi(x) no such theorem is known to us; a dyadic value
// would make the loop run to its precision cap (2^16 bits) and return the rounding of a point
// strictly inside the enclosure, so the answer could only differ at such an exact breakpoint.
// The single MPFR primitives (exp, log, log1p, tanh, erf, sin, cos, rec_sqrt, pow) are correctly
// rounded, so their downward and upward roundings coincide exactly when the value is representable.
#include "denote/scalar/binary_functions.h"

#include <array>
#include <cmath>
#include <limits>

#include "scalar/binary_round.h"
#include "scalar/mpfr_support.h"

namespace denote {

using mpfr_support::Mpfr;

namespace {

constexpr std::array<std::string_view, 11> kFunctionNames = {"exp", "log", "log1p", "tanh", "sigmoid", "softplus",
                                                             "erf", "gelu", "sin", "cos", "rsqrt"};

constexpr double kInf = std::numeric_limits<double>::infinity();

// The result for a non-NaN special operand (infinity, zero, a pole or outside the domain, an
// exactly known value), or nullopt for the general case.
std::optional<uint64_t> special_case(FpFunction fn, const BinaryFormat& f, FpEnv& env, mpfr_srcptr x) {
  using namespace mpfr_support;
  const bool inf = mpfr_inf_p(x), zero = mpfr_zero_p(x), neg = mpfr_signbit(x) != 0;
  auto value = [&](double v) { return exact_word(f, env, v); };
  switch (fn) {
    case FpFunction::Exp:
      if (inf) return value(neg ? 0.0 : kInf);
      if (zero) return value(1.0);
      break;
    case FpFunction::Log:
      if (zero) return pole_word(f, env, true);
      if (neg) return invalid_word(f, env, "log of a negative number");
      if (inf) return value(kInf);
      if (mpfr_cmp_ui(x, 1) == 0) return value(0.0);
      break;
    case FpFunction::Log1p:
      if (mpfr_cmp_si(x, -1) == 0) return pole_word(f, env, true);
      if (mpfr_cmp_si(x, -1) < 0) return invalid_word(f, env, "log1p below -1");
      if (zero || inf) return value(mpfr_get_d(x, MPFR_RNDN));
      break;
    case FpFunction::Tanh:
    case FpFunction::Erf:
      if (inf) return value(neg ? -1.0 : 1.0);
      if (zero) return value(neg ? -0.0 : 0.0);
      break;
    case FpFunction::Sigmoid:
      if (inf) return value(neg ? 0.0 : 1.0);
      if (zero) return value(0.5);
      break;
    case FpFunction::Softplus:
      if (inf) return value(neg ? 0.0 : kInf);
      break;
    case FpFunction::Gelu:
      if (inf) return value(neg ? -0.0 : kInf);
      if (zero) return value(neg ? -0.0 : 0.0);
      break;
    case FpFunction::Sin:
    case FpFunction::Cos:
      if (inf) return invalid_word(f, env, fn == FpFunction::Sin ? "sin of an infinity" : "cos of an infinity");
      if (zero) return value(fn == FpFunction::Cos ? 1.0 : (neg ? -0.0 : 0.0));
      break;
    case FpFunction::Rsqrt:
      if (zero) return pole_word(f, env, neg);
      if (neg) return invalid_word(f, env, "rsqrt of a negative number");
      if (inf) return value(0.0);
      break;
  }
  return std::nullopt;
}

// NaN operands, bad words: the settled result, or nullopt to go on.
std::optional<uint64_t> settle_operands(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  uint64_t out = 0;
  if (mpfr_support::bad_words(f, env, {a, b}, out)) return out;
  if (is_nan(f, a) || is_nan(f, b)) return mpfr_support::nan_word(f, env, a, b);
  return std::nullopt;
}

uint64_t quotient_op(mpfr_support::QuotientKind kind, const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  using namespace mpfr_support;
  if (auto r = settle_operands(f, env, a, b)) return *r;
  WideExponentRange guard;
  Mpfr x, y;
  decode_word(f, a, x);
  decode_word(f, b, y);
  const bool rem = kind == QuotientKind::Remainder;
  if (mpfr_zero_p(y) || mpfr_inf_p(x)) return rem ? invalid_word(f, env, "remainder by zero or of an infinity")
                                                  : fp_div(f, env, a, b);
  const bool signs_differ = mpfr_signbit(x) != mpfr_signbit(y);
  if (mpfr_inf_p(y)) {  // x finite: the quotient is an infinitesimal with the sign of x / y
    if (mpfr_zero_p(x) || !signs_differ) return rem ? a : fp_div(f, env, a, b);
    if (kind == QuotientKind::Floor) return exact_word(f, env, -1.0);
    return kind == QuotientKind::Trunc ? fp_div(f, env, a, b) : b;
  }
  if (mpfr_zero_p(x)) return rem ? a : fp_div(f, env, a, b);
  Mpfr r;
  exact_quotient(kind, x, y, r);
  return round_to_word(f, env, r);
}

}  // namespace

std::string_view function_name(FpFunction fn) { return kFunctionNames[static_cast<size_t>(fn)]; }

std::optional<FpFunction> parse_function(std::string_view name) {
  for (size_t i = 0; i < kFunctionNames.size(); ++i)
    if (kFunctionNames[i] == name) return static_cast<FpFunction>(i);
  return std::nullopt;
}

uint64_t fp_function(FpFunction fn, const BinaryFormat& f, FpEnv& env, uint64_t a) {
  using namespace mpfr_support;
  uint64_t out = 0;
  if (bad_words(f, env, {a}, out)) return out;
  if (is_nan(f, a)) return nan_word(f, env, a, a);
  WideExponentRange guard;
  Mpfr x;
  decode_word(f, a, x);
  if (auto r = special_case(fn, f, env, x)) return *r;
  return ziv_word(f, env, [&](mpfr_ptr lo, mpfr_ptr hi) { enclose(fn, x, lo, hi); });
}

uint64_t fp_pow(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  using namespace mpfr_support;
  uint64_t out = 0;
  if (bad_words(f, env, {a, b}, out)) return out;
  WideExponentRange guard;
  Mpfr x, y;
  decode_word(f, a, x);
  decode_word(f, b, y);
  const bool a_nan = mpfr_nan_p(x), b_nan = mpfr_nan_p(y);
  // pow(x, +-0) = 1 and pow(+1, y) = 1 for every x, y, a quiet NaN included; a signaling one still
  // raises invalid.
  if ((!b_nan && mpfr_zero_p(y)) || (!a_nan && mpfr_cmp_ui(x, 1) == 0)) {
    if (classify(f, a) == FloatClass::SignalingNaN || classify(f, b) == FloatClass::SignalingNaN)
      env.flags |= kFpInvalid;
    return exact_word(f, env, 1.0);
  }
  if (a_nan || b_nan) return nan_word(f, env, a, b);
  if (mpfr_zero_p(x) || mpfr_inf_p(x) || mpfr_inf_p(y)) {
    Mpfr r(64);
    mpfr_pow(r, x, y, MPFR_RNDN);  // exact here: 0, 1 or an infinity, with the C99 signs
    if (mpfr_inf_p(r) && mpfr_zero_p(x)) return pole_word(f, env, mpfr_signbit(r) != 0);
    return round_to_word(f, env, r);
  }
  if (mpfr_sgn(x.get()) < 0 && !mpfr_integer_p(y)) return invalid_word(f, env, "pow of a negative base to a non-integer");
  return ziv_word(f, env, [&](mpfr_ptr lo, mpfr_ptr hi) {
    mpfr_pow(lo, x, y, MPFR_RNDD);
    mpfr_pow(hi, x, y, MPFR_RNDU);
  });
}

uint64_t fp_div_trunc(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  return quotient_op(mpfr_support::QuotientKind::Trunc, f, env, a, b);
}

uint64_t fp_div_floor(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  return quotient_op(mpfr_support::QuotientKind::Floor, f, env, a, b);
}

uint64_t fp_remainder(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  return quotient_op(mpfr_support::QuotientKind::Remainder, f, env, a, b);
}

}  // namespace denote
