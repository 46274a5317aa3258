// The fast exact formats (binary_fast.h) against the general routines of binary_ops.h, which the
// MPFR tests validate: words, flags and errors must be identical.
// - every pair of every fast format of at most 8 bits, in all five modes, for add, sub, mul, div;
//   every word for sqrt; every triple of e2m1fn and random triples of the others for fma;
// - random pairs of bfloat16, binary16, binary32 and three custom formats for every op and mode:
//   200,000 per op, mode and 16-bit format by default; DENOTE_FAST_RANDOM_PAIRS=10000000 gives the
//   issue's count (about 1-2 minutes per format on the shared build machine);
// - the bulk kernels (fast_add_n ...) against element-by-element calls, malformed words included,
//   and (bfloat16 and binary16 run them in float lanes, binary_fast_kernel32.h) against the general
//   routines on every a against 8 b words per mode, plus tiny, huge and cancelling pairs;
// - the compile-time parameters of bfloat16 and binary16 against FastFormat::of.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "denote/scalar/binary_context.h"
#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_kernel.h"
#include "unit/binary_test_util.h"
#include "unit/sanitized.h"

namespace denote {
namespace {

using testing::format_named;
using testing::hex;
using testing::kAllModes;
using testing::library_op;
using testing::OracleOp;
using testing::oracle_op_name;
using testing::WordGen;

uint64_t fast_op(const FastFormat& ff, FpEnv& env, OracleOp op, uint64_t a, uint64_t b, uint64_t c) {
  switch (op) {
    case OracleOp::Add: return fast_add(ff, env, a, b);
    case OracleOp::Sub: return fast_sub(ff, env, a, b);
    case OracleOp::Mul: return fast_mul(ff, env, a, b);
    case OracleOp::Div: return fast_div(ff, env, a, b);
    case OracleOp::Sqrt: return fast_sqrt(ff, env, a);
    case OracleOp::Fma: return fast_fma(ff, env, a, b, c);
  }
  return 0;
}

struct Compare {
  explicit Compare(const FastFormat& f) : ff(f) {}
  const FastFormat& ff;
  int64_t checks = 0, failures = 0;

  void check(Rounding r, OracleOp op, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    ++checks;
    FpEnv fe{r, 0, {}}, ge{r, 0, {}};
    const uint64_t got = fast_op(ff, fe, op, a, b, c);
    const uint64_t want = library_op(ff.format, ge, op, a, b, c);
    if (got == want && fe.flags == ge.flags && fe.error == ge.error) return;
    if (++failures <= 8)
      ADD_FAILURE() << ff.format.name << " " << oracle_op_name(op) << " " << rounding_name(r) << " a=" << hex(a)
                    << " b=" << hex(b) << " c=" << hex(c) << ": fast " << hex(got) << " " << flags_to_string(fe.flags)
                    << " '" << fe.error << "', general " << hex(want) << " " << flags_to_string(ge.flags) << " '"
                    << ge.error << "'";
  }
};

FastFormat fast_of(const std::string& name) {
  std::optional<FastFormat> ff = FastFormat::of(format_named(name));
  EXPECT_TRUE(ff.has_value()) << name;
  return ff ? *ff : *FastFormat::of(binary32_format());
}

const char* const kSmallFormats[] = {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn"};

TEST(BinaryFast, CoversTheSmallFormatsAndNotTheWideOnes) {
  for (const char* n : {"bfloat16", "binary16", "binary32", "e4m3fn", "e2m1fn", "binary(5,7)", "binary(8,15)"})
    EXPECT_TRUE(FastFormat::of(format_named(n)).has_value()) << n;
  for (const char* n : {"binary64", "e8m0fnu", "binary(8,24)", "binary(9,3)", "binary(11,10)"})
    EXPECT_FALSE(FastFormat::of(format_named(n)).has_value()) << n;
}

template <class P>
void expect_params(const P& p, const FastFormat& ff) {
  EXPECT_EQ(p.frac_bits, ff.frac_bits);
  EXPECT_EQ(p.drop, ff.drop);
  EXPECT_EQ(p.sign_shift, ff.sign_shift);
  EXPECT_EQ(p.sign_word, ff.sign_word);
  EXPECT_EQ(p.frac_mask, ff.frac_mask);
  EXPECT_EQ(p.field_ones, ff.field_ones);
  EXPECT_EQ(p.word_mask, ff.word_mask);
  EXPECT_EQ(p.exp_adjust, ff.exp_adjust);
  EXPECT_EQ(p.min_normal_bits, ff.min_normal_bits);
  EXPECT_EQ(p.max_bits, ff.max_bits);
}

TEST(BinaryFast, CompileTimeParametersMatchTheFormats) {
  const FastFormat bf = fast_of("bfloat16"), hf = fast_of("binary16");
  EXPECT_EQ(bf.kind, FastFormat::Kind::Bfloat16);
  EXPECT_EQ(hf.kind, FastFormat::Kind::Binary16);
  expect_params(fastk::Bf16P{}, bf);
  expect_params(fastk::Fp16P{}, hf);
  EXPECT_EQ(fastk::decode(fastk::Bf16P{}, 0x3f80), 1.0);
  EXPECT_EQ(fastk::decode(fastk::Fp16P{}, 0x0001), 0x1p-24);
}

TEST(BinaryFast, EveryPairOfEverySmallFormatInEveryMode) {
  for (const char* name : kSmallFormats) {
    const FastFormat ff = fast_of(name);
    Compare ck(ff);
    const uint64_t count = uint64_t{1} << ff.format.storage_bits();
    for (Rounding r : kAllModes) {
      for (OracleOp op : {OracleOp::Add, OracleOp::Sub, OracleOp::Mul, OracleOp::Div}) {
        for (uint64_t a = 0; a < count; ++a)
          for (uint64_t b = 0; b < count; ++b) ck.check(r, op, a, b);
      }
      for (uint64_t a = 0; a < count; ++a) ck.check(r, OracleOp::Sqrt, a);
    }
    EXPECT_EQ(ck.checks, static_cast<int64_t>(5 * (4 * count * count + count))) << name;
    EXPECT_EQ(ck.failures, 0) << name;
  }
}

TEST(BinaryFast, FmaOnEveryTripleOfE2m1AndRandomTriplesOfTheOthers) {
  const FastFormat fp4 = fast_of("e2m1fn");
  Compare ck4(fp4);
  for (Rounding r : kAllModes)
    for (uint64_t a = 0; a < 16; ++a)
      for (uint64_t b = 0; b < 16; ++b)
        for (uint64_t c = 0; c < 16; ++c) ck4.check(r, OracleOp::Fma, a, b, c);
  EXPECT_EQ(ck4.failures, 0);
  for (const char* name : kSmallFormats) {
    const FastFormat ff = fast_of(name);
    Compare ck(ff);
    WordGen gen(ff.format, 77);
    for (Rounding r : kAllModes)
      for (int i = 0; i < 20000; ++i) ck.check(r, OracleOp::Fma, gen.any(), gen.any(), gen.any());
    EXPECT_EQ(ck.failures, 0) << name;
  }
}

int64_t random_pairs() {
  const char* env = std::getenv("DENOTE_FAST_RANDOM_PAIRS");
  return env ? std::atoll(env) : 200000;
}

// n random operand sets per op and mode: interesting words, close exponents (cancellation) and
// uniformly random words (far exponents: the sum's error term must give the sticky bit).
void random_check(const std::string& name, int64_t n, uint64_t seed) {
  const FastFormat ff = fast_of(name);
  Compare ck(ff);
  WordGen gen(ff.format, seed);
  const uint64_t mask = ff.format.word_mask();
  for (Rounding r : kAllModes) {
    for (OracleOp op : {OracleOp::Add, OracleOp::Sub, OracleOp::Mul, OracleOp::Div, OracleOp::Sqrt, OracleOp::Fma}) {
      for (int64_t i = 0; i < n; ++i) {
        const uint64_t a = gen.any();
        const int kind = static_cast<int>(i % 3);
        const uint64_t b = kind == 0 ? gen.near(a) : (kind == 1 ? gen.rng()() & mask : gen.any());
        ck.check(r, op, a, b, kind == 2 ? gen.near(a) : gen.any());
      }
    }
  }
  EXPECT_EQ(ck.failures, 0) << name;
}

TEST(BinaryFast, RandomPairsOfBfloat16) { random_check("bfloat16", random_pairs(), 1); }
TEST(BinaryFast, RandomPairsOfBinary16) { random_check("binary16", random_pairs(), 2); }
TEST(BinaryFast, RandomPairsOfBinary32AndCustomFormats) {
  const int64_t n = random_pairs() / 4;
  random_check("binary32", n, 3);
  random_check("binary(5,7)", n, 4);
  random_check("binary(8,15)", n, 5);
  random_check("binary(3,20)", n, 6);
}

// The bulk kernels equal the one-word operations in order, flags and the first error included.
TEST(BinaryFast, BulkKernelsEqualOneWordOperations) {
  for (const char* name : {"bfloat16", "binary16", "e4m3fn", "e5m2fnuz", "e2m1fn"}) {
    const FastFormat ff = fast_of(name);
    WordGen gen(ff.format, 11);
    for (Rounding r : kAllModes) {
      const size_t n = 1000;
      std::vector<FpWord> a(n), b(n);
      for (size_t i = 0; i < n; ++i) {
        a[i].bits = gen.any();
        b[i].bits = i % 2 ? gen.near(a[i].bits) : gen.any();
      }
      a[500].bits = ff.format.word_mask() + 1;  // malformed: an error, reported in index order
      b[700].bits = ff.format.word_mask() + 3;
      using Bulk = void (*)(const FastFormat&, FpEnv&, const FpWord*, const FpWord*, FpWord*, size_t);
      using One = uint64_t (*)(const FastFormat&, FpEnv&, uint64_t, uint64_t);
      const std::pair<Bulk, One> ops[] = {{&fast_add_n, &fast_add}, {&fast_sub_n, &fast_sub}, {&fast_mul_n, &fast_mul}};
      for (const auto& [bulk, one] : ops) {
        FpEnv be{r, 0, {}}, oe{r, 0, {}};
        std::vector<FpWord> out(n);
        bulk(ff, be, a.data(), b.data(), out.data(), n);
        int mismatches = 0;
        for (size_t i = 0; i < n; ++i) mismatches += out[i].bits != one(ff, oe, a[i].bits, b[i].bits);
        EXPECT_EQ(mismatches, 0) << name << " " << rounding_name(r);
        EXPECT_EQ(be.flags, oe.flags) << name;
        EXPECT_EQ(be.error, oe.error) << name;
        EXPECT_NE(be.error.find("0x"), std::string::npos) << name;
      }
    }
  }
}

// The float lanes of bfloat16/binary16 against the general routines: every word a (all 65,536)
// against 8 partners per op and mode (random, near a, its negation and the extremes), in one bulk
// call each, so blocks mix good and bad lanes, and in a one-lane call each; words, each element's
// flags and the accumulated flags must agree.
TEST(BinaryFast, FloatLaneBulkKernelsEqualTheGeneralRoutines) {
  for (const char* name : {"bfloat16", "binary16"}) {
    const FastFormat ff = fast_of(name);
    WordGen gen(ff.format, 23);
    const uint64_t sign = ff.sign_word, maxw = max_finite(ff.format, false);
    // 2^16 words a round; 2^14 under the sanitizers (every branch of the kernels still runs: 6.1 s before).
    const size_t n = size_t{1} << (denote::testing::sanitized_build() ? 14 : 16);
    for (int k = 0; k < 8; ++k) {
      std::vector<FpWord> a(n), b(n);
      for (size_t i = 0; i < n; ++i) {
        a[i].bits = i;
        const uint64_t choices[] = {gen.any(), gen.near(i), i ^ sign, maxw, maxw | sign, 1, gen.rng()() & ff.format.word_mask()};
        b[i].bits = choices[(i + k) % 7];
      }
      using Bulk = void (*)(const FastFormat&, FpEnv&, const FpWord*, const FpWord*, FpWord*, size_t);
      const std::pair<Bulk, OracleOp> ops[] = {
          {&fast_add_n, OracleOp::Add}, {&fast_sub_n, OracleOp::Sub}, {&fast_mul_n, OracleOp::Mul}};
      for (Rounding r : kAllModes) {
        for (const auto& [bulk, op] : ops) {
          FpEnv be{r, 0, {}}, ge{r, 0, {}};
          std::vector<FpWord> out(n);
          bulk(ff, be, a.data(), b.data(), out.data(), n);
          int mismatches = 0;
          for (size_t i = 0; i < n; ++i) {
            FpEnv g1{r, 0, {}}, b1{r, 0, {}};  // the flags of this element alone, by a one-lane bulk call
            const uint64_t want = library_op(ff.format, g1, op, a[i].bits, b[i].bits, 0);
            FpWord one;
            bulk(ff, b1, &a[i], &b[i], &one, 1);
            ge.flags |= g1.flags;
            if ((out[i].bits != want || one.bits != want || b1.flags != g1.flags) && ++mismatches <= 4)
              ADD_FAILURE() << name << " " << oracle_op_name(op) << " " << rounding_name(r) << " a=" << hex(a[i].bits)
                            << " b=" << hex(b[i].bits) << ": bulk " << hex(out[i].bits) << " "
                            << flags_to_string(b1.flags) << ", general " << hex(want) << " " << flags_to_string(g1.flags);
          }
          EXPECT_EQ(mismatches, 0) << name;
          EXPECT_EQ(be.flags, ge.flags) << name << " " << oracle_op_name(op) << " " << rounding_name(r);
        }
      }
    }
  }
}

// relu over words against BinaryContext::relu (the op table's scalar rule) on every word of every
// fast format of at most 16 bits and a few malformed words: the same words, and the same flags once
// the special words are settled by the context (signaling NaNs raise invalid there).
TEST(BinaryFast, ReluOverWordsEqualsTheScalarRule) {
  for (const char* name : {"bfloat16", "binary16", "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn"}) {
    const FastFormat ff = fast_of(name);
    const uint64_t words = ff.format.word_mask() + 1;
    std::vector<FpWord> x;
    for (uint64_t w = 0; w < words; ++w) x.push_back(FpWord{w});
    for (uint64_t m : {words, words + 5, ~uint64_t{0}}) x.push_back(FpWord{m});
    BinaryContext fast_ctx(ff.format), rule_ctx(ff.format);
    std::vector<FpWord> out(x.size());
    std::vector<size_t> special;
    fast_relu_n(ff, x.data(), out.data(), x.size(), special);
    for (size_t i : special) out[i] = fast_ctx.relu(x[i]);
    int mismatches = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const FpWord want = rule_ctx.relu(x[i]);
      if (out[i] != want && ++mismatches <= 4)
        ADD_FAILURE() << name << " relu " << hex(x[i].bits) << ": fast " << hex(out[i].bits) << ", rule " << hex(want.bits);
    }
    EXPECT_EQ(mismatches, 0) << name;
    EXPECT_EQ(fast_ctx.env().flags, rule_ctx.env().flags) << name;
    EXPECT_FALSE(special.empty()) << name;  // the malformed words at least
  }
}

}  // namespace
}  // namespace denote
