// The binary32-lane folds of bfloat16/binary16 in nearest-even (fastsimd::rne_fold: AVX-512 at kernel
// level 2, AVX2 + F16C at level 1), through
// fast_matmul and fast_linear, against plain sequences of the general routines (fp_mul, fp_add):
// words and flags must be identical. The operands are built to reach every case the kernel argues
// about: products and sums across the whole exponent range (binary32-inexact sums of far-apart
// values), binary16 products that are tiny (underflow) or tiny only before rounding, exact
// cancellations and signed zeros, overflowing products and sums (the tile handed back to the double
// lanes), and bfloat16 operands below 2^-62 (the whole fold refused). Shapes cover one row and
// tiles, every vector count and column tails, at every level the CPU has (level 0: the double lanes).
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
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

// Short: significands of at most 3 bits over a wide exponent range, so that every product is exact
// and a sum's rounding (in binary32 when its operands are far apart) is the only inexact step.
enum class Mix { Moderate, Spread, Tiny, Overflow, Cancel, Short };

// A value of the format from a random sign, significand and an exponent in [lo, hi].
double value(std::mt19937_64& rng, int lo, int hi) {
  std::uniform_real_distribution<double> sig(1.0, 2.0);
  std::uniform_int_distribution<int> e(lo, hi);
  const double v = std::ldexp(sig(rng), e(rng));
  return rng() % 2 ? -v : v;
}

std::vector<FpWord> operands(const FastFormat& ff, size_t n, Mix mix, std::mt19937_64& rng) {
  const bool bf16 = ff.kind == FastFormat::Kind::Bfloat16;
  std::vector<FpWord> out(n);
  FpEnv env;
  for (size_t i = 0; i < n; ++i) {
    double v = 0;
    switch (mix) {
      case Mix::Moderate:
        v = value(rng, -3, 1);
        break;
      case Mix::Spread:
        v = bf16 ? value(rng, -60, 60) : value(rng, -24, 7);
        break;
      case Mix::Tiny:
        v = bf16 ? value(rng, -62, -58) : value(rng, -14, -4);
        break;
      case Mix::Overflow:
        v = bf16 ? value(rng, 40, 70) : value(rng, 4, 9);
        break;
      case Mix::Cancel:
        v = value(rng, -2, 0);
        break;
      case Mix::Short:
        v = std::ldexp(1.0 + static_cast<double>(rng() % 4) / 4,
                       bf16 ? static_cast<int>(rng() % 81) - 40 : static_cast<int>(rng() % 22) - 12);
        if (rng() % 2) v = -v;
        break;
    }
    if (rng() % 11 == 0) v = rng() % 2 ? 0.0 : -0.0;
    out[i].bits = fp_from_double(ff.format, env, v, true);
  }
  if (mix == Mix::Cancel)  // equal magnitudes of opposite signs next to each other: exact zeros
    for (size_t i = 1; i < n; i += 2) out[i].bits = out[i - 1].bits ^ ff.sign_word;
  return out;
}

using testing::ref_matmul;

using Level = testing::SimdLevel;

// Runs body at kernel levels 2 (AVX-512) and 1 (AVX2 + F16C), those the CPU has.
template <class Body>
void at_kernel_levels(Body&& body) {
  for (int want : {2, 1}) {
    const Level level(want);
    if (level.got == want) body();
  }
}

// fast_matmul of a (m x k) and b (k x n) against the sequential fold in nearest-even: returns the
// number of differing words (the first 3 reported, with `what`); flags and errors must be equal.
int compare_words(const FastFormat& ff, const std::vector<FpWord>& a, const std::vector<FpWord>& b, int64_t m,
                  int64_t k, int64_t n, const std::string& what) {
  FpEnv fe{Rounding::NearestEven, 0, {}}, re{Rounding::NearestEven, 0, {}};
  std::vector<FpWord> got(static_cast<size_t>(m * n));
  fast_matmul(ff, fe, a.data(), b.data(), got.data(), m, k, n);
  const auto want = ref_matmul(ff.format, re, a, b, m, k, n);
  const std::string where = fmt::format("{} {} m={} k={} n={}", ff.format.name, what, m, k, n);
  int bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i].bits != want[i].bits && ++bad <= 3)
      ADD_FAILURE() << where << " output " << i << ": fast " << hex(got[i].bits) << ", sequential "
                    << hex(want[i].bits);
  EXPECT_EQ(fe.flags, re.flags) << where << ": " << flags_to_string(fe.flags) << " vs " << flags_to_string(re.flags);
  EXPECT_EQ(fe.error, re.error) << where;
  return bad;
}

int compare_matmul(const FastFormat& ff, Mix mix, int64_t m, int64_t k, int64_t n, std::mt19937_64& rng) {
  const auto a = operands(ff, static_cast<size_t>(m * k), mix, rng);
  const auto b = operands(ff, static_cast<size_t>(k * n), mix == Mix::Cancel ? Mix::Moderate : mix, rng);
  return compare_words(ff, a, b, m, k, n, fmt::format("mix {}", static_cast<int>(mix)));
}

TEST(BinaryFastSimdFold, EveryShapeAndMixEqualsTheSequentialFold) {
  for (int want_level : {2, 1, 0}) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    std::mt19937_64 rng(2026 + static_cast<uint64_t>(want_level));
    for (const char* name : {"bfloat16", "binary16"}) {
      const FastFormat ff = *FastFormat::of(format_named(name));
      for (Mix mix : {Mix::Moderate, Mix::Spread, Mix::Tiny, Mix::Overflow, Mix::Cancel, Mix::Short})
        for (int64_t m : {1, 3, 4, 5, 9})
          for (int64_t n : {1, 16, 17, 33, 64, 70})
            for (int64_t k : {0, 1, 6, 41})
              EXPECT_EQ(compare_matmul(ff, mix, m, k, n, rng), 0) << "level " << level.got;
    }
  }
}

// One output a call, so that each output's flags are compared alone (a flag raised by one output
// cannot hide another's missing one).
TEST(BinaryFastSimdFold, EachOutputsFlagsAlone) {
  std::mt19937_64 rng(77);
  at_kernel_levels([&] {
    for (const char* name : {"bfloat16", "binary16"}) {
      const FastFormat ff = *FastFormat::of(format_named(name));
      for (Mix mix : {Mix::Moderate, Mix::Spread, Mix::Tiny, Mix::Overflow, Mix::Cancel, Mix::Short})
        for (int t = 0; t < 400; ++t) EXPECT_EQ(compare_matmul(ff, mix, 1, 1 + t % 7, 1, rng), 0);
    }
  });
}

// The one-step fold a * b (acc = +0 + a * b) against the general routines; false (and a failure
// reported while `mismatches` is small) when the words or the flags differ.
bool one_step_agrees(const FastFormat& ff, uint64_t a, uint64_t b, int& mismatches) {
  const FpWord x{a}, y{b};
  FpWord got{};
  FpEnv fe, re;
  fast_matmul(ff, fe, &x, &y, &got, 1, 1, 1);
  const uint64_t want = fp_add(ff.format, re, zero_word(ff.format, false), fp_mul(ff.format, re, a, b));
  if (got.bits == want && fe.flags == re.flags) return true;
  if (++mismatches <= 4)
    ADD_FAILURE() << ff.format.name << " " << hex(a) << " * " << hex(b) << ": fast " << hex(got.bits) << " "
                  << flags_to_string(fe.flags) << ", sequential " << hex(want) << " " << flags_to_string(re.flags);
  return false;
}

// binary16 products near 2^-14, one step each: every positive a in [0.5, 1) against b in
// [2^-14, 2^-14 * (1 + 63 * 2^-10)]. Tininess is after rounding (at 11 bits, unbounded exponent),
// so a product in [2^-14 - 2^-26, 2^-14) that rounds inexactly to 2^-14 on the subnormal grid
// raises inexact without underflow (e.g. (1 - 2^-10) * 2^-14 * (1 + 2^-10) = 2^-14 - 2^-34), while
// 2^-14 - 2^-25 (tiny at 11 bits, a tie on the grid) raises both.
TEST(BinaryFastSimdFold, Binary16UnderflowAtTheEdgeOfTheNormalRange) {
  const FastFormat ff = *FastFormat::of(format_named("binary16"));
  at_kernel_levels([&] {
    int mismatches = 0;
    for (uint64_t a = 0x3800; a < 0x3c00; ++a)
      for (uint64_t b = 0x0400; b < 0x0440; ++b) one_step_agrees(ff, a, b, mismatches);
    EXPECT_EQ(mismatches, 0) << "level " << fastsimd::simd_level();
  });
}

// The small formats (fp8, fp6, fp4: the AVX-512 tile of binary_fast_simd_fold_small.cc): uniformly
// random finite words (tiny, subnormal and overflowing products and sums all occur), every shape
// class, each output's flags alone, and every pair of words as a one-step fold.
const char* const kSmallFormats[] = {"e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e3m2fn", "e2m3fn", "e2m1fn"};

std::vector<FpWord> finite_words(const BinaryFormat& f, size_t n, std::mt19937_64& rng) {
  std::vector<FpWord> out(n);
  for (auto& w : out) {
    do {
      w.bits = rng() & f.word_mask();
    } while (!std::isfinite(word_to_double(f, w.bits)));
  }
  return out;
}

int compare_small(const FastFormat& ff, int64_t m, int64_t k, int64_t n, std::mt19937_64& rng) {
  const auto a = finite_words(ff.format, static_cast<size_t>(m * k), rng);
  const auto b = finite_words(ff.format, static_cast<size_t>(k * n), rng);
  return compare_words(ff, a, b, m, k, n, "finite words");
}

TEST(BinaryFastSimdFold, SmallFormatsEqualTheSequentialFold) {
  std::mt19937_64 rng(8);
  for (int want_level : {2, 0}) {
    const Level level(want_level);
    if (level.got != want_level) continue;
    for (const char* name : kSmallFormats) {
      const FastFormat ff = *FastFormat::of(format_named(name));
      for (int64_t m : {1, 4, 5})
        for (int64_t n : {1, 16, 33, 70})
          for (int64_t k : {0, 1, 5, 23}) EXPECT_EQ(compare_small(ff, m, k, n, rng), 0) << "level " << level.got;
      for (int t = 0; t < 300; ++t) EXPECT_EQ(compare_small(ff, 1, 1 + t % 6, 1, rng), 0);
    }
  }
}

TEST(BinaryFastSimdFold, SmallFormatsEveryPairAsOneStep) {
  for (const char* name : kSmallFormats) {
    const FastFormat ff = *FastFormat::of(format_named(name));
    const uint64_t words = uint64_t{1} << ff.format.storage_bits();
    int mismatches = 0;
    for (uint64_t a = 0; a < words; ++a)
      for (uint64_t b = 0; b < words; ++b) {
        if (std::isfinite(word_to_double(ff.format, a)) && std::isfinite(word_to_double(ff.format, b)))
          one_step_agrees(ff, a, b, mismatches);
      }
    EXPECT_EQ(mismatches, 0) << name;
  }
}

// A bfloat16 operand below 2^-62 refuses the whole fold (the double lanes take it): same words and
// flags, including the underflow of the tiny products.
TEST(BinaryFastSimdFold, TinyBfloat16OperandsTakeTheDoubleLanes) {
  const FastFormat ff = *FastFormat::of(format_named("bfloat16"));
  std::mt19937_64 rng(3);
  const int64_t m = 4, k = 9, n = 20;
  auto a = operands(ff, m * k, Mix::Moderate, rng);
  auto b = operands(ff, k * n, Mix::Moderate, rng);
  std::vector<double> ad(a.size()), bd(b.size());
  auto decode = [&] {
    for (size_t i = 0; i < a.size(); ++i) ad[i] = word_to_double(ff.format, a[i].bits);
    for (size_t i = 0; i < b.size(); ++i) bd[i] = word_to_double(ff.format, b[i].bits);
  };
  decode();
  std::vector<FpWord> out(static_cast<size_t>(m * n));
  uint32_t flags = 0;
  const bool kernel = fastsimd::simd_level() >= 1 && fastsimd::mxcsr_is_default();
  EXPECT_EQ(fastsimd::rne_fold(ff, Rounding::NearestEven, ad.data(), bd.data(), m, k, n, out.data(), flags,
                               [](int64_t, int64_t) {}),
            kernel);
  FpEnv env;
  a[5].bits = fp_from_double(ff.format, env, 0x1p-70, true);           // row 0, step 5
  b[5 * n + 3].bits = fp_from_double(ff.format, env, -0x1p-75, true);  // its product: below the least subnormal
  b[2].bits = fp_from_double(ff.format, env, 0x1p-100, true);
  decode();
  EXPECT_FALSE(fastsimd::rne_fold(ff, Rounding::NearestEven, ad.data(), bd.data(), m, k, n, out.data(), flags,
                                  [](int64_t, int64_t) {}));
  FpEnv fe, re;
  std::vector<FpWord> got(out.size());
  fast_matmul(ff, fe, a.data(), b.data(), got.data(), m, k, n);
  EXPECT_EQ(got, ref_matmul(ff.format, re, a, b, m, k, n));
  EXPECT_EQ(fe.flags, re.flags);
  EXPECT_NE(fe.flags & kFpUnderflow, 0u);
}

// fast_linear (weights transposed, mul(w, x), then the bias) over the kernel, rows split as the
// evaluator splits them.
TEST(BinaryFastSimdFold, LinearWithBiasEqualsTheSequentialFold) {
  std::mt19937_64 rng(11);
  at_kernel_levels([&] {
    for (const char* name : {"bfloat16", "binary16"}) {
      const FastFormat ff = *FastFormat::of(format_named(name));
      for (Mix mix : {Mix::Moderate, Mix::Spread, Mix::Tiny, Mix::Overflow}) {
        const int64_t rows = 6, in = 50, out = 37;
        const auto x = operands(ff, rows * in, mix, rng), w = operands(ff, out * in, mix, rng);
        const auto bias = operands(ff, out, Mix::Moderate, rng);
        FpEnv fe, re;
        std::vector<FpWord> got(static_cast<size_t>(rows * out)), want(got.size());
        fast_linear(ff, fe, x.data(), w.data(), bias.data(), got.data(), rows, in, out);
        for (int64_t r = 0; r < rows; ++r)
          for (int64_t o = 0; o < out; ++o) {
            uint64_t acc = zero_word(ff.format, false);
            for (int64_t i = 0; i < in; ++i)
              acc = fp_add(ff.format, re, acc, fp_mul(ff.format, re, w[o * in + i].bits, x[r * in + i].bits));
            want[r * out + o].bits = fp_add(ff.format, re, acc, bias[o].bits);
          }
        EXPECT_EQ(got, want) << name << " mix " << static_cast<int>(mix);
        EXPECT_EQ(fe.flags, re.flags) << name << " mix " << static_cast<int>(mix);
      }
    }
  });
}

}  // namespace
}  // namespace denote
