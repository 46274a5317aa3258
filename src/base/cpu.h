// Internal: what the CPU can run, read once. Loops compiled twice (target("avx2") and the
// baseline) pick their copy with have_avx2(): the fast exact formats (src/scalar/binary_fast*)
// and CROWN's row sums (src/bounds/crown_sums.cc); the interval mat-vec
// (src/bounds/interval_matvec.cc) also has AVX2+FMA and AVX-512F copies.
#pragma once

namespace denote {

inline bool have_avx2() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
inline bool have_avx2_fma() {
  static const bool yes = have_avx2() && __builtin_cpu_supports("fma");
  return yes;
}
inline bool have_avx512f() {
  static const bool yes = __builtin_cpu_supports("avx512f");
  return yes;
}

}  // namespace denote
