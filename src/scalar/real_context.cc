// RealContext: MPFR at a chosen precision, round to nearest; see real_context.h.
#include "denote/scalar/real_context.h"

#include <fmt/format.h>

#include <limits>
#include <optional>
#include <utility>

#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_functions.h"
#include "scalar/mpfr_support.h"

namespace denote {

using mpfr_support::Mpfr;

RealScalar::RealScalar(mpfr_prec_t bits) {
  mpfr_init2(v_, bits);
  mpfr_set_zero(v_, 1);
}

RealScalar::RealScalar(const RealScalar& o) {
  mpfr_init2(v_, mpfr_get_prec(o.v_));
  mpfr_set(v_, o.v_, MPFR_RNDN);
}

RealScalar::RealScalar(RealScalar&& o) noexcept {
  mpfr_init2(v_, MPFR_PREC_MIN);
  mpfr_swap(v_, o.v_);
}

RealScalar& RealScalar::operator=(const RealScalar& o) {
  if (this != &o) {
    mpfr_set_prec(v_, mpfr_get_prec(o.v_));
    mpfr_set(v_, o.v_, MPFR_RNDN);
  }
  return *this;
}

RealScalar& RealScalar::operator=(RealScalar&& o) noexcept {
  mpfr_swap(v_, o.v_);
  return *this;
}

RealScalar::~RealScalar() { mpfr_clear(v_); }

bool RealScalar::operator==(const RealScalar& o) const {
  if (mpfr_nan_p(v_) || mpfr_nan_p(o.v_)) return mpfr_nan_p(v_) && mpfr_nan_p(o.v_);
  return mpfr_equal_p(v_, o.v_) && mpfr_signbit(v_) == mpfr_signbit(o.v_);
}

namespace {

using Unary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_rnd_t);
using Binary = int (*)(mpfr_ptr, mpfr_srcptr, mpfr_srcptr, mpfr_rnd_t);

// fn(x) rounded to `bits` by the Ziv loop (x finite and not a special point of fn).
RealScalar ziv_real(FpFunction fn, mpfr_srcptr x, mpfr_prec_t bits) {
  RealScalar slot[2] = {RealScalar(bits), RealScalar(bits)};
  mpfr_support::ziv(
      bits, [&](mpfr_ptr lo, mpfr_ptr hi) { mpfr_support::enclose(fn, x, lo, hi); },
      [&](mpfr_srcptr v, int k) { mpfr_set(slot[k].get(), v, MPFR_RNDN); }, [&] { return slot[0] == slot[1]; });
  return slot[0];
}

}  // namespace

std::string RealContext::take_error() const { return std::exchange(error_, std::string()); }

RealScalar RealContext::from_double(double x) const {
  Scalar r = make();
  mpfr_set_d(r.get(), x, MPFR_RNDN);
  return r;
}

RealScalar RealContext::nan() const {
  Scalar r = make();
  mpfr_set_nan(r.get());
  return r;
}

RealScalar RealContext::pi() const {
  Scalar r = make();
  mpfr_const_pi(r.get(), MPFR_RNDN);
  return r;
}

#define DENOTE_REAL_UNARY(name, call)                      \
  RealScalar RealContext::name(const Scalar& a) const {    \
    Scalar r = make();                                     \
    call(r.get(), a.get(), MPFR_RNDN);                     \
    return r;                                              \
  }
#define DENOTE_REAL_BINARY(name, call)                                   \
  RealScalar RealContext::name(const Scalar& a, const Scalar& b) const { \
    Scalar r = make();                                                   \
    call(r.get(), a.get(), b.get(), MPFR_RNDN);                          \
    return r;                                                            \
  }

DENOTE_REAL_BINARY(add, mpfr_add)
DENOTE_REAL_BINARY(sub, mpfr_sub)
DENOTE_REAL_BINARY(mul, mpfr_mul)
DENOTE_REAL_BINARY(div, mpfr_div)
DENOTE_REAL_BINARY(pow, mpfr_pow)
DENOTE_REAL_UNARY(neg, mpfr_neg)
DENOTE_REAL_UNARY(abs, mpfr_abs)
DENOTE_REAL_UNARY(exp, mpfr_exp)
DENOTE_REAL_UNARY(log, mpfr_log)
DENOTE_REAL_UNARY(log1p, mpfr_log1p)
DENOTE_REAL_UNARY(tanh, mpfr_tanh)
DENOTE_REAL_UNARY(sqrt, mpfr_sqrt)
DENOTE_REAL_UNARY(erf, mpfr_erf)
DENOTE_REAL_UNARY(sin, mpfr_sin)
DENOTE_REAL_UNARY(cos, mpfr_cos)

#undef DENOTE_REAL_UNARY
#undef DENOTE_REAL_BINARY

RealScalar RealContext::fma(const Scalar& a, const Scalar& b, const Scalar& c) const {
  Scalar r = make();
  mpfr_fma(r.get(), a.get(), b.get(), c.get(), MPFR_RNDN);
  return r;
}

RealScalar RealContext::relu(const Scalar& a) const {
  if (is_nan(a) || mpfr_sgn(a.get()) > 0) return a;
  return zero();
}

RealScalar RealContext::max(const Scalar& a, const Scalar& b) const {
  if (is_nan(a) || is_nan(b)) return nan();
  if (mpfr_zero_p(a.get()) && mpfr_zero_p(b.get())) return mpfr_signbit(a.get()) ? b : a;
  return mpfr_less_p(a.get(), b.get()) ? b : a;
}

RealScalar RealContext::min(const Scalar& a, const Scalar& b) const {
  if (is_nan(a) || is_nan(b)) return nan();
  if (mpfr_zero_p(a.get()) && mpfr_zero_p(b.get())) return mpfr_signbit(a.get()) ? a : b;
  return mpfr_less_p(b.get(), a.get()) ? b : a;
}

RealScalar RealContext::rsqrt(const Scalar& a) const {
  Scalar r = make();
  if (mpfr_zero_p(a.get()))
    mpfr_set_inf(r.get(), mpfr_signbit(a.get()) ? -1 : 1);
  else
    mpfr_rec_sqrt(r.get(), a.get(), MPFR_RNDN);
  return r;
}

RealScalar RealContext::sigmoid(const Scalar& a) const {
  if (is_nan(a)) return a;
  if (mpfr_inf_p(a.get())) return mpfr_signbit(a.get()) ? zero() : one();
  return ziv_real(FpFunction::Sigmoid, a.get(), bits_);
}

RealScalar RealContext::softplus(const Scalar& a) const {
  if (is_nan(a)) return a;
  if (mpfr_inf_p(a.get())) return mpfr_signbit(a.get()) ? zero() : a;
  return ziv_real(FpFunction::Softplus, a.get(), bits_);
}

RealScalar RealContext::gelu(const Scalar& a) const {
  if (is_nan(a) || mpfr_zero_p(a.get())) return a;
  if (mpfr_inf_p(a.get())) return mpfr_signbit(a.get()) ? from_double(-0.0) : a;
  return ziv_real(FpFunction::Gelu, a.get(), bits_);
}

RealScalar RealContext::div_trunc(const Scalar& a, const Scalar& b) const {
  Scalar r = make();
  mpfr_srcptr x = a.get(), y = b.get();
  if (!mpfr_number_p(x) || !mpfr_number_p(y) || mpfr_zero_p(x) || mpfr_zero_p(y)) {
    mpfr_div(r.get(), x, y, MPFR_RNDN);  // NaN, +-inf or +-0: trunc keeps them
    return r;
  }
  Mpfr q;
  mpfr_support::exact_quotient(mpfr_support::QuotientKind::Trunc, x, y, q);
  mpfr_set(r.get(), q, MPFR_RNDN);
  return r;
}

RealScalar RealContext::div_floor(const Scalar& a, const Scalar& b) const {
  mpfr_srcptr x = a.get(), y = b.get();
  // x // +-inf with x != 0 of the other sign is -1 (the quotient is a negative infinitesimal).
  if (mpfr_number_p(x) && !mpfr_zero_p(x) && mpfr_inf_p(y) && mpfr_signbit(x) != mpfr_signbit(y))
    return from_double(-1.0);
  if (!mpfr_number_p(x) || !mpfr_number_p(y) || mpfr_zero_p(x) || mpfr_zero_p(y)) return div(a, b);
  Scalar r = make();
  Mpfr q;
  mpfr_support::exact_quotient(mpfr_support::QuotientKind::Floor, x, y, q);
  mpfr_set(r.get(), q, MPFR_RNDN);
  return r;
}

RealScalar RealContext::remainder(const Scalar& a, const Scalar& b) const {
  mpfr_srcptr x = a.get(), y = b.get();
  if (is_nan(a) || is_nan(b) || mpfr_inf_p(x) || mpfr_zero_p(y)) return nan();
  if (mpfr_zero_p(x)) return a;
  if (mpfr_inf_p(y)) return mpfr_signbit(x) != mpfr_signbit(y) ? b : a;
  Scalar r = make();
  Mpfr q;
  mpfr_support::exact_quotient(mpfr_support::QuotientKind::Remainder, x, y, q);
  mpfr_set(r.get(), q, MPFR_RNDN);
  return r;
}

bool RealContext::can_cast(std::string_view dtype, std::string_view rounding) const {
  if (!parse_rounding(rounding) || !parse_cast_target(dtype).ok()) return false;
  return true;
}

RealScalar RealContext::cast(const Scalar& a, std::string_view dtype, std::string_view rounding) const {
  const std::optional<Rounding> r = parse_rounding(rounding);
  auto target = parse_cast_target(dtype);
  if (!r || !target.ok()) {
    if (error_.empty()) error_ = !target.ok() ? target.message() : fmt::format("cast: unknown rounding mode '{}'", rounding);
    return nan();
  }
  return cast(a, *target, *r);
}

RealScalar RealContext::cast(const Scalar& a, const BinaryFormat& target, Rounding rounding) const {
  if (is_nan(a)) {
    if (!target.has_nan() && error_.empty())
      error_ = fmt::format("{}: nan has no value in a format without nan", target.name);
    return a;
  }
  mpfr_support::WideExponentRange guard;
  FpEnv env{rounding, 0, {}};
  const uint64_t w = mpfr_support::round_to_word(target, env, a.get());
  if (!env.error.empty() && error_.empty()) error_ = env.error;
  Mpfr v;
  mpfr_support::decode_word(target, w, v);
  Scalar out = make();
  mpfr_set(out.get(), v, MPFR_RNDN);
  return out;
}


}  // namespace denote
