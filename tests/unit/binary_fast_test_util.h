// Shared by the fast-format kernel tests: a scoped kernel level (restores the CPU's widest when it
// ends) and the evaluator's matmul fold written out with the general routines.
//
//   const SimdLevel level(1);                 // AVX2 kernels only, while alive
//   if (level.got != 1) return;               // the CPU lacks them
//   auto want = ref_matmul(f, env, a, b, m, k, n);
#pragma once

#include <cstdint>
#include <vector>

#include "denote/scalar/binary_ops.h"
#include "scalar/binary_fast_simd.h"

namespace denote::testing {

struct SimdLevel {
  explicit SimdLevel(int want) : got(fastsimd::set_simd_level(want)) {}
  ~SimdLevel() { fastsimd::set_simd_level(-1); }
  SimdLevel(const SimdLevel&) = delete;
  SimdLevel& operator=(const SimdLevel&) = delete;
  int got;
};

// out(i, j) = +0, then fp_add(acc, fp_mul(a(i, r), b(r, j))) for r < k in order.
inline std::vector<FpWord> ref_matmul(const BinaryFormat& f, FpEnv& env, const std::vector<FpWord>& a,
                                      const std::vector<FpWord>& b, int64_t m, int64_t k, int64_t n) {
  std::vector<FpWord> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      uint64_t acc = zero_word(f, false);
      for (int64_t r = 0; r < k; ++r) acc = fp_add(f, env, acc, fp_mul(f, env, a[i * k + r].bits, b[r * n + j].bits));
      out[i * n + j].bits = acc;
    }
  return out;
}

}  // namespace denote::testing
