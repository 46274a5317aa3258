// Deterministic test values in [-scale, scale): a 64-bit linear congruential generator (Knuth's MMIX
// constants) started at `state`, the top 53 bits of each step. The CROWN, IBP and conv tests draw their
// weights and boxes from it.
#pragma once

#include <cstdint>
#include <vector>

namespace denote {

inline std::vector<double> lcg_values(int64_t n, uint64_t state, double scale = 0.5) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = scale * (static_cast<double>(state >> 11) * 0x1p-53 * 2 - 1);
  }
  return v;
}

}  // namespace denote
