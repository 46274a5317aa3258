// The hand-vectorised round-to-nearest-even kernels (binary_fast_simd.h) at every level this CPU
// has (0: the float lanes of binary_fast_kernel32.h, 1: AVX2 + F16C, 2: AVX-512) against the general
// routines of binary_ops.h. bfloat16/binary16: every word a (all 65,536) against 8 partners (random,
// near a, its negation, the extremes, tiny values, zeros) for add, sub and mul. The small formats of
// the AVX-512 integer-lane kernel (binary_fast_simd_small.cc: e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, the
// fp6/fp4 formats, small IEEE-like binary(e,f)): every pair of words. Words, each element's flags
// and the accumulated flags must agree. Also in place (out == a, out == b), every tail length, and
// malformed words (the first error in index order).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_simd.h"
#include "scalar/binary_fast_simd_block.h"
#include "unit/binary_fast_test_util.h"
#include "unit/binary_test_util.h"

namespace denote {
namespace {

using testing::format_named;
using testing::hex;
using testing::library_op;
using testing::OracleOp;
using testing::oracle_op_name;
using testing::WordGen;

using Bulk = void (*)(const FastFormat&, FpEnv&, const FpWord*, const FpWord*, FpWord*, size_t);
const std::pair<Bulk, OracleOp> kOps[] = {
    {&fast_add_n, OracleOp::Add}, {&fast_sub_n, OracleOp::Sub}, {&fast_mul_n, OracleOp::Mul}};

using Level = testing::SimdLevel;

FastFormat fast_of(const char* name) { return *FastFormat::of(format_named(name)); }

// The general routine over a and b element by element: words, accumulated flags, first error.
std::vector<FpWord> general(const FastFormat& ff, FpEnv& env, OracleOp op, const std::vector<FpWord>& a,
                            const std::vector<FpWord>& b) {
  std::vector<FpWord> out(a.size());
  for (size_t i = 0; i < a.size(); ++i) out[i].bits = library_op(ff.format, env, op, a[i].bits, b[i].bits, 0);
  return out;
}

int mismatches(const char* what, const FastFormat& ff, OracleOp op, const std::vector<FpWord>& a,
               const std::vector<FpWord>& b, const std::vector<FpWord>& got, const std::vector<FpWord>& want) {
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] == want[i]) continue;
    if (++bad <= 4)
      ADD_FAILURE() << what << " " << ff.format.name << " " << oracle_op_name(op) << " a=" << hex(a[i].bits)
                    << " b=" << hex(b[i].bits) << ": kernel " << hex(got[i].bits) << ", general " << hex(want[i].bits);
  }
  return bad;
}

// Each element's flags alone, by a one-lane call of `bulk`, against the general routine's: the
// number of elements that differ (the first 4 reported).
int flag_mismatches(const char* name, Bulk bulk, const FastFormat& ff, OracleOp op, const std::vector<FpWord>& a,
                    const std::vector<FpWord>& b, size_t n) {
  int count = 0;
  for (size_t i = 0; i < n; ++i) {
    FpEnv k1, g1;
    FpWord one;
    bulk(ff, k1, &a[i], &b[i], &one, 1);
    library_op(ff.format, g1, op, a[i].bits, b[i].bits, 0);
    if (k1.flags != g1.flags && ++count <= 4)
      ADD_FAILURE() << name << " " << oracle_op_name(op) << " a=" << hex(a[i].bits) << " b=" << hex(b[i].bits)
                    << ": kernel " << flags_to_string(k1.flags) << ", general " << flags_to_string(g1.flags);
  }
  return count;
}

TEST(BinaryFastSimd, EveryWordAgainstEightPartnersAtEveryLevel) {
  for (int want_level = 0; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;  // this CPU lacks the level
    for (const char* name : {"bfloat16", "binary16"}) {
      const FastFormat ff = fast_of(name);
      WordGen gen(ff.format, 31 + static_cast<uint64_t>(want_level));
      const uint64_t sign = ff.sign_word, maxw = max_finite(ff.format, false);
      const size_t n = size_t{1} << 16;
      for (int k = 0; k < 8; ++k) {
        std::vector<FpWord> a(n), b(n);
        for (size_t i = 0; i < n; ++i) {
          a[i].bits = i;
          const uint64_t choices[] = {gen.any(), gen.near(i), i ^ sign, maxw, maxw | sign, 1, 0, gen.tiny()};
          b[i].bits = choices[(i + static_cast<size_t>(k)) % 8];
        }
        for (const auto& [bulk, op] : kOps) {
          FpEnv ke, ge;
          std::vector<FpWord> out(n);
          bulk(ff, ke, a.data(), b.data(), out.data(), n);
          const std::vector<FpWord> want = general(ff, ge, op, a, b);
          EXPECT_EQ(mismatches("bulk", ff, op, a, b, out, want), 0);
          EXPECT_EQ(ke.flags, ge.flags) << name << " " << oracle_op_name(op) << " level " << want_level;
          EXPECT_EQ(flag_mismatches(name, bulk, ff, op, a, b, n), 0) << name << " level " << want_level;
        }
      }
    }
  }
}

// In place on either operand, and every length from 1 to 3 blocks at an odd offset: the same words
// and flags as the general routine over the same elements.
TEST(BinaryFastSimd, InPlaceAndEveryTailLength) {
  for (int want_level = 0; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : {"bfloat16", "binary16", "e4m3fn", "e5m2fnuz", "binary(6,9)"}) {
      const FastFormat ff = fast_of(name);
      WordGen gen(ff.format, 57);
      std::vector<FpWord> a(200), b(200);
      for (size_t i = 0; i < a.size(); ++i) a[i].bits = gen.any(), b[i].bits = gen.near(a[i].bits);
      for (const auto& [bulk, op] : kOps) {
        for (size_t len = 1; len <= 193; ++len) {
          const std::vector<FpWord> xa(a.begin() + 3, a.begin() + 3 + static_cast<long>(len));
          const std::vector<FpWord> xb(b.begin() + 3, b.begin() + 3 + static_cast<long>(len));
          FpEnv ge;
          const std::vector<FpWord> want = general(ff, ge, op, xa, xb);
          std::vector<FpWord> out(len), in_a = xa, in_b = xb;
          FpEnv e1, e2, e3;
          bulk(ff, e1, xa.data(), xb.data(), out.data(), len);
          bulk(ff, e2, in_a.data(), xb.data(), in_a.data(), len);
          bulk(ff, e3, xa.data(), in_b.data(), in_b.data(), len);
          const int bad = mismatches("out", ff, op, xa, xb, out, want) + mismatches("a", ff, op, xa, xb, in_a, want) +
                          mismatches("b", ff, op, xa, xb, in_b, want);
          ASSERT_EQ(bad, 0) << name << " len " << len << " level " << want_level;
          ASSERT_EQ(e1.flags, ge.flags) << len;
          ASSERT_EQ(e2.flags, ge.flags) << len;
          ASSERT_EQ(e3.flags, ge.flags) << len;
        }
      }
    }
  }
}

// A malformed word (bits above the format's 16) anywhere sends its block to the general routine:
// the first error names the first malformed element, and the other elements are unchanged.
TEST(BinaryFastSimd, MalformedWordsGiveTheFirstErrorInIndexOrder) {
  for (int want_level = 1; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : {"bfloat16", "e4m3fn"}) {
    const FastFormat ff = fast_of(name);
    WordGen gen(ff.format, 77);
    std::vector<FpWord> a(300), b(300);
    for (size_t i = 0; i < a.size(); ++i) a[i].bits = gen.any(), b[i].bits = gen.any();
    a[130].bits |= uint64_t{1} << 40;
    b[70].bits = 0x10000;
    for (const auto& [bulk, op] : kOps) {
      FpEnv ke, ge;
      std::vector<FpWord> out(a.size());
      bulk(ff, ke, a.data(), b.data(), out.data(), a.size());
      const std::vector<FpWord> want = general(ff, ge, op, a, b);
      EXPECT_EQ(mismatches("malformed", ff, op, a, b, out, want), 0);
      EXPECT_EQ(ke.flags, ge.flags);
      EXPECT_EQ(ke.error, ge.error);
      EXPECT_NE(ke.error.find("0x10000"), std::string::npos) << ke.error;
    }
    }
  }
}

// The kernels leave other rounding modes, the small formats below AVX-512 and formats with p > 11
// to the float and double lanes.
TEST(BinaryFastSimd, OnlyNearestEvenAndTheFormatsTheyCover) {
  const FastFormat bf = fast_of("bfloat16"), e4 = fast_of("e4m3fn"), wide = fast_of("binary(4,11)");
  EXPECT_TRUE(fastsimd::SmallParams::of(e4).has_value());
  EXPECT_FALSE(fastsimd::SmallParams::of(wide).has_value());
  EXPECT_FALSE(fastsimd::SmallParams::of(bf).has_value());  // its own kernel
  FpWord a{0x3f80}, b{0x3f80}, out{};
  FpEnv up{Rounding::Upward, 0, {}}, nearest;
  EXPECT_FALSE(fastsimd::rne_elementwise(fastsimd::Op::Add, bf, up, &a, &b, &out, 1));
  EXPECT_FALSE(fastsimd::rne_elementwise(fastsimd::Op::Add, e4, up, &a, &b, &out, 1));
  EXPECT_FALSE(fastsimd::rne_elementwise(fastsimd::Op::Add, wide, nearest, &a, &b, &out, 1));
  {
    const Level level(1);
    EXPECT_FALSE(fastsimd::rne_elementwise(fastsimd::Op::Add, e4, nearest, &a, &b, &out, 1));
  }
  const Level level(-1);
  if (level.got > 0) {
    EXPECT_TRUE(fastsimd::rne_elementwise(fastsimd::Op::Add, bf, nearest, &a, &b, &out, 1));
    EXPECT_EQ(out.bits, 0x4000u);
    EXPECT_EQ(nearest.flags, 0u);
  }
  if (level.got == 2) {
    FpWord x{0x38}, y{0x38};  // e4m3fn 1 + 1 = 2
    EXPECT_TRUE(fastsimd::rne_elementwise(fastsimd::Op::Add, e4, nearest, &x, &y, &out, 1));
    EXPECT_EQ(out.bits, 0x40u);
  }
}

// The small formats (fp8, fp6, fp4 and binary(E,F) with p <= 11) at every level: every pair of
// words for the formats of at most 8 bits, every word against 8 partners for binary(6,9) (16 bits);
// words, each element's flags (one-lane calls) and the accumulated flags against the general routine.
TEST(BinaryFastSimd, SmallFormatsEveryPairAtEveryLevel) {
  for (int want_level = 0; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn", "binary(4,3)",
                             "binary(3,1)", "binary(6,4)", "binary(6,9)"}) {
      const FastFormat ff = fast_of(name);
      const int bits = ff.format.storage_bits();
      std::vector<FpWord> a, b;
      if (bits <= 8) {
        const uint64_t words = uint64_t{1} << bits;
        for (uint64_t i = 0; i < words; ++i)
          for (uint64_t j = 0; j < words; ++j) a.push_back({i}), b.push_back({j});
      } else {
        WordGen gen(ff.format, 91);
        const uint64_t maxw = max_finite(ff.format, false);
        for (uint64_t i = 0; i < (uint64_t{1} << bits); ++i) {
          const uint64_t choices[] = {gen.any(), gen.near(i), i ^ ff.sign_word, maxw, maxw | ff.sign_word, 1, 0, gen.tiny()};
          for (const uint64_t c : choices) a.push_back({i}), b.push_back({c});
        }
      }
      for (const auto& [bulk, op] : kOps) {
        FpEnv ke, ge;
        std::vector<FpWord> out(a.size());
        bulk(ff, ke, a.data(), b.data(), out.data(), a.size());
        const std::vector<FpWord> want = general(ff, ge, op, a, b);
        EXPECT_EQ(mismatches("small", ff, op, a, b, out, want), 0) << " level " << want_level;
        EXPECT_EQ(ke.flags, ge.flags) << name << " " << oracle_op_name(op) << " level " << want_level;
        EXPECT_EQ(flag_mismatches(name, bulk, ff, op, a, b, a.size()), 0) << name << " level " << want_level;
      }
    }
  }
}

}  // namespace
}  // namespace denote
