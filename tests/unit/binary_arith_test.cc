// Binary-format arithmetic against the independent MPFR oracle (tests/unit/binary_oracle.cc), bit for
// bit and flag for flag, in all five rounding modes:
// - every pair of every 8-bit (and 6/4-bit) format for add/sub/mul/div, sqrt of every 8/16-bit word;
// - fma: every triple of e2m1fn, random triples elsewhere;
// - random pairs for binary16, bfloat16, binary32 (fast double path) and binary64 plus custom wide
//   formats (exact integer path).
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::BinaryChecker;
using testing::format_named;
using testing::kAllModes;
using testing::OracleOp;
using testing::WordGen;

constexpr OracleOp kBinaryOps[] = {OracleOp::Add, OracleOp::Sub, OracleOp::Mul, OracleOp::Div};

std::string op_label(OracleOp op) { return testing::oracle_op_name(op); }

// ---- exhaustive: every pair of small formats ----

class ExhaustivePairs : public ::testing::TestWithParam<std::tuple<std::string, OracleOp>> {};

TEST_P(ExhaustivePairs, MatchesOracleInEveryMode) {
  auto [name, op] = GetParam();
  BinaryChecker ck(format_named(name));
  uint64_t n = ck.f.word_mask() + 1;
  for (Rounding r : kAllModes) {
    for (uint64_t a = 0; a < n; ++a) {
      for (uint64_t b = 0; b < n; ++b) ck.check(r, op, a, b);
    }
  }
  EXPECT_EQ(ck.failures, 0);
  EXPECT_EQ(ck.checks, static_cast<int64_t>(5 * n * n));
}

INSTANTIATE_TEST_SUITE_P(
    SmallFormats, ExhaustivePairs,
    ::testing::Combine(::testing::Values("e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn"),
                       ::testing::ValuesIn(kBinaryOps)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + op_label(std::get<1>(info.param)); });

TEST(BinaryArith, SqrtOfEveryWordOfSmallAnd16BitFormats) {
  for (const char* name : {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn", "binary16",
                           "bfloat16"}) {
    BinaryChecker ck(format_named(name));
    for (Rounding r : kAllModes) {
      for (uint64_t a = 0; a <= ck.f.word_mask(); ++a) ck.check(r, OracleOp::Sqrt, a);
    }
    EXPECT_EQ(ck.failures, 0) << name;
  }
}

TEST(BinaryArith, FmaEveryTripleOfE2m1fn) {
  BinaryChecker ck(format_named("e2m1fn"));
  for (Rounding r : kAllModes) {
    for (uint64_t a = 0; a < 16; ++a) {
      for (uint64_t b = 0; b < 16; ++b) {
        for (uint64_t c = 0; c < 16; ++c) ck.check(r, OracleOp::Fma, a, b, c);
      }
    }
  }
  EXPECT_EQ(ck.failures, 0);
  EXPECT_EQ(ck.checks, 5 * 4096);
}

void random_fma(const std::string& name, int64_t count, uint64_t seed) {
  BinaryChecker ck(format_named(name));
  WordGen gen(ck.f, seed);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t a = gen.any();
    uint64_t b = gen.any();
    // c near a*b's magnitude half of the time: cancellation in the fused sum
    uint64_t c = (i & 1) ? gen.near(a) : gen.any();
    ck.check(kAllModes[i % 5], OracleOp::Fma, a, b, c);
  }
  EXPECT_EQ(ck.failures, 0) << name;
}

TEST(BinaryArith, FmaRandomTriplesSmallFormats) {
  uint64_t seed = 11;
  for (const char* name : {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn"}) {
    random_fma(name, 50000, seed++);
  }
}

TEST(BinaryArith, FmaRandomTriples16And32Bit) {
  random_fma("binary16", 150000, 21);
  random_fma("bfloat16", 150000, 22);
  random_fma("binary32", 150000, 23);
}

TEST(BinaryArith, FmaRandomTriplesGeneralPath) {
  random_fma("binary64", 100000, 31);
  random_fma("binary(9,3)", 30000, 32);
  random_fma("binary(5,30)", 30000, 33);
  random_fma("binary(2,61)", 30000, 34);
  random_fma("binary(15,48)", 30000, 35);
}

// ---- random pairs ----

void random_pairs(const std::string& name, OracleOp op, int64_t count, uint64_t seed) {
  BinaryChecker ck(format_named(name));
  WordGen gen(ck.f, seed);
  for (int64_t i = 0; i < count; ++i) {
    uint64_t a = gen.any();
    uint64_t b = (i & 1) ? gen.near(a) : gen.any();
    ck.check(kAllModes[i % 5], op, a, b);
  }
  EXPECT_EQ(ck.failures, 0) << name << " " << op_label(op);
  EXPECT_EQ(ck.checks, count);
}

class RandomPairs : public ::testing::TestWithParam<std::tuple<std::string, OracleOp>> {};

// The default-suite count per (format, op), spread over the five modes.
constexpr int64_t kPairsPerOp = 1000000;

TEST_P(RandomPairs, MatchesOracle) {
  auto [name, op] = GetParam();
  random_pairs(name, op, kPairsPerOp, std::hash<std::string>{}(name) + static_cast<uint64_t>(op));
}

INSTANTIATE_TEST_SUITE_P(
    FastPathFormats, RandomPairs,
    ::testing::Combine(::testing::Values("binary16", "bfloat16", "binary32"), ::testing::ValuesIn(kBinaryOps)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + op_label(std::get<1>(info.param)); });

TEST(BinaryArith, RandomPairsBinary64GeneralPath) {
  for (OracleOp op : kBinaryOps) random_pairs("binary64", op, 200000, 41 + static_cast<uint64_t>(op));
  BinaryChecker ck(format_named("binary64"));
  WordGen gen(ck.f, 49);
  for (int i = 0; i < 100000; ++i) ck.check(kAllModes[i % 5], OracleOp::Sqrt, gen.any());
  EXPECT_EQ(ck.failures, 0);
}

TEST(BinaryArith, RandomPairsCustomFormats) {
  uint64_t seed = 51;
  for (const char* name : {"binary(9,3)", "binary(12,5)", "binary(5,30)", "binary(2,61)", "binary(15,48)",
                           "binary(20,43)", "binary(8,24)", "binary(3,1)"}) {
    for (OracleOp op : kBinaryOps) random_pairs(name, op, 25000, seed++);
    BinaryChecker ck(format_named(name));
    WordGen gen(ck.f, seed++);
    for (int i = 0; i < 10000; ++i) ck.check(kAllModes[i % 5], OracleOp::Sqrt, gen.any());
    EXPECT_EQ(ck.failures, 0) << name;
  }
}

TEST(BinaryArith, SqrtRandomBinary32) {
  BinaryChecker ck(format_named("binary32"));
  WordGen gen(ck.f, 61);
  for (int i = 0; i < 300000; ++i) ck.check(kAllModes[i % 5], OracleOp::Sqrt, gen.any());
  EXPECT_EQ(ck.failures, 0);
}

}  // namespace
}  // namespace denote
