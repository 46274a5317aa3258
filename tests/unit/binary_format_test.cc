// Binary-format descriptors and hand-checked facts: the parameters of the named formats (IEEE 754,
// OCP 8-bit / MX and ml_dtypes values), classification, special words, parsing errors, bad words, and
// the non-arithmetic operations (neg, abs, min, max, compare) against value-based references.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "denote/scalar/binary_ops.h"
#include "unit/binary_oracle.h"
#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::format_named;

FpEnv env_in(Rounding r) {
  FpEnv env;
  env.rounding = r;
  return env;
}

struct Expected {
  const char* name;
  int e, f, bias;
  Encoding enc;
  double max, min_subnormal;
};

// Max finite and smallest subnormal: IEEE 754-2019 table 3.5 (binary16/32/64), bfloat16, OCP FP8
// (e4m3fn 448 / 2^-9, e5m2 57344 / 2^-16), ml_dtypes (e4m3fnuz 240 / 2^-10, e5m2fnuz 57344 / 2^-17),
// OCP MX (e3m2 28 / 2^-4, e2m3 7.5 / 2^-3, e2m1 6 / 0.5, e8m0 2^127 / 2^-127).
const Expected kExpected[] = {
    {"binary16", 5, 10, 15, Encoding::Ieee, 65504.0, 0x1p-24},
    {"bfloat16", 8, 7, 127, Encoding::Ieee, 0x1.fep127, 0x1p-133},
    {"binary32", 8, 23, 127, Encoding::Ieee, 0x1.fffffep127, 0x1p-149},
    {"binary64", 11, 52, 1023, Encoding::Ieee, 0x1.fffffffffffffp1023, 0x1p-1074},
    {"e4m3fn", 4, 3, 7, Encoding::Fn, 448.0, 0x1p-9},
    {"e4m3fnuz", 4, 3, 8, Encoding::Fnuz, 240.0, 0x1p-10},
    {"e5m2", 5, 2, 15, Encoding::Ieee, 57344.0, 0x1p-16},
    {"e5m2fnuz", 5, 2, 16, Encoding::Fnuz, 57344.0, 0x1p-17},
    {"e3m2fn", 3, 2, 3, Encoding::Finite, 28.0, 0x1p-4},
    {"e2m3fn", 2, 3, 1, Encoding::Finite, 7.5, 0x1p-3},
    {"e2m1fn", 2, 1, 1, Encoding::Finite, 6.0, 0.5},
    {"e8m0fnu", 8, 0, 127, Encoding::E8m0, 0x1p127, 0x1p-127},
};

TEST(BinaryFormat, NamedFormatsHaveTheSpecParameters) {
  for (const Expected& x : kExpected) {
    SCOPED_TRACE(x.name);
    Result<BinaryFormat> f = parse_format(x.name);
    ASSERT_TRUE(f.ok()) << f.message();
    EXPECT_EQ(f->exp_bits, x.e);
    EXPECT_EQ(f->frac_bits, x.f);
    EXPECT_EQ(f->bias, x.bias);
    EXPECT_EQ(f->encoding, x.enc);
    EXPECT_EQ(f->name, x.name);
    EXPECT_EQ(word_to_double(*f, max_finite(*f, false)), x.max);
    uint64_t smallest = f->encoding == Encoding::E8m0 ? 0 : 1;
    EXPECT_EQ(word_to_double(*f, smallest), x.min_subnormal);
    if (f->has_sign()) {
      EXPECT_EQ(word_to_double(*f, max_finite(*f, true)), -x.max);
    }
  }
  EXPECT_EQ(binary32_format(), format_named("binary32"));
  EXPECT_EQ(binary64_format(), format_named("binary64"));
  EXPECT_EQ(format_named("binary(5,10)"), format_named("binary16"));
  EXPECT_EQ(format_named("binary(8,7)").name, "binary(8,7)");
}

TEST(BinaryFormat, E2m1fnHasExactlyTheOcpValues) {
  BinaryFormat f = format_named("e2m1fn");
  const double values[] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (uint64_t w = 0; w < 8; ++w) {
    EXPECT_EQ(word_to_double(f, w), values[w]);
    EXPECT_EQ(word_to_double(f, w | 8), -values[w]);
  }
}

TEST(BinaryFormat, ClassifyAndSpecialWords) {
  BinaryFormat e4m3fn = format_named("e4m3fn");
  EXPECT_EQ(classify(e4m3fn, 0x7f), FloatClass::QuietNaN);
  EXPECT_EQ(classify(e4m3fn, 0xff), FloatClass::QuietNaN);
  EXPECT_EQ(classify(e4m3fn, 0x7e), FloatClass::Normal);
  EXPECT_EQ(classify(e4m3fn, 0x78), FloatClass::Normal);  // 256: all-ones exponent is a number
  EXPECT_EQ(classify(e4m3fn, 0x80), FloatClass::Zero);
  EXPECT_EQ(canonical_nan(e4m3fn), 0x7fu);
  EXPECT_EQ(word_to_double(e4m3fn, 0x78), 256.0);

  BinaryFormat e5m2 = format_named("e5m2");
  EXPECT_EQ(classify(e5m2, 0x7c), FloatClass::Infinite);
  EXPECT_EQ(classify(e5m2, 0x7d), FloatClass::SignalingNaN);
  EXPECT_EQ(classify(e5m2, 0x7e), FloatClass::QuietNaN);
  EXPECT_EQ(infinity_word(e5m2, true), 0xfcu);
  EXPECT_EQ(classify(e5m2, 0x03), FloatClass::Subnormal);

  BinaryFormat fnuz = format_named("e4m3fnuz");
  EXPECT_EQ(classify(fnuz, 0x80), FloatClass::QuietNaN);
  EXPECT_EQ(classify(fnuz, 0x00), FloatClass::Zero);
  EXPECT_EQ(zero_word(fnuz, true), 0u);  // no negative zero
  EXPECT_EQ(canonical_nan(fnuz), 0x80u);
  EXPECT_FALSE(fnuz.has_negative_zero());

  BinaryFormat e2m1 = format_named("e2m1fn");
  EXPECT_FALSE(e2m1.has_nan());
  for (uint64_t w = 0; w < 16; ++w) EXPECT_FALSE(is_nan(e2m1, w));

  BinaryFormat b32 = binary32_format();
  EXPECT_EQ(canonical_nan(b32), 0x7fc00000u);
  EXPECT_EQ(classify(b32, 0x7f800001), FloatClass::SignalingNaN);
  EXPECT_EQ(classify(b32, 0x80000000), FloatClass::Zero);
  EXPECT_TRUE(sign_bit(b32, 0x80000000));
  EXPECT_EQ(zero_word(b32, true), 0x80000000u);

  BinaryFormat e8m0 = format_named("e8m0fnu");
  EXPECT_EQ(classify(e8m0, 0xff), FloatClass::QuietNaN);
  EXPECT_EQ(classify(e8m0, 0x00), FloatClass::Normal);
  EXPECT_EQ(word_to_double(e8m0, 0x7f), 1.0);
  EXPECT_FALSE(e8m0.has_sign());
  EXPECT_EQ(e8m0.storage_bits(), 8);
}

TEST(BinaryFormat, EmaxPerEncoding) {
  EXPECT_EQ(format_named("binary32").emax(), 127);
  EXPECT_EQ(format_named("e4m3fn").emax(), 8);
  EXPECT_EQ(format_named("e4m3fnuz").emax(), 7);
  EXPECT_EQ(format_named("e5m2").emax(), 15);
  EXPECT_EQ(format_named("e5m2fnuz").emax(), 15);
  EXPECT_EQ(format_named("e2m1fn").emax(), 2);
  EXPECT_EQ(format_named("e8m0fnu").emax(), 127);
}

TEST(BinaryFormat, ParseErrorsNameWhatIsWrong) {
  struct Case {
    const char* text;
    const char* needle;
  };
  const Case cases[] = {
      {"float8", "unknown format 'float8'"},
      {"", "unknown format ''"},
      {"binary(1,3)", "exponent bits E=1 out of range 2..30"},
      {"binary(31,3)", "exponent bits E=31 out of range"},
      {"binary(5,0)", "fraction bits F=0 out of range 1..61"},
      {"binary(11,58)", "1 + E + F = 70 storage bits exceeds 64"},
      {"binary(5)", "needs two integers E and F"},
      {"binary(a,b)", "needs two integers E and F"},
      {"binary(5,10", "unknown format"},
  };
  for (const Case& c : cases) {
    Result<BinaryFormat> f = parse_format(c.text);
    ASSERT_FALSE(f.ok()) << c.text;
    EXPECT_NE(f.message().find(c.needle), std::string::npos) << f.message();
    EXPECT_EQ(f.message().rfind("format: ", 0), 0u) << f.message();
  }
  EXPECT_TRUE(parse_format("binary(2,61)").ok());
  EXPECT_TRUE(parse_format("binary( 5 , 10 )").ok());
}

TEST(BinaryFormat, WordsWithBitsAboveTheWidthAreErrors) {
  BinaryFormat f = format_named("e4m3fn");
  EXPECT_TRUE(check_word(f, 0xff).ok());
  Status s = check_word(f, 0x1ff);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.message(), "e4m3fn: word 0x1ff has bits above the format's 8 bits");
  EXPECT_TRUE(check_word(binary64_format(), ~uint64_t{0}).ok());

  FpEnv env;
  fp_add(f, env, 0x100, 0x38);
  EXPECT_NE(env.error.find("bits above"), std::string::npos);
  EXPECT_TRUE(env.flags & kFpInvalid);
  FpEnv env2;
  fp_convert(f, binary32_format(), env2, 0x200);
  EXPECT_NE(env2.error.find("e4m3fn: word 0x200"), std::string::npos);
  FpEnv env3;
  int64_t out = 0;
  EXPECT_FALSE(fp_to_int(f, env3, 0x300, out));
  EXPECT_FALSE(env3.error.empty());
}

TEST(BinaryFormat, RoundingNamesAndFlags) {
  for (Rounding r : testing::kAllModes) EXPECT_EQ(parse_rounding(rounding_name(r)), r);
  EXPECT_EQ(rounding_name(Rounding::TowardZero), "toward-zero");
  EXPECT_FALSE(parse_rounding("nearest").has_value());
  EXPECT_EQ(flags_to_string(0), "-");
  EXPECT_EQ(flags_to_string(kFpInexact | kFpInvalid), "invalid,inexact");
  EXPECT_EQ(flags_to_string(0x7f), "invalid,divide-by-zero,overflow,underflow,inexact,saturated,mapped-special");
}

// ---- hand-computed arithmetic facts ----

TEST(BinaryFacts, HeaderExampleAndSimpleSums) {
  BinaryFormat bf16 = format_named("bfloat16");
  FpEnv env;
  EXPECT_EQ(fp_add(bf16, env, 0x3f80, 0x3f80), 0x4000u);  // 1 + 1 = 2
  EXPECT_EQ(env.flags, 0u);
  BinaryFormat b16 = format_named("binary16");
  // 1 + 2^-11 is a tie between 1 and 1 + 2^-10: nearest-even gives 1, nearest-away 1 + 2^-10
  FpEnv ne;
  EXPECT_EQ(fp_add(b16, ne, 0x3c00, 0x1000), 0x3c00u);
  EXPECT_EQ(ne.flags, static_cast<uint32_t>(kFpInexact));
  FpEnv na = env_in(Rounding::NearestAway);
  EXPECT_EQ(fp_add(b16, na, 0x3c00, 0x1000), 0x3c01u);
  // x - x = +0, but -0 when rounding downward (IEEE 754 6.3)
  FpEnv up;
  EXPECT_EQ(fp_sub(b16, up, 0x3c00, 0x3c00), 0x0000u);
  FpEnv down = env_in(Rounding::Downward);
  EXPECT_EQ(fp_sub(b16, down, 0x3c00, 0x3c00), 0x8000u);
}

TEST(BinaryFacts, DirectedOverflowGivesMaxFinite) {
  BinaryFormat b16 = format_named("binary16");
  const uint32_t kOver = kFpOverflow | kFpInexact;
  struct Case {
    Rounding r;
    uint64_t a;
    uint64_t want;
  };
  // 65504 * 2 and -65504 * 2 (IEEE 754-2019 7.4)
  const Case cases[] = {
      {Rounding::NearestEven, 0x7bff, 0x7c00}, {Rounding::TowardZero, 0x7bff, 0x7bff},
      {Rounding::Upward, 0x7bff, 0x7c00},      {Rounding::Downward, 0x7bff, 0x7bff},
      {Rounding::Upward, 0xfbff, 0xfbff},      {Rounding::Downward, 0xfbff, 0xfc00},
      {Rounding::NearestAway, 0xfbff, 0xfc00},
  };
  for (const Case& c : cases) {
    FpEnv env = env_in(c.r);
    EXPECT_EQ(fp_mul(b16, env, c.a, 0x4000), c.want) << rounding_name(c.r);
    EXPECT_EQ(env.flags, kOver);
  }
  // e4m3fn has no infinity: nearest overflow is NaN, toward zero gives 448
  BinaryFormat e4 = format_named("e4m3fn");
  FpEnv ne;
  EXPECT_EQ(fp_mul(e4, ne, 0x7e, 0x40), 0x7fu);  // 448 * 2
  EXPECT_EQ(ne.flags, kOver);
  FpEnv neg;
  EXPECT_EQ(fp_mul(e4, neg, 0xfe, 0x40), 0xffu);  // the NaN keeps the sign
  FpEnv tz = env_in(Rounding::TowardZero);
  EXPECT_EQ(fp_mul(e4, tz, 0x7e, 0x40), 0x7eu);
  EXPECT_EQ(tz.flags, kOver);
  // e2m1fn has no NaN either: overflow saturates
  BinaryFormat e2 = format_named("e2m1fn");
  FpEnv sat;
  EXPECT_EQ(fp_mul(e2, sat, 0x7, 0x4), 0x7u);  // 6 * 2 -> 6
  EXPECT_EQ(sat.flags, kOver | kFpSaturated);
}

TEST(BinaryFacts, UnderflowIsTinyAfterRoundingAndInexact) {
  BinaryFormat b32 = binary32_format();
  // 2^-149 * 0.5 rounds to 0 (tie to even) with underflow
  FpEnv env;
  EXPECT_EQ(fp_mul(b32, env, 0x00000001, 0x3f000000), 0x0u);
  EXPECT_EQ(env.flags, static_cast<uint32_t>(kFpUnderflow | kFpInexact));
  FpEnv exact;
  EXPECT_EQ(fp_mul(b32, exact, 0x00000002, 0x3f000000), 0x1u);  // exact subnormal: no flags
  EXPECT_EQ(exact.flags, 0u);
  FpEnv edge;  // (2^-126 - 2^-149) * (1 + 2^-23) = 2^-126 - 2^-172 rounds to 2^-126: not tiny
  EXPECT_EQ(fp_mul(b32, edge, 0x007fffff, 0x3f800001), 0x00800000u);
  EXPECT_EQ(edge.flags, static_cast<uint32_t>(kFpInexact));
}

TEST(BinaryFacts, InvalidOperationsAndNanRule) {
  BinaryFormat b32 = binary32_format();
  FpEnv env;
  EXPECT_EQ(fp_sub(b32, env, 0x7f800000, 0x7f800000), canonical_nan(b32));  // inf - inf
  EXPECT_EQ(env.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv nan_env;  // a signaling operand wins, quieted, payload kept
  EXPECT_EQ(fp_add(b32, nan_env, 0x7fc00005, 0xff800007), 0xffc00007u);
  EXPECT_EQ(nan_env.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv left;  // two quiet NaNs: the left one, no flag
  EXPECT_EQ(fp_mul(b32, left, 0x7fc00005, 0xffc00009), 0x7fc00005u);
  EXPECT_EQ(left.flags, 0u);
  FpEnv fma_env;  // 0 * inf + qNaN: invalid, the NaN propagates
  EXPECT_EQ(fp_fma(b32, fma_env, 0x0, 0x7f800000, 0x7fc00003), 0x7fc00003u);
  EXPECT_EQ(fma_env.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv dz;
  EXPECT_EQ(fp_div(b32, dz, 0xbf800000, 0x0), 0xff800000u);  // -1 / +0 = -inf
  EXPECT_EQ(dz.flags, static_cast<uint32_t>(kFpDivByZero));
  FpEnv sq;
  EXPECT_EQ(fp_sqrt(b32, sq, 0x80000000), 0x80000000u);  // sqrt(-0) = -0
  EXPECT_EQ(sq.flags, 0u);
}

TEST(BinaryFacts, FormatsWithoutNanReportInvalidOperationsAsErrors) {
  BinaryFormat e2 = format_named("e2m1fn");
  FpEnv env;
  fp_div(e2, env, 0x0, 0x8);  // 0 / -0
  EXPECT_EQ(env.error, "e2m1fn: invalid operation (0 / 0) has no value in a format without nan");
  EXPECT_TRUE(env.flags & kFpInvalid);
  FpEnv sq;
  fp_sqrt(e2, sq, 0xa);  // sqrt(-1)
  EXPECT_NE(sq.error.find("sqrt of a negative number"), std::string::npos);
  FpEnv dz;  // x / 0 has an infinite value: saturates
  EXPECT_EQ(fp_div(e2, dz, 0x2, 0x0), 0x7u);
  EXPECT_EQ(dz.flags, static_cast<uint32_t>(kFpDivByZero | kFpSaturated));
  EXPECT_TRUE(dz.error.empty());
  FpEnv first;  // the first error is kept
  fp_sqrt(e2, first, 0xa);
  fp_div(e2, first, 0x0, 0x0);
  EXPECT_NE(first.error.find("sqrt"), std::string::npos);
}

TEST(BinaryFacts, E8m0IsPowersOfTwoOnly) {
  BinaryFormat f = format_named("e8m0fnu");
  FpEnv env;
  EXPECT_EQ(fp_mul(f, env, 0x80, 0x81), 0x82u);  // 2 * 4 = 8
  EXPECT_EQ(fp_add(f, env, 0x7f, 0x7f), 0x80u);  // 1 + 1 = 2
  EXPECT_EQ(fp_sqrt(f, env, 0x81), 0x80u);       // sqrt(4) = 2
  EXPECT_EQ(fp_div(f, env, 0x7f, 0x80), 0x7eu);  // 1 / 2
  EXPECT_EQ(env.flags, 0u);
  FpEnv tie;  // 1 + 2 = 3 lies halfway between 2 and 4; with one significand bit "even" is up
  EXPECT_EQ(fp_add(f, tie, 0x7f, 0x80), 0x81u);
  EXPECT_EQ(tie.flags, static_cast<uint32_t>(kFpInexact));
  FpEnv tz = env_in(Rounding::TowardZero);
  EXPECT_EQ(fp_add(f, tz, 0x7f, 0x80), 0x80u);
  FpEnv zero;  // 1 - 1 = 0 and negative values have no value in e8m0
  EXPECT_EQ(fp_sub(f, zero, 0x7f, 0x7f), 0xffu);
  EXPECT_EQ(zero.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv neg;
  EXPECT_EQ(fp_neg(f, neg, 0x7f), 0xffu);
  EXPECT_EQ(neg.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv over;
  EXPECT_EQ(fp_mul(f, over, 0xfe, 0x80), 0xffu);  // 2^127 * 2 overflows to NaN
  EXPECT_EQ(over.flags, static_cast<uint32_t>(kFpOverflow | kFpInexact));
  FpEnv tiny;  // 2^-127 / 2: below the smallest value, which is the nearest one
  EXPECT_EQ(fp_div(f, tiny, 0x00, 0x80), 0x00u);
  EXPECT_EQ(tiny.flags, static_cast<uint32_t>(kFpUnderflow | kFpInexact));
}

// ---- neg, abs, min, max, compare: every pair of the 8-bit formats against values ----

TEST(BinaryOrder, EveryPairOf8BitFormatsMatchesValues) {
  for (const char* name : {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m1fn"}) {
    BinaryFormat f = format_named(name);
    int bad = 0;
    for (uint64_t a = 0; a <= f.word_mask(); ++a) {
      double va = testing::oracle_value(f, a);
      bool na = testing::oracle_is_nan(f, a);
      FpEnv env;
      uint64_t n = fp_neg(f, env, a);
      uint64_t m = fp_abs(f, env, a);
      if (na) {
        bad += !(testing::oracle_is_nan(f, n) && testing::oracle_is_nan(f, m));
      } else {
        bad += !(testing::oracle_value(f, n) == -va && testing::oracle_value(f, m) == std::fabs(va));
        bad += std::signbit(testing::oracle_value(f, n)) == std::signbit(va) && f.has_negative_zero();
      }
      bad += env.flags != 0 && f.encoding == Encoding::Ieee;  // quiet bit operations
      for (uint64_t b = 0; b <= f.word_mask(); ++b) {
        double vb = testing::oracle_value(f, b);
        bool nb = testing::oracle_is_nan(f, b);
        FpEnv e;
        FpOrder o = fp_compare(f, e, a, b);
        FpOrder want = (na || nb) ? FpOrder::Unordered
                                  : (va < vb ? FpOrder::Less : (va == vb ? FpOrder::Equal : FpOrder::Greater));
        bad += o != want;
        uint64_t lo = fp_min(f, e, a, b);
        uint64_t hi = fp_max(f, e, a, b);
        if (na || nb) {
          bad += !testing::oracle_is_nan(f, lo) || !testing::oracle_is_nan(f, hi);
        } else {
          // -0 < +0 for minimum/maximum
          auto less = [&](double x, double y) { return x < y || (x == y && std::signbit(x) && !std::signbit(y)); };
          uint64_t want_lo = less(vb, va) ? b : a;
          uint64_t want_hi = less(va, vb) ? b : a;
          bad += lo != want_lo || hi != want_hi;
        }
      }
    }
    EXPECT_EQ(bad, 0) << name;
  }
}

TEST(BinaryOrder, SignalingNanComparisonsRaiseInvalid) {
  BinaryFormat b16 = format_named("binary16");
  FpEnv env;
  EXPECT_EQ(fp_compare(b16, env, 0x7c01, 0x3c00), FpOrder::Unordered);
  EXPECT_EQ(env.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv q;
  EXPECT_EQ(fp_compare(b16, q, 0x7e00, 0x3c00), FpOrder::Unordered);
  EXPECT_EQ(q.flags, 0u);
  EXPECT_EQ(fp_compare(b16, q, 0x8000, 0x0000), FpOrder::Equal);
  EXPECT_EQ(fp_min(b16, q, 0x0000, 0x8000), 0x8000u);
  EXPECT_EQ(fp_max(b16, q, 0x8000, 0x0000), 0x0000u);
  EXPECT_EQ(fp_max(b16, q, 0x3c00, 0x7e00), 0x7e00u);  // IEEE 754-2019 maximum propagates NaN
  FpEnv s;
  EXPECT_EQ(fp_min(b16, s, 0x3c00, 0x7c01), 0x7e01u);
  EXPECT_EQ(s.flags, static_cast<uint32_t>(kFpInvalid));
}

}  // namespace
}  // namespace denote
