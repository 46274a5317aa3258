// Internal: what the CPU can run, read once. Loops compiled twice (target("avx2") and the
// baseline) pick their copy with have_avx2(): the fast exact formats (src/scalar/binary_fast*)
// and CROWN's row sums (src/bounds/crown_sums.cc).
#pragma once

namespace denote {

inline bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

}  // namespace denote
