// OCP MX formats (include/denote/tensor/mx.h) on hand-computed blocks: the shared scale, nearest-even
// element rounding, saturation, NaN and zero blocks, partial blocks along any axis, and dot products
// whose exact block sums differ from a binary32 running sum. The exhaustive comparison with an
// independent rational implementation of the spec is tests/python/test_mx_reference.py.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_ops.h"
#include "denote/tensor/mx.h"
#include "tensor/mx_codes.h"
#include "typed/mx_dot.h"

namespace denote {
namespace {

MxFormat fmt_of(const char* name) { return *parse_mx_format(name); }

MxQuantized quantize(const char* name, Shape shape, std::vector<double> v, int64_t axis = -1, int64_t block = 32) {
  Result<MxQuantized> q = mx_quantize(fmt_of(name), Tensor<double>(std::move(shape), std::move(v)), axis, block);
  EXPECT_TRUE(q.ok()) << q.status().message();
  return *q;
}

TEST(Mx, NamesAndErrors) {
  for (const char* n : {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8"})
    EXPECT_TRUE(parse_mx_format(n).ok()) << n;
  EXPECT_EQ(fmt_of("mxfp8_e4m3").emax, 8);
  EXPECT_EQ(fmt_of("mxfp8_e5m2").emax, 15);
  EXPECT_EQ(fmt_of("mxfp6_e3m2").emax, 4);
  EXPECT_EQ(fmt_of("mxfp6_e2m3").emax, 2);
  EXPECT_EQ(fmt_of("mxfp4_e2m1").emax, 2);
  Result<MxFormat> bad = parse_mx_format("mxfp5");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("mxfp4_e2m1"), std::string::npos);
  Result<MxQuantized> q = mx_quantize(fmt_of("mxint8"), Tensor<double>({4}, {1, 2, 3, 4}), 1, 32);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().field(), "axis");
  q = mx_quantize(fmt_of("mxint8"), Tensor<double>({4}, {1, 2, 3, 4}), 0, 0);
  ASSERT_FALSE(q.ok());
  EXPECT_EQ(q.status().field(), "block");
}

// amax 6 = 1.5 * 2^2 and E2M1's emax 2: X = 2^0. 1.25 is a tie between 1 and 1.5 (even: 1); -0.2
// rounds to -0.
TEST(Mx, Fp4BlockRoundsToNearestEven) {
  MxQuantized q = quantize("mxfp4_e2m1", {4}, {6, 3, 1.25, -0.2});
  EXPECT_EQ(q.q.scales, std::vector<uint8_t>({127}));
  EXPECT_EQ(q.q.elements, std::vector<uint8_t>({0x7, 0x5, 0x2, 0x8}));
  EXPECT_EQ(q.flags & (kFpInexact | kFpSaturated), kFpInexact);
  Tensor<double> v = *mx_dequantize(q.q);
  EXPECT_EQ(v.data, std::vector<double>({6, 3, 1, -0.0}));
  EXPECT_TRUE(std::signbit(v.data[3]));
}

// amax 500: X = 2^(8 - 8) = 1; 500 rounds to 512 in E4M3's top binade and saturates at 448.
TEST(Mx, Fp8SaturatesAtItsLargestMagnitude) {
  MxQuantized q = quantize("mxfp8_e4m3", {3}, {500, -3.0, 0.0009});
  EXPECT_EQ(q.q.scales, std::vector<uint8_t>({127}));
  EXPECT_EQ(q.q.elements[0], 0x7E);
  EXPECT_EQ(q.q.elements[1], 0xC4);  // -3 = -1.5 * 2^1: sign, exponent 1 + 7, fraction 100
  EXPECT_EQ(q.q.elements[2], 0x00);         // 0.0009 < half of 2^-9
  EXPECT_NE(q.flags & kFpSaturated, 0u);
  EXPECT_NE(q.flags & kFpUnderflow, 0u);
  // The same block scaled by 2^40 keeps its codes and moves the scale.
  MxQuantized s = quantize("mxfp8_e4m3", {3}, {500 * 0x1p40, -3.0 * 0x1p40, 0.0009 * 0x1p40});
  EXPECT_EQ(s.q.scales, std::vector<uint8_t>({127 + 40}));
  EXPECT_EQ(s.q.elements, q.q.elements);
}

TEST(Mx, Int8ScalesBySixtyFourAndSaturatesSymmetrically) {
  MxQuantized q = quantize("mxint8", {3}, {1.5, -0.75, 1.99});
  EXPECT_EQ(q.q.scales, std::vector<uint8_t>({127}));
  EXPECT_EQ(q.q.elements, std::vector<uint8_t>({96, 256 - 48, 127}));  // 1.99 * 64 = 127.36
  MxQuantized n = quantize("mxint8", {2}, {-1.999, 0.5});                // -127.94 rounds to -128: -127
  EXPECT_EQ(n.q.elements, std::vector<uint8_t>({256 - 127, 32}));
  EXPECT_NE(n.flags & kFpSaturated, 0u);
  EXPECT_EQ(mx_element_value(fmt_of("mxint8"), 0x80), -2.0);
}

TEST(Mx, SpecialAndZeroBlocks) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  MxQuantized q = quantize("mxfp8_e5m2", {6}, {1, nan, 2, 0, -0.0, 0}, 0, 3);
  EXPECT_EQ(q.q.scales, std::vector<uint8_t>({kMxScaleNan, 0}));
  EXPECT_EQ(q.q.elements, std::vector<uint8_t>({0, 0, 0, 0, 0x80, 0}));
  EXPECT_NE(q.flags & kFpMappedSpecial, 0u);
  Tensor<double> v = *mx_dequantize(q.q);
  EXPECT_TRUE(std::isnan(v.data[0]) && std::isnan(v.data[2]));
  EXPECT_EQ(v.data[4], 0.0);
  EXPECT_TRUE(std::signbit(v.data[4]));
  EXPECT_EQ(quantize("mxfp6_e3m2", {2}, {inf, 1}).q.scales, std::vector<uint8_t>({kMxScaleNan}));
  // Scales clamp: a double beyond 2^(127 + emax + 1) saturates; a tiny block sits at 2^-127.
  EXPECT_EQ(quantize("mxfp6_e2m3", {1}, {0x1p300}).q.scales, std::vector<uint8_t>({254}));
  EXPECT_EQ(quantize("mxfp6_e2m3", {1}, {0x1p300}).q.elements, std::vector<uint8_t>({0x1F}));
  MxQuantized tiny = quantize("mxfp6_e2m3", {1}, {0x1p-130});
  EXPECT_EQ(tiny.q.scales, std::vector<uint8_t>({0}));
  EXPECT_EQ(tiny.q.elements, std::vector<uint8_t>({0x1}));  // 2^-3 is E2M3's smallest subnormal
}

// shape [3, 4] blocked along axis 0 in blocks of 2: scales [2, 4]; the last block holds row 2 alone.
TEST(Mx, PartialBlocksAlongAnyAxis) {
  std::vector<double> x = {1, 2, 3, 4, 8, 0.5, 0.25, 0.125, 64, 1, 1, 1};
  MxQuantized q = quantize("mxfp8_e4m3", {3, 4}, x, 0, 2);
  EXPECT_EQ(mx_scale_shape(q.q.shape, 0, 2), Shape({2, 4}));
  EXPECT_EQ(q.q.scales, std::vector<uint8_t>({127 - 5, 127 - 7, 127 - 7, 127 - 6, 127 - 2, 127 - 8, 127 - 8,
                                              127 - 8}));
  EXPECT_EQ(mx_dequantize(q.q)->data, x);  // powers of two are exact
}

MxTensor blocked(const char* name, Shape shape, std::vector<double> v, int64_t axis, int64_t block) {
  return quantize(name, std::move(shape), std::move(v), axis, block).q;
}

// One E5M2 block 57344 + 2^-16 - 57344: a binary32 running sum gives 0, the exact block sum 2^-16.
TEST(Mx, DotProductSumsEachBlockExactly) {
  MxTensor a = blocked("mxfp8_e5m2", {1, 3}, {57344, 0x1p-16, -57344}, 1, 32);
  MxTensor b = blocked("mxfp8_e5m2", {3, 1}, {1, 1, 1}, 0, 32);
  Result<MxMatmulResult> r = mx_matmul(a, b, binary32_format());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->y.data, std::vector<double>({0x1p-16}));
  // Two blocks of one element each: 57344 + 2^-16 rounds in binary32, then - 57344 gives 0.
  MxTensor a2 = blocked("mxfp8_e5m2", {1, 3}, {57344, 0x1p-16, -57344}, 1, 1);
  MxTensor b2 = blocked("mxfp8_e5m2", {3, 1}, {1, 1, 1}, 0, 1);
  r = mx_matmul(a2, b2, binary32_format());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->y.data, std::vector<double>({0.0}));
  EXPECT_NE(r->flags & kFpInexact, 0u);
  r = mx_matmul(a2, b2, binary64_format());
  EXPECT_EQ(r->y.data, std::vector<double>({0x1p-16}));
}

// Exact blocks whose binary32 sum is not: 2^24 + 1 raises inexact from the block sum alone.
TEST(Mx, BlockSumRaisesItsOwnFlags) {
  MxTensor a = blocked("mxfp8_e4m3", {1, 2}, {0x1p24, 1}, 1, 1);
  MxTensor b = blocked("mxfp8_e4m3", {2, 1}, {1, 1}, 0, 1);
  Result<MxMatmulResult> r = mx_matmul(a, b, binary32_format());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->y.data, std::vector<double>({0x1p24}));
  EXPECT_EQ(r->flags, kFpInexact);
  a = blocked("mxfp8_e4m3", {1, 2}, {0x1p127, 0x1p127}, 1, 1);
  r = mx_matmul(a, b, binary32_format());
  EXPECT_TRUE(std::isinf(r->y.data[0]));
  EXPECT_EQ(r->flags, kFpOverflow | kFpInexact);
}

// E5M2 block sums beyond 2^53 element quanta (the split gemms): 2^30 + 2^6 + 2^-32 lies just above the
// binary32 midpoint 2^30 + 2^6, which a double sum (2^-32 lost) would round to even, 2^30.
TEST(Mx, E5m2BlockSumRoundsOnceFromTheExactValue) {
  MxTensor a = blocked("mxfp8_e5m2", {1, 3}, {32768, 8, 0x1p-16}, 1, 32);
  MxTensor b = blocked("mxfp8_e5m2", {3, 1}, {32768, 8, 0x1p-16}, 0, 32);
  Result<MxMatmulResult> r = mx_matmul(a, b, binary32_format());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->y.data, std::vector<double>({0x1p30 + 0x1p7}));
  EXPECT_EQ(r->flags, kFpInexact);
  b = blocked("mxfp8_e5m2", {3, 1}, {-32768, -8, -0x1p-16}, 0, 32);
  EXPECT_EQ(mx_matmul(a, b, binary32_format())->y.data, std::vector<double>({-(0x1p30 + 0x1p7)}));
}

TEST(Mx, DotProductShapesAndSpecials) {
  MxTensor a = blocked("mxint8", {2, 2}, {1, 2, 3, 4}, 1, 2);
  MxTensor b = blocked("mxfp4_e2m1", {2, 2}, {1, 0.5, 3, 6}, 0, 2);
  Result<MxMatmulResult> r = mx_matmul(a, b, binary32_format());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->y.data, std::vector<double>({7, 12.5, 15, 25.5}));
  EXPECT_FALSE(mx_matmul(a, a, binary32_format()).ok());  // a is blocked along axis 1
  EXPECT_EQ(mx_matmul(a, b, *parse_format("bfloat16")).status().field(), "accumulate");
  MxTensor n = blocked("mxfp8_e4m3", {1, 2}, {std::nan(""), 1}, 1, 2);
  MxTensor one = blocked("mxfp8_e4m3", {2, 1}, {1, 1}, 0, 2);
  EXPECT_TRUE(std::isnan(mx_matmul(n, one, binary32_format())->y.data[0]));
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// The gemm path (mx_matmul_binary32) against the word-by-word block sums on random operands with
// specials and extreme scales: the same values and flags.
TEST(Mx, FastBinary32ProductIsTheWordByWordOne) {
  std::mt19937_64 rng(11);
  for (const auto& [fa, fb] : std::vector<std::pair<const char*, const char*>>{
           {"mxfp8_e4m3", "mxfp8_e4m3"}, {"mxfp4_e2m1", "mxint8"}, {"mxfp6_e3m2", "mxfp6_e2m3"}, {"mxint8", "mxint8"},
           {"mxfp8_e5m2", "mxfp8_e5m2"}, {"mxfp8_e5m2", "mxfp8_e4m3"}}) {
    const int64_t M = 7, K = 75, N = 9, block = 16;
    MxTensor a{*parse_mx_format(fa), block, 1, {M, K}, {}, {}};
    MxTensor b{*parse_mx_format(fb), block, 0, {K, N}, {}, {}};
    for (MxTensor* t : {&a, &b}) {
      for (int64_t i = 0; i < M * K + K * N; ++i)
        if (static_cast<int64_t>(t->elements.size()) < numel(t->shape))
          t->elements.push_back(static_cast<uint8_t>(rng() % (1u << t->format.bits)));
      t->scales.resize(static_cast<size_t>(numel(mx_scale_shape(t->shape, t->axis, block))));
      for (uint8_t& s : t->scales) s = static_cast<uint8_t>(rng() % 8 == 0 ? rng() % 256 : 100 + rng() % 40);
    }
    Result<MxMatmulResult> fast = mx_matmul(a, b, binary32_format());
    ASSERT_TRUE(fast.ok()) << fast.status().message();
    const mx_detail::Operand oa = mx_detail::operand_of(a, false), ob = mx_detail::operand_of(b, true);
    const BinaryFormat acc = binary32_format();
    const mx_detail::DotSetup s{a, b, acc, block};
    FpEnv env;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        uint64_t w = mx_detail::block_dot(s, oa, ob, m, n, 0, env);
        for (int64_t bk = 1; bk < oa.blocks; ++bk) w = fp_add(acc, env, w, mx_detail::block_dot(s, oa, ob, m, n, bk, env));
        const double want = word_to_double(acc, w), got = fast->y.data[static_cast<size_t>(m * N + n)];
        EXPECT_TRUE(want == got || (std::isnan(want) && std::isnan(got))) << fa << " x " << fb << " at " << m << ","
                                                                         << n << ": " << got << " vs " << want;
      }
    EXPECT_EQ(fast->flags, env.flags) << fa << " x " << fb;
  }
}

}  // namespace
}  // namespace denote

namespace denote {
namespace {

// The double-arithmetic conversion against the one rounding routine: every code and flag, on values
// around every binade of every format (ties, saturation, subnormals, underflow's tininess boundary).
TEST(Mx, FastElementConversionIsTheExactOne) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const char* name : {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8"}) {
    const MxFormat f = *parse_mx_format(name);
    const mx_detail::ElementParams p = mx_detail::element_params(f);
    std::vector<double> values;
    for (int ex = -40; ex <= 20; ++ex)
      for (int i = 0; i < 200; ++i) values.push_back(std::ldexp(unit(rng), ex));
    for (unsigned c = 0; c < (1u << f.bits); ++c) {  // every code, its neighbours and the midpoints
      const double v = mx_element_value(f, static_cast<uint8_t>(c));
      if (!std::isfinite(v)) continue;
      for (double d : {0.0, 1e-9, -1e-9, 0x1p-4, -0x1p-4, 0x1p-5}) values.push_back(v * (1 + d) + d * 0x1p-12);
    }
    values.push_back(0.0), values.push_back(-0.0), values.push_back(1e-300), values.push_back(-5e-324);
    for (double v : values)
      for (int64_t e : {-127, -40, -3, 0, 1, 5, 127}) {
        uint32_t fe = 0, ff = 0;
        const uint8_t want = mx_detail::element_code_exact(f, v * std::ldexp(1.0, static_cast<int>(e)), e, fe);
        const uint8_t got = mx_detail::element_code_fast(p, v * std::ldexp(1.0, static_cast<int>(e)), e, ff);
        ASSERT_EQ(got, want) << name << " v=" << v << " e=" << e;
        ASSERT_EQ(ff, fe) << name << " v=" << v << " e=" << e;
      }
  }
}

}  // namespace
}  // namespace denote
