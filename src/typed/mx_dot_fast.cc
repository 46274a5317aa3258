// MX matrix products with binary32 accumulation on the kernels layer (src/typed/mx_dot.h): where
// every block sum of integer element products stays below 2^53, a double gemm forms it exactly in any
// summation order, so each block's exact dot product is one gemm entry times a power of two. The
// roundings to binary32 and the block-order sums then run in hardware binary32 (nearest even, MXCSR
// in its default state), with the flags the word-by-word path raises.
#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <optional>

#include "denote/scalar/binary_format.h"
#include "kernels/block_gemm.h"
#include "kernels/gemm.h"
#include "scalar/binary_fast_simd.h"
#include "typed/mx_dot.h"

namespace denote::mx_detail {

float float_of_word(uint64_t w) {
  const auto bits = static_cast<uint32_t>(w);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

// v (an exact block dot product) rounded to binary32; near the subnormal range the one rounding
// routine decides tininess as everywhere else.
float to_binary32(double v, uint32_t& flags) {
  const auto f = static_cast<float>(v);
  if (static_cast<double>(f) == v || std::isnan(v)) return f;
  if (std::fabs(v) < 0x1p-124) {
    FpEnv env;
    const uint64_t w = fp_from_double(binary32_format(), env, v);
    flags |= env.flags;
    return float_of_word(w);
  }
  flags |= kFpInexact | (std::isinf(f) ? kFpOverflow : 0u);
  return f;
}

// acc + x rounded to binary32, inexact from the exact error of the sum (TwoSum).
float add_binary32(float acc, float x, uint32_t& flags) {
  const float s = acc + x;
  if (std::isnan(s)) {
    if (!std::isnan(acc) && !std::isnan(x)) flags |= kFpInvalid;
    return s;
  }
  if (std::isinf(s)) {
    if (std::isfinite(acc) && std::isfinite(x)) flags |= kFpOverflow | kFpInexact;
    return s;
  }
  const float bb = s - acc;
  if ((acc - (s - bb)) + (x - bb) != 0) flags |= kFpInexact;
  return s;
}

namespace {

// f[n] = c[n] * rowp * colp[n] rounded to binary32 (two exact power-of-two products, then one
// rounding), with its flags; the loops vectorise, and an inexact value near the subnormal range is
// redone by to_binary32 (the one rounding routine's tininess).
void round_row(const double* c, double rowp, const double* colp, int64_t n, float* f, uint32_t& flags) {
  bool inexact = false, overflow = false, tiny = false;
  for (int64_t i = 0; i < n; ++i) {
    const double v = c[i] * rowp * colp[i];
    const auto x = static_cast<float>(v);
    const bool off = static_cast<double>(x) != v;
    inexact |= off;
    overflow |= std::isinf(x);
    tiny |= off && std::fabs(v) < 0x1p-124;
    f[i] = x;
  }
  if (tiny)
    for (int64_t i = 0; i < n; ++i) f[i] = to_binary32(c[i] * rowp * colp[i], flags);
  flags |= (inexact ? kFpInexact : 0u) | (overflow ? kFpOverflow | kFpInexact : 0u);
}

// acc[n] = acc[n] + f[n] in binary32 with the flags add_binary32 raises (TwoSum's error for inexact);
// a row with an infinite or NaN sum is redone element by element for its overflow / invalid flags.
void add_row(float* acc, const float* f, int64_t n, float* tmp, uint32_t& flags) {
  bool inexact = false, special = false;
  for (int64_t i = 0; i < n; ++i) {
    const float a = acc[i], x = f[i], s = a + x, bb = s - a;
    inexact |= ((a - (s - bb)) + (x - bb)) != 0;
    special |= !std::isfinite(s);
    tmp[i] = s;
  }
  if (special) {
    for (int64_t i = 0; i < n; ++i) acc[i] = add_binary32(acc[i], f[i], flags);
    return;
  }
  std::copy(tmp, tmp + n, acc);
  flags |= inexact ? kFpInexact : 0u;
}

// One block's integer elements as doubles, rows x width, and whether a row holds a NaN or infinity.
void pack_block(const Operand& o, int64_t bk, int64_t block, std::vector<double>& out, std::vector<char>& special) {
  const int64_t lo = bk * block, width = std::min(o.k, lo + block) - lo;
  out.resize(static_cast<size_t>(o.rows * width));
  special.assign(static_cast<size_t>(o.rows), 0);
  for (int64_t r = 0; r < o.rows; ++r)
    for (int64_t i = 0; i < width; ++i) {
      const Fixed& x = o.fixed[static_cast<size_t>(r * o.k + lo + i)];
      out[static_cast<size_t>(r * width + i)] = static_cast<double>(x.value);
      special[static_cast<size_t>(r)] |= x.special ? 1 : 0;
    }
}

// One block's elements split v = hi * 2^16 + lo (hi toward zero, |lo| < 2^16), as doubles.
void split_block(const std::vector<double>& v, std::vector<double>& hi, std::vector<double>& lo) {
  hi.resize(v.size());
  lo.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    hi[i] = std::trunc(v[i] * 0x1p-16);
    lo[i] = v[i] - hi[i] * 0x1p16;
  }
}

// The exact block sum T = hh 2^32 + mid 2^16 + ll (integers: hh, mid, ll exact doubles below 2^53),
// rounded to binary32 nearest even: TwoSum gives T = s + lo exactly, the cast rounds s, and the
// rounding is corrected where lo moves T across or onto a midpoint. Then times `scale` (a power of
// two); false where that leaves binary32's normal range (the caller takes the word-by-word sum).
bool split_to_binary32(double hh, double mid, double ll, double scale, float& out, uint32_t& flags) {
  const double A = hh * 0x1p32, B = mid * 0x1p16, C = ll;
  const double s1 = A + B, b1 = s1 - A, e1 = (A - (s1 - b1)) + (B - b1);
  const double s2 = s1 + C, b2 = s2 - s1, e2 = (s1 - (s2 - b2)) + (C - b2);
  float f = static_cast<float>(s2);
  const double lo = e1 + e2;
  const double t = (s2 - static_cast<double>(f)) + lo;  // T - f, exact
  if (lo == 0) {  // T = s2: the cast rounded T itself
    if (t != 0) flags |= kFpInexact;
  } else if (t != 0) {
    flags |= kFpInexact;
    const float g = std::nextafter(f, t > 0 ? HUGE_VALF : -HUGE_VALF);
    const double half = std::fabs(static_cast<double>(g) - static_cast<double>(f)) / 2;
    if (std::fabs(t) > half || (std::fabs(t) == half && (std::bit_cast<uint32_t>(g) & 1) == 0)) f = g;
  }
  const double v = static_cast<double>(f) * scale;
  if (v != 0 && !(std::fabs(v) >= 0x1p-126 && std::fabs(v) <= FLT_MAX)) return false;
  out = static_cast<float>(v);
  return true;
}

}  // namespace

namespace {
// The largest block sum of element products in quanta: max|P_a| max|P_b| block.
double sum_bound(int64_t fa, int64_t fb, int64_t block) {
  return static_cast<double>(fa) * static_cast<double>(fb) * static_cast<double>(block);
}
}  // namespace

DenseOperand dense_of(const MxFormat& f, const uint8_t* codes, const uint8_t* scales, int64_t rows, int64_t k,
                      int64_t block, bool divisors) {
  block = std::max<int64_t>(block, 1);
  const int64_t blocks = (k + block - 1) / block;
  DenseOperand d;
  std::array<double, 256> value{};
  std::array<bool, 256> special{};
  for (unsigned c = 0; c < (1u << f.bits); ++c) {
    const Fixed x = fixed_of(f, static_cast<uint8_t>(c));
    value[c] = static_cast<double>(x.value), special[c] = x.special;
  }
  std::array<double, 256> factor{};  // 2^(scale - bias + quantum): the element's integer times it is its value
  for (unsigned x = 0; x < 255; ++x) factor[x] = std::ldexp(1.0, static_cast<int>(x) - kMxScaleBias + static_cast<int>(quantum_exp(f)));
  d.v.resize(static_cast<size_t>(rows * k));
  d.s.resize(static_cast<size_t>(rows * blocks));
  bool any = false;
  for (size_t i = 0; i < d.v.size(); ++i) d.v[i] = value[codes[i]], any = any || special[codes[i]];
  for (size_t i = 0; i < d.s.size(); ++i) d.s[i] = factor[scales[i]], any = any || scales[i] == kMxScaleNan;
  d.ok = !any;
  if (!divisors) return d;
  d.t.assign(d.s.size(), 1.0);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t q = 0; q < blocks; ++q) {  // the largest power of two dividing every element of the block
      int tz = 60;
      for (int64_t i = q * block; i < std::min(k, (q + 1) * block); ++i) {
        const auto x = static_cast<int64_t>(d.v[static_cast<size_t>(r * k + i)]);
        if (x != 0) tz = std::min(tz, std::countr_zero(static_cast<uint64_t>(x < 0 ? -x : x)));
      }
      d.t[static_cast<size_t>(r * blocks + q)] = std::ldexp(1.0, tz);
    }
  d.norm.resize(d.t.size());
  kernels::block_norms(d.v.data(), rows, k, block, d.norm.data());
  return d;
}

bool mx_fused_binary32(const DenseOperand& a, int64_t m, const kernels::BlockPanel& b, MxMatmulResult& r) {
  if (!a.ok || !fastsimd::mxcsr_is_default()) return false;
  std::vector<float> y(static_cast<size_t>(m * b.n));
  bool inexact = false;
  if (!kernels::block_gemm_f32(a.v.data(), a.s.data(), m, b, y.data(), inexact)) return false;
  r.y = Tensor<double>({m, b.n}, std::vector<double>(y.begin(), y.end()));
  r.flags = inexact ? kFpInexact : 0u;
  return true;
}

bool fused_applies(const MxFormat& a, const MxFormat& b, int64_t block) {
  return sum_bound(max_fixed(a), max_fixed(b), block) <= 0x1p53;
}

namespace {

// The certified kernel's exact path for one block (mx_certified_binary32): the word-by-word block sum.
struct ExactCtx {
  const DotSetup& s;
  const Operand* a;          // the left operand, or null: made from `at` on first use
  const MxTensor* at;
  std::optional<Operand> own;
  const Operand& b;
  FpEnv env;
};
float exact_block(void* p, int64_t row, int64_t col, int64_t q) {
  auto& c = *static_cast<ExactCtx*>(p);
  if (!c.a) c.own = operand_of(*c.at, false), c.a = &*c.own;
  return float_of_word(block_dot(c.s, *c.a, c.b, row, col, q, c.env));
}

}  // namespace

bool mx_certified_binary32(const DotSetup& s, const DenseOperand& a, const Operand* a_op, const MxTensor* a_t, int64_t m,
                           const kernels::BlockPanel& b, const Operand& b_op, MxMatmulResult& r) {
  if (!a.ok || !fastsimd::mxcsr_is_default() || !(s.acc == binary32_format())) return false;
  ExactCtx ctx{s, a_op, a_t, std::nullopt, b_op, FpEnv{}};
  std::vector<float> y(static_cast<size_t>(m * b.n));
  bool inexact = false;
  if (!kernels::block_gemm_f32_certified(a.v.data(), a.s.data(), a.t.data(), a.norm.data(), m, b, y.data(), inexact,
                                         kernels::ExactBlock{&exact_block, &ctx}))
    return false;
  r.y = Tensor<double>({m, b.n}, std::vector<double>(y.begin(), y.end()));
  r.flags = (inexact ? kFpInexact : 0u) | ctx.env.flags;
  return true;
}

bool mx_matmul_binary32(const DotSetup& s, const Operand& a, const Operand& b, MxMatmulResult& r) {
  const int64_t fa = max_fixed(s.a.format), fb = max_fixed(s.b.format);
  const double bound = sum_bound(fa, fb, s.block);
  if (s.acc == binary32_format()) {  // no NaN/infinity codes or NaN scales: a fused kernel
    const bool exact_sums = bound <= 0x1p53;
    const DenseOperand da = dense_of(s.a.format, a.codes.data(), a.scales.data(), a.rows, a.k, s.block, !exact_sums);
    const DenseOperand db = dense_of(s.b.format, b.codes.data(), b.scales.data(), b.rows, b.k, s.block, !exact_sums);
    if (da.ok && db.ok) {
      const kernels::BlockPanel p =
          kernels::pack_block_panel(db.v.data(), db.s.data(), b.rows, b.k, s.block, exact_sums ? nullptr : db.t.data());
      if (exact_sums ? mx_fused_binary32(da, a.rows, p, r) : mx_certified_binary32(s, da, &a, nullptr, a.rows, p, b, r))
        return true;
    }
  }
  // Above 2^53 (E5M2 with E5M2 or E4M3): each element split in 16-bit halves, four exact gemms.
  const bool split = bound > 0x1p53;
  if (!(s.acc == binary32_format()) || !fastsimd::mxcsr_is_default()) return false;
  if (split && (fa >= (int64_t{1} << 32) || fb >= (int64_t{1} << 32) || s.block > (int64_t{1} << 20)))
    return false;
  const int64_t M = a.rows, N = b.rows;
  const int q = static_cast<int>(quantum_exp(s.a.format) + quantum_exp(s.b.format)) - 2 * kMxScaleBias;
  std::vector<float> acc(static_cast<size_t>(M * N), 0.0f);
  std::array<double, 2 * 255 + 1> pow2{};  // 2^(q + xa + xb) for every pair of scale codes: exact
  for (size_t x = 0; x < pow2.size(); ++x) pow2[x] = std::ldexp(1.0, q + static_cast<int>(x));
  std::vector<double> pa, pb, c(static_cast<size_t>(M * N));
  std::vector<double> ah, al, bh, bl, mid(split ? c.size() : 0), ll(split ? c.size() : 0);
  std::vector<char> sa, sb;
  FpEnv env;
  uint32_t flags = 0;
  std::vector<float> f(static_cast<size_t>(N)), tmp(static_cast<size_t>(N));
  std::vector<double> colp(static_cast<size_t>(N));
  for (int64_t bk = 0; bk < a.blocks; ++bk) {
    pack_block(a, bk, s.block, pa, sa);
    pack_block(b, bk, s.block, pb, sb);
    const int64_t width = std::min(a.k, (bk + 1) * s.block) - bk * s.block;
    if (split) {
      split_block(pa, ah, al);
      split_block(pb, bh, bl);
      kernels::gemm<double>(false, true, M, N, width, ah.data(), bh.data(), 0.0, c.data(), N);
      kernels::gemm<double>(false, true, M, N, width, ah.data(), bl.data(), 0.0, mid.data(), N);
      kernels::gemm<double>(false, true, M, N, width, al.data(), bh.data(), 1.0, mid.data(), N);  // exact sum
      kernels::gemm<double>(false, true, M, N, width, al.data(), bl.data(), 0.0, ll.data(), N);
    } else {
      kernels::gemm<double>(false, true, M, N, width, pa.data(), pb.data(), 0.0, c.data(), N);
    }
    bool col_special = false;
    for (int64_t n = 0; n < N; ++n) {
      const uint8_t xb = b.scales[static_cast<size_t>(n * b.blocks + bk)];
      col_special = col_special || sb[static_cast<size_t>(n)] || xb == kMxScaleNan;
      colp[static_cast<size_t>(n)] = std::ldexp(1.0, xb);
    }
    for (int64_t m = 0; m < M; ++m) {
      const uint8_t xa = a.scales[static_cast<size_t>(m * a.blocks + bk)];
      float* row = acc.data() + m * N;
      if (split && !col_special && !sa[static_cast<size_t>(m)] && xa != kMxScaleNan) {
        for (int64_t n = 0; n < N; ++n) {
          const size_t k = static_cast<size_t>(m * N + n);
          const uint8_t xb = b.scales[static_cast<size_t>(n * b.blocks + bk)];
          if (!split_to_binary32(c[k], mid[k], ll[k], pow2[xa + xb], f[static_cast<size_t>(n)], flags))
            f[static_cast<size_t>(n)] = float_of_word(block_dot(s, a, b, m, n, bk, env));
        }
        if (bk == 0) std::copy(f.begin(), f.end(), row);
        else add_row(row, f.data(), N, tmp.data(), flags);
        continue;
      }
      if (split || col_special || sa[static_cast<size_t>(m)] || xa == kMxScaleNan) {  // element by element
        for (int64_t n = 0; n < N; ++n) {
          const uint8_t xb = b.scales[static_cast<size_t>(n * b.blocks + bk)];
          const size_t k = static_cast<size_t>(m * N + n);
          const bool special = sa[static_cast<size_t>(m)] || sb[static_cast<size_t>(n)] || xa == kMxScaleNan ||
                               xb == kMxScaleNan;
          float v = 0;
          if (special || (split && !split_to_binary32(c[k], mid[k], ll[k], pow2[xa + xb], v, flags)))
            v = float_of_word(block_dot(s, a, b, m, n, bk, env));
          else if (!split)
            v = to_binary32(c[k] * pow2[xa + xb], flags);
          row[n] = bk == 0 ? v : add_binary32(row[n], v, flags);
        }
        continue;
      }
      round_row(c.data() + m * N, pow2[xa], colp.data(), N, f.data(), flags);
      if (bk == 0) std::copy(f.begin(), f.end(), row);
      else add_row(row, f.data(), N, tmp.data(), flags);
    }
  }
  r.y = Tensor<double>({M, N}, std::vector<double>(acc.begin(), acc.end()));
  r.flags = flags | env.flags;
  return true;
}

}  // namespace denote::mx_detail
