// The correctly rounded functions on every word of every named format of at most 8 bits, in all
// five rounding modes, against an enumeration oracle written here from SPEC-NUMERICS.md: the
// format's values are listed from the field formulas of its encoding, the exact function value is
// computed with MPFR at 600 bits (with the side of the true value when it collapses onto a listed
// value), and the rounding is chosen among the listed values by the mode's definition (ties to
// the even significand, or away), with overflow past the next value of the p-bit grid above max.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "denote/scalar/binary_functions.h"
#include "mpfr_test_util.h"

namespace denote {
namespace {

using mpfr_test::Mp;

struct Spec {
  const char* name;
  int e, f, bias;
  Encoding enc;
};

// From SPEC-NUMERICS.md / the OCP and ml_dtypes definitions.
constexpr Spec kSmall[] = {
    {"e4m3fn", 4, 3, 7, Encoding::Fn},      {"e4m3fnuz", 4, 3, 8, Encoding::Fnuz}, {"e5m2", 5, 2, 15, Encoding::Ieee},
    {"e5m2fnuz", 5, 2, 16, Encoding::Fnuz}, {"e3m2fn", 3, 2, 3, Encoding::Finite}, {"e2m3fn", 2, 3, 1, Encoding::Finite},
    {"e2m1fn", 2, 1, 1, Encoding::Finite},  {"e8m0fnu", 8, 0, 127, Encoding::E8m0},
};

constexpr Rounding kModes[] = {Rounding::NearestEven, Rounding::NearestAway, Rounding::TowardZero, Rounding::Upward,
                               Rounding::Downward};

enum class Kind { Finite, Inf, NaN };

// One word's meaning by the spec's field rules.
struct Decoded {
  Kind kind = Kind::Finite;
  bool neg = false;
  double value = 0;  // exact for these formats
};

Decoded decode(const Spec& s, uint64_t w) {
  Decoded d;
  const bool has_sign = s.enc != Encoding::E8m0;
  d.neg = has_sign && ((w >> (s.e + s.f)) & 1);
  const uint64_t ones = (uint64_t{1} << s.e) - 1, fmask = (uint64_t{1} << s.f) - 1;
  const uint64_t ef = (w >> s.f) & ones, frac = w & fmask;
  if (s.enc == Encoding::E8m0) {
    if (w == 0xff) d.kind = Kind::NaN;
    d.value = std::ldexp(1.0, static_cast<int>(w) - s.bias);
    return d;
  }
  if (s.enc == Encoding::Ieee && ef == ones) d.kind = frac == 0 ? Kind::Inf : Kind::NaN;
  if (s.enc == Encoding::Fn && ef == ones && frac == fmask) d.kind = Kind::NaN;
  if (s.enc == Encoding::Fnuz && w == (uint64_t{1} << (s.e + s.f))) d.kind = Kind::NaN;
  const double mag = ef == 0 ? std::ldexp(static_cast<double>(frac), 1 - s.bias - s.f)
                             : std::ldexp(static_cast<double>(frac | (uint64_t{1} << s.f)),
                                          static_cast<int>(ef) - s.bias - s.f);
  d.value = d.neg ? -mag : mag;
  if (d.kind == Kind::Inf) d.value = d.neg ? -HUGE_VAL : HUGE_VAL;
  return d;
}

// The listed finite values of a format (sorted, zero once), the largest one, the grid's next value
// above it (overflow threshold), and the smallest normal exponent.
struct Table {
  Spec spec;
  std::vector<double> values;
  double max = 0, beyond = 0;
  int emin = 0;

  explicit Table(const Spec& s) : spec(s) {
    for (uint64_t w = 0; w < (uint64_t{1} << (s.enc == Encoding::E8m0 ? 8 : 1 + s.e + s.f)); ++w) {
      const Decoded d = decode(s, w);
      if (d.kind == Kind::Finite) values.push_back(d.value == 0 ? 0.0 : d.value);
    }
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    max = values.back();
    emin = s.enc == Encoding::E8m0 ? -s.bias : 1 - s.bias;
    beyond = max + quantum(max);
  }
  // The spacing of the p-bit grid at |v| (fixed below 2^emin).
  double quantum(double v) const { return std::ldexp(1.0, std::max(std::ilogb(v), emin) - spec.f); }
  bool even(double v) const { return v == 0 || std::fmod(std::fabs(v) / quantum(std::fabs(v)), 2.0) == 0; }
};

struct Expect {
  bool nan = false;     // compare NaN-ness only
  double value = 0;     // otherwise the value (sign of zero included)
  uint32_t flags = 0;
  bool error = false;   // no value in the format (env.error set)
  bool skip = false;    // e8m0 outside its positive range: the core's own convention
};

// Rounds the exact value (z, side: sign of true - z) to the table in `mode`.
Expect round_to_table(const Table& t, Rounding mode, mpfr_srcptr z, int side) {
  Expect out;
  const bool neg = mpfr_signbit(z) ? !(mpfr_zero_p(z) && side > 0) : (mpfr_zero_p(z) && side < 0);
  if (t.spec.enc == Encoding::E8m0 && (neg || mpfr_cmp_d(z, t.values.front()) < 0)) return out.skip = true, out;
  // Candidates: the listed values plus +-beyond (overflow), as exact doubles.
  std::vector<double> c = t.values;
  c.push_back(t.beyond);
  if (t.spec.enc != Encoding::E8m0) c.insert(c.begin(), -t.beyond);
  // a = largest candidate below or at the true value, b = smallest above or at it.
  auto below = [&](double v) { int k = mpfr_cmp_d(z, v); return k > 0 || (k == 0 && side >= 0); };
  auto above = [&](double v) { int k = mpfr_cmp_d(z, v); return k < 0 || (k == 0 && side <= 0); };
  double a = -HUGE_VAL, b = HUGE_VAL;
  for (double v : c) {
    if (below(v)) a = std::max(a, v);
    if (above(v)) b = std::min(b, v);
  }
  const bool exact = a == b;
  double r = a;
  if (!exact) {
    Mp da(2000), db(2000);
    mpfr_sub_d(da, z, a, MPFR_RNDN);  // exact at 2000 bits
    mpfr_d_sub(db, b, z, MPFR_RNDN);
    int cmp = mpfr_cmp(da, db);
    if (cmp == 0) cmp = -side;  // z is a midpoint but the true value is to one side of it
    const bool tie = cmp == 0;
    switch (mode) {
      case Rounding::NearestEven: r = tie ? (t.even(a) ? a : b) : (cmp < 0 ? a : b); break;
      case Rounding::NearestAway: r = tie ? (std::fabs(a) > std::fabs(b) ? a : b) : (cmp < 0 ? a : b); break;
      case Rounding::TowardZero: r = std::fabs(a) < std::fabs(b) ? a : b; break;
      case Rounding::Upward: r = b; break;
      case Rounding::Downward: r = a; break;
    }
    if (std::isinf(a) || std::isinf(b)) r = std::isinf(a) ? b : a;  // beyond +-beyond: overflow anyway
    out.flags |= kFpInexact;
  }
  if (std::fabs(r) >= t.beyond) {  // overflow
    out.flags |= kFpOverflow | kFpInexact;
    const bool to_max = mode == Rounding::TowardZero || (mode == Rounding::Upward && neg) ||
                        (mode == Rounding::Downward && !neg);
    if (to_max || t.spec.enc == Encoding::Finite) {
      if (!to_max) out.flags |= kFpSaturated;
      out.value = neg ? -t.max : t.max;
    } else if (t.spec.enc == Encoding::Ieee) {
      out.value = neg ? -HUGE_VAL : HUGE_VAL;
    } else {
      out.nan = true;
    }
    return out;
  }
  // Tiny after rounding: below 2^emin unless the unbounded p-bit rounding reaches 2^emin.
  const double normal = std::ldexp(1.0, t.emin);
  if (!exact) {  // the true value is nonzero (also when z collapsed to 0)
    Mp m(600);
    mpfr_abs(m, z, MPFR_RNDN);
    const double top = normal - std::ldexp(1.0, t.emin - 1 - t.spec.f);  // largest p-bit value below
    bool reaches = false;
    const int k = mpfr_cmp_d(m, top);
    const bool above_top = k > 0 || (k == 0 && (neg ? side < 0 : side > 0));
    const double mid = normal - std::ldexp(1.0, t.emin - 2 - t.spec.f);
    const int km = mpfr_cmp_d(m, mid);
    const bool above_mid = km > 0 || (km == 0 && (neg ? side < 0 : side > 0));
    const bool at_mid = km == 0 && side == 0;
    switch (mode) {
      case Rounding::NearestEven: case Rounding::NearestAway: reaches = above_mid || at_mid; break;
      case Rounding::TowardZero: reaches = false; break;
      case Rounding::Upward: reaches = !neg && above_top; break;
      case Rounding::Downward: reaches = neg && above_top; break;
    }
    if (mpfr_cmp_d(m, normal) < 0 && !reaches) out.flags |= kFpUnderflow;
  }
  out.value = r == 0 ? (neg && t.spec.enc != Encoding::Fnuz ? -0.0 : 0.0) : r;
  return out;
}

// Specials (NaN, inf, zero, poles, domain errors) by IEEE 754 and the spec's encoding rules.
Expect special_expect(FpFunction fn, const Table& t, uint64_t w, const Decoded& d, bool& handled) {
  handled = true;
  Expect out;
  const Spec& s = t.spec;
  if (d.kind == Kind::NaN) {  // only e5m2 has signaling NaNs (quiet bit = fraction MSB clear)
    if (s.enc == Encoding::Ieee && ((w >> (s.f - 1)) & 1) == 0) out.flags = kFpInvalid;
    return out.nan = true, out;
  }
  const bool inf = d.kind == Kind::Inf, zero = d.value == 0, neg = d.neg;
  auto value = [&](double v) { out.value = v; return out; };
  auto invalid = [&] {
    out.flags = kFpInvalid;
    if (s.enc == Encoding::Finite) out.error = true;
    else out.nan = true;
    return out;
  };
  auto pole = [&](bool negative) {  // x / 0 in the core: inf, NaN without inf, +-max saturated
    out.flags = kFpDivByZero;
    if (s.enc == Encoding::Ieee) return value(negative ? -HUGE_VAL : HUGE_VAL);
    if (s.enc == Encoding::Finite) return out.flags |= kFpSaturated, value(negative ? -t.max : t.max);
    return out.nan = true, out;
  };
  const double z0 = neg && s.enc != Encoding::Fnuz ? -0.0 : 0.0;
  switch (fn) {
    case FpFunction::Exp: if (inf) return value(neg ? 0.0 : HUGE_VAL); if (zero) return value(1.0); break;
    case FpFunction::Log:
      if (zero) return pole(true);
      if (neg) return invalid();
      if (inf) return value(HUGE_VAL);
      break;
    case FpFunction::Log1p:
      if (d.value == -1) return pole(true);
      if (d.value < -1) return invalid();
      if (zero || inf) return value(zero ? z0 : d.value);
      break;
    case FpFunction::Tanh: case FpFunction::Erf:
      if (inf) return value(neg ? -1.0 : 1.0);
      if (zero) return value(z0);
      break;
    case FpFunction::Sigmoid: if (inf) return value(neg ? 0.0 : 1.0); break;
    case FpFunction::Softplus: if (inf) return value(neg ? 0.0 : HUGE_VAL); break;
    case FpFunction::Gelu: if (inf) return value(neg ? -0.0 : HUGE_VAL); if (zero) return value(z0); break;
    case FpFunction::Sin: if (inf) return invalid(); if (zero) return value(z0); break;
    case FpFunction::Cos: if (inf) return invalid(); if (zero) return value(1.0); break;
    case FpFunction::Rsqrt:
      if (zero) return pole(neg && s.enc != Encoding::Fnuz);
      if (neg) return invalid();
      if (inf) return value(0.0);
      break;
  }
  handled = false;
  return out;
}

Expect oracle(FpFunction fn, const Table& t, Rounding mode, uint64_t w) {
  const Decoded d = decode(t.spec, w);
  bool handled = false;
  Expect e = special_expect(fn, t, w, d, handled);
  if (handled) return e;
  Mp x(64), z(600);
  mpfr_set_d(x, d.value, MPFR_RNDN);
  const int side = mpfr_test::reference_value(fn, x, z);
  return round_to_table(t, mode, z, side);
}

TEST(BinaryFunctionsSmall, EveryWordEveryModeEveryFunction) {
  for (const Spec& s : kSmall) {
    const BinaryFormat f = *parse_format(s.name);
    ASSERT_EQ(f.exp_bits, s.e);
    ASSERT_EQ(f.frac_bits, s.f);
    ASSERT_EQ(f.bias, s.bias);
    ASSERT_EQ(f.encoding, s.enc);
    const Table t(s);
    const uint64_t words = uint64_t{1} << f.storage_bits();
    int failures = 0, checked = 0;
    for (int i = 0; i <= static_cast<int>(FpFunction::Rsqrt); ++i) {
      const auto fn = static_cast<FpFunction>(i);
      for (Rounding mode : kModes) {
        for (uint64_t w = 0; w < words; ++w) {
          const Expect want = oracle(fn, t, mode, w);
          if (want.skip) continue;
          FpEnv env{mode, 0, {}};
          const uint64_t got = fp_function(fn, f, env, w);
          const Decoded g = decode(s, got);
          bool ok = want.error ? !env.error.empty() && (env.flags & kFpInvalid)
                               : env.error.empty() && env.flags == want.flags &&
                                     (want.nan ? g.kind == Kind::NaN
                                               : g.kind != Kind::NaN && g.value == want.value &&
                                                     std::signbit(g.value) == std::signbit(want.value));
          ++checked;
          if (!ok && ++failures <= 8)
            ADD_FAILURE() << fmt::format("{} {} {} ({:#x} = {}): got {:#x} = {} {}, want {} {}{}", s.name,
                                         function_name(fn), rounding_name(mode), w, decode(s, w).value, got, g.value,
                                         flags_to_string(env.flags), want.nan ? std::nan("") : want.value,
                                         flags_to_string(want.flags), want.error ? " (error)" : "");
        }
      }
    }
    EXPECT_EQ(failures, 0) << s.name;
    EXPECT_GT(checked, 100) << s.name;
  }
}

}  // namespace
}  // namespace denote
