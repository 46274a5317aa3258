// Fast exact formats: inner-product folds (binary_fast.h, fast_matmul / fast_linear). Operands are
// decoded to doubles once; kLanes outputs are folded at once, each in its own left-to-right order,
// with the accumulator held as the double of its format value. A lane whose step the fast path
// cannot settle (a subnormal or overflowing product or sum) does that step with the general
// routine on words; a lane whose accumulator became NaN or infinite stays on words from then on.
// Inputs holding NaN, infinity or malformed words take the one-at-a-time path instead, so that
// errors and NaN payloads come out exactly as in the evaluator's scalar order.
#include <cmath>
#include <vector>

#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_kernel.h"
#include "scalar/binary_round.h"

namespace denote {

using fastk::bits_of;
using fastk::dbl;
using fastk::Lane;

namespace {

constexpr int kLanes = 16;  // four AVX2 vectors of accumulators: enough to hide the step latency

// The decoded doubles of n words; false when one of them is NaN, infinite or malformed.
template <class P>
bool decode_all(const P& p, const FpWord* w, size_t n, std::vector<double>& out) {
  out.resize(n);
  bool ok = true;
  for (size_t i = 0; i < n; ++i) {
    out[i] = fastk::decode(p, w[i].bits);
    ok = ok && !std::isnan(out[i]);
  }
  return ok;
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

// One step of lane l on words (the general routine), for lanes the fast path cannot settle.
void slow_step(const FastFormat& ff, FpEnv& env, const FoldInput& in, LaneState& st, int l, int64_t i, int64_t r,
               int64_t j) {
  const uint64_t x = in.aw[i * in.k + r].bits;
  const uint64_t y = in.bw[r * in.b_row + j * in.b_col].bits;
  const uint64_t prod = in.b_first ? fp_mul(ff.format, env, y, x) : fp_mul(ff.format, env, x, y);
  const uint64_t acc = st.slow[l] ? st.word[l] : word_of(ff, st.acc[l]);
  const uint64_t sum = fp_add(ff.format, env, acc, prod);
  const double v = word_to_double(ff.format, sum);
  st.slow[l] = std::isfinite(v) ? 0 : 1;
  st.word[l] = sum;
  if (!st.slow[l]) st.acc[l] = v;
}

// Folds outputs (i, j0 .. j0 + kLanes): B's rows for these lanes start at bd + r * stride (a padded
// copy for the last, partial block, whose extra lanes hold zeros and are never bad). The lane loop
// has no branches, so it vectorises; `flags` collects the fast lanes' inexact and underflow.
template <class P, Rounding R>
[[gnu::always_inline]] inline void fold_block(const P& params, const FastFormat& ff, FpEnv& env, const FoldInput& in,
                                              int64_t i, int64_t j0, const double* bd, int64_t stride,
                                              uint64_t* out_words, uint64_t& flags) {
  const P p = params;  // a local copy, kept in registers
  LaneState st{};
  uint64_t inexact = 0, underflow = 0;
  for (int64_t r = 0; r < in.k; ++r) {
    const double x = in.ad[i * in.k + r];
    const double* y = bd + r * stride;
    double next[kLanes];
    uint64_t lane_bad[kLanes];
    uint64_t bad = 0, inex = 0, under = 0;
    for (int l = 0; l < kLanes; ++l) {
      const Lane m = fastk::mul_lane<P, R>(p, x, y[l]);
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
    if (!bad) {
      for (int l = 0; l < kLanes; ++l) st.acc[l] = next[l];
      continue;
    }
    for (int l = 0; l < kLanes; ++l) {
      if (lane_bad[l]) {
        slow_step(ff, env, in, st, l, i, r, j0 + l);
      } else {
        st.acc[l] = next[l];
      }
    }
  }
  for (int l = 0; l < kLanes; ++l) out_words[l] = st.slow[l] ? st.word[l] : word_of(ff, st.acc[l]);
  flags |= (inexact ? uint64_t{kFpInexact} : 0) | (underflow ? uint64_t{kFpUnderflow} : 0);
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

// Every output (i, j), i < m, j < n, into out[i * n + j].
void fold_all(const FastFormat& ff, FpEnv& env, const FoldInput& in, int64_t m, FpWord* out) {
  uint64_t flags = 0;
  const bool avx2 = fastk::have_avx2();
  // The last, partial block of columns reads a copy of B's columns padded with zeros.
  const int64_t full = in.n / kLanes * kLanes, rest = in.n - full;
  std::vector<double> pad(rest > 0 ? static_cast<size_t>(in.k * kLanes) : 0, 0.0);
  for (int64_t r = 0; rest > 0 && r < in.k; ++r)
    for (int64_t l = 0; l < rest; ++l) pad[r * kLanes + l] = in.bd[r * in.n + full + l];
  fastk::with_params(ff, env.rounding, [&](const auto& p, auto mode) {
    using P = std::decay_t<decltype(p)>;
    constexpr Rounding R = decltype(mode)::value;
    auto* const block = avx2 ? &fold_block_avx2<P, R> : &fold_block_base<P, R>;
    for (int64_t i = 0; i < m; ++i) {
      uint64_t words[kLanes];
      for (int64_t j = 0; j < full; j += kLanes) {
        block(p, ff, env, in, i, j, in.bd + j, in.n, words, flags);
        for (int l = 0; l < kLanes; ++l) out[i * in.n + j + l].bits = words[l];
      }
      if (rest == 0) continue;
      block(p, ff, env, in, i, full, pad.data(), kLanes, words, flags);
      for (int64_t l = 0; l < rest; ++l) out[i * in.n + full + l].bits = words[l];
    }
  });
  env.flags |= static_cast<uint32_t>(flags);
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
  std::vector<double> xd, wd, bd, none;
  FoldInput in{nullptr, nullptr, x, w, 1, in_dim, in_dim, out_dim, true};
  const bool fast = decode_operands(ff, x, static_cast<size_t>(rows * in_dim), w,
                                    static_cast<size_t>(out_dim * in_dim), xd, wd) &&
                    decode_operands(ff, bias, static_cast<size_t>(out_dim), bias, 0, bd, none);
  if (!fast) {  // the evaluator's order exactly: each output's fold, then its bias
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t o = 0; o < out_dim; ++o)
        y[i * out_dim + o].bits = fast_add(ff, env, fold_one(ff, env, in, i, o), bias[o].bits);
    return;
  }
  std::vector<double> wt(wd.size());
  for (int64_t o = 0; o < out_dim; ++o)
    for (int64_t r = 0; r < in_dim; ++r) wt[r * out_dim + o] = wd[o * in_dim + r];
  in.ad = xd.data();
  in.bd = wt.data();
  fold_all(ff, env, in, rows, y);
  for (int64_t i = 0; i < rows; ++i)
    fast_add_n(ff, env, y + i * out_dim, bias, y + i * out_dim, static_cast<size_t>(out_dim));
}

}  // namespace denote
