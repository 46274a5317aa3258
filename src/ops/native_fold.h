// Internal: the contractions' folds for native scalars (f32, f64), tiled. Every output is still its own
// left fold from zero, with the rule's operations in the rule's order (mul(a, b) then add), so each
// value is bit for bit the plain loop's; a tile only interleaves independent chains (kR x kC of them)
// so that the adds' latency overlaps. (As for any native code, the sign and payload of a NaN result
// follow the hardware's operand order, which the compiler may swap for + and *.) Other scalar types (MPFR, intervals, the software formats) take
// the plain loops of the rules.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "denote/scalar/native.h"
#include "kernels/exact_linear.h"

namespace denote::rules::native_fold {

template <class S>
inline constexpr bool kTiled = std::is_floating_point_v<S>;

// y[r, c] = (sum_k w[c, k] * x[r, k]) + bias[c] for a kR x kC tile; x, w rows at stride `in`, y rows at
// `out`. Without a bias (null) y is the sum itself (W t of a JVP: no + 0, which would turn -0 into +0).
template <int kR, int kC, class Ctx, class S>
void linear_tile(Ctx& ctx, const S* x, const S* w, const S* bias, int64_t in, int64_t out, S* y) {
  S acc[kR][kC];
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < kC; ++c) acc[r][c] = ctx.zero();
  for (int64_t k = 0; k < in; ++k)
    for (int r = 0; r < kR; ++r) {
      const S xv = x[r * in + k];
      for (int c = 0; c < kC; ++c) acc[r][c] = ctx.add(acc[r][c], ctx.mul(w[c * in + k], xv));
    }
  for (int r = 0; r < kR; ++r)
    for (int c = 0; c < kC; ++c) y[r * out + c] = bias ? ctx.add(acc[r][c], bias[c]) : acc[r][c];
}

// One block of kR rows: every output column in tiles of kC, then one at a time.
template <int kR, int kC, class Ctx, class S>
void linear_rows(Ctx& ctx, const S* x, const S* w, const S* bias, int64_t in, int64_t out, S* y) {
  int64_t o = 0;
  for (; o + kC <= out; o += kC) linear_tile<kR, kC>(ctx, x, w + o * in, bias ? bias + o : bias, in, out, y + o);
  for (; o < out; ++o) linear_tile<kR, 1>(ctx, x, w + o * in, bias ? bias + o : bias, in, out, y + o);
}

// The AVX2 copies of these folds (the same values) live in the kernels layer (src/kernels/exact_linear.h).
using kernels::axpy_rows_simd;
using kernels::linear_simd;
using kernels::outer_add_simd;

// y[lead, out] = x[lead, in] W^T + b (the linear rule's values; bias may be null: no + b).
template <class Ctx, class S>
void linear(Ctx& ctx, const S* x, const S* w, const S* bias, int64_t lead, int64_t in, int64_t out, S* y) {
  if constexpr (std::is_base_of_v<NativeContext<S>, Ctx>)
    if (linear_simd(x, w, bias, lead, in, out, y)) return;
  int64_t r = 0;
  for (; r + 2 <= lead; r += 2) linear_rows<2, 4>(ctx, x + r * in, w, bias, in, out, y + r * out);
  for (; r < lead; ++r) linear_rows<1, 8>(ctx, x + r * in, w, bias, in, out, y + r * out);
}

// y[j] = sum over r of mul(a[r], b[r, j]) for j < n (b is [k, n]), each a left fold from zero as
// eval_Matmul sums it. The j loop is innermost, over blocks of 256 columns whose y stays in L1: the
// same operations per output value in the same order, interleaved across values (and vectorised).
template <class Ctx, class S>
void matmul_row(Ctx& ctx, const S* __restrict a, const S* __restrict b, S* __restrict y, int64_t k, int64_t n) {
  constexpr int64_t kBlock = 256;
  for (int64_t j0 = 0; j0 < n; j0 += kBlock) {
    const int64_t j1 = std::min(n, j0 + kBlock);
    for (int64_t j = j0; j < j1; ++j) y[j] = ctx.zero();
    for (int64_t r = 0; r < k; ++r) {
      const S ar = a[r];
      const S* __restrict br = b + r * n;
      for (int64_t j = j0; j < j1; ++j) y[j] = ctx.add(y[j], ctx.mul(ar, br[j]));
    }
  }
}

// c[m, n] = a[m, k] b[k, n], one matmul_row per row.
template <class Ctx, class S>
void matmul(Ctx& ctx, const S* a, const S* b, int64_t m, int64_t k, int64_t n, S* c) {
  for (int64_t i = 0; i < m; ++i) matmul_row(ctx, a + i * k, b, c + i * n, k, n);
}

// The sums (before bias) of kC consecutive output channels of one group at one window position:
// acc[q] = sum over ic, then taps, of mul(x[ic, tap.in], w[q][ic, tap.k]). w: output channel q's
// weights start at q * group_in * k_vol.
template <int kC, class Ctx, class S, class Taps>
void conv_sums(Ctx& ctx, const S* x, const S* w, int64_t group_in, int64_t in_vol, int64_t k_vol, const Taps& taps,
               S* acc) {
  for (int q = 0; q < kC; ++q) acc[q] = ctx.zero();
  const int64_t w_stride = group_in * k_vol;
  for (int64_t ic = 0; ic < group_in; ++ic) {
    const S* xs = x + ic * in_vol;
    const S* ws = w + ic * k_vol;
    for (const auto& t : taps) {
      const S xv = xs[t.in];
      for (int q = 0; q < kC; ++q) acc[q] = ctx.add(acc[q], ctx.mul(xv, ws[q * w_stride + t.k]));
    }
  }
}

}  // namespace denote::rules::native_fold
