// Integer and bool pointwise ops (issue 6). Truths: hand-computed spec examples, an independent
// unsigned __int128 model for add/sub/mul/neg at width 100, and the machine-word path (<= 64 bits)
// against the GMP path on all 8-bit pairs and sampled pairs up to 64 bits; wide pow's exact
// shortcuts against a plain mpz_powm, and its work bound (issue 13). PyTorch tables:
// typed_golden_test.cc.
#include <gmp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <random>

#include "denote/typed/int_ops.h"

namespace denote::typed {
namespace {

const Op kBinaryOps[] = {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem, Op::MinElem, Op::DivTrunc,
                         Op::DivFloor, Op::Remainder, Op::Pow, Op::ClampMin};

std::string op_word(Op op, const DType& t, uint64_t a, uint64_t b = 0) {
  auto r = apply_words(op, t, Word::of(a), Word::of(b));
  return r.ok() ? to_hex(*r) : "error: " + r.message();
}

TEST(TypedInt, UnsignedSpecExamples) {
  const DType u8 = DType::integer(8, false);
  EXPECT_EQ(op_word(Op::Neg, u8, 1), "0xff");          // neg(1) = 255
  EXPECT_EQ(op_word(Op::MulElem, u8, 255, 2), "0xfe");  // mul(255, 2) = 254
  EXPECT_EQ(op_word(Op::Add, u8, 200, 100), "0x2c");    // 300 mod 256 = 44
  EXPECT_EQ(op_word(Op::Sub, u8, 1, 2), "0xff");
  EXPECT_EQ(op_word(Op::Abs, u8, 200), "0xc8");
  EXPECT_EQ(op_word(Op::MaxElem, u8, 200, 3), "0xc8");  // unsigned order
  EXPECT_EQ(op_word(Op::DivFloor, u8, 200, 3), "0x42");
  EXPECT_EQ(op_word(Op::Remainder, u8, 200, 3), "0x2");
  EXPECT_EQ(op_word(Op::Pow, u8, 3, 5), "0xf3");        // 243
  EXPECT_EQ(op_word(Op::Pow, u8, 2, 8), "0x0");         // 256 wraps
}

TEST(TypedInt, SignedSpecExamples) {
  const DType i8 = DType::integer(8, true);
  EXPECT_EQ(op_word(Op::Neg, i8, 0x80), "0x80");        // -min = min
  EXPECT_EQ(op_word(Op::Abs, i8, 0x80), "0x80");
  EXPECT_EQ(op_word(Op::Abs, i8, 0xf9), "0x7");         // |-7|
  EXPECT_EQ(op_word(Op::DivTrunc, i8, 0xf9, 2), "0xfd");  // -7 / 2 = -3
  EXPECT_EQ(op_word(Op::DivFloor, i8, 0xf9, 2), "0xfc");  // floor(-3.5) = -4
  EXPECT_EQ(op_word(Op::Remainder, i8, 0xf9, 2), "0x1");  // -7 mod 2 = 1 (divisor's sign)
  EXPECT_EQ(op_word(Op::Remainder, i8, 7, 0xfe), "0xff");  // 7 mod -2 = -1
  EXPECT_EQ(op_word(Op::MinElem, i8, 0xff, 1), "0xff");   // min(-1, 1) = -1
  EXPECT_EQ(op_word(Op::ClampMin, i8, 0xf9, 0xfe), "0xfe");  // clamp_min(-7, -2) = -2
  EXPECT_EQ(op_word(Op::ClampMin, i8, 5, 0xfe), "0x5");
  // pow: negative exponents, 0^0.
  EXPECT_EQ(op_word(Op::Pow, i8, 1, 0xfb), "0x1");      // 1^-5
  EXPECT_EQ(op_word(Op::Pow, i8, 0xff, 0xfb), "0xff");  // (-1)^-5 = -1
  EXPECT_EQ(op_word(Op::Pow, i8, 0xff, 0xfe), "0x1");   // (-1)^-2 = 1
  EXPECT_EQ(op_word(Op::Pow, i8, 2, 0xff), "0x0");      // 2^-1 = 0
  EXPECT_EQ(op_word(Op::Pow, i8, 0, 0xff), "0x0");      // 0^-1 = 0
  EXPECT_EQ(op_word(Op::Pow, i8, 0, 0), "0x1");         // 0^0 = 1
  EXPECT_EQ(op_word(Op::Pow, i8, 0xfd, 3), "0xe5");     // (-3)^3 = -27
  EXPECT_EQ(op_word(Op::Pow, i8, 3, 5), "0xf3");        // 243 wraps to -13
}

TEST(TypedInt, MinOverMinusOneWrapsAtEveryWidth) {
  for (int64_t width : {8, 16, 32, 64, 65, 128, 300}) {
    const DType t = DType::integer(width, true);
    std::vector<uint64_t> min_l((width + 63) / 64, 0), minus1(min_l.size(), ~uint64_t{0});
    min_l.back() = uint64_t{1} << ((width - 1) % 64);
    if (width % 64) minus1.back() = (uint64_t{1} << (width % 64)) - 1;
    const Word min = Word::from_limbs(min_l), m1 = Word::from_limbs(minus1);
    EXPECT_EQ(*apply_words(Op::DivTrunc, t, min, m1), min) << width;
    EXPECT_EQ(*apply_words(Op::DivFloor, t, min, m1), min) << width;
    EXPECT_EQ(*apply_words(Op::Remainder, t, min, m1), Word{}) << width;
    EXPECT_EQ(*apply_words(Op::Neg, t, min, {}), min) << width;
    EXPECT_EQ(*apply_words(Op::MulElem, t, min, m1), min) << width;
  }
}

TEST(TypedInt, DivisionByZeroIsAnError) {
  for (int64_t width : {3, 8, 64, 65, 200})
    for (bool s : {false, true})
      for (Op op : {Op::DivTrunc, Op::DivFloor, Op::Remainder}) {
        auto r = apply_words(op, DType::integer(width, s), Word::of(5), Word{});
        ASSERT_FALSE(r.ok());
        EXPECT_NE(r.message().find("division by zero"), std::string::npos) << r.message();
      }
}

TEST(TypedInt, OpsWithoutIntegerMeaningNeedACast) {
  const DType i32 = DType::integer(32, true);
  for (Op op : {Op::Div, Op::Rsqrt, Op::Erf, Op::Gelu, Op::Exp, Op::Log, Op::Sqrt, Op::Tanh}) {
    auto r = apply_words(op, i32, Word::of(4), Word::of(2));
    ASSERT_FALSE(r.ok()) << op_tag(op);
    EXPECT_NE(r.message().find("explicit cast"), std::string::npos) << r.message();
    EXPECT_NE(r.message().find(std::string(op_tag(op))), std::string::npos) << r.message();
  }
}

TEST(TypedBool, LogicAsInPyTorch) {
  const DType b = DType::boolean();
  for (uint64_t x : {0, 1})
    for (uint64_t y : {0, 1}) {
      EXPECT_EQ(op_word(Op::Add, b, x, y), x | y ? "0x1" : "0x0");
      EXPECT_EQ(op_word(Op::MaxElem, b, x, y), x | y ? "0x1" : "0x0");
      EXPECT_EQ(op_word(Op::MulElem, b, x, y), x & y ? "0x1" : "0x0");
      EXPECT_EQ(op_word(Op::MinElem, b, x, y), x & y ? "0x1" : "0x0");
    }
  for (Op op : {Op::Sub, Op::Neg, Op::Abs, Op::DivTrunc, Op::Pow, Op::Remainder, Op::ClampMin}) {
    auto r = apply_words(op, b, Word::of(1), Word::of(1));
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.message().find(std::string(op_tag(op)) + " is not defined on bool"), std::string::npos) << r.message();
  }
  EXPECT_FALSE(apply_words(Op::Add, b, Word::of(2), Word::of(1)).ok());
}

// Width 100 without GMP: unsigned __int128 arithmetic modulo 2^100.
TEST(TypedInt, Width100AgainstInt128Model) {
  using u128 = unsigned __int128;
  const u128 mask = (u128{1} << 100) - 1;
  const DType t = DType::integer(100, true);
  std::mt19937_64 rng(100);
  auto to_word = [](u128 v) { return Word::from_limbs({static_cast<uint64_t>(v), static_cast<uint64_t>(v >> 64)}); };
  for (int k = 0; k < 2000; ++k) {
    const u128 a = ((u128{rng()} << 64) | rng()) & mask, b = ((u128{rng()} << 64) | rng()) & mask;
    EXPECT_EQ(*apply_words(Op::Add, t, to_word(a), to_word(b)), to_word((a + b) & mask));
    EXPECT_EQ(*apply_words(Op::Sub, t, to_word(a), to_word(b)), to_word((a - b) & mask));
    EXPECT_EQ(*apply_words(Op::MulElem, t, to_word(a), to_word(b)), to_word((a * b) & mask));
    EXPECT_EQ(*apply_words(Op::Neg, t, to_word(a), {}), to_word((u128{0} - a) & mask));
    // Signed order: compare a - 2^99 style via flipping the sign bit.
    const u128 sign = u128{1} << 99;
    const bool less = (a ^ sign) < (b ^ sign);
    EXPECT_EQ(*apply_words(Op::MaxElem, t, to_word(a), to_word(b)), to_word(less ? b : a));
  }
}

// The machine-word path against the GMP path: all 8-bit pairs, sampled pairs at other widths.
TEST(TypedInt, MachineWordsAgreeWithGmp) {
  auto compare = [](const DType& t, uint64_t a, uint64_t b) {
    for (Op op : kBinaryOps) {
      uint64_t fast = 0, slow = 0;
      const uint64_t x[1] = {a}, y[1] = {b};
      uint64_t* f = &fast;
      uint64_t* s = &slow;
      const Status sf = apply_elem(op, t, x, y, std::span<uint64_t>(f, 1));
      const Status ss = b == 0 && (op == Op::DivTrunc || op == Op::DivFloor || op == Op::Remainder)
                            ? error_status("by zero")
                            : apply_elem_wide(op, t, x, y, std::span<uint64_t>(s, 1));
      ASSERT_EQ(sf.ok(), ss.ok()) << op_tag(op);
      if (sf.ok()) ASSERT_EQ(fast, slow) << dtype_name(t) << " " << op_tag(op) << " " << a << " " << b;
    }
    for (Op op : {Op::Neg, Op::Abs}) {
      uint64_t fast = 0, slow = 0;
      const uint64_t x[1] = {a};
      ASSERT_TRUE(apply_elem(op, t, x, x, std::span<uint64_t>(&fast, 1)).ok());
      ASSERT_TRUE(apply_elem_wide(op, t, x, x, std::span<uint64_t>(&slow, 1)).ok());
      ASSERT_EQ(fast, slow) << dtype_name(t) << " " << op_tag(op) << " " << a;
    }
  };
  for (bool s : {false, true})
    for (uint64_t a = 0; a < 256; ++a)
      for (uint64_t b = 0; b < 256; ++b) compare(DType::integer(8, s), a, b);
  std::mt19937_64 rng(64);
  for (int64_t width : {1, 2, 3, 7, 13, 16, 31, 32, 33, 63, 64})
    for (bool s : {false, true})
      for (int k = 0; k < 3000; ++k) {
        const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
        uint64_t a = rng() & mask, b = rng() & mask;
        if (k % 4 == 1) b = rng() % 9 & mask;  // small exponents and divisors too
        if (k % 4 == 2) b = (uint64_t{0} - (rng() % 4)) & mask;
        compare(DType::integer(width, s), a, b);
      }
}

TEST(TypedInt, TensorsNameTheElement) {
  const DType i8 = DType::integer(8, true);
  auto a = *load(i8, {3}, std::vector<Word>{Word::of(1), Word::of(2), Word::of(3)});
  auto b = *load(i8, {3}, std::vector<Word>{Word::of(1), Word{}, Word::of(3)});
  auto r = apply_tensors(Op::DivTrunc, a, &b);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("element 1: div_trunc: division by zero"), std::string::npos) << r.message();
  auto c = *load(DType::integer(8, false), {3}, std::vector<Word>{Word::of(1), Word{}, Word::of(3)});
  EXPECT_NE(apply_tensors(Op::Add, a, &c).message().find("dtypes differ"), std::string::npos);
  auto sum = apply_tensors(Op::Add, a, &a);
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(words(*sum), (std::vector<Word>{Word::of(2), Word::of(4), Word::of(6)}));
}

// ---- wide pow: exact shortcuts and the work bound (issue 13)

// A width-bit word from an mpz value (taken modulo 2^width).
std::vector<uint64_t> limbs_of(mpz_srcptr z, int64_t width) {
  mpz_t r;
  mpz_init(r);
  mpz_fdiv_r_2exp(r, z, static_cast<mp_bitcnt_t>(width));
  std::vector<uint64_t> out(static_cast<size_t>((width + 63) / 64), 0);
  size_t n = 0;
  mpz_export(out.data(), &n, -1, sizeof(uint64_t), 0, 0, r);
  mpz_clear(r);
  return out;
}

// The plain definition: x^y mod 2^width by mpz_powm on the full exponent (y >= 0), or PyTorch's
// negative-exponent rule.
std::vector<uint64_t> plain_pow(mpz_srcptr x, mpz_srcptr y, int64_t width) {
  mpz_t r, m;
  mpz_inits(r, m, nullptr);
  if (mpz_sgn(y) < 0) {
    mpz_set_si(r, mpz_cmp_si(x, 1) == 0 ? 1 : mpz_cmp_si(x, -1) == 0 ? (mpz_odd_p(y) ? -1 : 1) : 0);
  } else {
    mpz_setbit(m, static_cast<mp_bitcnt_t>(width));
    mpz_fdiv_r_2exp(r, x, static_cast<mp_bitcnt_t>(width));
    mpz_powm(r, r, y, m);
  }
  auto out = limbs_of(r, width);
  mpz_clears(r, m, nullptr);
  return out;
}

TEST(TypedInt, WidePowShortcutsAgreeWithPlainPowm) {
  std::mt19937_64 rng(13);
  mpz_t x, y;
  mpz_inits(x, y, nullptr);
  for (int64_t width : {65, 66, 67, 96, 127, 128, 129, 200, 333})
    for (bool s : {false, true})
      for (int k = 0; k < 400; ++k) {
        const DType t = DType::integer(width, s);
        // Bases: random, even with a random 2-valuation, +-1, 0, odd near +-1; exponents: random,
        // small, around ceil(width / v), around multiples of 2^(width - 2), negative.
        mpz_set_ui(x, rng());
        mpz_mul_2exp(x, x, static_cast<mp_bitcnt_t>(rng() % static_cast<uint64_t>(width)));
        mpz_add_ui(x, x, rng() % 2);
        if (k % 10 == 0) mpz_set_si(x, static_cast<long>(rng() % 5) - 2);
        if (k % 10 == 1) mpz_set_ui(x, (uint64_t{1} << (rng() % 60)) * (k % 4 == 1 ? 1 : 3));
        if (k % 10 == 2) {  // odd bases near +-1: 2^j +- 1, -(2^j +- 1), 2^(width-1) +- 1
          mpz_set_ui(x, 0);
          mpz_setbit(x, static_cast<mp_bitcnt_t>(k % 20 == 2 ? width - 1 : 1 + rng() % static_cast<uint64_t>(width - 1)));
          if (rng() % 2) mpz_add_ui(x, x, 1);
          else mpz_sub_ui(x, x, 1);
          if (rng() % 2) mpz_neg(x, x);
        }
        const uint64_t v = mpz_sgn(x) == 0 ? 1 : mpz_scan1(x, 0) == 0 ? 1 : mpz_scan1(x, 0);
        switch (k % 5) {
          case 0: mpz_set_ui(y, rng()); mpz_mul_2exp(y, y, static_cast<mp_bitcnt_t>(width - 64)); mpz_add_ui(y, y, rng()); break;
          case 1: mpz_set_ui(y, rng() % 12); break;
          case 2: mpz_set_si(y, static_cast<long>((width + v - 1) / v) + static_cast<long>(rng() % 3) - 1); break;
          case 3: mpz_set_ui(y, rng() % 3); mpz_mul_2exp(y, y, static_cast<mp_bitcnt_t>(width - 2)); mpz_add_ui(y, y, rng() % 4); break;
          default: mpz_set_si(y, -static_cast<long>(rng() % 5) - 1); break;
        }
        // The operands as words of t; the plain result is of the values the words denote.
        const auto a = limbs_of(x, width), b = limbs_of(y, width);
        mpz_t xv, yv;
        mpz_inits(xv, yv, nullptr);
        mpz_import(xv, a.size(), -1, sizeof(uint64_t), 0, 0, a.data());
        mpz_import(yv, b.size(), -1, sizeof(uint64_t), 0, 0, b.data());
        for (mpz_ptr z : {static_cast<mpz_ptr>(xv), static_cast<mpz_ptr>(yv)})
          if (s && mpz_tstbit(z, static_cast<mp_bitcnt_t>(width - 1))) {
            mpz_t p;
            mpz_init(p);
            mpz_setbit(p, static_cast<mp_bitcnt_t>(width));
            mpz_sub(z, z, p);
            mpz_clear(p);
          }
        std::vector<uint64_t> got(a.size(), 0);
        ASSERT_TRUE(apply_elem_wide(Op::Pow, t, a, b, got).ok());
        ASSERT_EQ(got, plain_pow(xv, yv, width)) << dtype_name(t) << " k=" << k;
        EXPECT_LE(pow_work(t, a, b), width * width);
        mpz_clears(xv, yv, nullptr);
      }
  mpz_clears(x, y, nullptr);
}

TEST(TypedInt, WidePowWithAHugeExponentIsImmediateWhereTheResultIsKnown) {
  const int64_t w = 65536;
  const DType u = DType::integer(w, false);
  const std::vector<uint64_t> ones(static_cast<size_t>(w / 64), ~uint64_t{0});
  auto word = [](std::vector<uint64_t> l) { return Word::from_limbs(std::move(l)); };
  std::vector<uint64_t> two_pow(static_cast<size_t>(w / 64), 0);  // 2^(w-2) + 5
  two_pow.back() = uint64_t{1} << 62;
  two_pow[0] = 5;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(*apply_words(Op::Pow, u, Word::of(2), word(ones)), Word{});             // 2^(2^w - 1) = 0
  EXPECT_EQ(*apply_words(Op::Pow, u, Word::of(6), Word::of(w)), Word{});            // 2^w divides 6^w
  EXPECT_EQ(*apply_words(Op::Pow, u, Word::of(3), word(two_pow)), Word::of(243));  // the unit group's exponent
  EXPECT_EQ(*apply_words(Op::Pow, DType::integer(w, true), word(ones), word(ones)), word(ones));  // (-1)^-1
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // no 65536 squarings
  EXPECT_EQ(pow_work(u, Word::of(2).limbs, ones), 0);
  EXPECT_EQ(pow_work(u, std::vector<uint64_t>{3}, ones), (w - 2) * w);  // odd base: w - 2 exponent bits
  EXPECT_EQ(pow_work(u, std::vector<uint64_t>{1}, ones), 0);             // 1^y = 1
  EXPECT_EQ(pow_work(u, ones, ones), w);                                 // (-1)^y: the parity bit
  std::vector<uint64_t> near_one(static_cast<size_t>(w / 64), 0);        // 1 + 2^1000: order 2^(w-1000)
  near_one[0] = 1;
  near_one[1000 / 64] |= uint64_t{1} << (1000 % 64);
  EXPECT_EQ(pow_work(u, near_one, ones), (w - 1000) * w);
  EXPECT_EQ(pow_work(DType::integer(64, false), std::vector<uint64_t>{3}, std::vector<uint64_t>{~uint64_t{0}}), 0);
}

TEST(TypedInt, WidePowWorkIsBoundedPerCall) {
  const int64_t w = 65536;
  const DType u = DType::integer(w, false);
  const std::vector<Word> bases{Word::of(3), Word::of(5)};
  const std::vector<Word> full(2, Word::from_limbs(std::vector<uint64_t>(static_cast<size_t>(w / 64), ~uint64_t{0})));
  auto a = *load(u, {2}, bases);
  auto b = *load(u, {2}, full);
  // Two odd bases with full exponents: 2 x 65534 x 65536 bit-squarings > 2^32, refused before any.
  const auto start = std::chrono::steady_clock::now();
  auto r = apply_tensors(Op::Pow, a, &b);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "pow: the exponents up to element 1 need 8589672448 bit-squarings of uint(65536) (exponent "
                         "bits x width), above the limit of 4294967296 per pow node");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Even bases with the same exponents cost nothing; a smaller bound refuses small work too.
  auto even = *load(u, {2}, std::vector<Word>{Word::of(2), Word::of(10)});
  auto z = apply_tensors(Op::Pow, even, &b);
  ASSERT_TRUE(z.ok()) << z.message();
  EXPECT_EQ(words(*z), (std::vector<Word>{Word{}, Word{}}));
  const DType u128 = DType::integer(128, false);
  auto x = *load(u128, {2}, std::vector<Word>{Word::of(3), Word::of(3)});
  auto e = *load(u128, {2}, std::vector<Word>{Word::of(5), Word::of(4)});
  EXPECT_TRUE(apply_tensors(Op::Pow, x, &e, 3 * 128 + 3 * 128).ok());
  EXPECT_NE(apply_tensors(Op::Pow, x, &e, 3 * 128 + 3 * 128 - 1).message().find("up to element 1 need 768"),
            std::string::npos);
  EXPECT_EQ(words(*apply_tensors(Op::Pow, x, &e)), (std::vector<Word>{Word::of(243), Word::of(81)}));
}

}  // namespace
}  // namespace denote::typed
