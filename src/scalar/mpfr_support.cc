// MPFR machinery shared by the correctly rounded functions and the MPFR context: see mpfr_support.h.
#include "scalar/mpfr_support.h"

#include <fmt/format.h>

#include <cmath>

#include "scalar/binary_round.h"

namespace denote::mpfr_support {

static_assert(sizeof(unsigned long) == 8, "significands are moved through unsigned long");

WideExponentRange::WideExponentRange() : emin_(mpfr_get_emin()), emax_(mpfr_get_emax()) {
  mpfr_set_emin(mpfr_get_emin_min());
  mpfr_set_emax(mpfr_get_emax_max());
}

WideExponentRange::~WideExponentRange() {
  mpfr_set_emin(emin_);
  mpfr_set_emax(emax_);
}

void decode_word(const BinaryFormat& f, uint64_t word, mpfr_ptr out) {
  mpfr_set_prec(out, std::max(f.precision(), 2));
  const bool neg = sign_bit(f, word);
  switch (classify(f, word)) {
    case FloatClass::QuietNaN:
    case FloatClass::SignalingNaN:
      mpfr_set_nan(out);
      return;
    case FloatClass::Infinite:
      mpfr_set_inf(out, neg ? -1 : 1);
      return;
    case FloatClass::Zero:
      mpfr_set_zero(out, neg ? -1 : 1);
      return;
    default:
      break;
  }
  const Unpacked u = unpack_finite(f, word);
  mpfr_set_ui_2exp(out, u.sig, u.exp, MPFR_RNDN);  // exact: sig has at most p bits
  if (neg) mpfr_neg(out, out, MPFR_RNDN);
}

uint64_t round_to_word(const BinaryFormat& f, FpEnv& env, mpfr_srcptr v) {
  if (mpfr_nan_p(v)) return invalid_word(f, env, "nan result");
  const bool neg = mpfr_signbit(v) != 0;
  if (mpfr_inf_p(v)) return infinite_result(f, env, neg);
  if (mpfr_zero_p(v)) return round_pack(f, env, neg, 0, 0, false, false);
  // 63 leading bits truncated plus a sticky bit for the rest: round_pack needs >= p + 1 bits.
  Mpfr t(63);
  const bool sticky = mpfr_set(t, v, MPFR_RNDZ) != 0;
  const mpfr_exp_t e = mpfr_get_exp(t);  // |t| in [2^(e-1), 2^e)
  mpfr_abs(t, t, MPFR_RNDN);
  mpfr_mul_2si(t, t, 63 - e, MPFR_RNDN);  // an integer in [2^62, 2^63), exact
  const uint64_t sig = mpfr_get_ui(t, MPFR_RNDN);
  return round_pack(f, env, neg, sig, static_cast<int64_t>(e) - 63, sticky, false);
}

uint64_t exact_word(const BinaryFormat& f, FpEnv& env, double v) {
  Mpfr m(53);
  mpfr_set_d(m, v, MPFR_RNDN);
  return round_to_word(f, env, m);
}

uint64_t invalid_word(const BinaryFormat& f, FpEnv& env, const char* what) {
  if (!f.has_nan()) {
    set_error(env, fmt::format("{}: invalid operation ({}) has no value in a format without nan", f.name, what));
    return 0;
  }
  env.flags |= kFpInvalid;
  return canonical_nan(f);
}

uint64_t pole_word(const BinaryFormat& f, FpEnv& env, bool negative) {
  env.flags |= kFpDivByZero;
  return infinite_result(f, env, negative);
}

uint64_t nan_word(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  const FloatClass ca = classify(f, a), cb = classify(f, b);
  const bool sa = ca == FloatClass::SignalingNaN, sb = cb == FloatClass::SignalingNaN;
  if (sa || sb) env.flags |= kFpInvalid;
  uint64_t w = sa ? a : sb ? b : (ca == FloatClass::QuietNaN ? a : b);
  if (f.encoding == Encoding::Ieee) w |= uint64_t{1} << (f.frac_bits - 1);
  return w;
}

bool bad_words(const BinaryFormat& f, FpEnv& env, std::initializer_list<uint64_t> words, uint64_t& out) {
  for (uint64_t w : words) {
    if (Status s = check_word(f, w); !s.ok()) {
      set_error(env, s.message());
      out = canonical_nan(f);
      return true;
    }
  }
  return false;
}

namespace {

mpfr_rnd_t opposite(mpfr_rnd_t dir) { return dir == MPFR_RNDD ? MPFR_RNDU : MPFR_RNDD; }

// sigmoid(x) = 1 / (1 + e^-x), decreasing in t = 1 + e^-x: t is bounded the other way.
void sigmoid_bound(mpfr_srcptr x, mpfr_ptr out, mpfr_rnd_t dir) {
  Mpfr t(mpfr_get_prec(out)), nx(mpfr_get_prec(x));
  mpfr_neg(nx, x, MPFR_RNDN);
  mpfr_exp(t, nx, opposite(dir));
  mpfr_add_ui(t, t, 1, opposite(dir));
  mpfr_ui_div(out, 1, t, dir);
}

// softplus(x) = x + log1p(e^-x) for x >= 0, log1p(e^x) for x < 0; increasing in every step.
void softplus_bound(mpfr_srcptr x, mpfr_ptr out, mpfr_rnd_t dir) {
  Mpfr t(mpfr_get_prec(out)), nx(mpfr_get_prec(x));
  if (mpfr_sgn(x) >= 0) {
    mpfr_neg(nx, x, MPFR_RNDN);
    mpfr_exp(t, nx, dir);
    mpfr_log1p(t, t, dir);
    mpfr_add(out, x, t, dir);
  } else {
    mpfr_exp(t, x, dir);
    mpfr_log1p(out, t, dir);
  }
}

// gelu(x) = x * Phi(x), Phi(x) = erfc(u) / 2 with u = -x / sqrt(2) (no cancellation for x < 0).
// erfc is decreasing, so a lower bound of Phi comes from an upper bound of u. For x > 0 the
// product bound has direction dir; for x < 0, gelu = -(|x| Phi), so Phi is bounded the other way.
void gelu_bound(mpfr_srcptr x, mpfr_ptr out, mpfr_rnd_t dir) {
  const mpfr_prec_t w = mpfr_get_prec(out);
  const bool positive = mpfr_sgn(x) > 0;
  const mpfr_rnd_t d2 = positive ? dir : opposite(dir);
  Mpfr mag(mpfr_get_prec(x)), s(w), q(w), phi(w);
  mpfr_abs(mag, x, MPFR_RNDN);
  // |u| = |x| / sqrt 2 rounded down (q_low) or up (q_high); u = -|u| for x > 0, +|u| for x < 0.
  const bool want_low = positive == (d2 == MPFR_RNDD);
  mpfr_sqrt_ui(s, 2, want_low ? MPFR_RNDU : MPFR_RNDD);
  mpfr_div(q, mag, s, want_low ? MPFR_RNDD : MPFR_RNDU);
  if (positive) mpfr_neg(q, q, MPFR_RNDN);
  mpfr_erfc(phi, q, d2);
  mpfr_div_2ui(phi, phi, 1, d2);
  mpfr_mul(out, mag, phi, d2);
  if (!positive) mpfr_neg(out, out, MPFR_RNDN);
}


// One correctly rounded MPFR call (RNDD) and its ternary value: f == lo when it is zero, else
// lo < f < nextabove(lo) (f is below the next number of the working precision, since lo is f
// rounded down at that precision).
int primitive_down(FpFunction fn, mpfr_srcptr x, mpfr_ptr lo) {
  switch (fn) {
    case FpFunction::Exp: return mpfr_exp(lo, x, MPFR_RNDD);
    case FpFunction::Log: return mpfr_log(lo, x, MPFR_RNDD);
    case FpFunction::Log1p: return mpfr_log1p(lo, x, MPFR_RNDD);
    case FpFunction::Tanh: return mpfr_tanh(lo, x, MPFR_RNDD);
    case FpFunction::Erf: return mpfr_erf(lo, x, MPFR_RNDD);
    case FpFunction::Sin: return mpfr_sin(lo, x, MPFR_RNDD);
    case FpFunction::Cos: return mpfr_cos(lo, x, MPFR_RNDD);
    case FpFunction::Rsqrt: return mpfr_rec_sqrt(lo, x, MPFR_RNDD);
    case FpFunction::Sigmoid:
    case FpFunction::Softplus:
    case FpFunction::Gelu: break;
  }
  return 0;
}

bool is_primitive(FpFunction fn) {
  return fn != FpFunction::Sigmoid && fn != FpFunction::Softplus && fn != FpFunction::Gelu;
}

}  // namespace

void bound_directed(FpFunction fn, mpfr_srcptr x, mpfr_ptr out, mpfr_rnd_t dir) {
  switch (fn) {
    case FpFunction::Exp: mpfr_exp(out, x, dir); return;
    case FpFunction::Log: mpfr_log(out, x, dir); return;
    case FpFunction::Log1p: mpfr_log1p(out, x, dir); return;
    case FpFunction::Tanh: mpfr_tanh(out, x, dir); return;
    case FpFunction::Sigmoid: sigmoid_bound(x, out, dir); return;
    case FpFunction::Softplus: softplus_bound(x, out, dir); return;
    case FpFunction::Erf: mpfr_erf(out, x, dir); return;
    case FpFunction::Gelu: gelu_bound(x, out, dir); return;
    case FpFunction::Sin: mpfr_sin(out, x, dir); return;
    case FpFunction::Cos: mpfr_cos(out, x, dir); return;
    case FpFunction::Rsqrt: mpfr_rec_sqrt(out, x, dir); return;
  }
}

void enclose(FpFunction fn, mpfr_srcptr x, mpfr_ptr lo, mpfr_ptr hi) {
  if (is_primitive(fn)) {
    // A correctly rounded primitive: one evaluation and its ternary value give both ends (the
    // composites below round several steps and need a lower and an upper evaluation).
    const int ternary = primitive_down(fn, x, lo);
    mpfr_set(hi, lo, MPFR_RNDN);  // exact: lo and hi have the same precision
    if (ternary != 0 && !mpfr_nan_p(lo)) mpfr_nextabove(hi);
    return;
  }
  bound_directed(fn, x, lo, MPFR_RNDD);
  bound_directed(fn, x, hi, MPFR_RNDU);
}

void exact_quotient(QuotientKind kind, mpfr_srcptr x, mpfr_srcptr y, mpfr_ptr out) {
  const mpfr_exp_t ex = mpfr_get_exp(x), ey = mpfr_get_exp(y);
  const mpfr_prec_t p = std::max(mpfr_get_prec(x), mpfr_get_prec(y));
  if (kind == QuotientKind::Remainder) {
    // x and y are multiples of 2^(min(ex, ey) - p) and |x fmod y| < |y| < 2^ey: it fits in
    // ey - min(ex, ey) + p bits, and so does r + y (|r + y| < |y|) on the same grid.
    mpfr_set_prec(out, std::max<mpfr_prec_t>(p, ey - std::min(ex, ey) + p + 2));
    mpfr_fmod(out, x, y, MPFR_RNDN);
    if (!mpfr_zero_p(out) && mpfr_signbit(out) != mpfr_signbit(y)) mpfr_add(out, out, y, MPFR_RNDN);
    return;
  }
  // |x / y| < 2^(ex - ey + 1): with P >= ex - ey + 4 bits the integer part n is representable, so
  // rounding the quotient toward zero (down) keeps it between n and x / y and trunc (floor) of the
  // rounded quotient is trunc (floor) of the exact one.
  mpfr_set_prec(out, std::max<mpfr_prec_t>(p, ex - ey + 4));
  if (kind == QuotientKind::Trunc) {
    mpfr_div(out, x, y, MPFR_RNDZ);
    mpfr_trunc(out, out);
  } else {
    mpfr_div(out, x, y, MPFR_RNDD);
    mpfr_floor(out, out);
  }
}

}  // namespace denote::mpfr_support
