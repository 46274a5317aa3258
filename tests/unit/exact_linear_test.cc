// The linear rule's AVX2 kernel (src/kernels/exact_linear.h) against the plain left fold, bit for
// bit: random shapes around the vector widths (lead 1-9, in 1-40, out 1-40 and wider), values that
// round (random magnitudes), overflow to inf, cancel to -0 or +0, and subnormals; with and without a
// bias. NaN results must be NaN on both sides (their sign and payload are the hardware's).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "denote/scalar/native.h"
#include "ops/native_fold.h"

namespace denote {
namespace {

template <class S>
std::vector<S> plain(const std::vector<S>& x, const std::vector<S>& w, const S* bias, int64_t lead, int64_t in,
                     int64_t out) {
  std::vector<S> y(static_cast<size_t>(lead * out));
  for (int64_t r = 0; r < lead; ++r)
    for (int64_t o = 0; o < out; ++o) {
      S acc = S(0);
      for (int64_t k = 0; k < in; ++k)
        acc = acc + w[static_cast<size_t>(o * in + k)] * x[static_cast<size_t>(r * in + k)];
      y[static_cast<size_t>(r * out + o)] = bias ? acc + bias[o] : acc;
    }
  return y;
}

template <class S>
S draw(std::mt19937_64& rng, int kind) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> e(-30, 30);
  switch (kind) {
    case 0:
      return static_cast<S>(u(rng) * std::ldexp(1.0, e(rng)));
    case 1:
      return static_cast<S>(u(rng) * std::numeric_limits<S>::max());  // products overflow
    case 2:
      return static_cast<S>(u(rng) * std::numeric_limits<S>::min());  // subnormal products
    default:
      return static_cast<S>(std::round(u(rng) * 3.0) * 0.5);  // exact cancellations, -0
  }
}

template <class S>
void compare_random(int trials) {
  std::mt19937_64 rng(7);
  F64Context c64;
  F32Context c32;
  for (int trial = 0; trial < trials; ++trial) {
    std::uniform_int_distribution<int64_t> dim(1, 40);
    const int64_t lead = 1 + trial % 9, in = dim(rng), out = trial % 5 == 0 ? 64 + dim(rng) : dim(rng);
    const int kind = trial % 4;
    std::vector<S> x(static_cast<size_t>(lead * in)), w(static_cast<size_t>(out * in)), b(static_cast<size_t>(out));
    for (S& v : x) v = draw<S>(rng, kind);
    for (S& v : w) v = draw<S>(rng, kind == 1 ? 0 : kind);
    for (S& v : b) v = draw<S>(rng, kind);
    for (const S* bias : {static_cast<const S*>(b.data()), static_cast<const S*>(nullptr)}) {
      const std::vector<S> want = plain(x, w, bias, lead, in, out);
      std::vector<S> got(want.size(), S(42));
      if constexpr (std::is_same_v<S, float>)
        rules::native_fold::linear(c32, x.data(), w.data(), bias, lead, in, out, got.data());
      else
        rules::native_fold::linear(c64, x.data(), w.data(), bias, lead, in, out, got.data());
      for (size_t i = 0; i < want.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << "trial " << trial << " entry " << i;
          continue;
        }
        ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(S)), 0)
            << "trial " << trial << " lead " << lead << " in " << in << " out " << out << " entry " << i << ": "
            << want[i] << " vs " << got[i];
      }
    }
  }
}

// At every SIMD level the CPU has (base/cpu.h): level 0 runs the tiled scalar folds, 1 and 2 the AVX2
// lanes; every level gives the plain fold's bits.
template <class S>
void compare_every_level(int trials) {
  for (int level = 0; level <= cpu_simd_level(); ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    ASSERT_EQ(set_simd_level(level), level);
    compare_random<S>(trials);
  }
  set_simd_level(-1);
}

TEST(ExactLinear, FloatBitForBitAsThePlainFoldAtEveryLevel) { compare_every_level<float>(400); }

TEST(ExactLinear, DoubleBitForBitAsThePlainFoldAtEveryLevel) { compare_every_level<double>(400); }

// The VJP's fold over output features: acc[i] += s[r] * w[r, i] for r in turn, bit for bit.
template <class S>
void compare_axpy_rows(int trials) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < trials; ++trial) {
    std::uniform_int_distribution<int64_t> dim(1, 70);
    const int64_t rows = dim(rng) % 12, n = dim(rng), stride = n + trial % 3;
    const int kind = trial % 4;
    std::vector<S> acc(static_cast<size_t>(n)), s(static_cast<size_t>(rows)), w(static_cast<size_t>(rows * stride + 1));
    for (S& v : acc) v = draw<S>(rng, kind);
    for (S& v : s) v = draw<S>(rng, kind == 1 ? 0 : kind);
    for (S& v : w) v = draw<S>(rng, kind);
    std::vector<S> want = acc, got = acc;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i)
        want[static_cast<size_t>(i)] =
            want[static_cast<size_t>(i)] + s[static_cast<size_t>(r)] * w[static_cast<size_t>(r * stride + i)];
    ASSERT_TRUE(rules::native_fold::axpy_rows_simd(got.data(), s.data(), w.data(), rows, stride, n));
    for (size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << "trial " << trial << " entry " << i;
        continue;
      }
      ASSERT_EQ(std::memcmp(&want[i], &got[i], sizeof(S)), 0) << "trial " << trial << " entry " << i;
    }
  }
}

TEST(ExactLinear, AxpyRowsBitForBitAsThePlainFold) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  compare_axpy_rows<float>(400);
  compare_axpy_rows<double>(400);
}

// The weight gradient of one row: acc[r, i] += s[r] * x[i], bit for bit.
TEST(ExactLinear, OuterAddBitForBitAsThePlainProducts) {
  if (!have_avx2()) GTEST_SKIP() << "no AVX2";
  std::mt19937_64 rng(13);
  for (int trial = 0; trial < 300; ++trial) {
    std::uniform_int_distribution<int64_t> dim(1, 40);
    const int64_t rows = dim(rng), n = dim(rng);
    const int kind = trial % 4;
    std::vector<double> acc(static_cast<size_t>(rows * n)), s(static_cast<size_t>(rows)), x(static_cast<size_t>(n));
    for (double& v : acc) v = draw<double>(rng, kind);
    for (double& v : s) v = draw<double>(rng, kind);
    for (double& v : x) v = draw<double>(rng, kind);
    std::vector<float> accf(acc.begin(), acc.end()), sf(s.begin(), s.end()), xf(x.begin(), x.end());
    std::vector<double> want = acc;
    std::vector<float> wantf = accf;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < n; ++i) {
        const size_t k = static_cast<size_t>(r * n + i);
        want[k] = want[k] + s[static_cast<size_t>(r)] * x[static_cast<size_t>(i)];
        wantf[k] = wantf[k] + sf[static_cast<size_t>(r)] * xf[static_cast<size_t>(i)];
      }
    ASSERT_TRUE(rules::native_fold::outer_add_simd(acc.data(), s.data(), x.data(), rows, n));
    ASSERT_TRUE(rules::native_fold::outer_add_simd(accf.data(), sf.data(), xf.data(), rows, n));
    for (size_t k = 0; k < want.size(); ++k) {
      if (std::isnan(want[k])) {
        EXPECT_TRUE(std::isnan(acc[k]));
      } else {
        ASSERT_EQ(std::memcmp(&want[k], &acc[k], sizeof(double)), 0) << "trial " << trial << " entry " << k;
      }
      if (std::isnan(wantf[k])) {
        EXPECT_TRUE(std::isnan(accf[k]));
      } else {
        ASSERT_EQ(std::memcmp(&wantf[k], &accf[k], sizeof(float)), 0) << "trial " << trial << " entry " << k;
      }
    }
  }
}

// Narrow layers (fewer outputs than a vector) take the tiled scalar folds; wide ones the kernel.
TEST(ExactLinear, NarrowLayersAreDeclined) {
  const std::vector<float> x(3, 1.0f), w(3 * 7, 0.5f);
  std::vector<float> y(7);
  EXPECT_FALSE(rules::native_fold::linear_simd(x.data(), w.data(), nullptr, 1, 3, 7, y.data()));
  const std::vector<double> xd(3, 1.0), wd(3 * 3, 0.5);
  std::vector<double> yd(3);
  EXPECT_FALSE(rules::native_fold::linear_simd(xd.data(), wd.data(), nullptr, 1, 3, 3, yd.data()));
  if (have_avx2()) {
    const std::vector<float> w8(3 * 8, 0.5f);
    std::vector<float> y8(8);
    EXPECT_TRUE(rules::native_fold::linear_simd(x.data(), w8.data(), nullptr, 1, 3, 8, y8.data()));
    EXPECT_EQ(y8, std::vector<float>(8, 1.5f));
  }
}

}  // namespace
}  // namespace denote
