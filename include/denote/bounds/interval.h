// Intervals with outward rounding: Interval<T>{lo, hi} and IntervalContext<Endpoints>, a scalar
// context for the generic evaluator whose every operation returns a box that contains the exact
// real image of its argument boxes AND the image under the endpoint arithmetic (hardware f64/f32
// with libm, or a software binary format rounded to nearest). Endpoints: NativeEndpoints<double>,
// NativeEndpoints<float>, BinaryEndpoints (exact directed rounding of a binary format). An
// operation without a sound box (a divisor containing 0, log of a box reaching 0, an uncertain
// comparison, pow ...) records an error (take_error()); the evaluator then gives the node no box.
// So does an operation whose value can be NaN in the endpoint arithmetic at some point of its
// argument boxes (inf - inf, inf * 0, inf / inf, sin/cos of inf; the sqrt op below 0): a box never
// stands for a NaN value (docs/NUMERICS.md, "What a box promises about NaN").
// See docs/NUMERICS.md ("Intervals") for the soundness argument and the widening of each function.
//
//   IntervalContext<NativeEndpoints<float>> ctx;
//   auto x = ctx.make(0.25, 0.5);                    // [0.25, 0.5] rounded outward to float
//   auto y = ctx.tanh(ctx.add(x, x));                // ⊇ tanh([0.5, 1])
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <string_view>

#include "denote/base/next_float.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/native.h"

namespace denote {

template <class T>
struct Interval {
  T lo{}, hi{};
  bool operator==(const Interval&) const = default;
};

enum class Dir { Down, Up };

// The elementary functions the endpoint policies evaluate with a directed bound.
enum class Fn { Exp, Log, Log1p, Tanh, Sigmoid, Softplus, Erf, Sqrt, Rsqrt, Gelu, Sin, Cos };

// Hardware endpoints. + - * / sqrt: round to nearest, then one ulp outward unless an error-free
// transform proves the result exact. libm-based functions: kLibmUlps ulps outward (covers glibc's
// documented maximal errors of 1-2 ulps twice: once for the real value, once for the libm value at
// another point of the box); composites (sigmoid, softplus, gelu of NativeContext): kCompositeUlps,
// gelu also |x|·8·eps absolute (its 1 + erf cancels for negative x).
template <class T>
struct NativeEndpoints {
  using Value = T;
  static constexpr std::string_view kName = std::is_same_v<T, double> ? "f64" : "f32";
  static constexpr int kLibmUlps = 4;
  static constexpr int kCompositeUlps = 8;

  static T step(T x, Dir d, int n = 1) {
    for (int i = 0; i < n; ++i) x = d == Dir::Down ? next_down(x) : next_up(x);
    return x;
  }
  // r = RN(exact); err = exact - r when known exactly (0: exact), `known` false: widen anyway.
  static T direct(T r, T err, bool known, Dir d) {
    if (std::isnan(r)) return r;
    if (known && std::isfinite(r) && !std::isnan(err)) {
      if (err == T(0)) return r;
      if ((err > T(0)) == (d == Dir::Up)) return step(r, d);
      return r;
    }
    return step(r, d);
  }
  // Below this magnitude fma-based error terms may underflow: widen unconditionally.
  static bool tiny(T r) { return std::fabs(r) < std::ldexp(std::numeric_limits<T>::min(), std::numeric_limits<T>::digits + 2); }

  T from_double(double x, Dir d) const {
    if constexpr (std::is_same_v<T, double>) {
      return x;
    } else {
      float f = static_cast<float>(x);
      if (std::isnan(x)) return f;
      if (d == Dir::Down && static_cast<double>(f) > x) f = next_down(f);
      if (d == Dir::Up && static_cast<double>(f) < x) f = next_up(f);
      return f;
    }
  }
  double to_double(T x, Dir) const { return static_cast<double>(x); }
  T zero() const { return T(0); }
  T one() const { return T(1); }
  bool less(T a, T b) const { return a < b; }
  bool is_nan(T a) const { return std::isnan(a); }
  bool is_inf(T a) const { return std::isinf(a); }
  T neg(T a) const { return -a; }

  T add(T a, T b, Dir d) const {
    const T s = a + b, bb = s - a, e = (a - (s - bb)) + (b - bb);  // TwoSum: exact when s is finite
    return direct(s, e, true, d);
  }
  T sub(T a, T b, Dir d) const { return add(a, -b, d); }
  T mul(T a, T b, Dir d) const {
    const T p = a * b;
    if (p == T(0) && (a == T(0) || b == T(0))) return p;
    return direct(p, std::fma(a, b, -p), !tiny(p), d);
  }
  T div(T a, T b, Dir d) const {
    const T q = a / b;
    if (a == T(0)) return q;
    // a - q b has the sign of (a/b - q) times the sign of b.
    const T r = std::fma(-q, b, a);
    return direct(q, b > T(0) ? r : -r, !tiny(q) && !tiny(a), d);
  }
  T fn(Fn f, T x, Dir d) const {
    const NativeContext<T> n;
    switch (f) {
      case Fn::Sqrt: {
        const T r = std::sqrt(x);
        return direct(r, std::fma(-r, r, x), !tiny(r), d);
      }
      case Fn::Exp: return step(n.exp(x), d, kLibmUlps);
      case Fn::Log: return step(n.log(x), d, kLibmUlps);
      case Fn::Log1p: return step(n.log1p(x), d, kLibmUlps);
      case Fn::Tanh: return step(n.tanh(x), d, kLibmUlps);
      case Fn::Erf: return step(n.erf(x), d, kLibmUlps);
      case Fn::Rsqrt: return step(n.rsqrt(x), d, kLibmUlps);
      case Fn::Sin: return step(n.sin(x), d, kLibmUlps);
      case Fn::Cos: return step(n.cos(x), d, kLibmUlps);
      case Fn::Sigmoid: return step(n.sigmoid(x), d, kCompositeUlps);
      case Fn::Softplus: return step(n.softplus(x), d, kCompositeUlps);
      case Fn::Gelu: {
        const T slack = std::fabs(x) * T(8) * std::numeric_limits<T>::epsilon();
        const T y = step(n.gelu(x), d, kCompositeUlps);
        return d == Dir::Down ? step(y - slack, d) : step(y + slack, d);
      }
    }
    return std::numeric_limits<T>::quiet_NaN();
  }
  // x^p (libm's pow), kLibmUlps outward.
  T pow(T x, T p, Dir d) const { return step(NativeContext<T>().pow(x, p), d, kLibmUlps); }
  // The native cast targets (binary64, binary32 with nearest-even).
  bool can_cast(std::string_view dtype, std::string_view rounding) const { return NativeContext<T>().can_cast(dtype, rounding); }
  T cast(T a, std::string_view dtype, std::string_view, Dir d) const {
    if (dtype == "binary32" || dtype == "f32") return static_cast<T>(NativeEndpoints<float>().from_double(a, d));
    return a;
  }
  std::string take_error() const { return ""; }
};

// Software binary-format endpoints: two BinaryContexts rounding downward and upward; every
// operation and function is the exact real result rounded once in the direction asked, so the
// bound is exact directed rounding and contains the nearest-even (or any mode's) value too.
class BinaryEndpoints {
 public:
  using Value = FpWord;
  static constexpr std::string_view kName = "binary";
  explicit BinaryEndpoints(BinaryFormat f = binary32_format())
      : down_(f, Rounding::Downward), up_(f, Rounding::Upward) {}
  const BinaryFormat& format() const { return down_.format(); }

  FpWord from_double(double x, Dir d) const { return ctx(d).from_double(x); }
  double to_double(FpWord x, Dir d) const;  // outward where the word is not a double
  FpWord zero() const { return down_.zero(); }
  FpWord one() const { return down_.one(); }
  bool less(FpWord a, FpWord b) const { return down_.less(a, b); }
  bool is_nan(FpWord a) const { return down_.is_nan(a); }
  bool is_inf(FpWord a) const { return classify(format(), a.bits) == FloatClass::Infinite; }
  FpWord neg(FpWord a) const { return down_.neg(a); }
  FpWord add(FpWord a, FpWord b, Dir d) const { return ctx(d).add(a, b); }
  FpWord sub(FpWord a, FpWord b, Dir d) const { return ctx(d).sub(a, b); }
  FpWord mul(FpWord a, FpWord b, Dir d) const { return ctx(d).mul(a, b); }
  FpWord div(FpWord a, FpWord b, Dir d) const { return ctx(d).div(a, b); }
  FpWord fn(Fn f, FpWord x, Dir d) const;
  FpWord pow(FpWord x, FpWord p, Dir d) const { return ctx(d).pow(x, p); }
  bool can_cast(std::string_view dtype, std::string_view rounding) const { return down_.can_cast(dtype, rounding); }
  FpWord cast(FpWord a, std::string_view dtype, std::string_view rounding, Dir d) const {
    return ctx(d).cast(a, dtype, rounding);
  }
  // Rounding to the target is monotone, so the endpoints rounded in the node's mode bound it; the
  // way back into the endpoint format rounds in direction d.
  FpWord cast(FpWord a, const BinaryFormat& target, Rounding rounding, Dir d) const {
    return ctx(d).cast(a, target, rounding);
  }
  std::string take_error() const;

 private:
  const BinaryContext& ctx(Dir d) const { return d == Dir::Down ? down_ : up_; }
  BinaryContext down_, up_;
};

// The interval scalar context over endpoint policy E (see the header comment).
template <class E>
class IntervalContext {
 public:
  using T = typename E::Value;
  using Scalar = Interval<T>;
  static constexpr std::string_view kName = "interval";

  explicit IntervalContext(E e = E()) : e_(std::move(e)) {}
  const E& endpoints() const { return e_; }
  // The first error; the endpoints' own (an overflow to NaN in e4m3fn ...) replaces the generic
  // "an endpoint is nan" that it caused.
  std::string take_error() const {
    std::string own = std::move(error_), ends = e_.take_error();
    error_.clear();
    if (own.empty() || (own == "interval: an endpoint is nan" && !ends.empty())) return ends;
    return own;
  }

  // [lo, hi] of doubles rounded outward to the endpoints.
  Scalar make(double lo, double hi) const { return {e_.from_double(lo, Dir::Down), e_.from_double(hi, Dir::Up)}; }
  Scalar from_double(double x) const { return make(x, x); }
  double to_double(const Scalar& x) const { return 0.5 * e_.to_double(x.lo, Dir::Down) + 0.5 * e_.to_double(x.hi, Dir::Up); }
  double lo_double(const Scalar& x) const { return e_.to_double(x.lo, Dir::Down); }
  double hi_double(const Scalar& x) const { return e_.to_double(x.hi, Dir::Up); }
  Scalar zero() const { return {e_.zero(), e_.zero()}; }
  Scalar one() const { return {e_.one(), e_.one()}; }
  Scalar nan() const { return fail("nan value"); }

  Scalar add(const Scalar& a, const Scalar& b) const {
    if ((pos_inf(a) && neg_inf(b)) || (neg_inf(a) && pos_inf(b))) return fail(kNanNote + "inf - inf)");
    return check({e_.add(a.lo, b.lo, Dir::Down), e_.add(a.hi, b.hi, Dir::Up)});
  }
  Scalar sub(const Scalar& a, const Scalar& b) const {
    if ((pos_inf(a) && pos_inf(b)) || (neg_inf(a) && neg_inf(b))) return fail(kNanNote + "inf - inf)");
    return check({e_.sub(a.lo, b.hi, Dir::Down), e_.sub(a.hi, b.lo, Dir::Up)});
  }
  Scalar neg(const Scalar& a) const { return {e_.neg(a.hi), e_.neg(a.lo)}; }
  Scalar mul(const Scalar& a, const Scalar& b) const {
    if ((any_inf(a) && has_zero(b)) || (any_inf(b) && has_zero(a))) return fail(kNanNote + "inf * 0)");
    // A point factor (every weight): two products, the same endpoints as the four below.
    if (is_point(b)) return point_mul(a, b.lo);
    if (is_point(a)) return point_mul(b, a.lo);
    const T lo = min4(e_.mul(a.lo, b.lo, Dir::Down), e_.mul(a.lo, b.hi, Dir::Down), e_.mul(a.hi, b.lo, Dir::Down),
                      e_.mul(a.hi, b.hi, Dir::Down));
    const T hi = max4(e_.mul(a.lo, b.lo, Dir::Up), e_.mul(a.lo, b.hi, Dir::Up), e_.mul(a.hi, b.lo, Dir::Up),
                      e_.mul(a.hi, b.hi, Dir::Up));
    return check({lo, hi});
  }
  Scalar div(const Scalar& a, const Scalar& b) const {
    if (!(e_.less(e_.zero(), b.lo) || e_.less(b.hi, e_.zero()))) return fail("div: the divisor's interval contains 0");
    if (any_inf(a) && any_inf(b)) return fail(kNanNote + "inf / inf)");
    const T lo = min4(e_.div(a.lo, b.lo, Dir::Down), e_.div(a.lo, b.hi, Dir::Down), e_.div(a.hi, b.lo, Dir::Down),
                      e_.div(a.hi, b.hi, Dir::Down));
    const T hi = max4(e_.div(a.lo, b.lo, Dir::Up), e_.div(a.lo, b.hi, Dir::Up), e_.div(a.hi, b.lo, Dir::Up),
                      e_.div(a.hi, b.hi, Dir::Up));
    return check({lo, hi});
  }
  // fma's value lies between the exact a*b + c and its rounding: add(mul) contains both.
  Scalar fma(const Scalar& a, const Scalar& b, const Scalar& c) const { return add(mul(a, b), c); }

  Scalar relu(const Scalar& a) const { return max(a, zero()); }
  Scalar max(const Scalar& a, const Scalar& b) const { return check({max2(a.lo, b.lo), max2(a.hi, b.hi)}); }
  Scalar min(const Scalar& a, const Scalar& b) const { return check({min2(a.lo, b.lo), min2(a.hi, b.hi)}); }
  Scalar abs(const Scalar& a) const {
    if (!e_.less(a.lo, e_.zero())) return a;
    if (!e_.less(e_.zero(), a.hi)) return neg(a);
    return {e_.zero(), max2(e_.neg(a.lo), a.hi)};
  }
  Scalar clamp_min(const Scalar& a, double bound) const { return max(a, from_double(bound)); }
  // Certain comparisons only: an overlap records an error (the rule's branch would be a guess).
  bool less(const Scalar& a, const Scalar& b) const {
    if (e_.less(a.hi, b.lo)) return true;
    if (!e_.less(a.lo, b.hi)) return false;
    fail("comparison of overlapping intervals is uncertain");
    return false;
  }
  bool is_nan(const Scalar& a) const { return e_.is_nan(a.lo) || e_.is_nan(a.hi); }
  bool log_domain_ok(const Scalar& a) const { return e_.less(e_.zero(), a.lo); }

  Scalar exp(const Scalar& a) const { return clamp_below(inc(Fn::Exp, a), e_.zero()); }
  Scalar log(const Scalar& a) const {
    if (!log_domain_ok(a)) return fail("log: the interval reaches 0");
    return inc(Fn::Log, a);
  }
  Scalar log1p(const Scalar& a) const {
    if (!e_.less(e_.neg(e_.one()), a.lo)) return fail("log1p: the interval reaches -1");
    return inc(Fn::Log1p, a);
  }
  Scalar tanh(const Scalar& a) const { return clamp_pm1(inc(Fn::Tanh, a), true); }
  Scalar erf(const Scalar& a) const { return clamp_pm1(inc(Fn::Erf, a), true); }
  Scalar sigmoid(const Scalar& a) const { return clamp_pm1(inc(Fn::Sigmoid, a), false); }
  Scalar softplus(const Scalar& a) const { return clamp_below(inc(Fn::Softplus, a), e_.zero()); }
  // Over the part of the box that is >= 0 (a negative part is an artefact of the interval
  // arithmetic, e.g. a variance); a box entirely below 0 has no box.
  Scalar sqrt(const Scalar& a) const {
    if (e_.less(a.hi, e_.zero())) return fail("sqrt: the interval is negative");
    const T lo = e_.less(a.lo, e_.zero()) ? e_.zero() : a.lo;
    return check({e_.fn(Fn::Sqrt, lo, Dir::Down), e_.fn(Fn::Sqrt, a.hi, Dir::Up)});
  }
  // The sqrt op of a graph (not a rule's variance): a box reaching below 0 contains points where the
  // evaluator's square root is NaN, so it has no box.
  Scalar sqrt_of_value(const Scalar& a) const {
    if (e_.less(a.lo, e_.zero())) return fail(kNanNote + "sqrt of a negative number)");
    return sqrt(a);
  }
  Scalar rsqrt(const Scalar& a) const {
    if (!e_.less(e_.zero(), a.lo)) return fail("rsqrt: the interval reaches 0");
    return check({e_.fn(Fn::Rsqrt, a.hi, Dir::Down), e_.fn(Fn::Rsqrt, a.lo, Dir::Up)});
  }
  Scalar gelu(const Scalar& a) const;
  Scalar sin(const Scalar& a) const { return periodic(a, Fn::Sin); }
  Scalar cos(const Scalar& a) const { return periodic(a, Fn::Cos); }
  // x^p for a point exponent p (ONNX Pow by a constant: ml4acopf's squares): the monotone pieces of
  // t -> t^p on the box, each endpoint's power rounded outward (the endpoints' pow); a box where the
  // evaluation can be NaN (t < 0 with a non-integer p) or infinite (t = 0 with p < 0) has none.
  Scalar pow(const Scalar& a, const Scalar& b) const {
    if (!is_point(b) || any_inf(a) || any_inf(b) || is_nan(a)) return fail("pow: the exponent is not one finite value");
    const double p = e_.to_double(b.lo, Dir::Down);
    if (p == 0) return one();
    const bool integer = std::floor(p) == p, even = integer && std::fmod(p, 2.0) == 0;
    const bool has_neg = e_.less(a.lo, e_.zero());
    const bool has_zero = !e_.less(e_.zero(), a.lo) && !e_.less(a.hi, e_.zero());
    if (!integer && has_neg) return fail("pow: a negative base with a non-integer exponent");
    if (p < 0 && has_zero) return fail("pow: the base reaches 0 with a negative exponent");
    if (even && has_neg) {  // t^p = |t|^p, monotone in |t|
      const Scalar m = abs(a);
      if (p > 0) return check({e_.pow(m.lo, b.lo, Dir::Down), e_.pow(m.hi, b.lo, Dir::Up)});
      return check({e_.pow(m.hi, b.lo, Dir::Down), e_.pow(m.lo, b.lo, Dir::Up)});
    }
    // Increasing for p > 0 (odd, or t >= 0), decreasing for p < 0 (on the one side of 0 the box holds).
    if (p > 0) return check({e_.pow(a.lo, b.lo, Dir::Down), e_.pow(a.hi, b.lo, Dir::Up)});
    return check({e_.pow(a.hi, b.lo, Dir::Down), e_.pow(a.lo, b.lo, Dir::Up)});
  }
  Scalar div_trunc(const Scalar&, const Scalar&) const { return fail("div_trunc has no interval rule"); }
  Scalar div_floor(const Scalar&, const Scalar&) const { return fail("div_floor has no interval rule"); }
  Scalar remainder(const Scalar&, const Scalar&) const { return fail("remainder has no interval rule"); }

  // A cast rounds monotonically: the endpoints' casts, rounded outward into the endpoint format.
  bool can_cast(std::string_view dtype, std::string_view rounding) const { return e_.can_cast(dtype, rounding); }
  Scalar cast(const Scalar& a, const BinaryFormat& target, Rounding rounding) const
    requires requires(const E& e, const typename E::Value& v) { e.cast(v, target, rounding, Dir::Down); }
  {
    return check({e_.cast(a.lo, target, rounding, Dir::Down), e_.cast(a.hi, target, rounding, Dir::Up)});
  }
  Scalar cast(const Scalar& a, std::string_view dtype, std::string_view rounding) const {
    return check({e_.cast(a.lo, dtype, rounding, Dir::Down), e_.cast(a.hi, dtype, rounding, Dir::Up)});
  }

 private:
  T max2(T a, T b) const { return e_.less(a, b) ? b : a; }
  T min2(T a, T b) const { return e_.less(b, a) ? b : a; }
  T min4(T a, T b, T c, T d) const { return min2(min2(a, b), min2(c, d)); }
  T max4(T a, T b, T c, T d) const { return max2(max2(a, b), max2(c, d)); }
  inline static const std::string kNanNote = "the value can be nan (";
  bool pos_inf(const Scalar& a) const { return e_.is_inf(a.hi) && e_.less(e_.zero(), a.hi); }
  bool neg_inf(const Scalar& a) const { return e_.is_inf(a.lo) && e_.less(a.lo, e_.zero()); }
  bool any_inf(const Scalar& a) const { return pos_inf(a) || neg_inf(a); }
  bool has_zero(const Scalar& a) const { return !e_.less(e_.zero(), a.lo) && !e_.less(a.hi, e_.zero()); }
  bool is_point(const Scalar& a) const { return !e_.less(a.lo, a.hi) && !e_.less(a.hi, a.lo) && !e_.is_nan(a.lo); }
  // a * [p, p]: min and max of a.lo p and a.hi p, each rounded outward (by p's sign; p = 0 gives the
  // products' signed zeros, ordered as min/max would).
  Scalar point_mul(const Scalar& a, const T& p) const {
    const T l1 = e_.mul(a.lo, p, Dir::Down), l2 = e_.mul(a.hi, p, Dir::Down);
    const T h1 = e_.mul(a.lo, p, Dir::Up), h2 = e_.mul(a.hi, p, Dir::Up);
    return check({min2(l1, l2), max2(h1, h2)});
  }
  Scalar fail(const std::string& what) const {
    if (error_.empty()) error_ = "interval: " + what;
    return {e_.zero(), e_.zero()};
  }
  Scalar check(const Scalar& r) const {
    if (e_.is_nan(r.lo) || e_.is_nan(r.hi)) return fail("an endpoint is nan");
    return r;
  }
  Scalar inc(Fn f, const Scalar& a) const { return check({e_.fn(f, a.lo, Dir::Down), e_.fn(f, a.hi, Dir::Up)}); }
  Scalar clamp_below(Scalar r, T floor) const {
    if (e_.less(r.lo, floor)) r.lo = floor;
    return r;
  }
  // tanh, erf in [-1, 1]; sigmoid in [0, 1].
  Scalar clamp_pm1(Scalar r, bool symmetric) const {
    const T lower = symmetric ? e_.neg(e_.one()) : e_.zero();
    if (e_.less(r.lo, lower)) r.lo = lower;
    if (e_.less(e_.one(), r.hi)) r.hi = e_.one();
    return r;
  }
  Scalar periodic(const Scalar& a, Fn f) const;

  E e_;
  mutable std::string error_;
};

// gelu decreases on (-inf, c] and increases on [c, inf), c = -0.75179...; its minimum is
// -0.169971... (kGeluMinBelow is below it; the endpoint policy widens it further).
inline constexpr double kGeluCriticalLo = -0.7518, kGeluCriticalHi = -0.7517, kGeluMinBelow = -0.16997121;

template <class E>
typename IntervalContext<E>::Scalar IntervalContext<E>::gelu(const Scalar& a) const {
  const T c_lo = e_.from_double(kGeluCriticalLo, Dir::Down), c_hi = e_.from_double(kGeluCriticalHi, Dir::Up);
  if (!e_.less(c_lo, a.hi))  // a.hi <= c: decreasing
    return check({e_.fn(Fn::Gelu, a.hi, Dir::Down), e_.fn(Fn::Gelu, a.lo, Dir::Up)});
  if (!e_.less(a.lo, c_hi))  // a.lo >= c: increasing
    return check({e_.fn(Fn::Gelu, a.lo, Dir::Down), e_.fn(Fn::Gelu, a.hi, Dir::Up)});
  double below = kGeluMinBelow;
  if constexpr (requires { E::kCompositeUlps; })  // the native formula's error at |x| < 1
    below -= 32 * static_cast<double>(std::numeric_limits<T>::epsilon());
  const T lo = e_.from_double(below, Dir::Down);
  return check({lo, max2(e_.fn(Fn::Gelu, a.lo, Dir::Up), e_.fn(Fn::Gelu, a.hi, Dir::Up))});
}

// sin / cos by period analysis. The critical points are c_k = phase + k·π (phase π/2 for sin, 0
// for cos): a maximum (value 1) for even k, a minimum (-1) for odd k. An integer k whose c_k may lie
// in the box (decided in double with a margin of 1e-9 in k, far above the error of the quotient for
// |x| <= 1e6) puts ±1 in the box; otherwise the extremes are at the endpoints, evaluated outward.
// Wider boxes, |x| > 1e6, or more than 2π: [-1, 1].
template <class E>
typename IntervalContext<E>::Scalar IntervalContext<E>::periodic(const Scalar& a, Fn f) const {
  if (is_nan(a)) return fail("an endpoint is nan");
  if (any_inf(a)) return fail(kNanNote + (f == Fn::Sin ? "sin of inf)" : "cos of inf)"));
  const Scalar unit{e_.neg(e_.one()), e_.one()};
  const double lo = e_.to_double(a.lo, Dir::Down), hi = e_.to_double(a.hi, Dir::Up);
  if (!(std::fabs(lo) <= 1e6 && std::fabs(hi) <= 1e6) || hi - lo >= 6.0) return unit;
  const double phase = f == Fn::Sin ? 1.5707963267948966 : 0.0, pi = 3.141592653589793;
  const double k_lo = std::ceil((lo - phase) / pi - 1e-9), k_hi = std::floor((hi - phase) / pi + 1e-9);
  bool has_max = false, has_min = false;
  for (double k = k_lo; k <= k_hi; k += 1) (std::fmod(std::fabs(k), 2.0) == 0 ? has_max : has_min) = true;
  Scalar r{min2(e_.fn(f, a.lo, Dir::Down), e_.fn(f, a.hi, Dir::Down)), max2(e_.fn(f, a.lo, Dir::Up), e_.fn(f, a.hi, Dir::Up))};
  if (has_min) r.lo = unit.lo;
  if (has_max) r.hi = unit.hi;
  return clamp_pm1(check(r), true);
}

}  // namespace denote
