// The linear rule's values for f32 and f64 in AVX2 lanes across output features
// (src/kernels/exact_linear.h; the reference interpreter's folds, src/ops/native_fold.h). Every output
// is still its own left fold from zero over the inputs in index order, mul(w, x) then add, then
// + bias: a lane holds one output's running sum, and each step adds the rounded product of that
// output's weight and the input, as the plain loop does. The weights of 8 (f32) or 4 (f64) outputs
// are read as rows and transposed in registers, 8 x 8 or 4 x 4 at a time, so that one vector holds the
// outputs' weights for one input (load_columns); the transposed block serves up to four rows of x.
// The file is compiled with -ffp-contract=off (CMakeLists.txt): a fused multiply-add would round once
// where the rule rounds twice.
#include <immintrin.h>

#include <cstdint>

#include "base/cpu.h"
#include "kernels/exact_linear.h"

namespace denote::kernels {
namespace {

#define DENOTE_AVX2 __attribute__((target("avx2")))

// c[j] = the weights of rows 0..7 (at stride `in` from w) in column j: two 128-bit loads make
// each vector [row a, cols 0-3 | row a + 4, cols 0-3] (or cols 4-7), then 4 x 4 transposes within
// the 128-bit lanes (16 shuffles instead of a full 8 x 8 transpose's 24).
DENOTE_AVX2 inline void load_columns(const float* w, int64_t in, __m256 c[8]) {
  __m256 r[8];
  for (int h = 0; h < 2; ++h)
    for (int a = 0; a < 4; ++a)
      r[4 * h + a] = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w + a * in + 4 * h)),
                                          _mm_loadu_ps(w + (a + 4) * in + 4 * h), 1);
  for (int h = 0; h < 2; ++h) {
    const __m256 t0 = _mm256_unpacklo_ps(r[4 * h], r[4 * h + 1]), t1 = _mm256_unpackhi_ps(r[4 * h], r[4 * h + 1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[4 * h + 2], r[4 * h + 3]);
    const __m256 t3 = _mm256_unpackhi_ps(r[4 * h + 2], r[4 * h + 3]);
    c[4 * h + 0] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    c[4 * h + 1] = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    c[4 * h + 2] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    c[4 * h + 3] = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
  }
}

// The same for 4 rows of doubles: [row a, cols 0-1 | row a + 2, cols 0-1] (or cols 2-3), then
// unpacks.
DENOTE_AVX2 inline void load_columns(const double* w, int64_t in, __m256d c[4]) {
  __m256d r[4];
  for (int h = 0; h < 2; ++h)
    for (int a = 0; a < 2; ++a)
      r[2 * h + a] = _mm256_insertf128_pd(_mm256_castpd128_pd256(_mm_loadu_pd(w + a * in + 2 * h)),
                                          _mm_loadu_pd(w + (a + 2) * in + 2 * h), 1);
  c[0] = _mm256_unpacklo_pd(r[0], r[1]);
  c[1] = _mm256_unpackhi_pd(r[0], r[1]);
  c[2] = _mm256_unpacklo_pd(r[2], r[3]);
  c[3] = _mm256_unpackhi_pd(r[2], r[3]);
}

// The vector type of S and its operations, so that one kernel body serves both.
template <class S>
struct Lanes;
template <>
struct Lanes<float> {
  using V = __m256;
  static constexpr int kW = 8;
  DENOTE_AVX2 static V zero() { return _mm256_setzero_ps(); }
  DENOTE_AVX2 static V load(const float* p) { return _mm256_loadu_ps(p); }
  DENOTE_AVX2 static V splat(const float* p) { return _mm256_broadcast_ss(p); }
  DENOTE_AVX2 static V add(V a, V b) { return _mm256_add_ps(a, b); }
  DENOTE_AVX2 static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  DENOTE_AVX2 static void store(float* p, V v) { _mm256_storeu_ps(p, v); }
  // Column k of kW rows at stride `in` (the tail of a row, one input at a time).
  DENOTE_AVX2 static V column(const float* w, int64_t in) {
    return _mm256_setr_ps(w[0], w[in], w[2 * in], w[3 * in], w[4 * in], w[5 * in], w[6 * in], w[7 * in]);
  }
};
template <>
struct Lanes<double> {
  using V = __m256d;
  static constexpr int kW = 4;
  DENOTE_AVX2 static V zero() { return _mm256_setzero_pd(); }
  DENOTE_AVX2 static V load(const double* p) { return _mm256_loadu_pd(p); }
  DENOTE_AVX2 static V splat(const double* p) { return _mm256_broadcast_sd(p); }
  DENOTE_AVX2 static V add(V a, V b) { return _mm256_add_pd(a, b); }
  DENOTE_AVX2 static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
  DENOTE_AVX2 static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
  DENOTE_AVX2 static V column(const double* w, int64_t in) { return _mm256_setr_pd(w[0], w[in], w[2 * in], w[3 * in]); }
};

// kT groups of kW consecutive outputs (weights from w, rows at stride `in`) for kR rows of x (stride
// in); y rows at stride `out`. acc[r][t] lane j: output t * kW + j of row r.
template <class S, int kR, int kT>
DENOTE_AVX2 void block(const S* x, const S* w, const S* bias, int64_t in, int64_t out, S* y) {
  using L = Lanes<S>;
  using V = typename L::V;
  constexpr int kW = L::kW;
  V acc[kR][kT];
  for (int r = 0; r < kR; ++r)
    for (int t = 0; t < kT; ++t) acc[r][t] = L::zero();
  int64_t k = 0;
  for (; k + kW <= in; k += kW)
    for (int t = 0; t < kT; ++t) {
      V c[kW];
      load_columns(w + t * kW * in + k, in, c);  // c[j]: the kW outputs' weights for input k + j
      for (int j = 0; j < kW; ++j)
        for (int r = 0; r < kR; ++r) acc[r][t] = L::add(acc[r][t], L::mul(c[j], L::splat(x + r * in + k + j)));
    }
  for (; k < in; ++k)
    for (int t = 0; t < kT; ++t) {
      const V c = L::column(w + t * kW * in + k, in);
      for (int r = 0; r < kR; ++r) acc[r][t] = L::add(acc[r][t], L::mul(c, L::splat(x + r * in + k)));
    }
  for (int r = 0; r < kR; ++r)
    for (int t = 0; t < kT; ++t)
      L::store(y + r * out + t * kW, bias ? L::add(acc[r][t], L::load(bias + t * kW)) : acc[r][t]);
}

// Output o of kR rows of x as plain folds (the tail after the vector groups).
template <class S, int kR>
inline void plain_output(const S* x, const S* w, const S* bias, int64_t in, int64_t out, int64_t o, S* y) {
  for (int r = 0; r < kR; ++r) {
    S acc = S(0);
    for (int64_t k = 0; k < in; ++k) acc = acc + w[o * in + k] * x[r * in + k];
    y[r * out + o] = bias ? acc + bias[o] : acc;
  }
}

// kR rows: outputs in groups of kT * kW, then kW, then the last few one at a time (plain folds).
template <class S, int kR, int kT>
DENOTE_AVX2 void rows(const S* x, const S* w, const S* bias, int64_t in, int64_t out, S* y) {
  constexpr int kW = Lanes<S>::kW;
  int64_t o = 0;
  for (; o + kT * kW <= out; o += kT * kW) block<S, kR, kT>(x, w + o * in, bias ? bias + o : bias, in, out, y + o);
  for (; o + kW <= out; o += kW) block<S, kR, 1>(x, w + o * in, bias ? bias + o : bias, in, out, y + o);
  for (; o < out; ++o) plain_output<S, kR>(x, w, bias, in, out, o, y);
}

// One row of x, the outputs from the last to the first (the same values: each output's fold does not
// depend on its group). The backward pass's input gradient then reads W's rows from the first on,
// the ones this pass touched last and that are most likely still in the L2 cache (on mnistfc's 784 x
// 256 layer the two passes read 0.8 MB each, about this VM's L2), and the next forward pass starts
// from the rows the backward pass read last.
template <class S, int kT>
DENOTE_AVX2 void rows_down(const S* x, const S* w, const S* bias, int64_t in, int64_t out, S* y) {
  constexpr int kW = Lanes<S>::kW;
  const int64_t big = out / (kT * kW) * (kT * kW), mid = big + (out - big) / kW * kW;
  for (int64_t o = out; o-- > mid;) plain_output<S, 1>(x, w, bias, in, out, o, y);
  for (int64_t o = mid - kW; o >= big; o -= kW) block<S, 1, 1>(x, w + o * in, bias ? bias + o : bias, in, out, y + o);
  for (int64_t o = big - kT * kW; o >= 0; o -= kT * kW)
    block<S, 1, kT>(x, w + o * in, bias ? bias + o : bias, in, out, y + o);
}

template <class S>
DENOTE_AVX2 void linear_avx2(const S* x, const S* w, const S* bias, int64_t lead, int64_t in, int64_t out, S* y) {
  int64_t r = 0;
  for (; r + 4 <= lead; r += 4) rows<S, 4, 1>(x + r * in, w, bias, in, out, y + r * out);
  for (; r + 2 <= lead; r += 2) rows<S, 2, 2>(x + r * in, w, bias, in, out, y + r * out);
  for (; r < lead; ++r) rows_down<S, 4>(x + r * in, w, bias, in, out, y + r * out);
}

// acc[i] += s[r] * w[r * stride + i] for r = 0, 1, ... in turn, each element's sum in that order.
template <class S>
DENOTE_AVX2 void axpy_rows_avx2(S* acc, const S* s, const S* w, int64_t rows, int64_t stride, int64_t n) {
  using L = Lanes<S>;
  using V = typename L::V;
  constexpr int kW = L::kW;
  int64_t i = 0;
  for (; i + 2 * kW <= n; i += 2 * kW) {
    V a0 = L::load(acc + i), a1 = L::load(acc + i + kW);
    for (int64_t r = 0; r < rows; ++r) {
      const V sr = L::splat(s + r);
      a0 = L::add(a0, L::mul(sr, L::load(w + r * stride + i)));
      a1 = L::add(a1, L::mul(sr, L::load(w + r * stride + i + kW)));
    }
    L::store(acc + i, a0);
    L::store(acc + i + kW, a1);
  }
  for (; i < n; ++i)
    for (int64_t r = 0; r < rows; ++r) acc[i] = acc[i] + s[r] * w[r * stride + i];
}

// acc[r * n + i] += s[r] * x[i] for every r < rows (the weight gradient of one row of x).
template <class S>
DENOTE_AVX2 void outer_add_avx2(S* acc, const S* s, const S* x, int64_t rows, int64_t n) {
  using L = Lanes<S>;
  constexpr int kW = L::kW;
  for (int64_t r = 0; r < rows; ++r) {
    S* a = acc + r * n;
    const auto sr = L::splat(s + r);
    int64_t i = 0;
    for (; i + kW <= n; i += kW) L::store(a + i, L::add(L::load(a + i), L::mul(sr, L::load(x + i))));
    for (; i < n; ++i) a[i] = a[i] + s[r] * x[i];
  }
}

}  // namespace

bool outer_add_simd(float* acc, const float* s, const float* x, int64_t rows, int64_t n) {
  if (!have_avx2()) return false;
  outer_add_avx2(acc, s, x, rows, n);
  return true;
}

bool outer_add_simd(double* acc, const double* s, const double* x, int64_t rows, int64_t n) {
  if (!have_avx2()) return false;
  outer_add_avx2(acc, s, x, rows, n);
  return true;
}

bool axpy_rows_simd(float* acc, const float* s, const float* w, int64_t rows, int64_t stride, int64_t n) {
  if (!have_avx2()) return false;
  axpy_rows_avx2(acc, s, w, rows, stride, n);
  return true;
}

bool axpy_rows_simd(double* acc, const double* s, const double* w, int64_t rows, int64_t stride, int64_t n) {
  if (!have_avx2()) return false;
  axpy_rows_avx2(acc, s, w, rows, stride, n);
  return true;
}

bool linear_simd(const float* x, const float* w, const float* bias, int64_t lead, int64_t in, int64_t out, float* y) {
  if (!have_avx2() || out < 8) return false;
  linear_avx2(x, w, bias, lead, in, out, y);
  return true;
}

bool linear_simd(const double* x, const double* w, const double* bias, int64_t lead, int64_t in, int64_t out,
                 double* y) {
  if (!have_avx2() || out < 4) return false;
  linear_avx2(x, w, bias, lead, in, out, y);
  return true;
}

}  // namespace denote::kernels
