// The correctly rounded functions (binary_functions.h): every 16-bit word of binary16 and bfloat16
// for every function in nearest-even against an independent MPFR oracle written here (IEEE
// decoding/encoding from the field formulas, MPFR's own format emulation via emin/emax +
// subnormalize, naive formulas at 600 bits for the composites), plus flags, binary64 values with
// known digits, pow and the exact quotient operations. The all-modes exhaustive check of the
// 8-bit formats is in binary_functions_small_test.cc.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "denote/scalar/binary_functions.h"
#include "mpfr_test_util.h"

namespace denote {
namespace {

using mpfr_test::ExpRange;
using mpfr_test::Mp;

constexpr FpFunction kAll[] = {FpFunction::Exp,  FpFunction::Log, FpFunction::Log1p, FpFunction::Tanh,
                               FpFunction::Sigmoid, FpFunction::Softplus, FpFunction::Erf, FpFunction::Gelu,
                               FpFunction::Sin, FpFunction::Cos, FpFunction::Rsqrt};

// An IEEE interchange-style format from its field widths only.
struct Ieee {
  int e, f;
  int bias() const { return (1 << (e - 1)) - 1; }
  int emin() const { return 1 - bias(); }
  int emax() const { return bias(); }
  int p() const { return f + 1; }
  uint64_t exp_ones() const { return (uint64_t{1} << e) - 1; }
  uint64_t sign() const { return uint64_t{1} << (e + f); }
  uint64_t quiet() const { return uint64_t{1} << (f - 1); }
};

void ieee_decode(const Ieee& t, uint64_t w, mpfr_ptr out) {
  const bool neg = (w & t.sign()) != 0;
  const uint64_t ef = (w >> t.f) & t.exp_ones(), frac = w & ((uint64_t{1} << t.f) - 1);
  if (ef == t.exp_ones()) {
    if (frac == 0) mpfr_set_inf(out, neg ? -1 : 1);
    else mpfr_set_nan(out);
    return;
  }
  if (ef == 0) mpfr_set_ui_2exp(out, frac, t.emin() - t.f, MPFR_RNDN);
  else mpfr_set_ui_2exp(out, frac | (uint64_t{1} << t.f), static_cast<long>(ef) - t.bias() - t.f, MPFR_RNDN);
  if (neg) mpfr_neg(out, out, MPFR_RNDN);
  if (ef == 0 && frac == 0) mpfr_set_zero(out, neg ? -1 : 1);
}

// y holds a value of the format (p bits, inside the range) or an infinity / NaN.
uint64_t ieee_encode(const Ieee& t, mpfr_srcptr y) {
  if (mpfr_nan_p(y)) return (t.exp_ones() << t.f) | t.quiet();
  const uint64_t s = mpfr_signbit(y) ? t.sign() : 0;
  if (mpfr_inf_p(y)) return s | (t.exp_ones() << t.f);
  if (mpfr_zero_p(y)) return s;
  Mp m(80);
  mpfr_abs(m, y, MPFR_RNDN);
  const long e = mpfr_get_exp(y) - 1;  // |y| in [2^e, 2^(e+1))
  if (e < t.emin()) {
    mpfr_mul_2si(m, m, t.f - t.emin(), MPFR_RNDN);
    return s | mpfr_get_ui(m, MPFR_RNDN);
  }
  mpfr_mul_2si(m, m, t.f - e, MPFR_RNDN);
  const uint64_t mant = mpfr_get_ui(m, MPFR_RNDN);
  return s | (static_cast<uint64_t>(e + t.bias()) << t.f) | (mant - (uint64_t{1} << t.f));
}

struct Expect {
  uint64_t word = 0;
  uint32_t flags = 0;
};

// Results at infinities, zeros, poles and outside the domain, from the IEEE / limit definitions.
bool special_reference(FpFunction fn, mpfr_srcptr x, double& value, uint32_t& flags) {
  const bool inf = mpfr_inf_p(x), zero = mpfr_zero_p(x), neg = mpfr_signbit(x);
  const double kInf = HUGE_VAL, kNan = std::nan("");
  flags = 0;
  auto set = [&](double v, uint32_t fl = 0) { value = v, flags = fl; return true; };
  switch (fn) {
    case FpFunction::Exp: if (inf) return set(neg ? 0.0 : kInf); if (zero) return set(1.0); break;
    case FpFunction::Log:
      if (zero) return set(-kInf, kFpDivByZero);
      if (neg) return set(kNan, kFpInvalid);
      if (inf) return set(kInf);
      break;
    case FpFunction::Log1p:
      if (mpfr_cmp_si(x, -1) == 0) return set(-kInf, kFpDivByZero);
      if (mpfr_cmp_si(x, -1) < 0) return set(kNan, kFpInvalid);
      if (zero || inf) return set(mpfr_get_d(x, MPFR_RNDN));
      break;
    case FpFunction::Tanh: case FpFunction::Erf:
      if (inf) return set(neg ? -1.0 : 1.0);
      if (zero) return set(neg ? -0.0 : 0.0);
      break;
    case FpFunction::Sigmoid: if (inf) return set(neg ? 0.0 : 1.0); break;
    case FpFunction::Softplus: if (inf) return set(neg ? 0.0 : kInf); break;
    case FpFunction::Gelu: if (inf) return set(neg ? -0.0 : kInf); break;
    case FpFunction::Sin: if (inf) return set(kNan, kFpInvalid); if (zero) return set(neg ? -0.0 : 0.0); break;
    case FpFunction::Cos: if (inf) return set(kNan, kFpInvalid); if (zero) return set(1.0); break;
    case FpFunction::Rsqrt:
      if (zero) return set(neg ? -kInf : kInf, kFpDivByZero);  // IEEE 754-2019: rSqrt(-0) = -inf
      if (neg) return set(kNan, kFpInvalid);
      if (inf) return set(0.0);
      break;
  }
  return false;
}

// The oracle for nearest-even: MPFR's format emulation.
Expect reference(FpFunction fn, const Ieee& t, uint64_t w) {
  Mp x(t.p() + 1);
  ieee_decode(t, w, x);
  if (mpfr_nan_p(x)) return {w | t.quiet(), (w & t.quiet()) ? 0u : kFpInvalid};
  Expect out;
  double special = 0;
  if (special_reference(fn, x, special, out.flags)) {
    Mp y(t.p());
    mpfr_set_d(y, special, MPFR_RNDN);
    out.word = ieee_encode(t, y);
    return out;
  }
  // The value rounded to p bits with an unbounded exponent range (tininess after rounding), then
  // rounded into the format's range with subnormals.
  Mp z(600), y(t.p());
  const int side = mpfr_test::reference_value(fn, x, z);
  const bool exact = side == 0;
  int inex = mpfr_set(y, z, MPFR_RNDN);
  if (inex == 0 && !exact) inex = side;  // z collapsed onto a p-bit value: the known side
  const bool tiny = mpfr_zero_p(y) || (mpfr_regular_p(y) && mpfr_get_exp(y) <= t.emin());
  {
    ExpRange range(t.emin() - t.p() + 2, t.emax() + 1);
    mpfr_clear_flags();
    inex = mpfr_check_range(y, inex, MPFR_RNDN);
    inex = mpfr_subnormalize(y, inex, MPFR_RNDN);
    if (mpfr_overflow_p()) out.flags |= kFpOverflow;
  }
  if (!exact) out.flags |= kFpInexact;
  if (!exact && tiny) out.flags |= kFpUnderflow;
  out.word = ieee_encode(t, y);
  return out;
}

void exhaustive_16(const char* name, Ieee t) {
  const BinaryFormat f = *parse_format(name);
  ASSERT_EQ(f.exp_bits, t.e);
  ASSERT_EQ(f.frac_bits, t.f);
  for (FpFunction fn : kAll) {
    int mismatches = 0;
    for (uint64_t w = 0; w < 0x10000; ++w) {
      FpEnv env{Rounding::NearestEven, 0, {}};
      const uint64_t got = fp_function(fn, f, env, w);
      const Expect want = reference(fn, t, w);
      if ((got != want.word || env.flags != want.flags) && ++mismatches <= 5) {
        ADD_FAILURE() << fmt::format("{} {}({:#06x}): got {:#06x} {}, want {:#06x} {}", name, function_name(fn), w,
                                     got, flags_to_string(env.flags), want.word, flags_to_string(want.flags));
      }
      EXPECT_TRUE(env.error.empty());
    }
    EXPECT_EQ(mismatches, 0) << name << " " << function_name(fn);
  }
}

TEST(BinaryFunctions, Binary16EveryWordEveryFunctionNearestEven) { exhaustive_16("binary16", {5, 10}); }

TEST(BinaryFunctions, Bfloat16EveryWordEveryFunctionNearestEven) { exhaustive_16("bfloat16", {8, 7}); }

// ---- targeted cases: flags, directed modes, binary64 values with known digits ----

struct Case {
  const char* format;
  Rounding mode;
  uint64_t word, want;
  uint32_t flags;
};

uint64_t run(FpFunction fn, const Case& c, FpEnv& env) {
  env.rounding = c.mode;
  return fp_function(fn, *parse_format(c.format), env, c.word);
}

void expect_case(FpFunction fn, const Case& c) {
  FpEnv env;
  const uint64_t got = run(fn, c, env);
  EXPECT_EQ(got, c.want) << function_name(fn) << " " << c.format << fmt::format(" {:#x}", c.word);
  EXPECT_EQ(flags_to_string(env.flags), flags_to_string(c.flags)) << function_name(fn) << " " << c.format;
}

constexpr Rounding kRne = Rounding::NearestEven;

TEST(BinaryFunctions, OverflowInEveryEncoding) {
  // exp(12) = 162754.79 > 65504: binary16 inf; e4m3fn (exp(16) = 8.9e6 > 448) NaN; e2m1fn (exp(4)
  // = 54.6 > 6) saturates.
  expect_case(FpFunction::Exp, {"binary16", kRne, 0x4a00, 0x7c00, kFpOverflow | kFpInexact});
  expect_case(FpFunction::Exp, {"binary16", Rounding::TowardZero, 0x4a00, 0x7bff, kFpOverflow | kFpInexact});
  expect_case(FpFunction::Exp, {"e4m3fn", kRne, 0x58, 0x7f, kFpOverflow | kFpInexact});
  expect_case(FpFunction::Exp, {"e4m3fn", Rounding::Downward, 0x58, 0x7e, kFpOverflow | kFpInexact});
  expect_case(FpFunction::Exp, {"e2m1fn", kRne, 0x6, 0x7, kFpOverflow | kFpInexact | kFpSaturated});
}

TEST(BinaryFunctions, UnderflowIsTinyAfterRoundingAndInexact) {
  // exp(-17) = 4.14e-8 in binary16: below the smallest subnormal 2^-24 = 5.96e-8 but above half.
  expect_case(FpFunction::Exp, {"binary16", kRne, 0xcc40, 0x0001, kFpUnderflow | kFpInexact});
  expect_case(FpFunction::Exp, {"binary16", Rounding::TowardZero, 0xcc40, 0x0000, kFpUnderflow | kFpInexact});
  // exp(-20) = 2.06e-9 < 2^-25: nearest gives +0, upward the smallest subnormal.
  expect_case(FpFunction::Exp, {"binary16", kRne, 0xcd00, 0x0000, kFpUnderflow | kFpInexact});
  expect_case(FpFunction::Exp, {"binary16", Rounding::Upward, 0xcd00, 0x0001, kFpUnderflow | kFpInexact});
}

TEST(BinaryFunctions, PolesDomainErrorsAndNaNs) {
  expect_case(FpFunction::Log, {"binary16", kRne, 0x0000, 0xfc00, kFpDivByZero});
  expect_case(FpFunction::Log, {"binary16", kRne, 0x8000, 0xfc00, kFpDivByZero});
  expect_case(FpFunction::Log, {"binary16", kRne, 0xbc00, 0x7e00, kFpInvalid});
  expect_case(FpFunction::Rsqrt, {"binary16", kRne, 0x8000, 0xfc00, kFpDivByZero});
  expect_case(FpFunction::Rsqrt, {"binary16", kRne, 0x0000, 0x7c00, kFpDivByZero});
  expect_case(FpFunction::Log1p, {"binary16", kRne, 0xbc00, 0xfc00, kFpDivByZero});
  expect_case(FpFunction::Sin, {"binary16", kRne, 0xfc00, 0x7e00, kFpInvalid});
  // A signaling NaN is quieted (payload kept) and raises invalid; a quiet one passes silently.
  expect_case(FpFunction::Tanh, {"binary16", kRne, 0x7c01, 0x7e01, kFpInvalid});
  expect_case(FpFunction::Tanh, {"binary16", kRne, 0xfe05, 0xfe05, 0});
  // e4m3fn has no infinity: log(0) is its NaN with divide-by-zero (as 1/0 in the core).
  FpEnv env;
  const BinaryFormat e4 = *parse_format("e4m3fn");
  EXPECT_EQ(fp_log(e4, env, 0x00), fp_div(e4, env, 0xb8, 0x00));
  // e2m1fn has no NaN: log(-1) has no value there; the error names the format.
  FpEnv fin;
  fp_log(*parse_format("e2m1fn"), fin, 0xa);  // -1
  EXPECT_NE(fin.error.find("e2m1fn"), std::string::npos) << fin.error;
  EXPECT_TRUE(fin.flags & kFpInvalid);
  // A word wider than the format is an error, not a truncation.
  FpEnv bad;
  fp_exp(*parse_format("binary16"), bad, 0x10000);
  EXPECT_FALSE(bad.error.empty());
}

TEST(BinaryFunctions, Binary64ValuesWithKnownDigits) {
  // Correctly rounded binary64 values (the nearest doubles to the decimal expansions).
  struct Known {
    FpFunction fn;
    double x, y;
  };
  const Known known[] = {
      {FpFunction::Exp, 1.0, 2.718281828459045},  {FpFunction::Log, 10.0, 2.302585092994046},
      {FpFunction::Tanh, 0.5, 0.46211715726000974}, {FpFunction::Erf, 1.0, 0.8427007929497149},
      {FpFunction::Sin, 1.0, 0.8414709848078965},  {FpFunction::Cos, 1.0, 0.5403023058681398},
      {FpFunction::Rsqrt, 2.0, 0.7071067811865476}, {FpFunction::Sigmoid, 1.0, 0.7310585786300049},
      {FpFunction::Softplus, 0.0, 0.6931471805599453}, {FpFunction::Gelu, 1.0, 0.8413447460685429},
      {FpFunction::Gelu, -1.0, -0.15865525393145705}, {FpFunction::Sin, 1e22, -0.8522008497671888},
  };
  const BinaryFormat d = binary64_format();
  for (const Known& k : known) {
    FpEnv env;
    const uint64_t got = fp_function(k.fn, d, env, std::bit_cast<uint64_t>(k.x));
    EXPECT_EQ(std::bit_cast<double>(got), k.y) << function_name(k.fn) << "(" << k.x << ")";
    EXPECT_EQ(env.flags, uint32_t{kFpInexact});
  }
}

TEST(BinaryFunctions, DirectedModesNearSaturation) {
  const BinaryFormat d = binary64_format();
  auto at = [&](FpFunction fn, double x, Rounding r) {
    FpEnv env{r, 0, {}};
    return std::bit_cast<double>(fp_function(fn, d, env, std::bit_cast<uint64_t>(x)));
  };
  // tanh(20) = 1 - 8.5e-18: strictly below 1, so upward gives 1 and downward 1 - 2^-53.
  EXPECT_EQ(at(FpFunction::Tanh, 20.0, Rounding::Upward), 1.0);
  EXPECT_EQ(at(FpFunction::Tanh, 20.0, Rounding::Downward), std::nextafter(1.0, 0.0));
  EXPECT_EQ(at(FpFunction::Tanh, 20.0, kRne), 1.0);
  // softplus(1e300) = 1e300 + e^-1e300: just above; gelu(40) = 40 - tiny: just below.
  EXPECT_EQ(at(FpFunction::Softplus, 1e300, Rounding::Upward), std::nextafter(1e300, HUGE_VAL));
  EXPECT_EQ(at(FpFunction::Softplus, 1e300, Rounding::Downward), 1e300);
  EXPECT_EQ(at(FpFunction::Gelu, 40.0, Rounding::Downward), std::nextafter(40.0, 0.0));
  EXPECT_EQ(at(FpFunction::Gelu, 40.0, Rounding::Upward), 40.0);
  // sigmoid(-800) = e^-800 / (1 + e^-800) underflows below 2^-1074: +0 nearest, min subnormal up.
  EXPECT_EQ(at(FpFunction::Sigmoid, -800.0, kRne), 0.0);
  EXPECT_EQ(at(FpFunction::Sigmoid, -800.0, Rounding::Upward), 4.9406564584124654e-324);
  // gelu(-40) is a negative number far below the subnormals: -0 nearest, -min subnormal downward.
  EXPECT_TRUE(std::signbit(at(FpFunction::Gelu, -40.0, kRne)));
  EXPECT_EQ(at(FpFunction::Gelu, -40.0, Rounding::Downward), -4.9406564584124654e-324);
  // Special values.
  EXPECT_EQ(at(FpFunction::Gelu, -HUGE_VAL, kRne), 0.0);
  EXPECT_TRUE(std::signbit(at(FpFunction::Gelu, -HUGE_VAL, kRne)));
  EXPECT_EQ(at(FpFunction::Sigmoid, 0.0, Rounding::Downward), 0.5);
}

double f64_op(uint64_t (*op)(const BinaryFormat&, FpEnv&, uint64_t, uint64_t), double a, double b,
              uint32_t* flags = nullptr) {
  FpEnv env;
  const double r = std::bit_cast<double>(op(binary64_format(), env, std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b)));
  if (flags) *flags = env.flags;
  return r;
}

TEST(BinaryFunctions, QuotientOperationsArePythonsAndExact) {
  // Python 3: 1 // 0.1 == 9.0, 1 % 0.1 == 0.09999999999999995, -7 // 2 == -4, -7 % 2 == 1.
  EXPECT_EQ(f64_op(fp_div_floor, 1.0, 0.1), 9.0);
  EXPECT_EQ(f64_op(fp_remainder, 1.0, 0.1), 0.09999999999999995);
  EXPECT_EQ(f64_op(fp_div_floor, -7.0, 2.0), -4.0);
  EXPECT_EQ(f64_op(fp_div_trunc, -7.0, 2.0), -3.0);
  EXPECT_EQ(f64_op(fp_remainder, -7.0, 2.0), 1.0);
  EXPECT_EQ(f64_op(fp_remainder, 7.0, -2.0), -1.0);
  EXPECT_EQ(f64_op(fp_div_trunc, 1.0, 0.1), 9.0);  // trunc of the exact 9.99999999999999944...
  // Zeros keep their signs: trunc(-0.3) = -0; fmod(-4, 2) = -0 (PyTorch's remainder keeps it).
  EXPECT_TRUE(std::signbit(f64_op(fp_div_trunc, -0.3, 1.0)));
  EXPECT_TRUE(std::signbit(f64_op(fp_remainder, -4.0, 2.0)));
  // Infinite divisors (Python: -1 // inf == -1.0, -1 % inf == inf, 1 // inf == 0.0).
  EXPECT_EQ(f64_op(fp_div_floor, -1.0, HUGE_VAL), -1.0);
  EXPECT_EQ(f64_op(fp_remainder, -1.0, HUGE_VAL), HUGE_VAL);
  EXPECT_EQ(f64_op(fp_div_floor, 1.0, HUGE_VAL), 0.0);
  EXPECT_EQ(f64_op(fp_remainder, 1.0, HUGE_VAL), 1.0);
  uint32_t fl = 0;
  EXPECT_EQ(f64_op(fp_div_floor, 1.0, 0.0, &fl), HUGE_VAL);
  EXPECT_EQ(fl, uint32_t{kFpDivByZero});
  EXPECT_TRUE(std::isnan(f64_op(fp_remainder, 1.0, 0.0, &fl)));
  EXPECT_EQ(fl, uint32_t{kFpInvalid});
  // A huge quotient: 1e300 // 1e-300 = 1e600 overflows binary64.
  EXPECT_EQ(f64_op(fp_div_floor, 1e300, 1e-300, &fl), HUGE_VAL);
  EXPECT_EQ(fl, uint32_t{kFpOverflow | kFpInexact});
  // The exact remainder of the largest by the smallest: 2^1024 - 2^971 mod 2^-1074 = 0.
  EXPECT_EQ(f64_op(fp_remainder, 1.7976931348623157e308, 4.9406564584124654e-324), 0.0);
}

TEST(BinaryFunctions, PowSpecialCasesAndCorrectRounding) {
  uint32_t fl = 0;
  EXPECT_EQ(f64_op(fp_pow, 2.0, 10.0, &fl), 1024.0);
  EXPECT_EQ(fl, 0u);
  EXPECT_EQ(f64_op(fp_pow, 2.0, 0.5, &fl), 1.4142135623730951);
  EXPECT_EQ(fl, uint32_t{kFpInexact});
  EXPECT_EQ(f64_op(fp_pow, -2.0, 3.0), -8.0);
  EXPECT_TRUE(std::isnan(f64_op(fp_pow, -8.0, 1.0 / 3.0, &fl)));
  EXPECT_EQ(fl, uint32_t{kFpInvalid});
  EXPECT_EQ(f64_op(fp_pow, 0.0, -1.0, &fl), HUGE_VAL);
  EXPECT_EQ(fl, uint32_t{kFpDivByZero});
  EXPECT_EQ(f64_op(fp_pow, -0.0, -1.0), -HUGE_VAL);
  EXPECT_EQ(f64_op(fp_pow, std::nan(""), 0.0, &fl), 1.0);
  EXPECT_EQ(fl, 0u);
  EXPECT_EQ(f64_op(fp_pow, 1.0, std::nan("")), 1.0);
  EXPECT_EQ(f64_op(fp_pow, -1.0, HUGE_VAL), 1.0);
  EXPECT_EQ(f64_op(fp_pow, 0.5, HUGE_VAL), 0.0);
  EXPECT_EQ(f64_op(fp_pow, 10.0, 400.0, &fl), HUGE_VAL);
  EXPECT_EQ(fl, uint32_t{kFpOverflow | kFpInexact});
}

TEST(BinaryFunctions, NamesRoundTrip) {
  for (FpFunction fn : kAll) EXPECT_EQ(parse_function(function_name(fn)), fn);
  EXPECT_FALSE(parse_function("expm1"));
}

}  // namespace
}  // namespace denote
