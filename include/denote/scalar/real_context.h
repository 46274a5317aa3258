// RealContext: MPFR at a chosen precision (bits), round to nearest-even, MPFR's exponent range.
// Every operation, the composite functions (sigmoid, softplus, gelu) included, is the exact result
// rounded once to `bits` (a Ziv loop settles the composites, as in binary_functions.h); NaN and
// infinities follow IEEE 754 like the binary contexts. A high-precision reference for the other
// contexts: `denote run --arith real --precision 256`.
//
//   RealContext ctx(256);
//   RealScalar y = ctx.gelu(ctx.from_double(-0.75));   // gelu(-0.75) to 256 bits
//   double v = ctx.to_double(y);
#pragma once

#include <mpfr.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "denote/scalar/binary_format.h"

namespace denote {

// An owned MPFR number (copyable; a copy has the same precision and value).
class RealScalar {
 public:
  RealScalar() : RealScalar(53) {}  // +0 at 53 bits
  explicit RealScalar(mpfr_prec_t bits);
  RealScalar(const RealScalar& o);
  RealScalar(RealScalar&& o) noexcept;
  RealScalar& operator=(const RealScalar& o);
  RealScalar& operator=(RealScalar&& o) noexcept;
  ~RealScalar();

  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  // Same value and sign (zeros), or both NaN.
  bool operator==(const RealScalar& o) const;

 private:
  mpfr_t v_;
};

class RealContext {
 public:
  using Scalar = RealScalar;
  static constexpr std::string_view kName = "real";

  explicit RealContext(mpfr_prec_t bits = 256) : bits_(bits) {}
  mpfr_prec_t bits() const { return bits_; }
  // The first error recorded since the last call ("" if none; a cast to a format without NaN of
  // a NaN), cleared by the call.
  std::string take_error() const;

  Scalar from_double(double x) const;
  double to_double(const Scalar& x) const { return mpfr_get_d(x.get(), MPFR_RNDN); }
  Scalar zero() const { return from_double(0.0); }
  Scalar one() const { return from_double(1.0); }
  Scalar nan() const;
  // pi rounded to the context's precision (derivative rules need it beyond a double's 53 bits).
  Scalar pi() const;

  Scalar add(const Scalar& a, const Scalar& b) const;
  Scalar sub(const Scalar& a, const Scalar& b) const;
  Scalar mul(const Scalar& a, const Scalar& b) const;
  Scalar div(const Scalar& a, const Scalar& b) const;
  Scalar neg(const Scalar& a) const;
  Scalar fma(const Scalar& a, const Scalar& b, const Scalar& c) const;

  // IEEE 754-2019 maximum/minimum: NaN if either is NaN, -0 < +0; relu(-0) = +0.
  Scalar relu(const Scalar& a) const;
  Scalar max(const Scalar& a, const Scalar& b) const;
  Scalar min(const Scalar& a, const Scalar& b) const;
  Scalar abs(const Scalar& a) const;
  Scalar clamp_min(const Scalar& a, double bound) const { return max(a, from_double(bound)); }
  bool less(const Scalar& a, const Scalar& b) const { return mpfr_less_p(a.get(), b.get()) != 0; }
  bool is_nan(const Scalar& a) const { return mpfr_nan_p(a.get()) != 0; }
  bool log_domain_ok(const Scalar& a) const { return !is_nan(a) && mpfr_sgn(a.get()) > 0; }

  Scalar exp(const Scalar& a) const;
  Scalar log(const Scalar& a) const;
  Scalar log1p(const Scalar& a) const;
  Scalar tanh(const Scalar& a) const;
  Scalar sigmoid(const Scalar& a) const;
  Scalar sqrt(const Scalar& a) const;
  Scalar rsqrt(const Scalar& a) const;  // rsqrt(-0) = -inf (IEEE 754-2019)
  Scalar erf(const Scalar& a) const;
  Scalar gelu(const Scalar& a) const;   // gelu(-inf) = -0
  Scalar sin(const Scalar& a) const;
  Scalar cos(const Scalar& a) const;
  Scalar softplus(const Scalar& a) const;
  Scalar pow(const Scalar& a, const Scalar& b) const;
  // As binary_functions.h: trunc / floor of the exact quotient, Python's % via fmod; rounded once.
  Scalar div_trunc(const Scalar& a, const Scalar& b) const;
  Scalar div_floor(const Scalar& a, const Scalar& b) const;
  Scalar remainder(const Scalar& a, const Scalar& b) const;

  // Every binary-format target in every rounding mode (the value rounded once to the format, then
  // held exactly when bits >= the format's precision); integer and bool targets are not available
  // yet. the cast rule calls can_cast, then cast(x, dtype, rounding).
  bool can_cast(std::string_view dtype, std::string_view rounding) const;
  Scalar cast(const Scalar& a, std::string_view dtype, std::string_view rounding) const;
  // The same with the target already parsed (the cast rule parses once per node).
  Scalar cast(const Scalar& a, const BinaryFormat& target, Rounding rounding) const;

 private:
  Scalar make() const { return Scalar(bits_); }

  mpfr_prec_t bits_;
  mutable std::string error_;
};

}  // namespace denote
