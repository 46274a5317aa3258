// Fast exact formats: inner-product folds (binary_fast.h, fast_matmul / fast_linear; binary_fast_fold.h,
// FastConv: the same lanes over a conv's outputs, the steps of its window). Operands are
// decoded to doubles once; kLanes outputs are folded at once, each in its own left-to-right order,
// with the accumulator held as the double of its format value. A lane whose step the fast path
// cannot settle (a subnormal or overflowing product or sum) does that step with the general
// routine on words; a lane whose accumulator became NaN or infinite stays on words from then on.
// Inputs holding NaN, infinity or malformed words take the one-at-a-time path instead (conv: the op
// table's rule), so that errors and NaN payloads come out exactly as in the evaluator's scalar order.
// fast_matmul / fast_linear of bfloat16 and binary16 in nearest-even go first to the binary32 lanes
// of fastsimd::rne_fold (AVX-512 or AVX2 + F16C), which hands back the blocks where a step overflowed.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "denote/scalar/binary_fast.h"
#include "kernels/exact_linear.h"
#include "scalar/binary_fast_fold.h"
#include "scalar/binary_fast_kernel.h"
#include "scalar/binary_fast_simd.h"
#include "scalar/hardware_flags.h"
#include "scalar/binary_round.h"

namespace denote {

using fastk::bits_of;
using fastk::dbl;
using fastk::Lane;

namespace {

constexpr int kLanes = 16;  // four AVX2 vectors of accumulators: enough to hide the step latency

// out[i] = the decoded double of w[i], i < n; nonzero when one of them is NaN, infinite or malformed
// (they decode to kNanBits exactly). Branch-free, so that the loop vectorises.
template <class P>
[[gnu::always_inline]] inline uint64_t decode_run(const P& p, const FpWord* w, size_t n, double* out) {
  uint64_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const double v = fastk::decode(p, w[i].bits);
    out[i] = v;
    bad |= fastk::mask_if(bits_of(v) == fastk::kNanBits);
  }
  return bad;
}
template <class P>
__attribute__((target("avx2"))) uint64_t decode_run_avx2(const P& p, const FpWord* w, size_t n, double* out) {
  return decode_run(p, w, n, out);
}
template <class P>
uint64_t decode_run_base(const P& p, const FpWord* w, size_t n, double* out) {
  return decode_run(p, w, n, out);
}

// wt[r * out + o] = the decoded double of w[o * in + r] (the weights transposed, so that kLanes outputs
// read one row of wt), through tiles of 8 outputs x 64 inputs decoded row-wise and written one cache
// line per row; nonzero when a word is NaN, infinite or malformed.
template <class P>
[[gnu::always_inline]] inline uint64_t decode_transposed(const P& p, const FpWord* w, int64_t in, int64_t out,
                                                         double* wt) {
  constexpr int64_t kStrip = 8, kSeg = 64;
  double tile[kStrip * kSeg];
  uint64_t bad = 0;
  for (int64_t o0 = 0; o0 < out; o0 += kStrip) {
    const int64_t lanes = std::min(kStrip, out - o0);
    for (int64_t r0 = 0; r0 < in; r0 += kSeg) {
      const int64_t len = std::min(kSeg, in - r0);
      for (int64_t l = 0; l < lanes; ++l)
        bad |= decode_run(p, w + (o0 + l) * in + r0, static_cast<size_t>(len), tile + l * kSeg);
      for (int64_t r = 0; r < len; ++r)
        for (int64_t l = 0; l < lanes; ++l) wt[(r0 + r) * out + o0 + l] = tile[l * kSeg + r];
    }
  }
  return bad;
}
template <class P>
__attribute__((target("avx2"))) uint64_t decode_transposed_avx2(const P& p, const FpWord* w, int64_t in, int64_t out,
                                                                double* wt) {
  return decode_transposed(p, w, in, out, wt);
}
template <class P>
uint64_t decode_transposed_base(const P& p, const FpWord* w, int64_t in, int64_t out, double* wt) {
  return decode_transposed(p, w, in, out, wt);
}

// The decoded doubles of n words; false when one of them is NaN, infinite or malformed.
template <class P>
bool decode_all(const P& p, const FpWord* w, size_t n, std::vector<double>& out) {
  out.resize(n);
  return (fastk::have_avx2() ? decode_run_avx2(p, w, n, out.data()) : decode_run_base(p, w, n, out.data())) == 0;
}

// The word of a finite format value held as a double (normal, subnormal or zero).
uint64_t word_of(const FastFormat& ff, double v) {
  const uint64_t b = bits_of(v);
  const uint64_t mag = b & ~fastk::kSign;
  uint64_t w = 0;
  if (mag >= ff.min_normal_bits) {
    w = (mag >> ff.drop) - ff.exp_adjust;
  } else {
    w = static_cast<uint64_t>(std::fabs(v) / ff.sub_scale);  // exact: a multiple of the subnormal unit
  }
  const bool neg = (b & fastk::kSign) != 0 && (mag != 0 || ff.encoding != Encoding::Fnuz);
  return neg ? w | ff.sign_word : w;
}

// What one fold needs: the decoded operand rows and columns, and the words for the general path.
// Output (i, j) folds acc = add(acc, mul(A(i, r), B(r, j))) over r < k, where A(i, r) is
// ad[i * k + r] and B(r, j) is bd[r * n + j]; `b_first` calls mul(B, A) (linear's mul(w, x) order).
struct FoldInput {
  const double* ad;
  const double* bd;
  const FpWord* aw;  // words, same layout as ad
  const FpWord* bw;  // words of B; element (r, j) at bw[r * b_row + j * b_col]
  int64_t b_row, b_col;
  int64_t k, n;
  bool b_first;
};

struct LaneState {
  double acc[kLanes];
  uint64_t word[kLanes];  // the accumulator's word while `slow`
  uint64_t slow[kLanes];  // 1: the accumulator is NaN or infinite and stays on words
};

// One step of lane l on words (the general routine), for lanes the fast path cannot settle: x and
// y are the step's operand words (mul(y, x) when `b_first`).
void slow_step(const FastFormat& ff, FpEnv& env, uint64_t x, uint64_t y, bool b_first, LaneState& st, int l) {
  const uint64_t prod = b_first ? fp_mul(ff.format, env, y, x) : fp_mul(ff.format, env, x, y);
  const uint64_t acc = st.slow[l] ? st.word[l] : word_of(ff, st.acc[l]);
  const uint64_t sum = fp_add(ff.format, env, acc, prod);
  const double v = word_to_double(ff.format, sum);
  st.slow[l] = std::isfinite(v) ? 0 : 1;
  st.word[l] = sum;
  if (!st.slow[l]) st.acc[l] = v;
}

// One step of every lane: next[l] = acc[l] + x[l * XS] * y[l], rounded (XS = 0: one x for all lanes);
// lane_bad[l] = 1 where the fast path cannot settle it (or the lane is on words). The loop has no
// branches, so it vectorises; the fast lanes' inexact and underflow are or-ed into `inexact` and
// `underflow`. Returns whether a lane is bad.
template <class P, Rounding R, int XS>
[[gnu::always_inline]] inline uint64_t step_lanes(const P& p, const double* x, const double* y, const LaneState& st,
                                                  double* next, uint64_t* lane_bad, uint64_t& inexact,
                                                  uint64_t& underflow) {
  uint64_t bad = 0, inex = 0, under = 0;
  const double x0 = x[0];  // read once: one value for all lanes when XS == 0
  for (int l = 0; l < kLanes; ++l) {
    const Lane m = fastk::mul_lane<P, R>(p, XS == 0 ? x0 : x[l * XS], y[l]);
    const Lane s = fastk::add_lane<P, R>(p, st.acc[l], dbl(m.bits));
    next[l] = dbl(s.bits);
    const uint64_t b = m.bad | s.bad | st.slow[l];
    lane_bad[l] = b;
    inex |= (m.inexact | s.inexact) & (b ^ 1);
    under |= (m.underflow | s.underflow) & (b ^ 1);
    bad |= b;
  }
  inexact |= inex;
  underflow |= under;
  return bad;
}

// The words of the lanes at the end of a fold, and the fast lanes' flags into `flags`.
void finish_lanes(const FastFormat& ff, const LaneState& st, uint64_t inexact, uint64_t underflow,
                  uint64_t* out_words, uint64_t& flags) {
  for (int l = 0; l < kLanes; ++l) out_words[l] = st.slow[l] ? st.word[l] : word_of(ff, st.acc[l]);
  flags |= (inexact ? uint64_t{kFpInexact} : 0) | (underflow ? uint64_t{kFpUnderflow} : 0);
}

// Folds outputs (i, j0 .. j0 + kLanes): B's rows for these lanes start at bd + r * stride (a padded
// copy for the last, partial block, whose extra lanes hold zeros and are never bad).
template <class P, Rounding R>
[[gnu::always_inline]] inline void fold_block(const P& params, const FastFormat& ff, FpEnv& env, const FoldInput& in,
                                              int64_t i, int64_t j0, const double* bd, int64_t stride,
                                              uint64_t* out_words, uint64_t& flags) {
  const P p = params;  // a local copy, kept in registers
  LaneState st{};
  uint64_t inexact = 0, underflow = 0;
  for (int64_t r = 0; r < in.k; ++r) {
    double next[kLanes];
    uint64_t lane_bad[kLanes];
    if (!step_lanes<P, R, 0>(p, in.ad + i * in.k + r, bd + r * stride, st, next, lane_bad, inexact, underflow)) {
      for (int l = 0; l < kLanes; ++l) st.acc[l] = next[l];
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (lane_bad[l]) {
        slow_step(ff, env, in.aw[i * in.k + r].bits, in.bw[r * in.b_row + (j0 + l) * in.b_col].bits, in.b_first, st,
                  l);
      } else {
        st.acc[l] = next[l];
      }
    }
  }
  finish_lanes(ff, st, inexact, underflow, out_words, flags);
}

// The same compiled for AVX2 where the CPU has it.
template <class P, Rounding R>
__attribute__((target("avx2"))) void fold_block_avx2(const P& p, const FastFormat& ff, FpEnv& env,
                                                     const FoldInput& in, int64_t i, int64_t j0, const double* bd,
                                                     int64_t stride, uint64_t* out_words, uint64_t& flags) {
  fold_block<P, R>(p, ff, env, in, i, j0, bd, stride, out_words, flags);
}
template <class P, Rounding R>
void fold_block_base(const P& p, const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t i, int64_t j0,
                     const double* bd, int64_t stride, uint64_t* out_words, uint64_t& flags) {
  fold_block<P, R>(p, ff, env, in, i, j0, bd, stride, out_words, flags);
}

// One output the plain way: fast_mul / fast_add on words in order (the tail columns).
uint64_t fold_one(const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t i, int64_t j) {
  uint64_t acc = zero_word(ff.format, false);
  for (int64_t r = 0; r < in.k; ++r) {
    const uint64_t x = in.aw[i * in.k + r].bits;
    const uint64_t y = in.bw[r * in.b_row + j * in.b_col].bits;
    acc = fast_add(ff, env, acc, in.b_first ? fast_mul(ff, env, y, x) : fast_mul(ff, env, x, y));
  }
  return acc;
}

// The outputs (i, j) for rows i0 <= i < i1 and the blocks of kLanes columns from j0 (a multiple of
// kLanes) to j1, into out[i * n + j], by the double lanes; flags or-ed into env.
void fold_lanes(const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t i0, int64_t i1, int64_t j0, int64_t j1,
                FpWord* out) {
  uint64_t flags = 0;
  const bool avx2 = fastk::have_avx2();
  // The last, partial block of columns reads a copy of B's columns padded with zeros.
  const int64_t full = in.n / kLanes * kLanes, rest = in.n - full;
  std::vector<double> pad(rest > 0 && j1 > full ? static_cast<size_t>(in.k * kLanes) : 0, 0.0);
  for (int64_t r = 0; !pad.empty() && r < in.k; ++r)
    for (int64_t l = 0; l < rest; ++l) pad[r * kLanes + l] = in.bd[r * in.n + full + l];
  fastk::with_params(ff, env.rounding, [&](const auto& p, auto mode) {
    using P = std::decay_t<decltype(p)>;
    constexpr Rounding R = decltype(mode)::value;
    auto* const block = avx2 ? &fold_block_avx2<P, R> : &fold_block_base<P, R>;
    for (int64_t i = i0; i < i1; ++i) {
      uint64_t words[kLanes];
      for (int64_t j = j0; j < std::min(j1, full); j += kLanes) {
        block(p, ff, env, in, i, j, in.bd + j, in.n, words, flags);
        for (int l = 0; l < kLanes; ++l) out[i * in.n + j + l].bits = words[l];
      }
      if (pad.empty()) continue;
      block(p, ff, env, in, i, full, pad.data(), kLanes, words, flags);
      for (int64_t l = 0; l < rest; ++l) out[i * in.n + full + l].bits = words[l];
    }
  });
  env.flags |= static_cast<uint32_t>(flags);
}

// Every output (i, j), i < m, j < n, into out[i * n + j]: bfloat16/binary16 in nearest-even by the
// binary32 lanes of fastsimd::rne_fold (a block it hands back, by the double lanes), else by the
// double lanes.
// binary32 in nearest-even: the hardware's own binary32 operations in the fold's order (the kernels
// layer's fixed-order rows, kernels::axpy_rows_simd: acc = +0, then acc + A(i, r) B(r, j) for r in
// turn, each rounded), the flags read from the floating-point environment (the caller's flags
// restored). False, with nothing written, where the CPU lacks the lanes or an operation was invalid
// (the hardware's default NaN is not the format's canonical one: the double lanes redo it).
bool fold_binary32(const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t m, FpWord* out) {
  if (!(ff.format == binary32_format()) || env.rounding != Rounding::NearestEven || fastsimd::simd_level() < 1 ||
      !fastsimd::mxcsr_is_default() || m <= 0 || in.n <= 0)
    return false;
  std::vector<float> a(static_cast<size_t>(m * in.k)), b(static_cast<size_t>(in.k * in.n)), acc(static_cast<size_t>(in.n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(in.ad[i]);  // binary32 values: exact
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(in.bd[i]);
  std::vector<uint32_t> words(static_cast<size_t>(m * in.n));
  bool ok = true;
  const uint32_t raised = hardware_flags([&] {
    for (int64_t i = 0; ok && i < m; ++i) {
      std::fill(acc.begin(), acc.end(), 0.0f);
      ok = kernels::axpy_rows_simd(acc.data(), a.data() + i * in.k, b.data(), in.k, in.n, in.n);
      std::memcpy(words.data() + i * in.n, acc.data(), acc.size() * sizeof(float));
    }
  });
  if (!ok || (raised & kFpInvalid) != 0) return false;
  for (size_t i = 0; i < words.size(); ++i) out[i].bits = words[i];
  env.flags |= raised;
  return true;
}

void fold_all(const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t m, FpWord* out) {
  if (fold_binary32(ff, env, in, m, out)) return;
  uint32_t flags = 0;
  if (fastsimd::rne_fold(ff, env.rounding, in.ad, in.bd, m, in.k, in.n, out, flags, [&](int64_t i, int64_t j0) {
        fold_lanes(ff, env, in, i, i + 1, j0, j0 + kLanes, out);
      })) {
    env.flags |= flags;
    return;
  }
  fold_lanes(ff, env, in, 0, m, 0, in.n, out);
}

// True when every word of both operands is a finite value of the format (decoded into ad, bd).
bool decode_operands(const FastFormat& ff, const FpWord* a, size_t na, const FpWord* b, size_t nb,
                     std::vector<double>& ad, std::vector<double>& bd) {
  bool ok = false;
  fastk::with_params(ff, Rounding::NearestEven, [&](const auto& p, auto) {
    ok = decode_all(p, a, na, ad) && decode_all(p, b, nb, bd);
  });
  return ok;
}

}  // namespace

void fast_matmul(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, int64_t m,
                 int64_t k, int64_t n) {
  std::vector<double> ad, bd;
  FoldInput in{nullptr, nullptr, a, b, n, 1, k, n, false};
  if (!decode_operands(ff, a, static_cast<size_t>(m * k), b, static_cast<size_t>(k * n), ad, bd)) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * n + j].bits = fold_one(ff, env, in, i, j);
    return;
  }
  in.ad = ad.data();
  in.bd = bd.data();
  fold_all(ff, env, in, m, out);
}

void fast_linear(const FastFormat& ff, FpEnv& env, const FpWord* x, const FpWord* w, const FpWord* bias,
                 FpWord* y, int64_t rows, int64_t in_dim, int64_t out_dim) {
  // B(r, o) = w[o * in + r]: the weights transposed, so that kLanes outputs read one row.
  std::vector<double> xd, bd;
  FoldInput in{nullptr, nullptr, x, w, 1, in_dim, in_dim, out_dim, true};
  bool fast = decode_operands(ff, x, static_cast<size_t>(rows * in_dim), bias, static_cast<size_t>(out_dim), xd, bd);
  std::unique_ptr<double[]> wt;  // written whole by decode_transposed: no zero fill
  if (fast) {
    wt.reset(new double[static_cast<size_t>(in_dim * out_dim)]);
    fastk::with_params(ff, Rounding::NearestEven, [&](const auto& p, auto) {
      fast = (fastk::have_avx2() ? decode_transposed_avx2(p, w, in_dim, out_dim, wt.get())
                                 : decode_transposed_base(p, w, in_dim, out_dim, wt.get())) == 0;
    });
  }
  if (!fast) {  // the evaluator's order exactly: each output's fold, then its bias
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t o = 0; o < out_dim; ++o)
        y[i * out_dim + o].bits = fast_add(ff, env, fold_one(ff, env, in, i, o), bias[o].bits);
    return;
  }
  in.ad = xd.data();
  in.bd = wt.get();
  fold_all(ff, env, in, rows, y);
  for (int64_t i = 0; i < rows; ++i)
    fast_add_n(ff, env, y + i * out_dim, bias, y + i * out_dim, static_cast<size_t>(out_dim));
}

// ---- conv (FastConv, binary_fast_fold.h) ----

namespace {

// The steps of one (l, group) of a conv position and one block of kLanes output channels: step r
// multiplies x value xv[r] (word xw[xi[r]]) by the weights of row kp[r] (ic * k_vol + k), which
// for lane l are wt[kp[r] * kLanes + l] (packed, zeros past the group's last channel) and the word
// ww[(o0 + l) * w_stride + kp[r]]; the bias of lane l is bd[l] (zero past the last channel), word bw[l].
struct ConvBlock {
  const double* xv;
  const int64_t* xi;
  const int64_t* kp;
  int64_t steps;
  const double* wt;
  const FpWord* xw;
  const FpWord* ww;
  int64_t w_stride, o0;
  const double* bd;
  const FpWord* bw;
};

// out_words[l] = add(acc[l], bias[l]) (bias bd[l], word bw[l]): on the fast lanes in the lanes' loop,
// else fast_add on words.
template <class P, Rounding R>
[[gnu::always_inline]] inline void add_bias(const P& p, const FastFormat& ff, FpEnv& env, const double* bd,
                                            const FpWord* bw, const LaneState& st, uint64_t inexact,
                                            uint64_t underflow, uint64_t* out_words, uint64_t& flags) {
  uint64_t lane_bad[kLanes];
  uint64_t bad = 0;
  for (int l = 0; l < kLanes; ++l) {
    const Lane s = fastk::add_lane<P, R>(p, st.acc[l], bd[l]);
    const uint64_t b = s.bad | st.slow[l];
    lane_bad[l] = b;
    out_words[l] = s.word;
    inexact |= s.inexact & (b ^ 1);
    underflow |= s.underflow & (b ^ 1);
    bad |= b;
  }
  for (int l = 0; bad && l < kLanes; ++l) {
    if (!lane_bad[l]) continue;
    const uint64_t acc = st.slow[l] ? st.word[l] : word_of(ff, st.acc[l]);
    out_words[l] = fast_add(ff, env, acc, bw[l].bits);
  }
  flags |= (inexact ? uint64_t{kFpInexact} : 0) | (underflow ? uint64_t{kFpUnderflow} : 0);
}

// The block's outputs, bias added, into out_words (the rule's words for the group's lanes).
template <class P, Rounding R>
[[gnu::always_inline]] inline void conv_block(const P& params, const FastFormat& ff, FpEnv& env, const ConvBlock& in,
                                              uint64_t* out_words, uint64_t& flags) {
  const P p = params;
  LaneState st{};
  uint64_t inexact = 0, underflow = 0;
  for (int64_t r = 0; r < in.steps; ++r) {
    double next[kLanes];
    uint64_t lane_bad[kLanes];
    const int64_t row = in.kp[r];
    if (!step_lanes<P, R, 0>(p, in.xv + r, in.wt + row * kLanes, st, next, lane_bad, inexact, underflow)) {
      for (int l = 0; l < kLanes; ++l) st.acc[l] = next[l];
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (lane_bad[l]) {
        slow_step(ff, env, in.xw[in.xi[r]].bits, in.ww[(in.o0 + l) * in.w_stride + row].bits, false, st, l);
      } else {
        st.acc[l] = next[l];
      }
    }
  }
  add_bias<P, R>(p, ff, env, in.bd, in.bw, st, inexact, underflow, out_words, flags);
}

// Small groups (fewer than kLanes / 2 output channels): kLanes outputs (l, o) of one position, any
// group, each lane with its own x and w: step r reads x at xb[l] + xo[r] and w at wb[l] + wo[r]
// (xd/xw, wd/ww; the lanes past the last output read a block of zeros and are never bad).
struct GatherBlock {
  const int64_t* xo;
  const int64_t* wo;
  int64_t steps;
  const int64_t* xb;
  const int64_t* wb;
  const double* xd;
  const double* wd;
  const FpWord* xw;
  const FpWord* ww;
  const double* bd;
  const FpWord* bw;
};

template <class P, Rounding R>
[[gnu::always_inline]] inline void gather_block(const P& params, const FastFormat& ff, FpEnv& env,
                                                const GatherBlock& in, uint64_t* out_words, uint64_t& flags) {
  const P p = params;
  LaneState st{};
  uint64_t inexact = 0, underflow = 0;
  for (int64_t r = 0; r < in.steps; ++r) {
    double xv[kLanes], yv[kLanes], next[kLanes];
    uint64_t lane_bad[kLanes];
    const int64_t xo = in.xo[r], wo = in.wo[r];
    for (int l = 0; l < kLanes; ++l) xv[l] = in.xd[in.xb[l] + xo], yv[l] = in.wd[in.wb[l] + wo];
    if (!step_lanes<P, R, 1>(p, xv, yv, st, next, lane_bad, inexact, underflow)) {
      for (int l = 0; l < kLanes; ++l) st.acc[l] = next[l];
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (lane_bad[l]) {
        slow_step(ff, env, in.xw[in.xb[l] + xo].bits, in.ww[in.wb[l] + wo].bits, false, st, l);
      } else {
        st.acc[l] = next[l];
      }
    }
  }
  add_bias<P, R>(p, ff, env, in.bd, in.bw, st, inexact, underflow, out_words, flags);
}

// One block of a conv (ConvBlock) or a gather fold (GatherBlock), compiled twice: with AVX2 and for the base ISA.
template <class P, Rounding R, class Block>
[[gnu::always_inline]] inline void run_block(const P& p, const FastFormat& ff, FpEnv& env, const Block& in,
                                             uint64_t* out_words, uint64_t& flags) {
  if constexpr (std::is_same_v<Block, ConvBlock>) conv_block<P, R>(p, ff, env, in, out_words, flags);
  else gather_block<P, R>(p, ff, env, in, out_words, flags);
}
template <class P, Rounding R, class Block>
__attribute__((target("avx2"))) void block_avx2(const P& p, const FastFormat& ff, FpEnv& env, const Block& in,
                                                uint64_t* out_words, uint64_t& flags) {
  run_block<P, R>(p, ff, env, in, out_words, flags);
}
template <class P, Rounding R, class Block>
void block_base(const P& p, const FastFormat& ff, FpEnv& env, const Block& in, uint64_t* out_words, uint64_t& flags) {
  run_block<P, R>(p, ff, env, in, out_words, flags);
}

}  // namespace

bool FastConv::prepare(const FastFormat& ff, const FpWord* x, const FpWord* w, const FpWord* bias,
                       const FastConvDims& d) {
  ff_ = &ff;
  x_ = x, w_ = w, bias_ = bias;
  d_ = d;
  group_in_ = d.cin / d.groups;
  group_out_ = d.cout / d.groups;
  blocks_ = (group_out_ + kLanes - 1) / kLanes;
  gather_ = group_out_ < kLanes / 2;
  std::vector<double> none;
  if (!decode_operands(ff, x, static_cast<size_t>(d.lead * d.cin * d.in_vol), w,
                       static_cast<size_t>(d.cout * group_in_ * d.k_vol), xd_, wd_) ||
      !decode_operands(ff, bias, static_cast<size_t>(d.cout), bias, 0, bd_, none))
    return false;
  const int64_t rows = group_in_ * d.k_vol;
  if (gather_) {  // the zero blocks that the lanes past the last output read
    xd_.resize(xd_.size() + static_cast<size_t>(group_in_ * d.in_vol), 0.0);
    wd_.resize(wd_.size() + static_cast<size_t>(rows), 0.0);
    return true;
  }
  bt_.assign(static_cast<size_t>(d.groups * blocks_ * kLanes), 0.0);
  wt_.assign(static_cast<size_t>(d.groups * blocks_ * rows * kLanes), 0.0);
  for (int64_t o = 0; o < d.cout; ++o) {
    const int64_t g = o / group_out_, q = o % group_out_;
    double* dst = wt_.data() + (g * blocks_ + q / kLanes) * rows * kLanes + q % kLanes;
    for (int64_t row = 0; row < rows; ++row) dst[row * kLanes] = wd_[static_cast<size_t>(o * rows + row)];
    bt_[static_cast<size_t>((g * blocks_ + q / kLanes) * kLanes + q % kLanes)] = bd_[static_cast<size_t>(o)];
  }
  prepare_lanes32();
  return true;
}

// binary32 copies for fastsimd::rne_conv_blocks where it may run (the mode is the call's).
void FastConv::prepare_lanes32() {
  xd32_.clear(), wt32_.clear(), bt32_.clear();
  if (!fastsimd::conv_lanes_apply(*ff_, Rounding::NearestEven)) return;
  auto tiny = [](const std::vector<double>& v) {
    return fastsimd::has_tiny_bf16_operand(v.data(), static_cast<int64_t>(v.size()));
  };
  if (ff_->kind == FastFormat::Kind::Bfloat16 && (tiny(xd_) || tiny(wt_))) return;
  xd32_.assign(xd_.begin(), xd_.end());  // exact: values of a format of <= 16 bits
  wt32_.assign(wt_.begin(), wt_.end());
  bt32_.assign(bt_.begin(), bt_.end());
}

void FastConv::position(FpEnv& env, const ConvTap* taps, size_t n_taps, int64_t p, int64_t out_vol, FpWord* out,
                        FastConvScratch& scratch) const {
  if (gather_) return gather_position(env, taps, n_taps, p, out_vol, out, scratch);
  std::vector<double>& step_x = scratch.x;
  std::vector<int64_t>& step_xi = scratch.xi;
  std::vector<int64_t>& step_k = scratch.k;
  const FastFormat& ff = *ff_;
  const int64_t n = static_cast<int64_t>(n_taps), steps = group_in_ * n, rows = group_in_ * d_.k_vol;
  step_x.resize(static_cast<size_t>(steps));
  step_xi.resize(static_cast<size_t>(steps));
  step_k.resize(static_cast<size_t>(steps));
  // The binary32 lanes take up to 4 blocks at a time; what they hand back (an overflow) and every
  // block where they do not apply go through the double lanes below.
  const bool lanes32 = !wt32_.empty() && fastsimd::conv_lanes_apply(ff, env.rounding);
  if (lanes32) scratch.x32.resize(static_cast<size_t>(steps));
  uint64_t flags = 0;
  const bool avx2 = fastk::have_avx2();
  fastk::with_params(ff, env.rounding, [&](const auto& params, auto mode) {
    using P = std::decay_t<decltype(params)>;
    constexpr Rounding R = decltype(mode)::value;
    auto* const block = avx2 ? &block_avx2<P, R, ConvBlock> : &block_base<P, R, ConvBlock>;
    for (int64_t l = 0; l < d_.lead; ++l) {
      for (int64_t g = 0; g < d_.groups; ++g) {
        for (int64_t ic = 0, s = 0; ic < group_in_; ++ic) {  // the rule's order: channels, then taps
          const int64_t base = (l * d_.cin + g * group_in_ + ic) * d_.in_vol;
          for (int64_t t = 0; t < n; ++t, ++s) {
            step_xi[s] = base + taps[t].in;
            step_x[s] = xd_[static_cast<size_t>(step_xi[s])];
            step_k[s] = ic * d_.k_vol + taps[t].k;
          }
        }
        if (lanes32)
          for (int64_t s = 0; s < steps; ++s) scratch.x32[s] = xd32_[static_cast<size_t>(step_xi[s])];
        for (int64_t b0 = 0; b0 < blocks_; b0 += 4) {
          const int count = static_cast<int>(std::min<int64_t>(4, blocks_ - b0));
          if (lanes32) {
            const fastsimd::ConvLanes cl{scratch.x32.data(), step_k.data(), steps,
                                         wt32_.data() + (g * blocks_ + b0) * rows * kLanes, rows * kLanes,
                                         bt32_.data() + (g * blocks_ + b0) * kLanes, count};
            uint64_t words[4 * kLanes];
            uint32_t f = 0;
            if (fastsimd::rne_conv_blocks(ff, cl, words, f)) {
              flags |= f;
              for (int64_t q = 0; q < count * kLanes && b0 * kLanes + q < group_out_; ++q)
                out[(l * d_.cout + g * group_out_ + b0 * kLanes + q) * out_vol + p].bits = words[q];
              continue;
            }
          }
          for (int64_t b = b0; b < b0 + count; ++b) {
            const int64_t o0 = g * group_out_ + b * kLanes;
            const ConvBlock in{step_x.data(), step_xi.data(), step_k.data(), steps,
                               wt_.data() + (g * blocks_ + b) * rows * kLanes, x_, w_, rows, o0,
                               bt_.data() + (g * blocks_ + b) * kLanes, bias_ + o0};
            uint64_t words[kLanes];
            block(params, ff, env, in, words, flags);
            const int64_t lanes = std::min<int64_t>(kLanes, group_out_ - b * kLanes);
            for (int64_t q = 0; q < lanes; ++q) out[(l * d_.cout + o0 + q) * out_vol + p].bits = words[q];
          }
        }
      }
    }
  });
  env.flags |= static_cast<uint32_t>(flags);
}

void FastConv::gather_position(FpEnv& env, const ConvTap* taps, size_t n_taps, int64_t p, int64_t out_vol,
                               FpWord* out, FastConvScratch& scratch) const {
  std::vector<int64_t>& step_xi = scratch.xi;
  std::vector<int64_t>& step_k = scratch.k;
  const FastFormat& ff = *ff_;
  const int64_t n = static_cast<int64_t>(n_taps), steps = group_in_ * n, rows = group_in_ * d_.k_vol;
  const int64_t total = d_.lead * d_.cout;
  step_xi.resize(static_cast<size_t>(steps));
  step_k.resize(static_cast<size_t>(steps));
  for (int64_t ic = 0, s = 0; ic < group_in_; ++ic)  // the rule's order: channels, then taps
    for (int64_t t = 0; t < n; ++t, ++s) {
      step_xi[s] = ic * d_.in_vol + taps[t].in;
      step_k[s] = ic * d_.k_vol + taps[t].k;
    }
  uint64_t flags = 0;
  const bool avx2 = fastk::have_avx2();
  fastk::with_params(ff, env.rounding, [&](const auto& params, auto mode) {
    using P = std::decay_t<decltype(params)>;
    constexpr Rounding R = decltype(mode)::value;
    auto* const block = avx2 ? &block_avx2<P, R, GatherBlock> : &block_base<P, R, GatherBlock>;
    for (int64_t j0 = 0; j0 < total; j0 += kLanes) {
      int64_t xb[kLanes], wb[kLanes];
      double bd[kLanes];
      FpWord bw[kLanes];
      for (int64_t q = 0; q < kLanes; ++q) {  // output j = l * cout + o
        const int64_t j = j0 + q, l = j / d_.cout, o = j % d_.cout;
        const bool real = j < total;
        xb[q] = real ? (l * d_.cin + o / group_out_ * group_in_) * d_.in_vol : d_.lead * d_.cin * d_.in_vol;
        wb[q] = real ? o * rows : d_.cout * rows;
        bd[q] = real ? bd_[static_cast<size_t>(o)] : 0.0;
        bw[q] = real ? bias_[o] : FpWord{};
      }
      const GatherBlock in{step_xi.data(), step_k.data(), steps, xb, wb, xd_.data(), wd_.data(), x_, w_, bd, bw};
      uint64_t words[kLanes];
      block(params, ff, env, in, words, flags);
      for (int64_t q = 0; q < kLanes && j0 + q < total; ++q) out[(j0 + q) * out_vol + p].bits = words[q];
    }
  });
  env.flags |= static_cast<uint32_t>(flags);
}

}  // namespace denote
