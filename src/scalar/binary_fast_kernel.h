// Internal: the inline kernels of the fast exact formats (binary_fast.h). A format value is carried
// as the double holding it exactly; an operation is done in double, an error-free transformation
// says whether (and on which side) the exact result differs from the double, and round_bits rounds
// the double to the format with integer operations on its bits:
//   1. round to odd at 53 bits: step one unit towards zero when the exact value lies below |s|, then
//      set the last bit when inexact (Boldo-Melquiond: rounding that to p <= 51 bits is correct in
//      every mode);
//   2. add the mode's increment below the format's last place and clear the dropped bits.
// Results above the largest finite value and NaN/inf (special operands decode to NaN) are marked
// `bad`: the caller then uses the general routine for that element. Results below 2^emin are rounded
// on the subnormal grid (round_tiny) where P::subnormal_fast, else marked bad too.
//
//   Lane l = round_bits<P, Rounding::NearestEven>(p, bits_of(x * y), false, false, zero_sign);
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/cpu.h"
#include "denote/scalar/binary_fast.h"

namespace denote::fastk {

constexpr uint64_t kSign = uint64_t{1} << 63;
constexpr uint64_t kNanBits = 0x7ff8000000000000ull;

inline uint64_t bits_of(double x) { return __builtin_bit_cast(uint64_t, x); }
inline double dbl(uint64_t b) { return __builtin_bit_cast(double, b); }

// Compile-time parameters of a small IEEE format with E exponent and F fraction bits (the same
// names as FastFormat's fields; a unit test checks bfloat16's and binary16's against FastFormat::of).
template <int E, int F>
struct IeeeP {
  static constexpr uint64_t bias = (uint64_t{1} << (E - 1)) - 1;
  static constexpr int frac_bits = F, drop = 52 - F, sign_shift = E + F;
  static constexpr uint64_t sign_word = uint64_t{1} << (E + F), frac_mask = (uint64_t{1} << F) - 1;
  static constexpr uint64_t field_ones = (uint64_t{1} << E) - 1, word_mask = (uint64_t{1} << (E + F + 1)) - 1;
  static constexpr uint64_t exp_adjust = (1023 - bias) << F;
  static constexpr uint64_t min_normal_bits = (1023 - (bias - 1)) << 52;
  static constexpr uint64_t max_bits = ((1023 + bias) << 52) | (frac_mask << drop);
  static constexpr Encoding encoding = Encoding::Ieee;
  static constexpr bool subnormal_fast = false;  // tiny results are rare here: the general routine
  static constexpr double sub_scale = 0, inv_sub_scale = 0;
};
using Bf16P = IeeeP<8, 7>;
using Fp16P = IeeeP<5, 10>;
static_assert(Bf16P::drop == 45 && Bf16P::word_mask == 0xffff && Bf16P::exp_adjust == uint64_t{1023 - 127} << 7);
static_assert(Fp16P::frac_mask == 0x3ff && Fp16P::field_ones == 0x1f &&
              Fp16P::max_bits == ((uint64_t{1023 + 15} << 52) | (uint64_t{0x3ff} << 42)));

// All-ones when c, else 0 (the kernels select with masks, never branches, so that loops vectorise).
inline uint64_t mask_if(bool c) { return uint64_t{0} - static_cast<uint64_t>(c); }

// The exact double of a word; NaN for NaN, inf and malformed words (which then fail every check).
template <class P>
[[gnu::always_inline]] inline double decode(const P& p, uint64_t w) {
  const uint64_t sign = (w >> p.sign_shift) & 1;
  const uint64_t field = (w >> p.frac_bits) & p.field_ones;
  const uint64_t frac = w & p.frac_mask;
  const uint64_t normal = (((field << p.frac_bits) | frac) + p.exp_adjust) << p.drop;
  // A subnormal is (1 + frac/2^F) 2^emin - 2^emin, exact.
  const uint64_t as_one = ((((uint64_t{1} << p.frac_bits) | frac) + p.exp_adjust) << p.drop);
  const uint64_t sub = bits_of(dbl(as_one) - dbl(p.min_normal_bits));
  const uint64_t zm = mask_if(field == 0);
  const uint64_t mag = (sub & zm) | (normal & ~zm);
  bool special = (w & ~p.word_mask) != 0;
  if constexpr (P::encoding == Encoding::Ieee) {
    special = special | (field == p.field_ones);
  } else if constexpr (P::encoding == Encoding::Fn) {
    special = special | ((w & ~p.sign_word) == ((p.field_ones << p.frac_bits) | p.frac_mask));
  } else if constexpr (P::encoding == Encoding::Fnuz) {
    special = special | (w == p.sign_word);
  }
  const uint64_t sm = mask_if(special);
  return dbl((kNanBits & sm) | ((mag | (sign << 63)) & ~sm));
}

// For the runtime parameters the encoding is a field, not a constant: one decode per encoding.
// Tiny results (common in the fp8 formats) are rounded on the fast path too.
template <Encoding En>
struct RuntimeP {
  static constexpr Encoding encoding = En;
  static constexpr bool subnormal_fast = true;
  uint64_t frac_bits, drop, sign_shift;  // 64-bit like the values they shift: the loops vectorise
  uint64_t sign_word, frac_mask, field_ones, word_mask, exp_adjust, min_normal_bits, max_bits;
  double sub_scale, inv_sub_scale;
  explicit RuntimeP(const FastFormat& f)
      : frac_bits(static_cast<uint64_t>(f.frac_bits)), drop(static_cast<uint64_t>(f.drop)),
        sign_shift(static_cast<uint64_t>(f.sign_shift)), sign_word(f.sign_word),
        frac_mask(f.frac_mask), field_ones(f.field_ones), word_mask(f.word_mask), exp_adjust(f.exp_adjust),
        min_normal_bits(f.min_normal_bits), max_bits(f.max_bits), sub_scale(f.sub_scale),
        inv_sub_scale(1.0 / f.sub_scale) {}
};

// One rounded lane: the rounded value as a double and as a word, whether it is inexact or
// underflows, and whether it must leave the fast path (overflow, NaN/inf; tiny nonzero results
// unless P::subnormal_fast); the flags are 0 or 1.
struct Lane {
  uint64_t bits;
  uint64_t word;
  uint64_t inexact;
  uint64_t underflow;
  uint64_t bad;
};

// The mode's increment for dropping the bits under `low` (all ones) of a value whose kept part's
// last bit is `lsb`, of sign mask `neg_mask` (U: uint64_t for double lanes, uint32_t for float lanes).
template <Rounding R, class U>
[[gnu::always_inline]] inline U increment(U low, U lsb, U neg_mask) {
  if constexpr (R == Rounding::NearestEven) return (low >> 1) + lsb;
  if constexpr (R == Rounding::NearestAway) return (low >> 1) + 1;
  if constexpr (R == Rounding::Upward) return low & ~neg_mask;
  if constexpr (R == Rounding::Downward) return low & neg_mask;
  return 0;
}

// A tiny value (the round-to-odd double `odd`, below 2^emin) rounded on the subnormal grid 2^q,
// q = emin - F, in double arithmetic that vectorises (no per-lane shifts): kd = |v| / 2^q is exact
// (< 2^F); kn = (kd + 2^52) - 2^52 is kd rounded to the nearest integer, ties to even, and the
// exact remainder kd - kn (in [-1/2, 1/2]) moves it for the other modes; k = 2^F is the smallest
// normal number, and the word is k itself (read from the bits of k + 2^52).
template <class P, Rounding R>
[[gnu::always_inline]] inline void round_tiny(const P& p, uint64_t odd, uint64_t neg_mask, uint64_t& k,
                                              uint64_t& inexact) {
  const double kd = dbl(odd) * p.inv_sub_scale;
  const double kn = (kd + 0x1p52) - 0x1p52;
  const double fr = kd - kn;
  const bool neg = neg_mask != 0;
  double step = 0.0;  // -1, 0 or +1 on the magnitude
  if constexpr (R == Rounding::NearestAway) step = fr == 0.5 ? 1.0 : 0.0;
  if constexpr (R == Rounding::TowardZero) step = fr < 0 ? -1.0 : 0.0;
  if constexpr (R == Rounding::Upward) step = neg ? (fr < 0 ? -1.0 : 0.0) : (fr > 0 ? 1.0 : 0.0);
  if constexpr (R == Rounding::Downward) step = neg ? (fr > 0 ? 1.0 : 0.0) : (fr < 0 ? -1.0 : 0.0);
  k = bits_of(kn + step + 0x1p52) - bits_of(0x1p52);
  inexact = static_cast<uint64_t>(fr != 0.0);
}

// Rounds the double s (bits `sb`) to the format; `nz`: the exact result differs from s, `err_bits`:
// a double whose sign is that of (exact - s). `zero_sign` is the sign bit an exact zero result gets.
template <class P, Rounding R>
[[gnu::always_inline]] inline Lane round_bits(const P& p, uint64_t sb, bool nz, uint64_t err_bits,
                                              uint64_t zero_sign) {
  const uint64_t sign = sb & kSign;
  const uint64_t mag = sb ^ sign;
  const uint64_t nzb = static_cast<uint64_t>(nz);
  const uint64_t toward = nzb & ((err_bits ^ sb) >> 63);  // the exact value lies below |s|
  const uint64_t odd = (mag - toward) | nzb;
  const uint64_t low = (uint64_t{1} << p.drop) - 1;
  const uint64_t neg_mask = uint64_t{0} - (sign >> 63);
  const uint64_t r = (odd + increment<R>(low, (odd >> p.drop) & 1, neg_mask)) & ~low;
  // Compared as doubles (positive patterns order like their values; NaN patterns fail <=). A NaN
  // pattern plus the increment can carry into bit 63: that is bad too.
  const bool zero = dbl(mag) == 0.0;
  const bool tiny = !zero & (dbl(odd) < dbl(p.min_normal_bits));
  const uint64_t zm = mask_if(zero);
  const uint64_t normal_word = ((r >> p.drop) - p.exp_adjust) | (p.sign_word & neg_mask);
  const uint64_t zero_word = p.sign_word & mask_if(zero_sign != 0);
  Lane l;
  l.bits = (zero_sign & zm) | ((r | sign) & ~zm);
  l.word = (zero_word & zm) | (normal_word & ~zm);
  l.inexact = static_cast<uint64_t>((odd & low) != 0);
  l.underflow = 0;
  l.bad = static_cast<uint64_t>(!(dbl(r) <= dbl(p.max_bits))) | (r >> 63);
  if constexpr (P::subnormal_fast) {
    uint64_t k = 0, inexact = 0;
    round_tiny<P, R>(p, odd, neg_mask, k, inexact);
    const uint64_t tm = mask_if(tiny);
    // k as a double: 2^52 + k - 2^52, then times 2^q; a zero keeps the sign (fnuz: none).
    const double kv = (dbl(0x4330000000000000ull | (k & ((uint64_t{1} << 52) - 1))) - 0x1p52) * p.sub_scale;
    const uint64_t keep_sign = (k != 0 || P::encoding != Encoding::Fnuz) ? sign : 0;
    const uint64_t kw = k | (keep_sign != 0 ? p.sign_word : 0);
    l.bits = ((bits_of(kv) | keep_sign) & tm) | (l.bits & ~tm);
    l.word = (kw & tm) | (l.word & ~tm);
    l.underflow = static_cast<uint64_t>(tiny) & inexact & static_cast<uint64_t>(dbl(r) < dbl(p.min_normal_bits));
    l.inexact = (inexact & tm) | (l.inexact & ~tm);
  } else {
    l.bad |= static_cast<uint64_t>(tiny);
  }
  return l;
}

// The sign bit of an exact zero sum x + y: +0 unless both are -0, except -0 when rounding downward.
template <class P, Rounding R>
[[gnu::always_inline]] inline uint64_t sum_zero_sign(uint64_t xb, uint64_t yb) {
  if constexpr (P::encoding == Encoding::Fnuz) return 0;
  if constexpr (R == Rounding::Downward) return (xb | yb) & kSign;
  return xb & yb & kSign;
}
template <class P>
[[gnu::always_inline]] inline uint64_t product_zero_sign(uint64_t sb) {
  if constexpr (P::encoding == Encoding::Fnuz) return 0;
  return sb & kSign;
}

// The rounding error of s = x + y (TwoSum, in double or float: exact unless s overflows).
template <class T>
[[gnu::always_inline]] inline T two_sum_err(T x, T y, T s) {
  const T yv = s - x;
  const T xv = s - yv;
  return (x - xv) + (y - yv);
}

template <class P, Rounding R>
[[gnu::always_inline]] inline Lane add_lane(const P& p, double x, double y) {
  const double s = x + y;
  const double e = two_sum_err(x, y, s);
  return round_bits<P, R>(p, bits_of(s), e != 0, bits_of(e), sum_zero_sign<P, R>(bits_of(x), bits_of(y)));
}

template <class P, Rounding R>
[[gnu::always_inline]] inline Lane mul_lane(const P& p, double x, double y) {
  const uint64_t sb = bits_of(x * y);  // exact: 2p <= 48 bits, no underflow
  return round_bits<P, R>(p, sb, false, 0, product_zero_sign<P>(sb));
}

// The word of a rounded lane that is not bad (a normal value or a zero).
template <class P>
[[gnu::always_inline]] inline uint64_t encode(const P& p, uint64_t bits) {
  const uint64_t mag = bits & ~kSign;
  const uint64_t w = ((mag >> p.drop) - p.exp_adjust) & ~mask_if(dbl(mag) == 0.0);
  return w | (p.sign_word & (uint64_t{0} - (bits >> 63)));
}

// Whether the CPU has AVX2: the loops are compiled twice (target("avx2") and the baseline).
using denote::have_avx2;

// Calls fn(params, std::integral_constant<Rounding, R>) with compile-time parameters for bfloat16
// and binary16, runtime ones (per encoding) otherwise, and the rounding mode as a constant.
template <class Fn>
inline void with_params(const FastFormat& ff, Rounding r, Fn&& fn) {
  auto by_mode = [&](const auto& p) {
    switch (r) {
      case Rounding::NearestEven: return fn(p, std::integral_constant<Rounding, Rounding::NearestEven>{});
      case Rounding::TowardZero: return fn(p, std::integral_constant<Rounding, Rounding::TowardZero>{});
      case Rounding::Upward: return fn(p, std::integral_constant<Rounding, Rounding::Upward>{});
      case Rounding::Downward: return fn(p, std::integral_constant<Rounding, Rounding::Downward>{});
      case Rounding::NearestAway: return fn(p, std::integral_constant<Rounding, Rounding::NearestAway>{});
    }
  };
  if (ff.kind == FastFormat::Kind::Bfloat16) return by_mode(Bf16P{});
  if (ff.kind == FastFormat::Kind::Binary16) return by_mode(Fp16P{});
  switch (ff.encoding) {
    case Encoding::Fn: return by_mode(RuntimeP<Encoding::Fn>(ff));
    case Encoding::Fnuz: return by_mode(RuntimeP<Encoding::Fnuz>(ff));
    case Encoding::Finite: return by_mode(RuntimeP<Encoding::Finite>(ff));
    default: return by_mode(RuntimeP<Encoding::Ieee>(ff));
  }
}

}  // namespace denote::fastk
