// Conversions between binary formats, doubles and integers: every 8/16-bit word to binary32 and
// back, binary32 to every small format (random and boundary words) against the MPFR oracle in all
// modes with and without saturation, the ml_dtypes / OCP reference facts, and integer conversions
// against the C library's rounding functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "denote/scalar/binary_ops.h"
#include "unit/binary_oracle.h"
#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::format_named;
using testing::hex;
using testing::kAllModes;

FpEnv env_in(Rounding r) {
  FpEnv env;
  env.rounding = r;
  return env;
}

uint32_t float_bits(float x) {
  uint32_t b = 0;
  std::memcpy(&b, &x, 4);
  return b;
}
float bits_float(uint32_t b) {
  float x = 0;
  std::memcpy(&x, &b, 4);
  return x;
}

const char* const kSmallFormats[] = {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn",
                                     "e2m3fn", "e2m1fn",   "binary16", "bfloat16"};

// The exponent of the smallest subnormal.
int min_exp(const BinaryFormat& f) { return 1 - f.bias - f.frac_bits; }

// The exact value of a word, from the oracle's own decoder (e8m0: 2^(w - 127)).
double value_of(const BinaryFormat& f, uint64_t w) {
  return f.encoding == Encoding::E8m0 ? std::ldexp(1.0, static_cast<int>(w) - 127) : testing::oracle_value(f, w);
}

TEST(BinaryConvert, EverySmallWordToBinary32AndBack) {
  BinaryFormat b32 = binary32_format();
  std::vector<std::string> names(std::begin(kSmallFormats), std::end(kSmallFormats));
  names.push_back("e8m0fnu");
  for (const std::string& name : names) {
    BinaryFormat f = format_named(name);
    int bad = 0;
    for (uint64_t w = 0; w <= f.word_mask(); ++w) {
      FpEnv env;
      uint64_t x = fp_convert(f, b32, env, w);
      FloatClass c = classify(f, w);
      if (c == FloatClass::QuietNaN || c == FloatClass::SignalingNaN) {
        bad += !std::isnan(bits_float(static_cast<uint32_t>(x)));
        bad += env.flags != (c == FloatClass::SignalingNaN ? static_cast<uint32_t>(kFpInvalid) : 0u);
        // fn keeps the NaN's sign; the fnuz NaN (the -0 pattern) and e8m0's NaN become +NaN.
        bad += (f.encoding != Encoding::Fnuz && sign_bit(f, w)) != ((x >> 31) != 0);
        continue;
      }
      bool one_bad = x != float_bits(static_cast<float>(value_of(f, w))) || env.flags != 0;
      for (Rounding r : kAllModes) {  // exact both ways, so every mode gives the word back
        FpEnv back = env_in(r);
        one_bad = one_bad || fp_convert(b32, f, back, x) != w || back.flags != 0;
      }
      if (one_bad && ++bad <= 5) ADD_FAILURE() << name << " word " << hex(w) << " -> " << hex(x);
    }
    EXPECT_EQ(bad, 0) << name;
  }
}

// binary32 inputs around every value of the target: the value, the midpoints to its neighbours and
// one binary32 ulp either side of those, plus far out-of-range and tiny values.
std::vector<float> boundary_inputs(const BinaryFormat& f) {
  std::vector<float> out;
  std::vector<double> vals;
  for (uint64_t w = 0; w <= f.word_mask(); ++w) {
    if (!testing::oracle_is_nan(f, w) && classify(f, w) != FloatClass::Infinite) vals.push_back(value_of(f, w));
  }
  std::sort(vals.begin(), vals.end());
  double top = vals.back();
  vals.push_back(top * 1.0625);
  vals.push_back(top * 1.125);
  vals.push_back(top * 2);
  for (size_t i = 0; i < vals.size(); ++i) {
    std::vector<double> pts = {vals[i]};
    if (i + 1 < vals.size()) pts.push_back((vals[i] + vals[i + 1]) / 2);
    for (double p : pts) {
      float x = static_cast<float>(p);
      out.push_back(x);
      out.push_back(std::nextafter(x, HUGE_VALF));
      out.push_back(std::nextafter(x, -HUGE_VALF));
    }
  }
  for (float x : {1e6f, 1e30f, HUGE_VALF, 1e-30f, 1e-45f, 0.0f, std::numeric_limits<float>::quiet_NaN(),
                  bits_float(0x7f800001u), bits_float(0x7fc12345u)}) {
    out.push_back(x);
    out.push_back(-x);
  }
  return out;
}

void check_from_float(const BinaryFormat& f, Rounding r, float x, bool saturate, int& bad) {
  FpEnv env = env_in(r);
  uint64_t got = fp_from_double(f, env, static_cast<double>(x), saturate);
  FpEnv env32 = env_in(r);
  uint64_t got32 = fp_convert(binary32_format(), f, env32, float_bits(x), saturate);
  testing::OracleOut want = testing::oracle_from_float(f, r, x, saturate);
  bool lib_error = !env32.error.empty();
  bool ok = want.error ? lib_error : !lib_error && got32 == want.word && env32.flags == want.flags;
  // the double path agrees with the float path except for NaN payload bits (a double's payload is
  // wider); both are NaN then
  bool same = got == got32 && env.flags == env32.flags;
  if (!same && testing::oracle_is_nan(f, got) && testing::oracle_is_nan(f, got32)) same = true;
  if (want.error) same = !env.error.empty();
  if (!(ok && same) && ++bad <= 8) {
    ADD_FAILURE() << f.name << " from " << x << " (" << hex(float_bits(x)) << ") " << rounding_name(r)
                  << (saturate ? " saturating" : "") << ": library " << hex(got32) << " "
                  << flags_to_string(env32.flags) << " " << env32.error << " (double path " << hex(got)
                  << "), oracle " << hex(want.word) << " " << flags_to_string(want.flags)
                  << (want.error ? " error" : "");
  }
}

TEST(BinaryConvert, Binary32ToSmallFormatsMatchesOracle) {
  for (const char* name : kSmallFormats) {
    BinaryFormat f = format_named(name);
    std::vector<float> inputs = boundary_inputs(f);
    if (f.storage_bits() == 16) {  // thin out: every 7th boundary point
      std::vector<float> thin;
      for (size_t i = 0; i < inputs.size(); i += 7) thin.push_back(inputs[i]);
      inputs.swap(thin);
    }
    testing::WordGen gen(binary32_format(), 71);
    for (int i = 0; i < 20000; ++i) inputs.push_back(bits_float(static_cast<uint32_t>(gen.any())));
    // values near the target's range: binary32 words with exponents around the target's
    std::mt19937_64 rng(72);
    for (int i = 0; i < 20000; ++i) {
      int e = static_cast<int>(rng() % (f.emax() - min_exp(f) + 6)) + min_exp(f) - 3;
      float m = 1.0f + static_cast<float>(rng() % (1u << 23)) * 0x1p-23f;
      inputs.push_back((rng() & 1 ? -1.0f : 1.0f) * std::ldexp(m, e));
    }
    int bad = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      for (Rounding r : kAllModes) {
        check_from_float(f, r, inputs[i], false, bad);
        check_from_float(f, r, inputs[i], true, bad);
      }
    }
    EXPECT_EQ(bad, 0) << name << " over " << inputs.size() << " inputs";
  }
}

TEST(BinaryConvert, MlDtypesFacts) {
  const uint32_t kOver = kFpOverflow | kFpInexact;
  struct Case {
    const char* fmt;
    double x;
    bool saturate;
    uint64_t want;
    uint32_t flags;
  };
  const Case cases[] = {
      {"e4m3fn", 1e6, false, 0x7f, kOver},                     // ml_dtypes: NaN
      {"e4m3fn", 1e6, true, 0x7e, kOver | kFpSaturated},       // saturating: 448
      {"e4m3fn", -1e6, true, 0xfe, kOver | kFpSaturated},      // -448
      {"e4m3fn", 448, false, 0x7e, 0},
      {"e4m3fn", 464, false, 0x7e, kFpInexact},                // tie between 448 and 480: even
      {"e4m3fn", 465, false, 0x7f, kOver},                     // nearer 480, which does not exist
      {"e4m3fn", 0x1p-9, false, 0x01, 0},                      // smallest subnormal
      {"e4m3fn", 0x1p-10, false, 0x00, kFpUnderflow | kFpInexact},
      {"e4m3fn", 0x1.8p-10, false, 0x01, kFpUnderflow | kFpInexact},
      {"e4m3fn", -0.0, false, 0x80, 0},
      {"e4m3fnuz", 1e6, false, 0x80, kOver},                   // the single NaN
      {"e4m3fnuz", 1e6, true, 0x7f, kOver | kFpSaturated},     // 240
      {"e4m3fnuz", -0.0, false, 0x00, 0},                      // no negative zero
      {"e4m3fnuz", 240, false, 0x7f, 0},
      {"e5m2", 1e6, false, 0x7c, kOver},                       // inf
      {"e5m2", 57344, false, 0x7b, 0},
      {"e5m2", 61440, false, 0x7c, kOver},                     // tie 57344/65536 goes to even = inf
      {"e5m2", 1e6, true, 0x7b, kOver | kFpSaturated},
      {"e5m2fnuz", 57344, false, 0x7f, 0},
      {"e5m2fnuz", 1e6, false, 0x80, kOver},
      {"e2m1fn", 1e6, false, 0x7, kOver | kFpSaturated},       // no NaN: saturates always
      {"e2m1fn", 5, false, 0x6, kFpInexact},                   // tie 4/6: even is 4
      {"e2m1fn", 0.25, false, 0x0, kFpUnderflow | kFpInexact}, // tie 0/0.5: even is 0
      {"e3m2fn", 28, false, 0x1f, 0},
      {"e3m2fn", 30, false, 0x1f, kOver | kFpSaturated},
      {"e2m3fn", 7.5, false, 0x1f, 0},
      {"bfloat16", 1.0 + 0x1p-8, false, 0x3f80, kFpInexact},
      {"binary16", 65520, false, 0x7c00, kOver},               // tie 65504/65536: inf
      {"binary16", 65519, false, 0x7bff, kFpInexact},
  };
  for (const Case& c : cases) {
    FpEnv env;
    EXPECT_EQ(fp_from_double(format_named(c.fmt), env, c.x, c.saturate), c.want) << c.fmt << " " << c.x;
    EXPECT_EQ(env.flags, c.flags) << c.fmt << " " << c.x << " " << flags_to_string(env.flags);
  }
}

TEST(BinaryConvert, SpecialValues) {
  BinaryFormat e4 = format_named("e4m3fn");
  FpEnv inf_env;
  EXPECT_EQ(fp_from_double(e4, inf_env, -HUGE_VAL), 0xffu);  // inf has no value: NaN, mapped
  EXPECT_EQ(inf_env.flags, static_cast<uint32_t>(kFpMappedSpecial));
  FpEnv sat;
  EXPECT_EQ(fp_from_double(e4, sat, HUGE_VAL, true), 0x7eu);
  EXPECT_EQ(sat.flags, static_cast<uint32_t>(kFpSaturated));
  BinaryFormat e2 = format_named("e2m1fn");
  FpEnv nan_env;
  fp_from_double(e2, nan_env, std::nan(""));
  EXPECT_EQ(nan_env.error, "e2m1fn: nan has no value in a format without nan");
  FpEnv inf2;
  fp_from_double(e2, inf2, HUGE_VAL);
  EXPECT_EQ(inf2.error, "e2m1fn: infinity has no value in a format without infinity and nan");
  FpEnv inf3;
  EXPECT_EQ(fp_from_double(e2, inf3, -HUGE_VAL, true), 0xfu);
  EXPECT_TRUE(inf3.error.empty());
  // binary32 sNaN -> binary16: quieted, sign and top payload bits kept, invalid
  FpEnv snan;
  EXPECT_EQ(fp_convert(binary32_format(), format_named("binary16"), snan, 0xff802000), 0xfe01u);
  EXPECT_EQ(snan.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv widen;  // binary16 qNaN -> binary64: payload moves to the top
  EXPECT_EQ(fp_convert(format_named("binary16"), binary64_format(), widen, 0x7e01), 0x7ff8040000000000u);
  EXPECT_EQ(widen.flags, 0u);
  BinaryFormat e8 = format_named("e8m0fnu");
  FpEnv z;
  EXPECT_EQ(fp_from_double(e8, z, 0.0), 0xffu);  // no zero in e8m0
  EXPECT_EQ(z.flags, static_cast<uint32_t>(kFpInvalid));
  FpEnv pw;
  EXPECT_EQ(fp_from_double(e8, pw, 0.75), 0x7fu);  // nearest power of two (1.5 * 2^-1 rounds up)
  EXPECT_EQ(pw.flags, static_cast<uint32_t>(kFpInexact));
}

// Settled in docs/NUMERICS.md (issue 13): `saturated` marks a +-max that stands in for the value
// the mode prescribes (inf or NaN); toward-zero's +-max at the same overflow is the IEEE result
// itself (7.4) and raises only overflow, inexact. And the sign of a converted fn/fnuz NaN.
TEST(BinaryConvert, SaturatedFlagAndNanSignAreSettled) {
  const uint32_t kOver = kFpOverflow | kFpInexact;
  const BinaryFormat e2 = format_named("e2m1fn"), e4 = format_named("e4m3fn");
  struct Case {
    const BinaryFormat* f;
    Rounding mode;
    bool saturate;
    uint64_t want;
    uint32_t flags;
  };
  const Case cases[] = {
      {&e2, Rounding::NearestEven, false, 0x7, kOver | kFpSaturated},
      {&e2, Rounding::NearestAway, false, 0x7, kOver | kFpSaturated},
      {&e2, Rounding::Upward, false, 0x7, kOver | kFpSaturated},
      {&e2, Rounding::TowardZero, false, 0x7, kOver},
      {&e2, Rounding::Downward, false, 0x7, kOver},
      {&e4, Rounding::NearestEven, false, 0x7f, kOver},                // NaN, not saturated
      {&e4, Rounding::NearestEven, true, 0x7e, kOver | kFpSaturated},  // asked to saturate
      {&e4, Rounding::TowardZero, true, 0x7e, kOver},                  // 448 is toward-zero's own result
      {&e4, Rounding::TowardZero, false, 0x7e, kOver},
  };
  for (const Case& c : cases) {
    FpEnv env = env_in(c.mode);
    EXPECT_EQ(fp_from_double(*c.f, env, 1e6, c.saturate), c.want) << c.f->name << " " << static_cast<int>(c.mode);
    EXPECT_EQ(env.flags, c.flags) << c.f->name << " " << static_cast<int>(c.mode) << " " << flags_to_string(env.flags);
  }
  const BinaryFormat b32 = binary32_format();
  FpEnv env;
  EXPECT_EQ(fp_convert(e4, b32, env, 0xff), 0xffc00000u);                       // fn: -NaN keeps its sign
  EXPECT_EQ(fp_convert(e4, b32, env, 0x7f), 0x7fc00000u);
  EXPECT_EQ(fp_convert(format_named("e4m3fnuz"), b32, env, 0x80), 0x7fc00000u);  // fnuz: +NaN
  EXPECT_EQ(fp_convert(format_named("e5m2fnuz"), binary64_format(), env, 0x80), 0x7ff8000000000000u);
  EXPECT_EQ(fp_convert(format_named("e4m3fnuz"), e4, env, 0x80), 0x7fu);
  EXPECT_EQ(fp_convert(format_named("e8m0fnu"), b32, env, 0xff), 0x7fc00000u);
  EXPECT_EQ(env.flags, 0u);
}

TEST(BinaryConvert, FromIntRoundsOnce) {
  BinaryFormat b32 = binary32_format();
  FpEnv ne;
  EXPECT_EQ(fp_from_int(b32, ne, (1 << 24) + 1), 0x4b800000u);  // 2^24
  EXPECT_EQ(ne.flags, static_cast<uint32_t>(kFpInexact));
  FpEnv up = env_in(Rounding::Upward);
  EXPECT_EQ(fp_from_int(b32, up, (1 << 24) + 1), 0x4b800001u);
  FpEnv big;
  EXPECT_EQ(fp_from_int(binary64_format(), big, std::numeric_limits<int64_t>::min()), 0xc3e0000000000000u);
  EXPECT_EQ(big.flags, 0u);
  FpEnv mx;
  EXPECT_EQ(fp_from_int(b32, mx, std::numeric_limits<int64_t>::max()), 0x5f000000u);  // 2^63
  EXPECT_EQ(mx.flags, static_cast<uint32_t>(kFpInexact));
  FpEnv zero;
  EXPECT_EQ(fp_from_int(format_named("e4m3fn"), zero, 0), 0u);
  // small integers against the oracle (exact as floats) in every format and mode
  std::mt19937_64 rng(81);
  int bad = 0;
  for (const char* name : kSmallFormats) {
    BinaryFormat f = format_named(name);
    for (int i = 0; i < 4000; ++i) {
      int64_t v = static_cast<int64_t>(rng() % (1u << (i % 24 + 1))) - (int64_t{1} << (i % 24));
      Rounding r = kAllModes[i % 5];
      FpEnv env = env_in(r);
      uint64_t got = fp_from_int(f, env, v);
      testing::OracleOut want = testing::oracle_from_float(f, r, static_cast<float>(v), false);
      if (got != want.word || env.flags != want.flags) {
        if (++bad <= 5) ADD_FAILURE() << name << " from " << v << ": " << hex(got) << " vs " << hex(want.word);
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

// The C library's rounding to integer in each mode, as the reference for fp_to_int.
double c_round(double x, Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return std::nearbyint(x);  // default environment: to nearest even
    case Rounding::TowardZero: return std::trunc(x);
    case Rounding::Upward: return std::ceil(x);
    case Rounding::Downward: return std::floor(x);
    case Rounding::NearestAway: return std::round(x);
  }
  return x;
}

TEST(BinaryConvert, ToIntMatchesCLibraryRounding) {
  ASSERT_EQ(std::fegetround(), FE_TONEAREST);
  BinaryFormat b32 = binary32_format();
  testing::WordGen gen(b32, 91);
  int bad = 0;
  int errors = 0;
  for (int i = 0; i < 200000; ++i) {
    uint64_t w = gen.any();
    Rounding r = kAllModes[i % 5];
    float x = bits_float(static_cast<uint32_t>(w));
    FpEnv env = env_in(r);
    int64_t out = 0;
    bool ok = fp_to_int(b32, env, w, out);
    double want = std::isfinite(x) ? c_round(x, r) : 0;
    bool expect_ok = std::isfinite(x) && want >= -0x1p63 && want < 0x1p63;
    if (ok != expect_ok || (ok && static_cast<double>(out) != want) ||
        (ok && ((env.flags & kFpInexact) != 0) != (want != x))) {
      if (++bad <= 5) ADD_FAILURE() << x << " " << rounding_name(r) << " -> " << out << " " << env.error;
    }
    errors += !ok;
  }
  EXPECT_EQ(bad, 0);
  EXPECT_GT(errors, 1000);  // the generator does reach NaN, inf and huge values
}

TEST(BinaryConvert, ToIntErrorsAndEdges) {
  BinaryFormat b64 = binary64_format();
  auto to_int = [&](double x, Rounding r, int64_t& out, std::string& err) {
    FpEnv env = env_in(r);
    uint64_t w = 0;
    std::memcpy(&w, &x, 8);
    bool ok = fp_to_int(b64, env, w, out);
    err = env.error;
    return ok;
  };
  int64_t out = 0;
  std::string err;
  EXPECT_TRUE(to_int(-0x1p63, Rounding::NearestEven, out, err));
  EXPECT_EQ(out, std::numeric_limits<int64_t>::min());
  EXPECT_FALSE(to_int(0x1p63, Rounding::NearestEven, out, err));
  EXPECT_EQ(err, "binary64: value 9.223372036854776e+18 is out of the int64 range");
  EXPECT_FALSE(to_int(std::nan(""), Rounding::NearestEven, out, err));
  EXPECT_EQ(err, "binary64: nan has no integer value");
  EXPECT_FALSE(to_int(-HUGE_VAL, Rounding::NearestEven, out, err));
  EXPECT_EQ(err, "binary64: infinity has no integer value");
  EXPECT_TRUE(to_int(2.5, Rounding::NearestEven, out, err));
  EXPECT_EQ(out, 2);
  EXPECT_TRUE(to_int(2.5, Rounding::NearestAway, out, err));
  EXPECT_EQ(out, 3);
  EXPECT_TRUE(to_int(-2.5, Rounding::Upward, out, err));
  EXPECT_EQ(out, -2);
  EXPECT_TRUE(to_int(0x1.fffffffffffffp62, Rounding::NearestEven, out, err));
  EXPECT_EQ(out, 0x7ffffffffffffc00);
  FpEnv e4;
  EXPECT_TRUE(fp_to_int(format_named("e4m3fn"), e4, 0x7e, out));
  EXPECT_EQ(out, 448);
}

}  // namespace
}  // namespace denote
