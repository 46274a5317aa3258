// Internal: the avx2 provider's GEMM (src/providers/avx2.cc), in the kernels layer. C[M, N] = A[M, K] B[K, N] where row
// k of B starts at `b + boff[k]`: a packed weight panel (linear), an im2col matrix, or the input image itself (an
// implicit-GEMM conv: boff[k] is the offset of tap k). Each output is one accumulator fma(a_k, b_k, acc) from zero in k
// order, so a value never depends on blocking, chunking or threads. Columns come in panels of kNr (16 floats, 8 doubles
// = two 256-bit registers); rows in blocks of up to 6.
#pragma once

#include <cstdint>
#include <vector>

namespace denote::kernels::panel {

template <class S>
inline constexpr int kNr = static_cast<int>(64 / sizeof(S));

// One panel of output columns: B's columns start at b_offset, C's at c_offset, n valid: n <= kNr, or
// (f32 only, with M >= 4) up to 24; M < 4 takes panels of at most 16.
struct Panel {
  int64_t b_offset, c_offset, n;
};

// True when this CPU has AVX2 and FMA (the kernels are compiled for them with target attributes): the
// provider registers only then, and its kernels run at every level (a plan picks the provider; level 0
// of base/cpu.h switches off only the AVX-512 ones below).
bool cpu_supported();

// With 4 rows or more, f32 panels run AVX-512 kernels where the level allows (have_avx512f(),
// base/cpu.h): a full panel and the next one (up to 16 columns) together (8 rows x two zmm), other
// panels of 9 to 16 columns alone (12 rows x one zmm). The values are the same (one fma chain per
// output); set_simd_level(1) keeps the AVX2 kernels (tests and benchmarks compare the two).

// What the store adds to each sum: nothing, bias[column] (bias padded to whole panels: it is read
// at c_offset + lane), or bias[row]; then, when relu, relu (x > 0 or NaN ? x : +0) in registers.
struct Output {
  enum class Bias : uint8_t { None, PerColumn, PerRow } bias = Bias::None;
  bool relu = false;
};

// C rows [0, M) for every panel; lda and ldc in elements. B may be read up to kNr - n values past the
// last valid column of a panel (the caller pads).
template <class S>
void gemm(int64_t M, int64_t K, const S* a, int64_t lda, const S* b, const int32_t* boff,
          const std::vector<Panel>& panels, S* c, int64_t ldc, const S* bias = nullptr, Output out = {});

extern template void gemm<float>(int64_t, int64_t, const float*, int64_t, const float*, const int32_t*,
                                 const std::vector<Panel>&, float*, int64_t, const float*, Output);
extern template void gemm<double>(int64_t, int64_t, const double*, int64_t, const double*, const int32_t*,
                                  const std::vector<Panel>&, double*, int64_t, const double*, Output);

}  // namespace denote::kernels::panel
