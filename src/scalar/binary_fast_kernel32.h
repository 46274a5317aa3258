// Internal: float lanes for the bulk add/sub/mul of bfloat16 and binary16 (binary_fast.cc). The
// double lanes of binary_fast_kernel.h run 4 a vector under AVX2; these run 8, with the same method
// in binary32:
//   - a bfloat16 or binary16 value is exact in binary32 (bfloat16: its word shifted by 16);
//   - a product of two is exact in binary32 (2p <= 22 bits) unless it overflows or underflows
//     binary32, and TwoSum gives a sum's error exactly unless the sum overflows;
//   - round to odd at binary32's 24 bits, then round that to p bits (Boldo-Melquiond: correct in
//     every mode since 24 >= p + 2, p = 8 or 11), by integer operations on the bits.
// Overflow past the largest finite value, infinite sums/products, NaN and special operands, tiny
// results (below 2^emin, binary32 subnormals included) and products that underflow to zero are
// marked `bad`: the caller recomputes those by the general routine, as for the double lanes.
#pragma once

#include <cstdint>

#include "denote/scalar/binary_fast.h"
#include "scalar/binary_fast_kernel.h"

namespace denote::fastk32 {

inline uint32_t bits_of(float x) { return __builtin_bit_cast(uint32_t, x); }
inline float flt(uint32_t b) { return __builtin_bit_cast(float, b); }
inline uint32_t mask_if(bool c) { return uint32_t{0} - static_cast<uint32_t>(c); }

constexpr uint32_t kSign = 0x80000000u;
constexpr uint32_t kInfBits = 0x7f800000u;
constexpr uint32_t kNanBits = 0x7fc00000u;

// An IEEE format with E <= 8 exponent and F <= 21 fraction bits, carried in binary32.
template <int E, int F>
struct Ieee32 {
  static_assert(E <= 8 && F <= 21);
  static constexpr uint32_t bias = (uint32_t{1} << (E - 1)) - 1;
  static constexpr uint32_t frac_bits = F, drop = 23 - F, sign_shift = E + F;
  static constexpr uint32_t sign_word = uint32_t{1} << (E + F), frac_mask = (uint32_t{1} << F) - 1;
  static constexpr uint32_t field_ones = (uint32_t{1} << E) - 1;
  static constexpr uint64_t word_mask = (uint64_t{1} << (E + F + 1)) - 1;
  static constexpr uint32_t exp_adjust = (127 - bias) << F;
  static constexpr uint32_t min_normal_bits = (127 - (bias - 1)) << 23;
  static constexpr uint32_t max_bits = ((127 + bias) << 23) | (frac_mask << drop);
};
using Bf16 = Ieee32<8, 7>;
using Fp16 = Ieee32<5, 10>;
static_assert(Bf16::drop == 16 && Bf16::exp_adjust == 0 && Bf16::max_bits == 0x7f7f0000u);
static_assert(Fp16::drop == 13 && Fp16::min_normal_bits == (127u - 14u) << 23);

// The exact binary32 value of a word; NaN for NaN, inf and malformed words.
template <class P>
[[gnu::always_inline]] inline float decode(uint64_t w64) {
  const uint32_t w = static_cast<uint32_t>(w64);
  const uint32_t field = (w >> P::frac_bits) & P::field_ones;
  uint32_t mag;
  if constexpr (P::exp_adjust == 0) {
    mag = (w & (P::sign_word - 1)) << P::drop;  // bfloat16: the word is binary32's upper half
  } else {
    const uint32_t frac = w & P::frac_mask;
    const uint32_t normal = (((field << P::frac_bits) | frac) + P::exp_adjust) << P::drop;
    // A subnormal is (1 + frac/2^F) 2^emin - 2^emin, exact (and a binary32 normal number here).
    const uint32_t as_one = (((uint32_t{1} << P::frac_bits) | frac) + P::exp_adjust) << P::drop;
    const uint32_t sub = bits_of(flt(as_one) - flt(P::min_normal_bits));
    const uint32_t zm = mask_if(field == 0);
    mag = (sub & zm) | (normal & ~zm);
  }
  const uint32_t sign = (w >> P::sign_shift) & 1;
  const bool special = ((w64 & ~P::word_mask) != 0) | (field == P::field_ones);
  const uint32_t sm = mask_if(special);
  return flt((kNanBits & sm) | ((mag | (sign << 31)) & ~sm));
}

// One rounded lane: the word, whether it is inexact, whether it must leave the fast path.
struct Lane {
  uint32_t word;
  uint32_t inexact;
  uint32_t bad;
};

// Rounds the binary32 s (bits `sb`) to the format; `nz`: the exact result differs from s,
// `err_bits`: a binary32 whose sign is that of (exact - s); `zero_sign` the sign of an exact zero.
template <class P, Rounding R>
[[gnu::always_inline]] inline Lane round_bits(uint32_t sb, bool nz, uint32_t err_bits, uint32_t zero_sign) {
  const uint32_t sign = sb & kSign;
  const uint32_t mag = sb ^ sign;
  const uint32_t nzb = static_cast<uint32_t>(nz);
  const uint32_t toward = nzb & ((err_bits ^ sb) >> 31);  // the exact value lies below |s|
  const uint32_t odd = (mag - toward) | nzb;
  constexpr uint32_t low = (uint32_t{1} << P::drop) - 1;
  const uint32_t neg_mask = uint32_t{0} - (sign >> 31);
  const uint32_t r = (odd + fastk::increment<R, uint32_t>(low, (odd >> P::drop) & 1, neg_mask)) & ~low;
  const bool zero = mag == 0;
  const bool tiny = !zero & (odd < P::min_normal_bits);
  // Positive patterns order like their values; inf/NaN s and a carry into the sign are above max.
  const bool bad = (r > P::max_bits) | (mag >= kInfBits) | tiny;
  const uint32_t zm = mask_if(zero);
  const uint32_t normal_word = ((r >> P::drop) - P::exp_adjust) | (P::sign_word & neg_mask);
  const uint32_t zero_word = P::sign_word & mask_if(zero_sign != 0);
  Lane l;
  l.word = (zero_word & zm) | (normal_word & ~zm);
  l.inexact = static_cast<uint32_t>((odd & low) != 0);
  l.bad = static_cast<uint32_t>(bad);
  return l;
}

// The sign bit of an exact zero sum: +0 unless both are -0, except -0 when rounding downward.
template <Rounding R>
[[gnu::always_inline]] inline uint32_t sum_zero_sign(uint32_t xb, uint32_t yb) {
  if constexpr (R == Rounding::Downward) return (xb | yb) & kSign;
  return xb & yb & kSign;
}

template <class P, Rounding R>
[[gnu::always_inline]] inline Lane add_lane(float x, float y) {
  const float s = x + y;
  const float e = fastk::two_sum_err(x, y, s);
  return round_bits<P, R>(bits_of(s), e != 0, bits_of(e), sum_zero_sign<R>(bits_of(x), bits_of(y)));
}

// A zero product of nonzero operands underflowed binary32: bad (the general routine rounds it).
template <class P, Rounding R>
[[gnu::always_inline]] inline Lane mul_lane(float x, float y) {
  const uint32_t sb = bits_of(x * y);
  Lane l = round_bits<P, R>(sb, false, 0, sb & kSign);
  l.bad |= static_cast<uint32_t>(((sb & ~kSign) == 0) & (x != 0) & (y != 0));
  return l;
}

}  // namespace denote::fastk32
