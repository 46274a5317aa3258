// The kernels layer (src/kernels/) at every SIMD level the CPU has (base/cpu.h: 0 the portable copies
// and no BLAS, 1 AVX2 / AVX2+FMA and BLAS, 2 AVX-512), each kernel against an oracle that is not the
// kernel: long double sums for the kernels whose summation order is unspecified (gemm, CROWN's
// products, row sums, the interval mat-vec, the fused concretisation), within the a-priori bound the
// callers rely on (|computed - exact| <= gamma_n * sum of the terms' magnitudes), and the definition
// itself for the selections (vertex rows, zeros skipped). The bit-exact kernels have their own tests
// at every level (exact_linear_test.cc, panel_gemm_test.cc).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "kernels/block_gemm.h"
#include "kernels/fused_concretize.h"
#include "kernels/gemm.h"
#include "kernels/interval_matvec.h"
#include "kernels/row_sums.h"

namespace denote {
namespace {

using LD = long double;

// gamma_n = n u / (1 - n u) for binary64 (u = 2^-53), plus long double's own rounding of the oracle.
double gamma_d(double n) { return n * 0x1p-53 / (1 - n * 0x1p-53) + 1e-17; }
// The same for binary32 (u = 2^-24).
double gamma_f(double n) { return n * 0x1p-24 / (1 - n * 0x1p-24) + 1e-12; }

// Runs body once per level 0 .. the CPU's best, the level set for the whole process, then restores it.
template <class Body>
void every_level(Body&& body) {
  for (int level = 0; level <= cpu_simd_level(); ++level) {
    SCOPED_TRACE("level " + std::to_string(level));
    ASSERT_EQ(set_simd_level(level), level);
    body(level);
  }
  set_simd_level(-1);
}

std::vector<double> draw(std::mt19937_64& rng, size_t n, double lo = -2, double hi = 2) {
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

TEST(Kernels, LevelSwitchGovernsEveryCopyAndBlas) {
  const int best = cpu_simd_level();
  EXPECT_EQ(set_simd_level(0), 0);
  EXPECT_EQ(kernels::interval_matvec_level(), 0);
  EXPECT_FALSE(kernels::blas_in_use());  // level 0: the portable loops only
  EXPECT_EQ(set_simd_level(7), best);    // clamped to the CPU
  EXPECT_EQ(kernels::blas_in_use(), kernels::blas_built() && best >= 1);
  EXPECT_EQ(kernels::interval_matvec_level(), have_avx512f() ? 2 : have_avx2_fma() ? 1 : 0);
  EXPECT_EQ(set_simd_level(-1), best);
}

// gemm<S> with every transpose and beta 0 / 1 against long double.
template <class S>
void check_gemm(std::mt19937_64& rng, bool ta, bool tb, int64_t m, int64_t n, int64_t k, S beta) {
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<S> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c0(static_cast<size_t>(m * (n + 3)));
  for (S& x : a) x = static_cast<S>(u(rng));
  for (S& x : b) x = static_cast<S>(u(rng));
  for (S& x : c0) x = static_cast<S>(u(rng));
  std::vector<S> c = c0;
  const int64_t ldc = n + 3;  // a C wider than the product: the extra columns stay as they were
  kernels::gemm<S>(ta, tb, m, n, k, a.data(), b.data(), beta, c.data(), ldc);
  const double kd = static_cast<double>(k + 2);
  const double g = std::is_same_v<S, float> ? gamma_f(kd) : gamma_d(kd);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      LD exact = static_cast<LD>(beta) * c0[static_cast<size_t>(i * ldc + j)], mag = std::fabs(exact);
      for (int64_t p = 0; p < k; ++p) {
        const LD t = static_cast<LD>(ta ? a[static_cast<size_t>(p * m + i)] : a[static_cast<size_t>(i * k + p)]) *
                     (tb ? b[static_cast<size_t>(j * k + p)] : b[static_cast<size_t>(p * n + j)]);
        exact += t;
        mag += std::fabs(t);
      }
      ASSERT_LE(std::fabs(c[static_cast<size_t>(i * ldc + j)] - exact), g * mag)
          << "ta " << ta << " tb " << tb << " m " << m << " n " << n << " k " << k << " beta " << beta << " at " << i
          << "," << j;
    }
    for (int64_t j = n; j < ldc; ++j) {
      const size_t at = static_cast<size_t>(i * ldc + j);
      ASSERT_EQ(c[at], c0[at]);  // past the product's columns: untouched
    }
  }
}

TEST(Kernels, GemmWithinGammaOfTheExactProductAtEveryLevel) {
  std::mt19937_64 rng(3);
  every_level([&](int) {
    for (bool ta : {false, true})
      for (bool tb : {false, true})
        for (int64_t m : {1, 5, 33})
          for (int64_t k : {1, 7, 300}) {
            check_gemm<double>(rng, ta, tb, m, 17, k, 0.0);
            check_gemm<double>(rng, ta, tb, m, 9, k, 1.0);
            check_gemm<float>(rng, ta, tb, m, 17, k, 0.0f);
            check_gemm<float>(rng, ta, tb, m, 9, k, 1.0f);
          }
  });
}

// CROWN's products: a sparse left operand (the nonzeros-only path), a dense one (BLAS or loops) and
// one or two rows against a large right operand (gemv), within gamma_k of the exact product.
TEST(Kernels, CrownProductsWithinGammaOfTheExactProductAtEveryLevel) {
  std::mt19937_64 rng(21);
  std::uniform_real_distribution<double> u(-1, 1);
  every_level([&](int) {
    for (int64_t m : {1, 2, 40}) {
      const int64_t k = 256, n = m <= 2 ? 100 : 37;
      const std::vector<double> b = draw(rng, static_cast<size_t>(k * n), -1, 1);
      for (int per_mille : {1, 1000}) {  // nonzeros: about 1 in 1000 plus a +-1 per row (sparse), all (dense)
        std::vector<double> a(static_cast<size_t>(m * k), 0.0);
        for (size_t i = 0; i < a.size(); ++i)
          if (static_cast<int>(rng() % 1000) < per_mille) a[i] = u(rng);
        for (int64_t i = 0; i < m; ++i) a[static_cast<size_t>(i * k + i)] = i % 2 ? 1.0 : -1.0;
        std::vector<double> c(static_cast<size_t>(m * n), NAN), ct(c.size(), NAN), bt(b.size());
        kernels::gemm_nn(m, n, k, a.data(), b.data(), c.data());
        for (int64_t p = 0; p < k; ++p)
          for (int64_t j = 0; j < n; ++j) bt[static_cast<size_t>(j * k + p)] = b[static_cast<size_t>(p * n + j)];
        kernels::gemm_nt(m, n, k, a.data(), bt.data(), ct.data());
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            LD exact = 0, mag = 0;
            for (int64_t p = 0; p < k; ++p) {
              const LD t = static_cast<LD>(a[static_cast<size_t>(i * k + p)]) * b[static_cast<size_t>(p * n + j)];
              exact += t;
              mag += std::fabs(t);
            }
            const size_t at = static_cast<size_t>(i * n + j);
            const LD bound = gamma_d(static_cast<double>(k + 1)) * mag + 1e-300;
            ASSERT_LE(std::fabs(c[at] - exact), bound) << "nn m " << m << " at " << i << "," << j;
            ASSERT_LE(std::fabs(ct[at] - exact), bound) << "nt m " << m << " at " << i << "," << j;
          }
      }
    }
    // A zero coefficient adds nothing, also against an infinite entry of b (the sparse path).
    const int64_t m = 40, k = 256, n = 37;
    std::vector<double> a(static_cast<size_t>(m * k), 0.0), b = draw(rng, static_cast<size_t>(k * n));
    a[0] = 2.0;
    const double b0 = b[0];
    b[static_cast<size_t>(5 * n)] = INFINITY;  // row 5 of b, under a zero coefficient of every row
    std::vector<double> c(static_cast<size_t>(m * n));
    kernels::gemm_nn(m, n, k, a.data(), b.data(), c.data());
    EXPECT_EQ(c[0], 2.0 * b0);
    for (double v : c) EXPECT_TRUE(std::isfinite(v));
  });
}

// interval_matmat: every box's three sums are interval_matvec's on that box alone, bit for bit (row
// counts around the 64-row blocks and the pairs, odd box counts, a tail past the vector width), for
// double and float matrices.
TEST(Kernels, IntervalMatmatEqualsTheMatvecOfEachBoxAtEveryLevel) {
  std::mt19937_64 rng(9);
  every_level([&](int) {
    for (int64_t rows : {1, 3, 66})
      for (int64_t n : {5, 19})
        for (int64_t count : {1, 2, 5}) {
          const std::vector<double> wd = draw(rng, static_cast<size_t>(rows * n));
          std::vector<float> wf(wd.begin(), wd.end());
          const std::vector<double> mid = draw(rng, static_cast<size_t>(count * n));
          std::vector<double> rad = draw(rng, mid.size()), mag(mid.size());
          for (size_t i = 0; i < mid.size(); ++i) rad[i] = std::fabs(rad[i]), mag[i] = std::fabs(mid[i]) + rad[i];
          const size_t outs = static_cast<size_t>(count * rows);
          std::vector<double> c(outs), r(outs), m(outs), c1(outs), r1(outs), m1(outs);
          for (int pass = 0; pass < 2; ++pass) {
            if (pass == 0)
              kernels::interval_matmat(wd.data(), rows, n, count, mid.data(), rad.data(), mag.data(), c.data(), r.data(),
                                       m.data());
            else
              kernels::interval_matmat(wf.data(), rows, n, count, mid.data(), rad.data(), mag.data(), c.data(), r.data(),
                                       m.data());
            for (int64_t s = 0; s < count; ++s) {
              const size_t at = static_cast<size_t>(s * n), o = static_cast<size_t>(s * rows);
              if (pass == 0)
                kernels::interval_matvec(wd.data(), rows, n, mid.data() + at, rad.data() + at, mag.data() + at,
                                         c1.data() + o, r1.data() + o, m1.data() + o);
              else
                kernels::interval_matvec(wf.data(), rows, n, mid.data() + at, rad.data() + at, mag.data() + at,
                                         c1.data() + o, r1.data() + o, m1.data() + o);
            }
            ASSERT_EQ(c, c1) << "rows " << rows << " n " << n << " count " << count << " pass " << pass;
            ASSERT_EQ(r, r1) << "rows " << rows << " n " << n << " count " << count << " pass " << pass;
            ASSERT_EQ(m, m1) << "rows " << rows << " n " << n << " count " << count << " pass " << pass;
          }
        }
  });
}

// Block-scaled products with binary32 accumulation (OCP MX's fast path): at every level each output is
// the definition computed here element by element (exact block sums of integers in long double, scaled by
// powers of two, one binary32 rounding, the blocks summed in order in binary32), bit for bit, with the
// same inexact flag; a sum past binary32's range or an inexact value below 2^-124 is refused.
TEST(Kernels, BlockGemmIsTheBlockwiseDefinitionAtEveryLevel) {
  std::mt19937_64 rng(53);
  std::uniform_int_distribution<int> iv(-229376, 229376), ex(-40, 10);  // E4M3's integers, 448 * 2^9
  every_level([&](int) {
    for (int64_t block : {1, 7, 32})
      for (int64_t m : {1, 3, 5, 66})
        for (int64_t n : {1, 16, 17, 40})
          for (int64_t k : {0, 5, 32, 70}) {
            const int64_t blocks = (k + block - 1) / block;
            std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k));
            std::vector<double> sa(static_cast<size_t>(m * blocks)), sb(static_cast<size_t>(n * blocks));
            for (double& v : a) v = iv(rng);
            for (double& v : b) v = iv(rng) / 64;
            for (double& v : sa) v = std::ldexp(1.0, ex(rng));
            for (double& v : sb) v = std::ldexp(1.0, ex(rng) - 20);
            const kernels::BlockPanel p = kernels::pack_block_panel(b.data(), sb.data(), n, k, block);
            std::vector<float> y(static_cast<size_t>(m * n), -1.0f);
            bool inexact = false;
            ASSERT_TRUE(kernels::block_gemm_f32(a.data(), sa.data(), m, p, y.data(), inexact));
            bool want_inexact = false;
            for (int64_t r = 0; r < m; ++r)
              for (int64_t c = 0; c < n; ++c) {
                float acc = 0;
                for (int64_t q = 0; q < blocks; ++q) {
                  LD sum = 0;
                  for (int64_t i = q * block; i < std::min(k, (q + 1) * block); ++i)
                    sum += static_cast<LD>(a[static_cast<size_t>(r * k + i)]) * b[static_cast<size_t>(c * k + i)];
                  const LD v = sum * sa[static_cast<size_t>(r * blocks + q)] * sb[static_cast<size_t>(c * blocks + q)];
                  const auto f = static_cast<float>(static_cast<double>(v));
                  want_inexact = want_inexact || static_cast<LD>(f) != v;
                  const float s = q == 0 ? f : acc + f;
                  want_inexact = want_inexact || (q > 0 && static_cast<LD>(s) != static_cast<LD>(acc) + f);
                  acc = s;
                }
                ASSERT_EQ(y[static_cast<size_t>(r * n + c)], acc)
                    << "block " << block << " m " << m << " n " << n << " k " << k << " at " << r << "," << c;
              }
            EXPECT_EQ(inexact, want_inexact) << "block " << block << " m " << m << " n " << n << " k " << k;
          }
    const std::vector<double> a = {3, 1}, b = {5, 7}, one = {1};
    const kernels::BlockPanel exact = kernels::pack_block_panel(b.data(), one.data(), 1, 2, 32);
    float y22 = 0;
    bool inexact22 = false;
    ASSERT_TRUE(kernels::block_gemm_f32(a.data(), one.data(), 1, exact, &y22, inexact22));
    EXPECT_EQ(y22, 22.0f);
    EXPECT_FALSE(inexact22);
    for (double scale : {0x1p120, 0x1p-140}) {  // 22 * 2^240 overflows; 22 * 2^-280 is inexact and tiny
      const std::vector<double> s = {scale};
      const kernels::BlockPanel p = kernels::pack_block_panel(b.data(), s.data(), 1, 2, 32);
      float y = 0;
      bool inexact = false;
      EXPECT_FALSE(kernels::block_gemm_f32(a.data(), s.data(), 1, p, &y, inexact)) << scale;
    }
  });
}

// The exact value of an integer block sum T (below 2^126) times 2^e rounded to binary32 (nearest even;
// normal range), and whether it was inexact: the oracle of the certified kernel.
float round_sum(__int128 t, int e, bool& inexact) {
  const bool neg = t < 0;
  unsigned __int128 m = neg ? static_cast<unsigned __int128>(-t) : static_cast<unsigned __int128>(t);
  int shift = 0;
  while ((m >> shift) >= (static_cast<unsigned __int128>(1) << 24)) ++shift;
  unsigned __int128 q = m >> shift;
  if (shift > 0) {
    const unsigned __int128 rem = m - (q << shift), half = static_cast<unsigned __int128>(1) << (shift - 1);
    inexact = inexact || rem != 0;
    if (rem > half || (rem == half && (q & 1))) ++q;
  }
  const float v = std::ldexp(static_cast<float>(static_cast<uint32_t>(q)), shift + e);
  return neg ? -v : v;
}

// Block q (of 32) of a row of a times a row of b (integers as doubles, k per row), exactly.
__int128 block_sum(const std::vector<double>& a, const std::vector<double>& b, int64_t k, int64_t r, int64_t c,
                   int64_t q) {
  __int128 t = 0;
  for (int64_t i = q * 32; i < std::min<int64_t>(k, (q + 1) * 32); ++i)
    t += static_cast<__int128>(static_cast<int64_t>(a[static_cast<size_t>(r * k + i)])) *
         static_cast<int64_t>(b[static_cast<size_t>(c * k + i)]);
  return t;
}

// block_norms bounds each block's Euclidean norm from above (the certified kernel's M), and tightly: on
// integers whose squares' sum rounds in binary64 (random 40-bit values) and on a partial last block.
TEST(Kernels, BlockNormsBoundTheNormFromAbove) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> big(-(int64_t{1} << 40), int64_t{1} << 40);
  const int64_t rows = 7, k = 70, block = 32, blocks = 3;
  std::vector<double> v(static_cast<size_t>(rows * k)), out(static_cast<size_t>(rows * blocks));
  for (double& x : v) x = static_cast<double>(big(rng));
  v[5] = 0x1p60, v[6] = 1;  // a block whose sum of squares loses the small term
  kernels::block_norms(v.data(), rows, k, block, out.data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < blocks; ++q) {
      unsigned __int128 exact = 0;  // integers up to 2^60: squares up to 2^120, 32 of them below 2^126
      for (int64_t i = q * block; i < std::min(k, (q + 1) * block); ++i) {
        const auto x = static_cast<__int128>(v[static_cast<size_t>(r * k + i)]);
        exact += static_cast<unsigned __int128>(x * x);
      }
      // In binary128 (113 bits) the square of a double is exact and the sum off by 2^-113 relative: far
      // below the bound's margin (about 2^-45) and below what a bound without one would miss by.
      const auto sum = static_cast<__float128>(exact), got = static_cast<__float128>(out[static_cast<size_t>(r * blocks + q)]);
      EXPECT_TRUE(got * got >= sum) << "row " << r << " block " << q;
      EXPECT_TRUE(got * got <= sum * (static_cast<__float128>(1) + static_cast<__float128>(1e-12))) << "row " << r << " block " << q;
    }
}

// The certified variant (E5M2's block sums, past 2^53): at every level bit for bit the definition (exact
// __int128 block sums, one rounding, binary32 block sums), the same inexact flag, the exact path asked
// for under half the blocks of random data (about 10%: a block whose largest product dominates rounds to
// it within the interval, where T = f cannot be told apart), and for none where every partial sum is a
// multiple of the blocks' divisors below 2^52 of them (exact in the lanes).
TEST(Kernels, CertifiedBlockGemmIsTheBlockwiseDefinitionAtEveryLevel) {
  std::mt19937_64 rng(57);
  std::uniform_int_distribution<int> sig(-7, 7), ex(0, 28);  // 3-bit integers times 2^0 .. 2^28
  every_level([&](int) {
    for (const int kind : {0, 1, 2})  // random exponents; small integers; multiples of 2^20 (the divisors)
      for (int64_t m : {1, 5})
        for (int64_t n : {3, 17}) {
          const int64_t k = 70, block = 32, blocks = 3;
          std::vector<double> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(n * k));
          for (double& v : a) v = std::ldexp(sig(rng), kind == 0 ? ex(rng) : kind == 1 ? 0 : 20 + ex(rng) / 4);
          for (double& v : b) v = std::ldexp(sig(rng), kind == 0 ? ex(rng) : kind == 1 ? 0 : 20 + ex(rng) / 4);
          const std::vector<double> sa(static_cast<size_t>(m * blocks), 0x1p-40), sb(static_cast<size_t>(n * blocks), 0x1p-20);
          const std::vector<double> ta(static_cast<size_t>(m * blocks), kind == 2 ? 0x1p20 : 1.0);
          const std::vector<double> tb(static_cast<size_t>(n * blocks), kind == 2 ? 0x1p20 : 1.0);
          const kernels::BlockPanel p = kernels::pack_block_panel(b.data(), sb.data(), n, k, block, tb.data());
          std::vector<double> na(static_cast<size_t>(m * blocks));
          kernels::block_norms(a.data(), m, k, block, na.data());
          struct Ctx {
            const std::vector<double>* a;
            const std::vector<double>* b;
            int64_t k, calls = 0;
            bool inexact = false;
          } ctx{&a, &b, k};
          kernels::ExactBlock cb{[](void* p, int64_t r, int64_t c, int64_t q) {
                                   auto& x = *static_cast<Ctx*>(p);
                                   ++x.calls;
                                   return round_sum(block_sum(*x.a, *x.b, x.k, r, c, q), -60, x.inexact);
                                 },
                                 &ctx};
          std::vector<float> y(static_cast<size_t>(m * n));
          bool inexact = false;
          ASSERT_TRUE(kernels::block_gemm_f32_certified(a.data(), sa.data(), ta.data(), na.data(), m, p, y.data(), inexact, cb));
          bool want_inexact = false;
          for (int64_t r = 0; r < m; ++r)
            for (int64_t c = 0; c < n; ++c) {
              float acc = 0;
              for (int64_t q = 0; q < blocks; ++q) {
                const float f = round_sum(block_sum(a, b, k, r, c, q), -60, want_inexact);
                const float sum = q == 0 ? f : acc + f;
                want_inexact = want_inexact || (q > 0 && static_cast<double>(sum) != static_cast<double>(acc) + f);
                acc = sum;
              }
              ASSERT_EQ(y[static_cast<size_t>(r * n + c)], acc) << "kind " << kind << " m " << m << " n " << n;
            }
          EXPECT_EQ(inexact || ctx.inexact, want_inexact) << "kind " << kind << " m " << m << " n " << n;
          // Sums of multiples of ta tb below 2^52 ta tb are exact in the lanes: no exact path at all.
          if (kind > 0) EXPECT_EQ(ctx.calls, 0);
          else EXPECT_LT(ctx.calls * 2, m * n * blocks);  // most blocks certified without the exact path
        }
  });
}

// Forward linear bounds' sign-picked product, for the vector widths (4, 8, 12, 16) and another.
TEST(Kernels, SignRowsPickByTheWeightsSignAtEveryLevel) {
  std::mt19937_64 rng(5);
  every_level([&](int) {
    for (size_t k : {4u, 8u, 12u, 16u, 5u})
      for (size_t out : {1u, 2u, 7u}) {
        const size_t in = 19;
        std::vector<double> W = draw(rng, out * in), R = draw(rng, in * k), S = draw(rng, in * k);
        W[0] = 0.0;  // a zero weight: R's row, times zero
        std::vector<double> acc(out * k, NAN);
        kernels::sign_rows(W.data(), out, in, R.data(), S.data(), k, acc.data());
        for (size_t o = 0; o < out; ++o)
          for (size_t j = 0; j < k; ++j) {
            LD exact = 0, mag = 0;
            for (size_t i = 0; i < in; ++i) {
              const double w = W[o * in + i];
              const LD t = static_cast<LD>(w) * (w < 0 ? S[i * k + j] : R[i * k + j]);
              exact += t;
              mag += std::fabs(t);
            }
            ASSERT_LE(std::fabs(acc[o * k + j] - exact), gamma_d(in) * mag) << "k " << k << " out " << o << " " << j;
          }
      }
  });
}

// The row sums and the concretisation: within gamma of the exact sums, the terms counted exactly, a
// zero coefficient adding nothing against an infinite endpoint; vertex rows by their definition.
TEST(Kernels, RowSumsWithinGammaAndVerticesByDefinitionAtEveryLevel) {
  std::mt19937_64 rng(8);
  every_level([&](int) {
    for (int64_t m : {1, 3, 4, 9, 64, 257}) {
      std::vector<double> a = draw(rng, static_cast<size_t>(m)), s = draw(rng, static_cast<size_t>(m), 0, 3);
      std::vector<double> lo = draw(rng, static_cast<size_t>(m), -3, 0), hi = draw(rng, static_cast<size_t>(m), 0, 3);
      a[0] = 0.0;
      lo[0] = -INFINITY;  // under a zero coefficient: adds nothing
      LD abs_dot = 0, dot = 0, dmag = 0, cmin = 0, cmag = 0;
      double nonzero = 0;
      for (int64_t j = 0; j < m; ++j) {
        const size_t i = static_cast<size_t>(j);
        abs_dot += std::fabs(static_cast<LD>(a[i])) * s[i];
        dot += static_cast<LD>(a[i]) * s[i];
        dmag += std::fabs(static_cast<LD>(a[i]) * s[i]);
        if (a[i] != 0) {
          const LD t = static_cast<LD>(a[i]) * (a[i] > 0 ? lo[i] : hi[i]);
          cmin += t, cmag += std::fabs(t), nonzero += 1;
        }
      }
      const double g = gamma_d(static_cast<double>(m + 1));
      EXPECT_LE(std::fabs(kernels::abs_dot(a.data(), s.data(), m) - abs_dot), g * abs_dot);
      EXPECT_LE(std::fabs(kernels::abs_dot_nonzero(a.data(), s.data(), m) - abs_dot), g * abs_dot);
      EXPECT_LE(std::fabs(kernels::dot(a.data(), s.data(), m) - dot), g * dmag);
      double sum = 1.0, mag = 1.0;  // both accumulate
      kernels::dot_mag(a.data(), s.data(), m, sum, mag);
      EXPECT_LE(std::fabs(sum - 1.0 - dot), g * dmag + 0x1p-52 * (1 + dmag));
      EXPECT_LE(std::fabs(mag - 1.0 - dmag), g * dmag + 0x1p-52 * (1 + dmag));
      double csum = 0, cm = 0, terms = 0;
      kernels::concretize_row(a.data(), lo.data(), hi.data(), m, csum, cm, terms);
      EXPECT_LE(std::fabs(csum - cmin), g * cmag) << "m " << m;
      EXPECT_LE(std::fabs(cm - cmag), g * cmag) << "m " << m;
      EXPECT_EQ(terms, nonzero);
    }
    const int64_t rows = 5, m = 37;
    std::vector<double> a = draw(rng, static_cast<size_t>(rows * m)), lo = draw(rng, m, -3, 0), hi = draw(rng, m, 0, 3);
    a[3] = 0.0, a[4] = -0.0, a[5] = NAN;
    std::vector<double> v(a.size(), 42);
    kernels::vertex_rows(a.data(), lo.data(), hi.data(), rows, m, v.data());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < m; ++j) {
        const size_t i = static_cast<size_t>(r * m + j);
        EXPECT_EQ(v[i], a[i] >= 0 ? lo[static_cast<size_t>(j)] : hi[static_cast<size_t>(j)]) << r << "," << j;
      }
  });
}

// The first linear layer's product fused with the input's concretisation: the row's minimum over the
// box within the product's and the sum's error of the exact one at the vertex it reports, the vertex
// the exact coefficient's sign picks wherever that sign is clear, every nonzero coefficient counted.
TEST(Kernels, FusedConcretisationWithinGammaOfTheExactMinimumAtEveryLevel) {
  std::mt19937_64 rng(13);
  every_level([&](int) {
    for (int64_t k : {1, 5, 32})
      for (int64_t m : {3, 8, 31, 100}) {
        ASSERT_TRUE(kernels::fused_fits(k, m));
        const int64_t rows = 6;
        std::vector<double> as = draw(rng, static_cast<size_t>(rows * k)), w = draw(rng, static_cast<size_t>(k * m));
        std::vector<double> lo = draw(rng, m, -3, 0), hi = draw(rng, m, 0, 3);
        std::vector<double> sum(rows, 0.5), mag(rows, 0.0), terms(rows, 0.0), vertex(static_cast<size_t>(rows * m));
        kernels::product_concretize_rows(as.data(), rows, k, w.data(), m, lo.data(), hi.data(), sum.data(),
                                         mag.data(), terms.data(), vertex.data());
        for (int64_t r = 0; r < rows; ++r) {
          LD exact = 0.5, err_mag = 0;
          for (int64_t j = 0; j < m; ++j) {
            LD a = 0, amag = 0;
            for (int64_t t = 0; t < k; ++t) {
              const LD p = static_cast<LD>(as[static_cast<size_t>(r * k + t)]) * w[static_cast<size_t>(t * m + j)];
              a += p, amag += std::fabs(p);
            }
            const double x = vertex[static_cast<size_t>(r * m + j)];
            const size_t ji = static_cast<size_t>(j);
            if (std::fabs(a) > gamma_d(static_cast<double>(k)) * amag) {
              EXPECT_EQ(x, a > 0 ? lo[ji] : hi[ji]);
            }
            exact += a * x;
            err_mag += amag * std::fabs(x);
          }
          const double g = gamma_d(static_cast<double>(k + m + 2));
          EXPECT_LE(std::fabs(sum[static_cast<size_t>(r)] - exact), g * (err_mag + 0.5))
              << "k " << k << " m " << m << " row " << r;
          EXPECT_EQ(terms[static_cast<size_t>(r)], static_cast<double>(m));
          EXPECT_GE(mag[static_cast<size_t>(r)], std::fabs(sum[static_cast<size_t>(r)] - 0.5) * (1 - 1e-12));
        }
      }
  });
}

// The midpoint-radius product: |computed - exact| <= gamma_{n+1} * sum of the terms' magnitudes.
template <class W>
void check_interval_matvec(int64_t rows, int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<W> w(static_cast<size_t>(rows * n));
  for (auto& v : w) v = static_cast<W>(u(rng));
  std::vector<double> mid(static_cast<size_t>(n)), rad(mid.size()), mag(mid.size());
  for (size_t i = 0; i < mid.size(); ++i) {
    mid[i] = u(rng);
    rad[i] = std::fabs(u(rng)) * 0.1;
    mag[i] = std::fabs(mid[i]) + rad[i];
  }
  std::vector<double> c(static_cast<size_t>(rows), NAN), r(c), m(c);
  kernels::interval_matvec(w.data(), rows, n, mid.data(), rad.data(), mag.data(), c.data(), r.data(), m.data());
  const double g = gamma_d(static_cast<double>(n) + 1);
  for (int64_t o = 0; o < rows; ++o) {
    LD ec = 0, er = 0, em = 0, sc = 0;
    for (int64_t i = 0; i < n; ++i) {
      const LD wv = w[static_cast<size_t>(o * n + i)];
      ec += wv * mid[static_cast<size_t>(i)];
      sc += std::fabs(wv * mid[static_cast<size_t>(i)]);
      er += std::fabs(wv) * rad[static_cast<size_t>(i)];
      em += std::fabs(wv) * mag[static_cast<size_t>(i)];
    }
    const size_t k = static_cast<size_t>(o);
    EXPECT_LE(std::fabs(static_cast<LD>(c[k]) - ec), g * sc) << "row " << o;
    EXPECT_LE(std::fabs(static_cast<LD>(r[k]) - er), g * er) << "row " << o;
    EXPECT_LE(std::fabs(static_cast<LD>(m[k]) - em), g * em) << "row " << o;
    EXPECT_GE(m[k], std::fabs(c[k]) * (1 - 2 * g)) << "row " << o;  // the magnitude bounds the midpoint sum
  }
}

TEST(Kernels, IntervalMatvecWithinGammaOfTheExactSumsAtEveryLevel) {
  std::mt19937_64 rng(15);
  every_level([&](int level) {
    EXPECT_LE(kernels::interval_matvec_level(), level);
    for (int64_t rows : {1, 3, 4, 5, 7, 13})
      for (int64_t n : {1, 3, 8, 15, 17, 33, 100, 784}) {
        check_interval_matvec<double>(rows, n, rng);
        check_interval_matvec<float>(rows, n, rng);
      }
  });
}

TEST(Kernels, IntervalMatvecNonFiniteInputsGiveNonFiniteSums) {
  const std::vector<double> w = {1, 2, 3, 4, 5};
  const std::vector<double> mid = {1, INFINITY, 0, 0, 0}, rad = {0, 0, 0, 0, 0}, mag = {1, INFINITY, 0, 0, 0};
  every_level([&](int) {
    double c = 0, r = 0, m = 0;
    kernels::interval_matvec(w.data(), 1, 5, mid.data(), rad.data(), mag.data(), &c, &r, &m);
    EXPECT_FALSE(std::isfinite(c));
    EXPECT_FALSE(std::isfinite(m));
  });
}

}  // namespace
}  // namespace denote
