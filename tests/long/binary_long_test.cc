// Long binary-format checks against the MPFR oracle (not part of CI; minutes to hours):
// - fma on every triple of e4m3fn, e5m2, e4m3fnuz, e5m2fnuz (16.7M triples each) in one mode per test;
// - 20M random pairs per op for binary16, bfloat16, binary32 and 4M for binary64 (times
//   DENOTE_LONG_SCALE);
// - every 997th binary32 word converted to binary16, bfloat16 and each 8-bit format in every mode.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>

#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::BinaryChecker;
using testing::format_named;
using testing::kAllModes;
using testing::OracleOp;

int64_t scale() {
  const char* s = std::getenv("DENOTE_LONG_SCALE");
  int64_t v = s ? std::atoll(s) : 1;
  return v > 0 ? v : 1;
}

class LongFmaTriples : public ::testing::TestWithParam<std::tuple<std::string, Rounding>> {};

TEST_P(LongFmaTriples, EveryTriple) {
  auto [name, r] = GetParam();
  BinaryChecker ck(format_named(name));
  for (uint64_t a = 0; a < 256; ++a) {
    for (uint64_t b = 0; b < 256; ++b) {
      for (uint64_t c = 0; c < 256; ++c) ck.check(r, OracleOp::Fma, a, b, c);
    }
  }
  EXPECT_EQ(ck.failures, 0);
}

INSTANTIATE_TEST_SUITE_P(
    EightBit, LongFmaTriples,
    ::testing::Combine(::testing::Values("e4m3fn", "e5m2", "e4m3fnuz", "e5m2fnuz"), ::testing::ValuesIn(kAllModes)),
    [](const auto& info) {
      std::string m(rounding_name(std::get<1>(info.param)));
      for (char& ch : m) ch = ch == '-' ? '_' : ch;
      return std::get<0>(info.param) + "_" + m;
    });

class LongRandomPairs : public ::testing::TestWithParam<std::tuple<std::string, OracleOp>> {};

TEST_P(LongRandomPairs, MatchesOracle) {
  auto [name, op] = GetParam();
  BinaryChecker ck(format_named(name));
  testing::WordGen gen(ck.f, 1000 + static_cast<uint64_t>(op) + std::hash<std::string>{}(name));
  int64_t n = (name == "binary64" ? 4000000 : 20000000) * scale();
  for (int64_t i = 0; i < n; ++i) {
    uint64_t a = gen.any();
    uint64_t b = (i & 1) ? gen.near(a) : gen.any();
    ck.check(kAllModes[i % 5], op, a, b, (i & 2) ? gen.near(a) : gen.any());
  }
  EXPECT_EQ(ck.failures, 0);
}

INSTANTIATE_TEST_SUITE_P(
    Formats, LongRandomPairs,
    ::testing::Combine(::testing::Values("binary16", "bfloat16", "binary32", "binary64"),
                       ::testing::Values(OracleOp::Add, OracleOp::Sub, OracleOp::Mul, OracleOp::Div, OracleOp::Sqrt,
                                         OracleOp::Fma)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + testing::oracle_op_name(std::get<1>(info.param)); });

class LongConvert : public ::testing::TestWithParam<std::string> {};

TEST_P(LongConvert, StridedBinary32Words) {
  BinaryFormat f = format_named(GetParam());
  BinaryFormat b32 = binary32_format();
  int64_t bad = 0;
  for (uint64_t w = 0; w <= 0xffffffffu; w += 997) {
    float x = 0;
    uint32_t bits = static_cast<uint32_t>(w);
    std::memcpy(&x, &bits, 4);
    for (Rounding r : kAllModes) {
      for (bool sat : {false, true}) {
        FpEnv env;
        env.rounding = r;
        uint64_t got = fp_convert(b32, f, env, w, sat);
        testing::OracleOut want = testing::oracle_from_float(f, r, x, sat);
        bool ok = want.error ? !env.error.empty() : env.error.empty() && got == want.word && env.flags == want.flags;
        if (!ok && ++bad <= 5) {
          ADD_FAILURE() << f.name << " from " << testing::hex(w) << " " << rounding_name(r) << ": " << testing::hex(got)
                        << " vs " << testing::hex(want.word);
        }
      }
    }
  }
  EXPECT_EQ(bad, 0);
}

INSTANTIATE_TEST_SUITE_P(Targets, LongConvert,
                         ::testing::Values("binary16", "bfloat16", "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz",
                                           "e3m2fn", "e2m3fn", "e2m1fn"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace denote
