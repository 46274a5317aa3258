// Native scalar contexts: F64Context (double) and F32Context (float) with hardware arithmetic.
// A context supplies the meaning of every scalar operation the evaluator uses; the graph never
// mentions numbers. Other contexts (binary formats, intervals, MPFR) provide the same members.
//
//   F32Context ctx;
//   auto y = ctx.tanh(ctx.from_double(0.5));
#pragma once

#include <cmath>
#include <limits>
#include <string_view>

namespace denote {

template <class T>
struct NativeContext {
  using Scalar = T;

  Scalar from_double(double x) const { return static_cast<T>(x); }
  double to_double(Scalar x) const { return static_cast<double>(x); }
  Scalar zero() const { return T(0); }
  Scalar one() const { return T(1); }

  Scalar add(Scalar a, Scalar b) const { return a + b; }
  Scalar sub(Scalar a, Scalar b) const { return a - b; }
  Scalar mul(Scalar a, Scalar b) const { return a * b; }
  Scalar div(Scalar a, Scalar b) const { return a / b; }
  Scalar neg(Scalar a) const { return -a; }
  Scalar fma(Scalar a, Scalar b, Scalar c) const { return std::fma(a, b, c); }

  // Comparisons are primitives so that NaN behaves as in PyTorch (propagates).
  Scalar relu(Scalar a) const { return std::isnan(a) ? a : (a > T(0) ? a : T(0)); }
  Scalar max(Scalar a, Scalar b) const { return std::isnan(a) || std::isnan(b) ? nan() : (a < b ? b : a); }
  Scalar min(Scalar a, Scalar b) const { return std::isnan(a) || std::isnan(b) ? nan() : (b < a ? b : a); }
  Scalar abs(Scalar a) const { return std::fabs(a); }
  Scalar clamp_min(Scalar a, double bound) const { return max(a, static_cast<T>(bound)); }
  bool less(Scalar a, Scalar b) const { return a < b; }
  bool is_nan(Scalar a) const { return std::isnan(a); }
  // The domain test of `log`: true when every real the scalar may stand for is > 0.
  bool log_domain_ok(Scalar a) const { return a > T(0); }

  Scalar exp(Scalar a) const { return std::exp(a); }
  Scalar log(Scalar a) const { return std::log(a); }
  Scalar log1p(Scalar a) const { return std::log1p(a); }
  Scalar tanh(Scalar a) const { return std::tanh(a); }
  // For a < 0 as e^a / (1 + e^a): 1 / (1 + e^-a) overflows e^-a for large -a and returns 0 where
  // the exact value is a (subnormal) positive number (sigmoid(-90) in f32 is 8.2e-40, not 0).
  Scalar sigmoid(Scalar a) const {
    if (a < T(0)) {
      const T e = std::exp(a);
      return e / (T(1) + e);
    }
    return T(1) / (T(1) + std::exp(-a));
  }
  Scalar sqrt(Scalar a) const { return std::sqrt(a); }
  Scalar rsqrt(Scalar a) const { return T(1) / std::sqrt(a); }
  Scalar erf(Scalar a) const { return std::erf(a); }
  Scalar gelu(Scalar a) const { return a * T(0.5) * (T(1) + std::erf(a * T(M_SQRT1_2))); }
  Scalar sin(Scalar a) const { return std::sin(a); }
  Scalar cos(Scalar a) const { return std::cos(a); }
  Scalar softplus(Scalar a) const { return a > T(0) ? a + std::log1p(std::exp(-a)) : std::log1p(std::exp(a)); }
  Scalar pow(Scalar a, Scalar b) const { return std::pow(a, b); }
  Scalar div_trunc(Scalar a, Scalar b) const { return std::trunc(a / b); }
  // Python's // (and torch's rounding_mode="floor"): the floor of the exact quotient, not of the
  // rounded a / b (1 // 0.1 is 9). a - fmod(a, b) is a multiple of b, so q is within rounding of
  // an integer, which the last line snaps to.
  Scalar div_floor(Scalar a, Scalar b) const {
    if (b == T(0)) return a / b;
    const T r = std::fmod(a, b);
    T q = (a - r) / b;
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) q -= T(1);
    if (q == T(0)) return std::copysign(T(0), a / b);
    const T f = std::floor(q);
    return q - f > T(0.5) ? f + T(1) : f;
  }
  // Python's %: the result takes the sign of the divisor.
  Scalar remainder(Scalar a, Scalar b) const {
    T r = std::fmod(a, b);
    return (r != T(0) && ((r < T(0)) != (b < T(0)))) ? r + b : r;
  }

  // cast: whether this context can round to `dtype` in mode `rounding`. A native context has only
  // binary64 ("binary64"/"f64") and binary32 ("binary32"/"f32") with nearest-even; every other
  // target (narrow formats, integers, bool, directed rounding) needs the binary-format context.
  bool can_cast(std::string_view dtype, std::string_view rounding) const {
    return rounding == "nearest-even" &&
           (dtype == "binary64" || dtype == "f64" || dtype == "binary32" || dtype == "f32");
  }
  // Rounds once to `dtype` (a target can_cast accepts); the result is exactly representable in T.
  Scalar cast(Scalar a, std::string_view dtype, std::string_view /*rounding: nearest-even*/) const {
    return (dtype == "binary32" || dtype == "f32") ? static_cast<T>(static_cast<float>(a)) : a;
  }

  static Scalar nan() { return std::numeric_limits<T>::quiet_NaN(); }
};

struct F64Context : NativeContext<double> {
  static constexpr std::string_view kName = "f64";
};

struct F32Context : NativeContext<float> {
  static constexpr std::string_view kName = "f32";
};

}  // namespace denote
