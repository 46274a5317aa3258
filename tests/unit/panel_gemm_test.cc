// The avx2 provider's f32 GEMM (src/kernels/panel_gemm.h) against its specification, bit for bit:
// every output is one fma chain from +0 in k order, then + bias (per column or per row), then relu
// (x > 0 or NaN ? x : +0). Row counts 1-27 (every row block and tail of the 6-, 4- and 12-row
// kernels), panel widths 1-16 (half and full panels, masked tails), K across the 512-wide k blocks
// (stored sums resumed), at SIMD levels 2 and 1 (base/cpu.h: the AVX-512 kernels on and off, the CPU
// permitting).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "base/cpu.h"
#include "kernels/panel_gemm.h"
#include "denote/base/splitmix.h"

namespace denote {
namespace {

namespace panel = kernels::panel;

struct Case {
  int64_t M, K, N;
  panel::Output out;
};

float expected(const std::vector<float>& a, const std::vector<float>& w, const std::vector<float>& bias,
               const Case& c, int64_t i, int64_t j) {
  float acc = 0.0f;
  for (int64_t k = 0; k < c.K; ++k) acc = std::fma(a[static_cast<size_t>(i * c.K + k)], w[static_cast<size_t>(j * c.K + k)], acc);
  if (c.out.bias == panel::Output::Bias::PerColumn) acc += bias[static_cast<size_t>(j)];
  if (c.out.bias == panel::Output::Bias::PerRow) acc += bias[static_cast<size_t>(i)];
  if (c.out.relu && !(acc > 0.0f || std::isnan(acc))) acc = 0.0f;
  return acc;
}

// Uniform in [lo, hi) from the top 53 bits.
double uniform(SplitMix64& g, double lo, double hi) {
  return lo + (hi - lo) * static_cast<double>(g.next() >> 11) * 0x1p-53;
}

uint32_t bits(float x) {
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
}

void check(const Case& c, SplitMix64& g) {
  constexpr int64_t kNr = panel::kNr<float>;
  std::vector<float> a(static_cast<size_t>(c.M * c.K)), w(static_cast<size_t>(c.N * c.K));
  for (float& x : a) x = static_cast<float>(uniform(g, -1, 1));
  for (float& x : w) x = static_cast<float>(uniform(g, -1, 1));
  const int64_t panels = (c.N + kNr - 1) / kNr;
  std::vector<float> packed(static_cast<size_t>(panels * c.K * kNr + kNr), 0.0f);
  std::vector<panel::Panel> table;
  for (int64_t j = 0; j < panels; ++j) {
    for (int64_t k = 0; k < c.K; ++k)
      for (int64_t col = 0; col < kNr && j * kNr + col < c.N; ++col)
        packed[static_cast<size_t>((j * c.K + k) * kNr + col)] = w[static_cast<size_t>((j * kNr + col) * c.K + k)];
    table.push_back({j * c.K * kNr, j * kNr, std::min(kNr, c.N - j * kNr)});
  }
  std::vector<int32_t> boff;
  for (int64_t k = 0; k < c.K; ++k) boff.push_back(static_cast<int32_t>(k * kNr));
  std::vector<float> bias(static_cast<size_t>(std::max(c.M, panels * kNr) + kNr));
  for (float& x : bias) x = static_cast<float>(uniform(g, -0.5, 0.5));
  std::vector<float> out(static_cast<size_t>(c.M * c.N), NAN);
  panel::gemm<float>(c.M, c.K, a.data(), c.K, packed.data(), boff.data(), table, out.data(), c.N, bias.data(), c.out);
  for (int64_t i = 0; i < c.M; ++i)
    for (int64_t j = 0; j < c.N; ++j)
      ASSERT_EQ(bits(out[static_cast<size_t>(i * c.N + j)]), bits(expected(a, w, bias, c, i, j)))
          << "M " << c.M << " K " << c.K << " N " << c.N << " bias " << static_cast<int>(c.out.bias) << " relu "
          << c.out.relu << " avx512 " << have_avx512f() << " at " << i << ", " << j;
}

TEST(PanelGemm, EveryOutputIsOneFmaChainInKOrder) {
  if (!panel::cpu_supported()) GTEST_SKIP() << "no AVX2 + FMA";
  SplitMix64 g(41);
  using B = panel::Output::Bias;
  for (int level : {2, 1}) {  // the AVX-512 kernels, then the AVX2 ones alone
    if (set_simd_level(level) != level) continue;
    for (int64_t M : {1, 3, 4, 5, 6, 7, 11, 12, 13, 24, 27})
      for (int64_t N : {1, 8, 9, 15, 16, 17, 50})
        for (int64_t K : {1, 50, 600}) {
          check({M, K, N, {B::None, false}}, g);
          check({M, K, N, {B::PerColumn, true}}, g);
          check({M, K, N, {B::PerRow, true}}, g);
        }
  }
  set_simd_level(-1);
}

}  // namespace
}  // namespace denote
