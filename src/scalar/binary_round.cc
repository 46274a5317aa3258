// The one rounding routine: (sign, exact significand, exponent, sticky) -> word, with IEEE flags.
#include "scalar/binary_round.h"

#include <algorithm>
#include <utility>

namespace denote {
namespace {

struct Rounded {
  uint64_t kept = 0;
  bool inexact = false;
};

// Drops the low `shift` bits of sig (sticky = something nonzero below bit 0) and rounds the rest to
// an integer in `mode`; shift <= 0 is an exact left shift.
inline __attribute__((always_inline)) Rounded round_at(uint64_t sig, int64_t shift, bool sticky, Rounding mode, bool neg) {
  uint64_t kept = 0;
  bool guard = false;
  bool rest = sticky;
  if (shift <= 0) {
    kept = sig << -shift;
  } else if (shift > 64) {
    rest = rest || sig != 0;
  } else if (shift == 64) {
    guard = (sig >> 63) != 0;
    rest = rest || (sig << 1) != 0;
  } else {
    kept = sig >> shift;
    guard = ((sig >> (shift - 1)) & 1) != 0;
    rest = rest || (sig & ((uint64_t{1} << (shift - 1)) - 1)) != 0;
  }
  bool inexact = guard || rest;
  bool up = false;
  switch (mode) {
    case Rounding::NearestEven: up = guard && (rest || (kept & 1)); break;
    case Rounding::NearestAway: up = guard; break;
    case Rounding::TowardZero: up = false; break;
    case Rounding::Upward: up = !neg && inexact; break;
    case Rounding::Downward: up = neg && inexact; break;
  }
  return {kept + (up ? 1 : 0), inexact};
}

// The NaN that stands for an overflowed value in a format without infinity.
uint64_t overflow_nan(const BinaryFormat& f, bool neg) {
  uint64_t n = canonical_nan(f);
  return f.encoding == Encoding::Fn && neg ? n | sign_mask_of(f) : n;
}

uint64_t overflow_result(const BinaryFormat& f, FpEnv& env, bool neg, bool saturate) {
  env.flags |= kFpOverflow | kFpInexact;
  Rounding m = env.rounding;
  bool to_max = m == Rounding::TowardZero || (m == Rounding::Upward && neg) ||
                (m == Rounding::Downward && !neg);
  if (to_max) return max_finite(f, neg);
  if (saturate || f.encoding == Encoding::Finite) {
    env.flags |= kFpSaturated;
    return max_finite(f, neg);
  }
  if (f.has_inf()) return infinity_word(f, neg);
  return overflow_nan(f, neg);
}

// Tiny after rounding: the value rounded to precision p with an unbounded exponent range is below
// 2^emin. Only a value in the binade just below 2^emin can round up out of tininess.
bool tiny_after_rounding(uint64_t sig, int64_t exp, bool sticky, int64_t top, int64_t emin, int p,
                         Rounding mode, bool neg) {
  if (top >= emin) return false;
  if (top < emin - 1) return true;
  Rounded r = round_at(sig, top - (p - 1) - exp, sticky, mode, neg);
  return (r.kept >> p) == 0;
}

}  // namespace

void set_error(FpEnv& env, std::string message) {
  env.flags |= kFpInvalid;
  if (env.error.empty()) env.error = std::move(message);
}

uint64_t infinite_result(const BinaryFormat& f, FpEnv& env, bool neg) {
  if (f.has_inf()) return infinity_word(f, neg);
  if (f.encoding == Encoding::Finite) {
    env.flags |= kFpSaturated;
    return max_finite(f, neg);
  }
  return overflow_nan(f, neg);
}

uint64_t round_to_integer(uint64_t sig, int64_t shift, Rounding mode, bool neg, bool& inexact) {
  Rounded r = round_at(sig, shift, false, mode, neg);
  inexact = r.inexact;
  return r.kept;
}

uint64_t round_pack(const BinaryFormat& f, FpEnv& env, bool neg, uint64_t sig, int64_t exp, bool sticky,
                    bool saturate) {
  bool zero = sig == 0 && !sticky;
  if (f.encoding == Encoding::E8m0 && (neg || zero)) {
    env.flags |= kFpInvalid;  // e8m0 holds neither zero nor negative values
    return canonical_nan(f);
  }
  if (zero) return zero_word(f, neg);
  const int p = f.precision();
  const int64_t emin = min_normal_exp(f);
  const int64_t top = exp + bit_length(sig) - 1;
  int64_t q = std::max(top - (p - 1), emin - (p - 1));
  Rounded r = round_at(sig, q - exp, sticky, env.rounding, neg);
  uint64_t kept = r.kept;
  if ((kept >> p) != 0) {  // carried into the next binade: kept == 2^p
    kept >>= 1;
    ++q;
  }
  if (r.inexact) {
    env.flags |= kFpInexact;
    if (tiny_after_rounding(sig, exp, sticky, top, emin, p, env.rounding, neg)) env.flags |= kFpUnderflow;
  }
  if (kept == 0) return f.encoding == Encoding::E8m0 ? 0 : zero_word(f, neg);
  uint64_t frac_mask = (uint64_t{1} << f.frac_bits) - 1;
  uint64_t word = kept;  // subnormal: exponent field 0
  if ((kept >> (p - 1)) != 0) {
    int64_t e = q + p - 1;
    int64_t emax = format_emax(f);
    bool over = e > emax ||
                (e == emax && f.encoding == Encoding::Fn && f.frac_bits > 0 && kept == frac_mask * 2 + 1);
    if (over) return overflow_result(f, env, neg, saturate);
    word = (static_cast<uint64_t>(e + f.bias) << f.frac_bits) | (kept & frac_mask);
  }
  return neg ? word | sign_mask_of(f) : word;
}

uint64_t round_pack_wide(const BinaryFormat& f, FpEnv& env, bool neg, u128 sig, int64_t exp, bool sticky,
                         bool saturate) {
  if ((sig >> 64) != 0) {
    int s = bit_length_wide(sig) - 64;
    sticky = sticky || (sig & ((u128{1} << s) - 1)) != 0;
    sig >>= s;
    exp += s;
  }
  return round_pack(f, env, neg, static_cast<uint64_t>(sig), exp, sticky, saturate);
}

uint64_t round_double(const BinaryFormat& f, FpEnv& env, double x, bool saturate) {
  bool neg = false;
  uint64_t sig = 0;
  int64_t exp = 0;
  decode_double(x, neg, sig, exp);
  return round_pack(f, env, neg, sig, exp, false, saturate);
}

}  // namespace denote
