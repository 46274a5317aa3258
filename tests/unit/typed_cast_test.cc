// Casts (issue 6). Truths: MPFR (mpfr_set_z / mpfr_rint round the exact value once, in every mode)
// and hand-computed examples; PyTorch tables in typed_golden_test.cc.
#include <gmp.h>
#include <mpfr.h>

#include <gtest/gtest.h>

#include <bit>
#include <random>

#include "denote/typed/cast.h"

namespace denote::typed {
namespace {

mpfr_rnd_t mpfr_mode(Rounding r) {
  switch (r) {
    case Rounding::NearestEven: return MPFR_RNDN;
    case Rounding::TowardZero: return MPFR_RNDZ;
    case Rounding::Upward: return MPFR_RNDU;
    case Rounding::Downward: return MPFR_RNDD;
    case Rounding::NearestAway: return MPFR_RNDNA;
  }
  return MPFR_RNDN;
}

const Rounding kModes[] = {Rounding::NearestEven, Rounding::TowardZero, Rounding::Upward, Rounding::Downward};

TEST(TypedCast, HandExamples) {
  const DType i32 = DType::integer(32, true), bf16 = *parse_dtype("bfloat16"), h = *parse_dtype("binary16");
  auto r = cast_word(i32, bf16, Rounding::NearestEven, Word::of(257));  // 257 -> 256, inexact
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->word, Word::of(0x4380));
  EXPECT_EQ(r->flags, uint32_t{kFpInexact});
  r = cast_word(i32, bf16, Rounding::Upward, Word::of(257));  // 258
  EXPECT_EQ(r->word, Word::of(0x4381));
  r = cast_word(i32, h, Rounding::NearestEven, Word::of(70000));  // above 65504: inf
  EXPECT_EQ(r->word, Word::of(0x7c00));
  EXPECT_EQ(r->flags, uint32_t{kFpOverflow | kFpInexact});
  r = cast_word(i32, h, Rounding::NearestEven, Word::of(0xfffffc18));  // -1000 exact
  EXPECT_EQ(r->word, Word::of(0xe3d0));
  EXPECT_EQ(r->flags, 0u);
  r = cast_word(DType::boolean(), h, Rounding::NearestEven, Word::of(1));
  EXPECT_EQ(r->word, Word::of(0x3c00));
  // binary -> int: 2.5 in every mode, -0.5 toward zero is 0, 255 fits uint8, 256 does not.
  const DType f32 = *parse_dtype("binary32"), u8 = DType::integer(8, false), i8 = DType::integer(8, true);
  EXPECT_EQ(cast_word(f32, i8, Rounding::NearestEven, Word::of(0x40200000))->word, Word::of(2));
  EXPECT_EQ(cast_word(f32, i8, Rounding::Upward, Word::of(0x40200000))->word, Word::of(3));
  EXPECT_EQ(cast_word(f32, i8, Rounding::Downward, Word::of(0xc0200000))->word, Word::of(0xfd));  // -3
  EXPECT_EQ(cast_word(f32, i8, Rounding::NearestEven, Word::of(0x40200000))->flags, uint32_t{kFpInexact});
  EXPECT_EQ(cast_word(f32, u8, Rounding::TowardZero, Word::of(0xbf000000))->word, Word{});
  EXPECT_EQ(cast_word(f32, u8, Rounding::NearestEven, Word::of(0x437f0000))->word, Word::of(255));
  EXPECT_NE(cast_word(f32, u8, Rounding::NearestEven, Word::of(0x43800000)).message().find("out of the range of uint8"),
            std::string::npos);
  EXPECT_NE(cast_word(f32, i8, Rounding::NearestEven, Word::of(0x7fc00000)).message().find("nan"), std::string::npos);
  EXPECT_NE(cast_word(f32, i8, Rounding::NearestEven, Word::of(0xff800000)).message().find("infinity"),
            std::string::npos);
  // 2^100 in binary64 fits int(128) and uint(101), not int(101).
  const Word two100 = Word::of(0x4630000000000000);
  EXPECT_EQ(cast_word(*parse_dtype("binary64"), DType::integer(128, true), Rounding::NearestEven, two100)->word,
            (Word{{0, uint64_t{1} << 36}}));
  EXPECT_TRUE(cast_word(*parse_dtype("binary64"), DType::integer(101, false), Rounding::NearestEven, two100).ok());
  EXPECT_FALSE(cast_word(*parse_dtype("binary64"), DType::integer(101, true), Rounding::NearestEven, two100).ok());
}

TEST(TypedCast, BinaryToBinaryKeepsFormatSemantics) {
  const DType f32 = *parse_dtype("binary32");
  auto r = cast_word(f32, f32, Rounding::NearestEven, Word::of(0x7f800001));  // sNaN: quieted, invalid
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->word, Word::of(0x7fc00001));
  EXPECT_EQ(r->flags, uint32_t{kFpInvalid});
  r = cast_word(f32, *parse_dtype("bfloat16"), Rounding::Upward, Word::of(0x3f800001));
  EXPECT_EQ(r->word, Word::of(0x3f81));
}

TEST(TypedCast, NonBinaryConversionsNeedIdenticalTypes) {
  const DType i8 = DType::integer(8, true), i16 = DType::integer(16, true), u8 = DType::integer(8, false);
  EXPECT_EQ(cast_word(i8, i8, Rounding::NearestEven, Word::of(0x80))->word, Word::of(0x80));
  EXPECT_EQ(cast_word(DType::boolean(), DType::boolean(), Rounding::NearestEven, Word::of(1))->word, Word::of(1));
  EXPECT_NE(cast_word(i8, i16, Rounding::NearestEven, Word::of(1)).message().find("identical types"), std::string::npos);
  EXPECT_FALSE(cast_word(i8, u8, Rounding::NearestEven, Word::of(1)).ok());
  EXPECT_FALSE(cast_word(i8, DType::boolean(), Rounding::NearestEven, Word::of(1)).ok());
  EXPECT_FALSE(cast_word(DType::boolean(), i8, Rounding::NearestEven, Word::of(1)).ok());
  EXPECT_FALSE(cast_word(*parse_dtype("binary32"), DType::boolean(), Rounding::NearestEven, Word{}).ok());
  EXPECT_FALSE(cast_word(i8, i8, Rounding::NearestEven, Word::of(0x100)).ok());  // the word is checked
}

// int(W) -> binary32 / binary64 in four modes against MPFR (one rounding of the exact value).
TEST(TypedCast, IntToBinaryMatchesMpfr) {
  std::mt19937_64 rng(32);
  const DType f32 = *parse_dtype("binary32"), f64 = *parse_dtype("binary64");
  mpfr_t x;
  mpz_t z;
  mpz_init(z);
  for (int64_t width : {8, 33, 64, 65, 128, 300})
    for (bool s : {false, true})
      for (int k = 0; k < 300; ++k) {
        std::vector<uint64_t> limbs((width + 63) / 64);
        for (auto& l : limbs) l = rng() >> (rng() % 64);
        if (width % 64) limbs.back() &= (uint64_t{1} << (width % 64)) - 1;
        const Word w = Word::from_limbs(limbs);
        const DType t = DType::integer(width, s);
        mpz_import(z, limbs.size(), -1, 8, 0, 0, limbs.data());
        if (s && mpz_tstbit(z, width - 1)) {
          mpz_t p;
          mpz_init(p);
          mpz_setbit(p, width);
          mpz_sub(z, z, p);
          mpz_clear(p);
        }
        for (Rounding m : kModes) {
          for (const DType* target : {&f32, &f64}) {
            const bool single = target == &f32;
            if (single && width > 64) continue;  // 2^300 overflows binary32; covered by binary64
            mpfr_init2(x, single ? 24 : 53);
            const int ternary = mpfr_set_z(x, z, mpfr_mode(m));
            auto r = cast_word(t, *target, m, w);
            ASSERT_TRUE(r.ok()) << r.message();
            const uint64_t want = single ? std::bit_cast<uint32_t>(mpfr_get_flt(x, MPFR_RNDN))
                                         : std::bit_cast<uint64_t>(mpfr_get_d(x, MPFR_RNDN));
            EXPECT_EQ(r->word, Word::of(want)) << dtype_name(t) << " " << to_hex(w);
            EXPECT_EQ((r->flags & kFpInexact) != 0, ternary != 0);
            mpfr_clear(x);
          }
        }
      }
  mpz_clear(z);
}

// binary64 -> int64 / int(80) in four modes against mpfr_rint; out-of-range values are errors.
TEST(TypedCast, BinaryToIntMatchesMpfrRint) {
  std::mt19937_64 rng(53);
  const DType f64 = *parse_dtype("binary64");
  mpfr_t x, y;
  mpfr_init2(x, 53);
  mpfr_init2(y, 200);
  mpz_t z;
  mpz_init(z);
  for (int k = 0; k < 3000; ++k) {
    const double v = std::ldexp(static_cast<double>(static_cast<int64_t>(rng())) / 0x1p63, static_cast<int>(rng() % 90));
    for (const DType& t : {DType::integer(64, true), DType::integer(80, true), DType::integer(16, false)})
      for (Rounding m : kModes) {
        mpfr_set_d(x, v, MPFR_RNDN);
        const int ternary = mpfr_rint(y, x, mpfr_mode(m));
        mpfr_get_z(z, y, MPFR_RNDN);
        mpz_t lim;
        mpz_init(lim);
        mpz_setbit(lim, t.is_signed ? t.width - 1 : t.width);
        const bool fits = t.is_signed ? (mpz_cmpabs(z, lim) < 0 || (mpz_sgn(z) < 0 && mpz_cmpabs(z, lim) == 0))
                                      : (mpz_sgn(z) >= 0 && mpz_cmp(z, lim) < 0);
        if (mpz_sgn(z) < 0) mpz_add(z, z, lim), mpz_add(z, z, lim);  // two's complement (signed only)
        mpz_clear(lim);
        auto r = cast_word(f64, t, m, Word::of(std::bit_cast<uint64_t>(v)));
        ASSERT_EQ(r.ok(), fits) << v << " " << dtype_name(t) << " " << (r.ok() ? "" : r.message());
        if (!fits) continue;
        std::vector<uint64_t> limbs(2, 0);
        size_t n = 0;
        mpz_export(limbs.data(), &n, -1, 8, 0, 0, z);
        EXPECT_EQ(r->word, Word::from_limbs(limbs)) << v << " " << dtype_name(t);
        EXPECT_EQ(r->flags != 0, ternary != 0) << v;
      }
  }
  mpz_clear(z);
  mpfr_clear(x);
  mpfr_clear(y);
}

}  // namespace
}  // namespace denote::typed
