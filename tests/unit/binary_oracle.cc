// MPFR oracle for binary-format arithmetic (see binary_oracle.h). Independent of src/scalar: its
// own decoding, encoding, NaN rule and overflow mapping; MPFR does all rounding.
#include "unit/binary_oracle.h"

#include <mpfr.h>

#include <array>
#include <cmath>
#include <cstring>
#include <memory>

namespace denote::testing {
namespace {

struct Spec {
  int e_bits = 0;
  int f_bits = 0;
  int bias = 0;
  Encoding enc = Encoding::Ieee;
  int p = 0;
  long emin = 0;  // exponent of the smallest normal number
  long emax = 0;  // exponent of the largest finite binade
  uint64_t sign = 0;
  uint64_t field_ones = 0;
  uint64_t frac_ones = 0;
};

Spec spec_of(const BinaryFormat& f) {
  Spec s;
  s.e_bits = f.exp_bits;
  s.f_bits = f.frac_bits;
  s.bias = f.bias;
  s.enc = f.encoding;
  s.p = f.frac_bits + 1;
  s.emin = 1L - f.bias;
  s.field_ones = (uint64_t{1} << f.exp_bits) - 1;
  s.frac_ones = (uint64_t{1} << f.frac_bits) - 1;
  s.emax = static_cast<long>(s.field_ones) - (f.encoding == Encoding::Ieee ? 1 : 0) - f.bias;
  s.sign = uint64_t{1} << (f.exp_bits + f.frac_bits);
  return s;
}

enum class Kind { Zero, Finite, Inf, QNaN, SNaN };

Kind kind_of(const Spec& s, uint64_t w) {
  uint64_t field = (w >> s.f_bits) & s.field_ones;
  uint64_t frac = w & s.frac_ones;
  if (s.enc == Encoding::Ieee && field == s.field_ones) {
    if (frac == 0) return Kind::Inf;
    return ((frac >> (s.f_bits - 1)) & 1) ? Kind::QNaN : Kind::SNaN;
  }
  if (s.enc == Encoding::Fn && field == s.field_ones && frac == s.frac_ones) return Kind::QNaN;
  if (s.enc == Encoding::Fnuz && w == s.sign) return Kind::QNaN;
  return field == 0 && frac == 0 ? Kind::Zero : Kind::Finite;
}

bool is_nan_kind(Kind k) { return k == Kind::QNaN || k == Kind::SNaN; }

uint64_t nan_word(const Spec& s, bool neg) {
  switch (s.enc) {
    case Encoding::Ieee: return (s.field_ones << s.f_bits) | (uint64_t{1} << (s.f_bits - 1)) | (neg ? s.sign : 0);
    case Encoding::Fn: return (s.field_ones << s.f_bits) | s.frac_ones | (neg ? s.sign : 0);
    default: return s.sign;  // fnuz
  }
}

uint64_t max_word(const Spec& s, bool neg) {
  uint64_t w = 0;
  if (s.enc == Encoding::Ieee) w = ((s.field_ones - 1) << s.f_bits) | s.frac_ones;
  else if (s.enc == Encoding::Fn) w = (s.field_ones << s.f_bits) | (s.frac_ones - 1);
  else w = (s.field_ones << s.f_bits) | s.frac_ones;
  return neg ? w | s.sign : w;
}

mpfr_rnd_t mpfr_mode(Rounding r) {
  switch (r) {
    case Rounding::TowardZero: return MPFR_RNDZ;
    case Rounding::Upward: return MPFR_RNDU;
    case Rounding::Downward: return MPFR_RNDD;
    default: return MPFR_RNDN;
  }
}

// Scratch MPFR variables per precision, reused across calls.
struct Vars {
  mpfr_t x, y, z, r, pre, tmp, wide, src;
  explicit Vars(int p) {
    mpfr_inits2(p, x, y, z, r, pre, tmp, static_cast<mpfr_ptr>(nullptr));
    mpfr_init2(wide, p + 4);
    mpfr_init2(src, 64);
  }
  ~Vars() { mpfr_clears(x, y, z, r, pre, tmp, wide, src, static_cast<mpfr_ptr>(nullptr)); }
};

Vars& vars_for(int p) {
  thread_local std::array<std::unique_ptr<Vars>, 80> cache;
  if (!cache[p]) cache[p] = std::make_unique<Vars>(p);
  return *cache[p];
}

void full_range() {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
}

// The format's exponent range in MPFR's convention (significand in [1/2, 1)); formats without
// infinity get a wide top so that their overflow is decided below, by value.
void format_range(const Spec& s) {
  mpfr_set_emin(s.emin - s.f_bits + 1);
  mpfr_set_emax(s.enc == Encoding::Ieee ? s.emax + 1 : mpfr_get_emax_max());
}

void set_word(const Spec& s, uint64_t w, mpfr_t x) {
  bool neg = (w & s.sign) != 0;
  Kind k = kind_of(s, w);
  if (k == Kind::Zero) {
    mpfr_set_zero(x, neg ? -1 : 1);
    return;
  }
  if (k == Kind::Inf) {
    mpfr_set_inf(x, neg ? -1 : 1);
    return;
  }
  uint64_t field = (w >> s.f_bits) & s.field_ones;
  uint64_t frac = w & s.frac_ones;
  uint64_t m = field == 0 ? frac : frac | (uint64_t{1} << s.f_bits);
  long e = (field == 0 ? s.emin : static_cast<long>(field) - s.bias) - s.f_bits;
  mpfr_set_uj(x, m, MPFR_RNDN);
  mpfr_mul_2si(x, x, e, MPFR_RNDN);
  if (neg) mpfr_neg(x, x, MPFR_RNDN);
}

// Encodes a finite value that lies on the format's grid (full MPFR range must be active).
uint64_t encode(const Spec& s, mpfr_t v, mpfr_t scratch) {
  bool neg = mpfr_signbit(v) != 0;
  if (mpfr_zero_p(v)) return neg && s.enc != Encoding::Fnuz ? s.sign : 0;
  long e = mpfr_get_exp(v) - 1;
  long scale_exp = e >= s.emin ? e : s.emin;
  mpfr_abs(scratch, v, MPFR_RNDN);
  mpfr_mul_2si(scratch, scratch, s.f_bits - scale_exp, MPFR_RNDN);
  uint64_t m = mpfr_get_uj(scratch, MPFR_RNDN);
  uint64_t w = e >= s.emin ? (static_cast<uint64_t>(e + s.bias) << s.f_bits) | (m - (uint64_t{1} << s.f_bits)) : m;
  return neg ? w | s.sign : w;
}

// The operations the oracle evaluates: the public ones plus Set (round a wider value, for conversions).
enum class Op { Add, Sub, Mul, Div, Sqrt, Fma, Set };

int apply(Op op, mpfr_t out, mpfr_t x, mpfr_t y, mpfr_t z, mpfr_t src, mpfr_rnd_t rnd) {
  switch (op) {
    case Op::Add: return mpfr_add(out, x, y, rnd);
    case Op::Sub: return mpfr_sub(out, x, y, rnd);
    case Op::Mul: return mpfr_mul(out, x, y, rnd);
    case Op::Div: return mpfr_div(out, x, y, rnd);
    case Op::Sqrt: return mpfr_sqrt(out, x, rnd);
    case Op::Fma: return mpfr_fma(out, x, y, z, rnd);
    case Op::Set: return mpfr_set(out, src, rnd);
  }
  return 0;
}

struct Computed {
  int ternary = 0;
  bool tiny = false;
  bool nan = false, divby0 = false, overflow = false;
};

// r = op(x, y, z) rounded in `rnd` to the format (range + subnormals), with the tininess of the
// result before subnormalization (that is, rounded with an unbounded-below exponent range).
Computed compute(const Spec& s, Vars& v, Op op, mpfr_rnd_t rnd, mpfr_t out) {
  format_range(s);
  mpfr_clear_flags();
  int t = apply(op, out, v.x, v.y, v.z, v.src, rnd);
  t = mpfr_check_range(out, t, rnd);  // Set may start from a value outside the format's range
  Computed c;
  c.nan = mpfr_nanflag_p() != 0;
  c.divby0 = mpfr_divby0_p() != 0;
  c.overflow = mpfr_overflow_p() != 0;
  bool nonzero_exact = !mpfr_zero_p(out) || t != 0;
  if (mpfr_number_p(out) && nonzero_exact) {
    c.tiny = mpfr_zero_p(out) || mpfr_get_exp(out) - 1 < s.emin;
  }
  c.ternary = mpfr_subnormalize(out, t, rnd);
  full_range();
  return c;
}

// Nearest-away from the three directed/nearest results: it differs from nearest-even only at an
// exact tie, detected by computing the op exactly at p + 4 bits and comparing with the midpoint.
void nearest_away_fix(const Spec& s, Vars& v, Op op, Computed& c) {
  if (c.ternary == 0 || !mpfr_number_p(v.r)) return;
  compute(s, v, op, MPFR_RNDZ, v.pre);
  compute(s, v, op, MPFR_RNDA, v.tmp);
  if (!mpfr_number_p(v.tmp)) return;  // away side overflowed: nearest-even already overflowed too
  mpfr_t mid;
  mpfr_init2(mid, s.p + 4);
  mpfr_add(mid, v.pre, v.tmp, MPFR_RNDN);
  mpfr_div_2ui(mid, mid, 1, MPFR_RNDN);
  int t = apply(op, v.wide, v.x, v.y, v.z, v.src, MPFR_RNDN);
  if (t == 0 && mpfr_equal_p(v.wide, mid)) mpfr_set(v.r, v.tmp, MPFR_RNDN);
  mpfr_clear(mid);
}

// Turns the rounded MPFR value into the word + flags under the encoding's rules.
OracleOut finish(const Spec& s, Rounding mode, Vars& v, const Computed& c, bool saturate) {
  OracleOut o;
  if (c.nan) {
    if (s.enc == Encoding::Finite) o.error = true;
    o.flags = kFpInvalid;
    o.word = s.enc == Encoding::Finite ? 0 : nan_word(s, false);
    return o;
  }
  if (c.divby0) o.flags |= kFpDivByZero;
  bool neg = mpfr_signbit(v.r) != 0;
  bool to_max = mode == Rounding::TowardZero || (mode == Rounding::Upward && neg) ||
                (mode == Rounding::Downward && !neg);
  if (c.ternary != 0) o.flags |= kFpInexact;
  if (c.ternary != 0 && c.tiny) o.flags |= kFpUnderflow;
  if (mpfr_inf_p(v.r)) {
    if (c.overflow) o.flags |= kFpOverflow | kFpInexact;
    if (s.enc == Encoding::Ieee && !(saturate && c.overflow)) {
      o.word = (s.field_ones << s.f_bits) | (neg ? s.sign : 0);
    } else if (s.enc == Encoding::Finite || (saturate && c.overflow)) {
      o.flags |= kFpSaturated;
      o.word = max_word(s, neg);
    } else {
      o.word = nan_word(s, neg && s.enc == Encoding::Fn);
    }
    return o;
  }
  if (c.overflow) o.flags |= kFpOverflow | kFpInexact;  // MPFR gave max finite (directed)
  if (s.enc != Encoding::Ieee) {
    mpfr_set_ui(v.tmp, 0, MPFR_RNDN);
    set_word(s, max_word(s, false), v.tmp);
    if (mpfr_cmpabs(v.r, v.tmp) > 0) {
      o.flags |= kFpOverflow | kFpInexact;
      if (to_max) {
        o.word = max_word(s, neg);
      } else if (s.enc == Encoding::Finite || saturate) {
        o.flags |= kFpSaturated;
        o.word = max_word(s, neg);
      } else {
        o.word = nan_word(s, neg && s.enc == Encoding::Fn);
      }
      return o;
    }
  }
  o.word = encode(s, v.r, v.tmp);
  return o;
}

OracleOut nan_result(const Spec& s, std::initializer_list<uint64_t> words, bool extra_invalid) {
  OracleOut o;
  if (extra_invalid) o.flags |= kFpInvalid;
  bool found = false;
  for (uint64_t w : words) {
    if (kind_of(s, w) == Kind::SNaN) {
      o.flags |= kFpInvalid;
      if (!found) o.word = w | (uint64_t{1} << (s.f_bits - 1));
      found = true;
    }
  }
  if (found) return o;
  for (uint64_t w : words) {
    if (kind_of(s, w) == Kind::QNaN) {
      o.word = w;
      return o;
    }
  }
  return o;
}

}  // namespace

std::string oracle_op_name(OracleOp op) {
  static constexpr std::array<const char*, 6> kNames = {"add", "sub", "mul", "div", "sqrt", "fma"};
  return kNames[static_cast<int>(op)];
}

bool oracle_is_nan(const BinaryFormat& f, uint64_t w) { return is_nan_kind(kind_of(spec_of(f), w)); }

double oracle_value(const BinaryFormat& f, uint64_t w) {
  Spec s = spec_of(f);
  Vars& v = vars_for(s.p);
  full_range();
  set_word(s, w, v.x);
  return mpfr_get_d(v.x, MPFR_RNDN);
}

OracleOut oracle_binary(const BinaryFormat& f, Rounding r, OracleOp op, uint64_t a, uint64_t b, uint64_t c) {
  Spec s = spec_of(f);
  Kind ka = kind_of(s, a);
  Kind kb = op == OracleOp::Sqrt ? Kind::Zero : kind_of(s, b);
  Kind kc = op == OracleOp::Fma ? kind_of(s, c) : Kind::Zero;
  if (is_nan_kind(ka) || is_nan_kind(kb) || is_nan_kind(kc)) {
    bool zero_inf = op == OracleOp::Fma && ((ka == Kind::Zero && kb == Kind::Inf) || (ka == Kind::Inf && kb == Kind::Zero));
    if (op == OracleOp::Sqrt) return nan_result(s, {a}, false);
    if (op == OracleOp::Fma) return nan_result(s, {a, b, c}, zero_inf);
    return nan_result(s, {a, b}, false);
  }
  Vars& v = vars_for(s.p);
  long old_emin = mpfr_get_emin();
  long old_emax = mpfr_get_emax();
  full_range();
  set_word(s, a, v.x);
  set_word(s, b, v.y);
  set_word(s, c, v.z);
  Op iop = static_cast<Op>(static_cast<int>(op));
  Computed comp = compute(s, v, iop, mpfr_mode(r), v.r);
  if (r == Rounding::NearestAway) nearest_away_fix(s, v, iop, comp);
  OracleOut o = finish(s, r, v, comp, false);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return o;
}

OracleOut oracle_from_float(const BinaryFormat& f, Rounding r, float x, bool saturate) {
  Spec s = spec_of(f);
  uint32_t bits = 0;
  std::memcpy(&bits, &x, 4);
  bool neg = (bits >> 31) != 0;
  OracleOut o;
  if (std::isnan(x)) {
    if (s.enc == Encoding::Finite) return {0, kFpInvalid, true};
    if ((bits & 0x400000u) == 0) o.flags |= kFpInvalid;
    if (s.enc == Encoding::Ieee) {
      uint64_t frac = bits & 0x7fffffu;
      uint64_t payload = s.f_bits >= 23 ? frac << (s.f_bits - 23) : frac >> (23 - s.f_bits);
      o.word = nan_word(s, neg) | payload;
    } else {
      o.word = nan_word(s, neg && s.enc == Encoding::Fn);
    }
    return o;
  }
  if (std::isinf(x)) {
    if (s.enc == Encoding::Ieee) return {(s.field_ones << s.f_bits) | (neg ? s.sign : 0), 0, false};
    if (saturate) return {max_word(s, neg), kFpSaturated, false};
    if (s.enc == Encoding::Finite) return {0, kFpInvalid, true};
    return {nan_word(s, neg && s.enc == Encoding::Fn), kFpMappedSpecial, false};
  }
  Vars& v = vars_for(s.p);
  long old_emin = mpfr_get_emin();
  long old_emax = mpfr_get_emax();
  full_range();
  mpfr_set_flt(v.src, x, MPFR_RNDN);  // exact: 64 bits
  Computed comp = compute(s, v, Op::Set, mpfr_mode(r), v.r);
  if (r == Rounding::NearestAway) nearest_away_fix(s, v, Op::Set, comp);
  o = finish(s, r, v, comp, saturate);
  mpfr_set_emin(old_emin);
  mpfr_set_emax(old_emax);
  return o;
}

}  // namespace denote::testing
