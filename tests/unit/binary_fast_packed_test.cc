// The packed 16-bit entry points (fast_add_n16, fast_sub_n16, fast_mul_n16: uint16_t words) against
// the general routines of binary_ops.h. bfloat16/binary16 to nearest-even run their own kernel
// (rne_elementwise16, AVX2 + F16C) at level 1 and up, the widened 64-bit path at level 0; every word
// (all 65,536) against 8 partners. The other rounding modes and the small formats go through the
// widened path: bfloat16/binary16 in all five modes on a sample, e4m3fn and e2m1fn every pair. Words,
// each element's flags (one-lane calls) and the accumulated flags must agree; also in place, every
// tail length, malformed words (bits above an 8-bit format's width) with the first error, and a
// format too wide for 16-bit words.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_simd.h"
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

using Packed = bool (*)(const FastFormat&, FpEnv&, const uint16_t*, const uint16_t*, uint16_t*, size_t);
const std::pair<Packed, OracleOp> kOps[] = {
    {&fast_add_n16, OracleOp::Add}, {&fast_sub_n16, OracleOp::Sub}, {&fast_mul_n16, OracleOp::Mul}};

using Level = testing::SimdLevel;

FastFormat fast_of(const char* name) { return *FastFormat::of(format_named(name)); }

// Runs `op` over a, b (packed) and the general routine element by element; returns the number of
// words that differ (the first 4 reported) and checks the accumulated flags and first error.
int compare(const char* what, Packed packed, OracleOp op, const FastFormat& ff, Rounding mode,
            const std::vector<uint16_t>& a, const std::vector<uint16_t>& b) {
  FpEnv ke{mode, 0, {}}, ge{mode, 0, {}};
  std::vector<uint16_t> out(a.size());
  EXPECT_TRUE(packed(ff, ke, a.data(), b.data(), out.data(), a.size()));
  int bad = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const uint64_t want = library_op(ff.format, ge, op, a[i], b[i], 0);
    if (out[i] == want) continue;
    if (++bad <= 4)
      ADD_FAILURE() << what << " " << ff.format.name << " " << oracle_op_name(op) << " a=" << hex(a[i])
                    << " b=" << hex(b[i]) << ": packed " << hex(out[i]) << ", general " << hex(want);
  }
  EXPECT_EQ(ke.flags, ge.flags) << what << " " << ff.format.name << " " << oracle_op_name(op);
  EXPECT_EQ(ke.error, ge.error) << what << " " << ff.format.name << " " << oracle_op_name(op);
  return bad;
}

// Each element's flags alone (one-lane calls) against the general routine's.
int flag_mismatches(Packed packed, OracleOp op, const FastFormat& ff, Rounding mode, const std::vector<uint16_t>& a,
                    const std::vector<uint16_t>& b) {
  int count = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    FpEnv k1{mode, 0, {}}, g1{mode, 0, {}};
    uint16_t one = 0;
    packed(ff, k1, &a[i], &b[i], &one, 1);
    library_op(ff.format, g1, op, a[i], b[i], 0);
    if (k1.flags != g1.flags && ++count <= 4)
      ADD_FAILURE() << ff.format.name << " " << oracle_op_name(op) << " a=" << hex(a[i]) << " b=" << hex(b[i])
                    << ": packed " << flags_to_string(k1.flags) << ", general " << flags_to_string(g1.flags);
  }
  return count;
}

// Every word against 8 partners (random, near it, its negation, the extremes, tiny values, zeros).
void every_word(const FastFormat& ff, uint64_t seed, int k, std::vector<uint16_t>& a, std::vector<uint16_t>& b) {
  WordGen gen(ff.format, seed);
  const uint64_t sign = ff.sign_word, maxw = max_finite(ff.format, false);
  const size_t n = size_t{1} << 16;
  a.resize(n);
  b.resize(n);
  for (size_t i = 0; i < n; ++i) {
    a[i] = static_cast<uint16_t>(i);
    const uint64_t choices[] = {gen.any(), gen.near(i), i ^ sign, maxw, maxw | sign, 1, 0, gen.tiny()};
    b[i] = static_cast<uint16_t>(choices[(i + static_cast<size_t>(k)) % 8]);
  }
}

TEST(BinaryFastPacked, EveryWordToNearestAtEveryLevel) {
  for (int want_level = 0; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : {"bfloat16", "binary16"}) {
      const FastFormat ff = fast_of(name);
      for (int k = 0; k < 8; ++k) {
        std::vector<uint16_t> a, b;
        every_word(ff, 41 + static_cast<uint64_t>(want_level), k, a, b);
        for (const auto& [packed, op] : kOps) {
          EXPECT_EQ(compare("every word", packed, op, ff, Rounding::NearestEven, a, b), 0) << "level " << want_level;
          if (k == 0) {
            EXPECT_EQ(flag_mismatches(packed, op, ff, Rounding::NearestEven, a, b), 0);
          }
        }
      }
    }
  }
}

TEST(BinaryFastPacked, OtherModesAndSmallFormatsThroughTheWidenedPath) {
  const Rounding modes[] = {Rounding::NearestEven, Rounding::TowardZero, Rounding::Upward, Rounding::Downward,
                            Rounding::NearestAway};
  for (const char* name : {"bfloat16", "binary16"}) {
    const FastFormat ff = fast_of(name);
    std::vector<uint16_t> a, b;
    every_word(ff, 5, 3, a, b);
    a.resize(20000);
    b.resize(20000);
    for (Rounding mode : modes)
      for (const auto& [packed, op] : kOps) {
        EXPECT_EQ(compare("mode", packed, op, ff, mode, a, b), 0) << name;
        EXPECT_EQ(flag_mismatches(packed, op, ff, mode, std::vector<uint16_t>(a.begin(), a.begin() + 3000),
                                  std::vector<uint16_t>(b.begin(), b.begin() + 3000)),
                  0);
      }
  }
  for (const char* name : {"e4m3fn", "e2m1fn"}) {
    const FastFormat ff = fast_of(name);
    const uint16_t words = static_cast<uint16_t>(1u << ff.format.storage_bits());
    std::vector<uint16_t> a, b;
    for (uint16_t i = 0; i < words; ++i)
      for (uint16_t j = 0; j < words; ++j) a.push_back(i), b.push_back(j);
    for (Rounding mode : modes)
      for (const auto& [packed, op] : kOps) EXPECT_EQ(compare("pairs", packed, op, ff, mode, a, b), 0) << name;
  }
}

// In place on either operand and every length up to 3 blocks at an odd offset, at every level.
TEST(BinaryFastPacked, InPlaceAndEveryTailLength) {
  for (int want_level = 0; want_level <= 2; ++want_level) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : {"bfloat16", "binary16", "e4m3fn"}) {
      const FastFormat ff = fast_of(name);
      WordGen gen(ff.format, 59);
      std::vector<uint16_t> a(200), b(200);
      for (size_t i = 0; i < a.size(); ++i)
        a[i] = static_cast<uint16_t>(gen.any()), b[i] = static_cast<uint16_t>(gen.near(a[i]));
      for (const auto& [packed, op] : kOps)
        for (size_t len = 1; len <= 193; ++len) {
          const std::vector<uint16_t> xa(a.begin() + 3, a.begin() + 3 + static_cast<long>(len));
          const std::vector<uint16_t> xb(b.begin() + 3, b.begin() + 3 + static_cast<long>(len));
          std::vector<uint16_t> out(len), in_a = xa, in_b = xb;
          FpEnv e1, e2, e3;
          packed(ff, e1, xa.data(), xb.data(), out.data(), len);
          packed(ff, e2, in_a.data(), xb.data(), in_a.data(), len);
          packed(ff, e3, xa.data(), in_b.data(), in_b.data(), len);
          ASSERT_EQ(in_a, out) << name << " len " << len;
          ASSERT_EQ(in_b, out) << name << " len " << len;
          ASSERT_EQ(e1.flags, e2.flags);
          ASSERT_EQ(e1.flags, e3.flags);
          ASSERT_EQ(compare("tail", packed, op, ff, Rounding::NearestEven, xa, xb), 0) << name << " len " << len;
        }
    }
  }
}

// An 8-bit format's word with bits above its width is malformed: the first error in index order,
// as the general routine gives. A format wider than 16 bits is refused with nothing written.
TEST(BinaryFastPacked, MalformedWordsAndFormatsTooWide) {
  const FastFormat e4 = fast_of("e4m3fn");
  WordGen gen(e4.format, 83);
  std::vector<uint16_t> a(300), b(300);
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(gen.any()), b[i] = static_cast<uint16_t>(gen.any());
  a[150] = 0x1ff;
  b[90] = 0x100;
  for (const auto& [packed, op] : kOps) EXPECT_EQ(compare("malformed", packed, op, e4, Rounding::NearestEven, a, b), 0);
  FpEnv env;
  std::vector<uint16_t> out(4, 0xabcd);
  const FastFormat f32 = fast_of("binary32");
  for (const auto& [packed, op] : kOps) {
    EXPECT_FALSE(packed(f32, env, a.data(), b.data(), out.data(), 4)) << oracle_op_name(op);
    EXPECT_EQ(out, std::vector<uint16_t>(4, 0xabcd));
  }
  EXPECT_FALSE(fastsimd::rne_elementwise16(fastsimd::Op::Add, e4, env, a.data(), b.data(), out.data(), 4));
}

}  // namespace
}  // namespace denote
