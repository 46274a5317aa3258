// Fast exact formats: parameters, one-word operations and elementwise loops (binary_fast.h). Every
// element the fast path cannot settle (binary_fast_kernel.h: subnormal or overflowing results,
// special or malformed operands) is recomputed by the general routine of binary_ops.h, so results,
// flags and errors are those of fp_add & co. by construction.
#include "denote/scalar/binary_fast.h"

#include <cmath>
#include <type_traits>

#include "scalar/binary_fast_kernel.h"
#include "scalar/binary_fast_kernel32.h"
#include "scalar/binary_fast_simd.h"
#include "scalar/binary_round.h"

namespace denote {

using fastk::bits_of;
using fastk::dbl;
using fastk::Lane;

std::optional<FastFormat> FastFormat::of(const BinaryFormat& f) {
  if (f.encoding == Encoding::E8m0 || f.frac_bits < 1 || !fast_format(f)) return std::nullopt;
  FastFormat ff;
  ff.format = f;
  const BinaryFormat bf16 = *parse_format("bfloat16");
  const BinaryFormat fp16 = *parse_format("binary16");
  ff.kind = f == bf16 ? Kind::Bfloat16 : (f == fp16 ? Kind::Binary16 : Kind::Other);
  ff.frac_bits = f.frac_bits;
  ff.drop = 52 - f.frac_bits;
  ff.sign_shift = f.exp_bits + f.frac_bits;
  ff.sign_word = uint64_t{1} << ff.sign_shift;
  ff.frac_mask = (uint64_t{1} << f.frac_bits) - 1;
  ff.field_ones = (uint64_t{1} << f.exp_bits) - 1;
  ff.word_mask = f.word_mask();
  ff.exp_adjust = static_cast<uint64_t>(1023 - f.bias) << f.frac_bits;
  ff.min_normal_bits = static_cast<uint64_t>(1023 + min_normal_exp(f)) << 52;
  ff.max_bits = bits_of(word_to_double(f, max_finite(f, false)));
  ff.sub_scale = std::ldexp(1.0, static_cast<int>(min_quantum_exp(f)));
  ff.encoding = f.encoding;
  return ff;
}

namespace {

uint64_t finish(FpEnv& env, const Lane& l) {
  if (l.inexact) env.flags |= kFpInexact;
  if (l.underflow) env.flags |= kFpUnderflow;
  return l.word;
}

// One operation: the lane from `compute(p, R)`, or the general routine when the lane is bad.
template <class Compute, class General>
uint64_t one_op(const FastFormat& ff, FpEnv& env, Compute compute, General general) {
  uint64_t out = 0;
  fastk::with_params(ff, env.rounding, [&](const auto& p, auto mode) {
    constexpr Rounding R = decltype(mode)::value;
    using P = std::decay_t<decltype(p)>;
    const Lane l = compute.template operator()<P, R>(p);
    out = l.bad ? general() : finish(env, l);
  });
  return out;
}

}  // namespace

uint64_t fast_add(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    return fastk::add_lane<P, R>(p, fastk::decode(p, a), fastk::decode(p, b));
  };
  return one_op(ff, env, c, [&] { return fp_add(ff.format, env, a, b); });
}

uint64_t fast_sub(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    return fastk::add_lane<P, R>(p, fastk::decode(p, a), -fastk::decode(p, b));
  };
  return one_op(ff, env, c, [&] { return fp_sub(ff.format, env, a, b); });
}

uint64_t fast_mul(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    return fastk::mul_lane<P, R>(p, fastk::decode(p, a), fastk::decode(p, b));
  };
  return one_op(ff, env, c, [&] { return fp_mul(ff.format, env, a, b); });
}

// q = x / y rounded to double; x - q y is exact (fma), and x/y - q has the sign of (x - q y) / y.
uint64_t fast_div(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    const double x = fastk::decode(p, a), y = fastk::decode(p, b);
    const double q = x / y;
    const double r = std::fma(-q, y, x);
    return fastk::round_bits<P, R>(p, bits_of(q), r != 0, bits_of(r) ^ bits_of(y),
                                   fastk::product_zero_sign<P>(bits_of(q)));
  };
  return one_op(ff, env, c, [&] { return fp_div(ff.format, env, a, b); });
}

// s = sqrt(x) rounded to double; x - s^2 is exact (fma) and has the sign of sqrt(x) - s.
uint64_t fast_sqrt(const FastFormat& ff, FpEnv& env, uint64_t a) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    const double x = fastk::decode(p, a);
    const double s = std::sqrt(x);
    const double r = std::fma(-s, s, x);
    return fastk::round_bits<P, R>(p, bits_of(s), r != 0, bits_of(r),
                                   fastk::product_zero_sign<P>(bits_of(s)));
  };
  return one_op(ff, env, c, [&] { return fp_sqrt(ff.format, env, a); });
}

// The product is exact in double; the sum is then rounded as in add (one rounding in all).
uint64_t fast_fma(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b, uint64_t c3) {
  auto c = [&]<class P, Rounding R>(const P& p) {
    return fastk::add_lane<P, R>(p, fastk::decode(p, a) * fastk::decode(p, b), fastk::decode(p, c3));
  };
  return one_op(ff, env, c, [&] { return fp_fma(ff.format, env, a, b, c3); });
}

namespace {

enum class Elem : uint8_t { Add, Sub, Mul };

// Blocks of kBlock elements: a branch-free pass computes every lane and marks the bad ones, then
// the bad ones are recomputed in index order by the general routine.
constexpr size_t kBlock = 64;

// One block's lanes: results into res, 1 into bad[i] for the lanes the fast path cannot settle;
// returns (or of inexact over the good lanes) | 2 * (any bad lane) | 4 * (or of underflow).
template <Elem Op, class P, Rounding R>
[[gnu::always_inline]] inline uint64_t block_lanes(const P& params, const FpWord* a, const FpWord* b, uint64_t* res,
                                                   uint8_t* bad, size_t len) {
  const P p = params;  // a local copy: the stores below cannot alias it, so it stays in registers
  uint64_t inexact = 0, underflow = 0, any_bad = 0;
  for (size_t i = 0; i < len; ++i) {
    const double x = fastk::decode(p, a[i].bits);
    const double y = fastk::decode(p, b[i].bits);
    Lane l;
    if constexpr (Op == Elem::Add) l = fastk::add_lane<P, R>(p, x, y);
    if constexpr (Op == Elem::Sub) l = fastk::add_lane<P, R>(p, x, -y);
    if constexpr (Op == Elem::Mul) l = fastk::mul_lane<P, R>(p, x, y);
    res[i] = l.word;
    bad[i] = static_cast<uint8_t>(l.bad);
    inexact |= l.inexact & (l.bad ^ 1);
    underflow |= l.underflow & (l.bad ^ 1);
    any_bad |= l.bad;
  }
  return inexact | (any_bad << 1) | (underflow << 2);
}

// The same loop compiled for AVX2 (4 doubles a vector), used where the CPU has it.
template <Elem Op, class P, Rounding R>
__attribute__((target("avx2"))) uint64_t block_lanes_avx2(const P& p, const FpWord* a, const FpWord* b,
                                                          uint64_t* res, uint8_t* bad, size_t len) {
  return block_lanes<Op, P, R>(p, a, b, res, bad, len);
}
template <Elem Op, class P, Rounding R>
uint64_t block_lanes_base(const P& p, const FpWord* a, const FpWord* b, uint64_t* res, uint8_t* bad, size_t len) {
  return block_lanes<Op, P, R>(p, a, b, res, bad, len);
}

// The same with float lanes (binary_fast_kernel32.h, 8 a vector under AVX2): bfloat16 and binary16.
template <Elem Op, class P, Rounding R>
[[gnu::always_inline]] inline uint64_t block_lanes32(const FpWord* a, const FpWord* b, uint64_t* res, uint8_t* bad,
                                                     size_t len) {
  uint32_t inexact = 0, any_bad = 0;
  for (size_t i = 0; i < len; ++i) {
    const float x = fastk32::decode<P>(a[i].bits);
    const float y = fastk32::decode<P>(b[i].bits);
    fastk32::Lane l;
    if constexpr (Op == Elem::Add) l = fastk32::add_lane<P, R>(x, y);
    if constexpr (Op == Elem::Sub) l = fastk32::add_lane<P, R>(x, -y);
    if constexpr (Op == Elem::Mul) l = fastk32::mul_lane<P, R>(x, y);
    res[i] = l.word;
    bad[i] = static_cast<uint8_t>(l.bad);
    inexact |= l.inexact & (l.bad ^ 1);
    any_bad |= l.bad;
  }
  return inexact | (uint64_t{any_bad} << 1);
}
template <Elem Op, class P, Rounding R>
__attribute__((target("avx2"))) uint64_t block_lanes32_avx2(const FpWord* a, const FpWord* b, uint64_t* res,
                                                            uint8_t* bad, size_t len) {
  return block_lanes32<Op, P, R>(a, b, res, bad, len);
}
template <Elem Op, class P, Rounding R>
uint64_t block_lanes32_base(const FpWord* a, const FpWord* b, uint64_t* res, uint8_t* bad, size_t len) {
  return block_lanes32<Op, P, R>(a, b, res, bad, len);
}

// Runs `lanes` (a, b, res, bad, len) -> flags over blocks, then the bad lanes by the general routine.
template <Elem Op, class Lanes>
void elementwise(Lanes lanes, const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out,
                 size_t n) {
  uint64_t inexact = 0, underflow = 0;
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = n - base < kBlock ? n - base : kBlock;
    uint64_t res[kBlock];
    uint8_t bad[kBlock];
    const uint64_t r = lanes(a + base, b + base, res, bad, len);
    inexact |= r & 1;
    underflow |= r & 4;
    for (size_t i = 0; (r & 2) != 0 && i < len; ++i) {
      if (!bad[i]) continue;
      const uint64_t x = a[base + i].bits, y = b[base + i].bits;
      if constexpr (Op == Elem::Add) res[i] = fp_add(ff.format, env, x, y);
      if constexpr (Op == Elem::Sub) res[i] = fp_sub(ff.format, env, x, y);
      if constexpr (Op == Elem::Mul) res[i] = fp_mul(ff.format, env, x, y);
    }
    for (size_t i = 0; i < len; ++i) out[base + i].bits = res[i];
  }
  if (inexact) env.flags |= kFpInexact;
  if (underflow) env.flags |= kFpUnderflow;
}

template <Elem Op, class P32, Rounding R>
void elementwise32(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n) {
  auto* const lanes = fastk::have_avx2() ? &block_lanes32_avx2<Op, P32, R> : &block_lanes32_base<Op, P32, R>;
  elementwise<Op>(lanes, ff, env, a, b, out, n);
}

template <Elem Op>
void elementwise_any(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n) {
  fastk::with_params(ff, env.rounding, [&](const auto& p, auto mode) {
    using P = std::decay_t<decltype(p)>;
    constexpr Rounding R = decltype(mode)::value;
    if constexpr (std::is_same_v<P, fastk::Bf16P>) {
      elementwise32<Op, fastk32::Bf16, R>(ff, env, a, b, out, n);
    } else if constexpr (std::is_same_v<P, fastk::Fp16P>) {
      elementwise32<Op, fastk32::Fp16, R>(ff, env, a, b, out, n);
    } else {
      auto* const fn = fastk::have_avx2() ? &block_lanes_avx2<Op, P, R> : &block_lanes_base<Op, P, R>;
      auto lanes = [&](const FpWord* x, const FpWord* y, uint64_t* res, uint8_t* bad, size_t len) {
        return fn(p, x, y, res, bad, len);
      };
      elementwise<Op>(lanes, ff, env, a, b, out, n);
    }
  });
}

}  // namespace

void fast_add_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n) {
  if (fastsimd::rne_elementwise(fastsimd::Op::Add, ff, env, a, b, out, n)) return;
  elementwise_any<Elem::Add>(ff, env, a, b, out, n);
}
void fast_sub_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n) {
  if (fastsimd::rne_elementwise(fastsimd::Op::Sub, ff, env, a, b, out, n)) return;
  elementwise_any<Elem::Sub>(ff, env, a, b, out, n);
}
void fast_mul_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n) {
  if (fastsimd::rne_elementwise(fastsimd::Op::Mul, ff, env, a, b, out, n)) return;
  elementwise_any<Elem::Mul>(ff, env, a, b, out, n);
}

namespace {

// Packed words through the 64-bit kernels: blocks of kBlock widened, computed, narrowed (each block
// is read in full before it is written, so out may alias a or b).
template <class Fn>
void packed_by_blocks(const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n, Fn&& op_n) {
  FpWord wa[kBlock], wb[kBlock], wo[kBlock];
  for (size_t base = 0; base < n; base += kBlock) {
    const size_t len = n - base < kBlock ? n - base : kBlock;
    for (size_t i = 0; i < len; ++i) wa[i].bits = a[base + i], wb[i].bits = b[base + i];
    op_n(wa, wb, wo, len);
    for (size_t i = 0; i < len; ++i) out[base + i] = static_cast<uint16_t>(wo[i].bits);
  }
}

bool fits_16_bits(const FastFormat& ff) { return ff.word_mask <= 0xffffu; }

}  // namespace

bool fast_add_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  if (!fits_16_bits(ff)) return false;
  if (fastsimd::rne_elementwise16(fastsimd::Op::Add, ff, env, a, b, out, n)) return true;
  packed_by_blocks(a, b, out, n, [&](auto* x, auto* y, auto* o, size_t len) { fast_add_n(ff, env, x, y, o, len); });
  return true;
}
bool fast_sub_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  if (!fits_16_bits(ff)) return false;
  if (fastsimd::rne_elementwise16(fastsimd::Op::Sub, ff, env, a, b, out, n)) return true;
  packed_by_blocks(a, b, out, n, [&](auto* x, auto* y, auto* o, size_t len) { fast_sub_n(ff, env, x, y, o, len); });
  return true;
}
bool fast_mul_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n) {
  if (!fits_16_bits(ff)) return false;
  if (fastsimd::rne_elementwise16(fastsimd::Op::Mul, ff, env, a, b, out, n)) return true;
  packed_by_blocks(a, b, out, n, [&](auto* x, auto* y, auto* o, size_t len) { fast_mul_n(ff, env, x, y, o, len); });
  return true;
}

namespace {

// relu's lanes: a special word (decoding to NaN) is marked, a positive value kept, the rest +0.
template <class P>
[[gnu::always_inline]] inline uint64_t relu_lanes(const P& params, const FpWord* x, FpWord* out, uint8_t* special,
                                                  size_t len) {
  const P p = params;
  uint64_t any = 0;
  for (size_t i = 0; i < len; ++i) {
    const double d = fastk::decode(p, x[i].bits);
    const bool sp = d != d;
    out[i].bits = x[i].bits & fastk::mask_if(sp | (d > 0));
    special[i] = static_cast<uint8_t>(sp);
    any |= static_cast<uint64_t>(sp);
  }
  return any;
}
template <class P>
__attribute__((target("avx2"))) uint64_t relu_lanes_avx2(const P& p, const FpWord* x, FpWord* out, uint8_t* special,
                                                         size_t len) {
  return relu_lanes(p, x, out, special, len);
}
template <class P>
uint64_t relu_lanes_base(const P& p, const FpWord* x, FpWord* out, uint8_t* special, size_t len) {
  return relu_lanes(p, x, out, special, len);
}

}  // namespace

void fast_relu_n(const FastFormat& ff, const FpWord* x, FpWord* out, size_t n, std::vector<size_t>& special) {
  fastk::with_params(ff, Rounding::NearestEven, [&](const auto& p, auto) {
    using P = std::decay_t<decltype(p)>;
    auto* const lanes = fastk::have_avx2() ? &relu_lanes_avx2<P> : &relu_lanes_base<P>;
    for (size_t base = 0; base < n; base += kBlock) {
      const size_t len = n - base < kBlock ? n - base : kBlock;
      uint8_t sp[kBlock];
      if (lanes(p, x + base, out + base, sp, len) == 0) continue;
      for (size_t i = 0; i < len; ++i)
        if (sp[i]) special.push_back(base + i);
    }
  });
}

}  // namespace denote
