// Internal: what the CPU can run, read once, and the one SIMD level switch every kernel obeys.
// Loops compiled twice or three times (target("avx2") / target("avx512f") and the baseline) pick their
// copy with have_avx2(), have_avx2_fma() or have_avx512f(): the fast exact formats
// (src/scalar/binary_fast*), CROWN's row sums, fused concretisation and sparse products
// and the kernels layer (src/kernels/: row sums, fused concretisation, sparse and sign-picked products,
// the interval mat-vec, the exact linear folds, the avx2 provider's AVX-512 panels; level 0 there also
// means no BLAS, gemm.h), plus CROWN's relaxation loops (src/bounds/crown_rules.cc). Each answers "the
// CPU has it, and the level allows it".
//
// The level: 0 the baseline copies only, 1 up to AVX2 (+FMA, F16C where a kernel needs them), 2 up to
// AVX-512. It starts at the CPU's best; set_simd_level lowers it for the whole process (tests run every
// copy on one machine: tests/unit/simd_levels_test.cc; benches compare them). Never above the CPU's.
#pragma once

#include <atomic>

namespace denote {

// __builtin_cpu_init first: a check made before libgcc's own constructor has run (a static
// initialiser's call) would otherwise read an empty CPU model and cache "no" for the whole process.
inline bool cpu_avx2() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  return yes;
}
inline bool cpu_avx2_fma() {
  static const bool yes = cpu_avx2() && (__builtin_cpu_init(), __builtin_cpu_supports("fma"));
  return yes;
}
inline bool cpu_avx512f() {
  static const bool yes = (__builtin_cpu_init(), __builtin_cpu_supports("avx512f"));
  return yes;
}
// The CPU's best level: 2 with AVX-512F, 1 with AVX2, else 0.
inline int cpu_simd_level() { return cpu_avx512f() ? 2 : cpu_avx2() ? 1 : 0; }

inline std::atomic<int> g_simd_cap{-1};  // -1: the CPU's best
// The level in effect: the cap set by set_simd_level, at most the CPU's.
inline int simd_level() {
  const int cap = g_simd_cap.load(std::memory_order_relaxed);
  const int best = cpu_simd_level();
  return cap < 0 || cap > best ? best : cap;
}
// For tests and benches: the widest kernels to use (0, 1, 2; negative: the CPU's best again); returns
// the level now in effect. Set it while no kernel runs (between calls), not from inside one.
inline int set_simd_level(int level) {
  g_simd_cap.store(level < 0 ? -1 : level, std::memory_order_relaxed);
  return simd_level();
}

inline bool have_avx2() { return simd_level() >= 1 && cpu_avx2(); }
inline bool have_avx2_fma() { return simd_level() >= 1 && cpu_avx2_fma(); }
inline bool have_avx512f() { return simd_level() >= 2 && cpu_avx512f(); }

}  // namespace denote
