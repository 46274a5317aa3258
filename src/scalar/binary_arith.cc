// Correctly rounded arithmetic on binary-format words. Special operands (NaN, inf, zero) are settled
// first; finite operands take one of two exact paths and are rounded once by round_pack:
// - fast formats (p <= 24, exponents inside binary32's): the operation in double plus an error-free
//   transformation telling on which side of the double the exact result lies (a sticky bit);
// - every other format: exact integer arithmetic (128-bit; 384-bit for the fused sum of fma).
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "denote/scalar/binary_ops.h"
#include "scalar/binary_round.h"

namespace denote {
namespace {

bool is_nan_class(FloatClass c) { return c == FloatClass::QuietNaN || c == FloatClass::SignalingNaN; }

// A word with bits above the width: an error, the result is meaningless.
bool bad_word(const BinaryFormat& f, FpEnv& env, uint64_t w) {
  if ((w & ~f.word_mask()) == 0) return false;
  set_error(env, check_word(f, w).message());
  return true;
}

uint64_t quiet(const BinaryFormat& f, uint64_t w) {
  return f.encoding == Encoding::Ieee ? w | (uint64_t{1} << (f.frac_bits - 1)) : w;
}

// NaN rule: a signaling operand wins (invalid), else the leftmost NaN; quiet bit set, payload kept.
uint64_t pick_nan(const BinaryFormat& f, FpEnv& env, std::initializer_list<uint64_t> words) {
  bool have_quiet = false;
  uint64_t first_quiet = 0;
  for (uint64_t w : words) {
    FloatClass c = classify(f, w);
    if (c == FloatClass::SignalingNaN) {
      env.flags |= kFpInvalid;
      return quiet(f, w);
    }
    if (c == FloatClass::QuietNaN && !have_quiet) {
      have_quiet = true;
      first_quiet = w;
    }
  }
  for (uint64_t w : words) {  // a signaling NaN further right still raises invalid
    if (classify(f, w) == FloatClass::SignalingNaN) env.flags |= kFpInvalid;
  }
  return first_quiet;
}

uint64_t invalid_result(const BinaryFormat& f, FpEnv& env, const char* what) {
  if (f.encoding == Encoding::Finite) {
    set_error(env, fmt::format("{}: invalid operation ({}) has no value in a format without nan", f.name, what));
    return 0;
  }
  env.flags |= kFpInvalid;
  return canonical_nan(f);
}

uint64_t meaningless(const BinaryFormat& f) { return canonical_nan(f); }

// The sum of two zeros, or an exact cancellation (pass n1 != n2): IEEE 754 6.3.
uint64_t zero_sum(const BinaryFormat& f, FpEnv& env, bool n1, bool n2) {
  bool neg = n1 == n2 ? n1 : env.rounding == Rounding::Downward;
  return round_pack(f, env, neg, 0, 0, false, false);
}

uint64_t exact_word(const BinaryFormat& f, FpEnv& env, const Unpacked& u) {
  return round_pack(f, env, u.neg, u.sig, u.exp, false, false);
}

// ---- fast path: doubles ----

double pow2(int64_t e) { return __builtin_bit_cast(double, static_cast<uint64_t>(e + 1023) << 52); }

double fast_value(const Decoded& u) {
  double d = static_cast<double>(u.sig) * pow2(u.exp);
  return u.neg ? -d : d;
}

// Rounds the exact result r, given as the double s and the sign of (r - s): dir = 0 when r == s.
// A nonzero dir becomes a sticky bit below s's significand (after stepping one unit down when |r| <
// |s|), which is round-to-odd at 53 bits: rounding that to p <= 51 bits is correct.
uint64_t round_with_dir(const BinaryFormat& f, FpEnv& env, double s, int dir) {
  bool neg = false;
  uint64_t sig = 0;
  int64_t exp = 0;
  decode_double(s, neg, sig, exp);
  if (dir != 0 && ((dir < 0) != neg)) sig -= 1;
  return round_pack(f, env, neg, sig, exp, dir != 0, false);
}

int sign_of(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

// The rounding error of s = x + y (TwoSum, exact without underflow, which fast formats never reach).
double two_sum_err(double x, double y, double s) {
  double yv = s - x;
  double xv = s - yv;
  return (x - xv) + (y - yv);
}

uint64_t fast_add(const BinaryFormat& f, FpEnv& env, double x, double y) {
  double s = x + y;
  if (s == 0) return zero_sum(f, env, false, true);  // nonzero operands cancelled exactly
  return round_with_dir(f, env, s, sign_of(two_sum_err(x, y, s)));
}

uint64_t fast_div(const BinaryFormat& f, FpEnv& env, double x, double y) {
  double q = x / y;
  double r = std::fma(-q, y, x);  // x - q*y exactly; x/y - q = r/y
  return round_with_dir(f, env, q, sign_of(r) * sign_of(y));
}

uint64_t fast_sqrt(const BinaryFormat& f, FpEnv& env, double x) {
  double s = std::sqrt(x);
  double r = std::fma(-s, s, x);  // x - s*s exactly
  return round_with_dir(f, env, s, sign_of(r));
}

// ---- general path: integers ----

Unpacked unpacked(const Decoded& d) { return Unpacked{d.neg, d.sig, d.exp}; }

// Shifts the significand so that its top bit is bit 62.
void normalize(Unpacked& u) {
  int s = 63 - bit_length(u.sig);
  u.sig <<= s;
  u.exp -= s;
}

uint64_t wide_add(const BinaryFormat& f, FpEnv& env, Unpacked a, Unpacked b) {
  normalize(a);
  normalize(b);
  if (b.exp > a.exp || (b.exp == a.exp && b.sig > a.sig)) std::swap(a, b);
  int64_t d = a.exp - b.exp;
  u128 x = static_cast<u128>(a.sig) << 64;
  u128 y = 0;
  bool sticky = false;
  if (d <= 64) {
    y = static_cast<u128>(b.sig) << (64 - d);
  } else if (d - 64 < 63) {
    int s = static_cast<int>(d - 64);
    y = b.sig >> s;
    sticky = (b.sig & ((uint64_t{1} << s) - 1)) != 0;
  } else {
    sticky = true;
  }
  u128 z = 0;
  if (a.neg == b.neg) {
    z = x + y;
  } else {
    z = x - y - (sticky ? 1 : 0);  // x - (y + t), 0 < t < 1, is (z) + (1 - t)
    if (z == 0 && !sticky) return zero_sum(f, env, false, true);
  }
  return round_pack_wide(f, env, a.neg, z, a.exp - 64, sticky, false);
}

uint64_t wide_mul(const BinaryFormat& f, FpEnv& env, const Unpacked& a, const Unpacked& b) {
  u128 p = static_cast<u128>(a.sig) * b.sig;
  return round_pack_wide(f, env, a.neg != b.neg, p, a.exp + b.exp, false, false);
}

uint64_t wide_div(const BinaryFormat& f, FpEnv& env, Unpacked a, const Unpacked& b) {
  normalize(a);
  u128 x = static_cast<u128>(a.sig) << 64;
  u128 q = x / b.sig;  // at least 65 bits since b.sig < 2^62
  bool sticky = x % b.sig != 0;
  return round_pack_wide(f, env, a.neg != b.neg, q, a.exp - 64 - b.exp, sticky, false);
}

// floor(sqrt(n)) for n < 2^126.
uint64_t isqrt_wide(u128 n) {
  uint64_t r = static_cast<uint64_t>(std::sqrt(static_cast<double>(n)));
  if (r == 0) r = 1;
  r = static_cast<uint64_t>((static_cast<u128>(r) + n / r) / 2);  // Newton: now >= floor, within 1-2
  while (static_cast<u128>(r) * r > n) --r;
  while (static_cast<u128>(r + 1) * (r + 1) <= n) ++r;
  return r;
}

uint64_t wide_sqrt(const BinaryFormat& f, FpEnv& env, const Unpacked& a) {
  int k = 126 - bit_length(a.sig);
  if (((a.exp - k) & 1) != 0) --k;  // even exponent; the radicand keeps 125 or 126 bits
  u128 n = static_cast<u128>(a.sig) << k;
  uint64_t r = isqrt_wide(n);
  bool sticky = static_cast<u128>(r) * r != n;
  return round_pack(f, env, false, r, (a.exp - k) / 2, sticky, false);  // r has 63 bits >= p + 1
}

struct Term {
  bool neg;
  u128 sig;
  int64_t exp;
  int64_t top() const { return exp + bit_length_wide(sig) - 1; }
};

// A 384-bit unsigned integer in little-endian 64-bit limbs: enough for the fused sum below, whose
// two terms (at most 124 and 62 bits) span at most ~250 bits once the small one is clamped.
struct Limbs {
  static constexpr int kCount = 6;
  uint64_t w[kCount] = {};

  // sig << shift for 0 <= shift < 256 (wide_sum shifts by at most p + 2 + 123 <= 187).
  static Limbs place(u128 sig, int64_t shift) {
    Limbs x;
    int li = static_cast<int>(shift / 64);
    int b = static_cast<int>(shift % 64);
    uint64_t lo = static_cast<uint64_t>(sig);
    uint64_t hi = static_cast<uint64_t>(sig >> 64);
    x.w[li] = lo << b;
    x.w[li + 1] = b == 0 ? hi : (hi << b) | (lo >> (64 - b));
    x.w[li + 2] = b == 0 ? 0 : hi >> (64 - b);
    return x;
  }
  bool less_than(const Limbs& o) const {
    for (int i = kCount - 1; i >= 0; --i) {
      if (w[i] != o.w[i]) return w[i] < o.w[i];
    }
    return false;
  }
  void add(const Limbs& o) {
    unsigned carry = 0;
    for (int i = 0; i < kCount; ++i) {
      u128 t = static_cast<u128>(w[i]) + o.w[i] + carry;
      w[i] = static_cast<uint64_t>(t);
      carry = static_cast<unsigned>(t >> 64);
    }
  }
  void sub(const Limbs& o) {  // requires *this >= o
    unsigned borrow = 0;
    for (int i = 0; i < kCount; ++i) {
      uint64_t t = w[i] - o.w[i] - borrow;
      borrow = (w[i] < o.w[i] || (w[i] == o.w[i] && borrow)) ? 1 : 0;
      w[i] = t;
    }
  }
  int bit_length() const {
    for (int i = kCount - 1; i >= 0; --i) {
      if (w[i] != 0) return 64 * i + denote::bit_length(w[i]);
    }
    return 0;
  }
  // Bits [s, s + 128) as an integer, and whether any bit below s is set.
  u128 extract(int s, bool& sticky) const {
    int li = s / 64;
    int b = s % 64;
    sticky = b != 0 && (w[li] & ((uint64_t{1} << b) - 1)) != 0;
    for (int i = 0; i < li; ++i) sticky = sticky || w[i] != 0;
    auto limb = [&](int i) { return i < kCount ? w[i] : uint64_t{0}; };
    uint64_t lo = b == 0 ? limb(li) : (limb(li) >> b) | (limb(li + 1) << (64 - b));
    uint64_t hi = b == 0 ? limb(li + 1) : (limb(li + 1) >> b) | (limb(li + 2) << (64 - b));
    return (static_cast<u128>(hi) << 64) | lo;
  }
};

// big + small exactly (then rounded). A small term entirely below both big's last bit and the
// result's rounding position changes neither the rounding nor the flags when replaced by any value of
// the same sign in that range, so the exact sum stays a few hundred bits wide.
uint64_t wide_sum(const BinaryFormat& f, FpEnv& env, Term big, Term small) {
  if (small.top() > big.top()) std::swap(big, small);
  int64_t thr = std::min(big.exp, big.top() - f.precision() - 2);
  if (small.top() < thr) {
    small.sig = 1;
    small.exp = thr - 1;
  }
  int64_t lo = std::min(big.exp, small.exp);
  Limbs x = Limbs::place(big.sig, big.exp - lo);
  Limbs y = Limbs::place(small.sig, small.exp - lo);
  bool neg = big.neg;
  if (big.neg == small.neg) {
    x.add(y);
  } else if (x.less_than(y)) {  // equal tops: the "small" term may be the larger one
    y.sub(x);
    x = y;
    neg = small.neg;
  } else {
    x.sub(y);
  }
  int len = x.bit_length();
  if (len == 0) return zero_sum(f, env, false, true);
  int s = std::max(0, len - 126);
  bool sticky = false;
  u128 sig = x.extract(s, sticky);
  return round_pack_wide(f, env, neg, sig, lo + s, sticky, false);
}

// ---- operations on finite nonzero operands ----

uint64_t finite_add(const BinaryFormat& f, FpEnv& env, const Decoded& a, const Decoded& b) {
  if (fast_format(f)) return fast_add(f, env, fast_value(a), fast_value(b));
  return wide_add(f, env, unpacked(a), unpacked(b));
}

uint64_t finite_fma(const BinaryFormat& f, FpEnv& env, const Decoded& a, const Decoded& b, const Decoded& c) {
  bool c_zero = c.cls == FloatClass::Zero;
  if (fast_format(f)) {
    double p = fast_value(a) * fast_value(b);  // exact: 2p <= 48 bits, no underflow
    if (c_zero) return round_with_dir(f, env, p, 0);
    return fast_add(f, env, p, fast_value(c));
  }
  if (c_zero) return wide_mul(f, env, unpacked(a), unpacked(b));
  Term prod{a.neg != b.neg, static_cast<u128>(a.sig) * b.sig, a.exp + b.exp};
  return wide_sum(f, env, prod, Term{c.neg, c.sig, c.exp});
}

uint64_t add_impl(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b, bool negate_b) {
  if (bad_word(f, env, a) || bad_word(f, env, b)) return meaningless(f);
  Decoded da = decode_word(f, a);
  Decoded db = decode_word(f, b);
  if (da.is_nan() || db.is_nan()) return pick_nan(f, env, {a, b});
  db.neg = db.neg != negate_b;
  if (da.cls == FloatClass::Infinite || db.cls == FloatClass::Infinite) {
    if (da.cls == db.cls && da.neg != db.neg) return invalid_result(f, env, "inf - inf");
    return infinity_word(f, da.cls == FloatClass::Infinite ? da.neg : db.neg);
  }
  if (da.cls == FloatClass::Zero && db.cls == FloatClass::Zero) return zero_sum(f, env, da.neg, db.neg);
  if (db.cls == FloatClass::Zero) return a;
  if (da.cls == FloatClass::Zero) return exact_word(f, env, unpacked(db));
  return finite_add(f, env, da, db);
}

// Decodes two operands; true (with the result in `out`) when a bad word or a NaN settles the op.
bool settle_pair(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b, Decoded& da, Decoded& db,
                 uint64_t& out) {
  if (bad_word(f, env, a) || bad_word(f, env, b)) {
    out = meaningless(f);
    return true;
  }
  da = decode_word(f, a);
  db = decode_word(f, b);
  if (!da.is_nan() && !db.is_nan()) return false;
  out = pick_nan(f, env, {a, b});
  return true;
}

}  // namespace

uint64_t fp_add(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) { return add_impl(f, env, a, b, false); }
uint64_t fp_sub(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) { return add_impl(f, env, a, b, true); }

uint64_t fp_mul(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  Decoded da, db;
  uint64_t out = 0;
  if (settle_pair(f, env, a, b, da, db, out)) return out;
  bool neg = da.neg != db.neg;
  if (da.cls == FloatClass::Infinite || db.cls == FloatClass::Infinite) {
    if (da.cls == FloatClass::Zero || db.cls == FloatClass::Zero) return invalid_result(f, env, "0 * inf");
    return infinity_word(f, neg);
  }
  if (da.cls == FloatClass::Zero || db.cls == FloatClass::Zero) return zero_word(f, neg);
  if (fast_format(f)) return round_with_dir(f, env, fast_value(da) * fast_value(db), 0);
  return wide_mul(f, env, unpacked(da), unpacked(db));
}

uint64_t fp_div(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  Decoded da, db;
  uint64_t out = 0;
  if (settle_pair(f, env, a, b, da, db, out)) return out;
  bool neg = da.neg != db.neg;
  if (da.cls == FloatClass::Infinite) {
    if (db.cls == FloatClass::Infinite) return invalid_result(f, env, "inf / inf");
    return infinity_word(f, neg);
  }
  if (db.cls == FloatClass::Infinite) return zero_word(f, neg);
  if (db.cls == FloatClass::Zero) {
    if (da.cls == FloatClass::Zero) return invalid_result(f, env, "0 / 0");
    env.flags |= kFpDivByZero;
    return infinite_result(f, env, neg);
  }
  if (da.cls == FloatClass::Zero) return zero_word(f, neg);
  if (fast_format(f)) return fast_div(f, env, fast_value(da), fast_value(db));
  return wide_div(f, env, unpacked(da), unpacked(db));
}

uint64_t fp_sqrt(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  if (bad_word(f, env, a)) return meaningless(f);
  Decoded da = decode_word(f, a);
  if (da.is_nan()) return pick_nan(f, env, {a});
  if (da.cls == FloatClass::Zero) return a;  // sqrt(-0) = -0
  if (da.neg) return invalid_result(f, env, "sqrt of a negative number");
  if (da.cls == FloatClass::Infinite) return a;
  if (fast_format(f)) return fast_sqrt(f, env, fast_value(da));
  return wide_sqrt(f, env, unpacked(da));
}

uint64_t fp_fma(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b, uint64_t c) {
  if (bad_word(f, env, a) || bad_word(f, env, b) || bad_word(f, env, c)) return meaningless(f);
  Decoded da = decode_word(f, a);
  Decoded db = decode_word(f, b);
  Decoded dc = decode_word(f, c);
  bool zero_times_inf = (da.cls == FloatClass::Zero && db.cls == FloatClass::Infinite) ||
                        (da.cls == FloatClass::Infinite && db.cls == FloatClass::Zero);
  if (da.is_nan() || db.is_nan() || dc.is_nan()) {
    if (zero_times_inf) env.flags |= kFpInvalid;  // as SoftFloat: invalid even with a NaN addend
    return pick_nan(f, env, {a, b, c});
  }
  if (zero_times_inf) return invalid_result(f, env, "0 * inf");
  bool np = da.neg != db.neg;
  if (da.cls == FloatClass::Infinite || db.cls == FloatClass::Infinite) {
    if (dc.cls == FloatClass::Infinite && dc.neg != np) return invalid_result(f, env, "inf - inf");
    return infinity_word(f, np);
  }
  if (dc.cls == FloatClass::Infinite) return c;
  if (da.cls == FloatClass::Zero || db.cls == FloatClass::Zero) {
    return dc.cls == FloatClass::Zero ? zero_sum(f, env, np, dc.neg) : c;
  }
  return finite_fma(f, env, da, db, dc);
}

uint64_t fp_neg(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  if (bad_word(f, env, a)) return meaningless(f);
  if (f.encoding == Encoding::Fnuz && (a & ~sign_mask_of(f)) == 0) return a;  // 0 and the NaN stay
  if (f.encoding == Encoding::E8m0) {
    if (is_nan(f, a)) return a;
    env.flags |= kFpInvalid;  // a negative number has no value in e8m0
    return canonical_nan(f);
  }
  return a ^ sign_mask_of(f);
}

uint64_t fp_abs(const BinaryFormat& f, FpEnv& env, uint64_t a) {
  if (bad_word(f, env, a)) return meaningless(f);
  if (f.encoding == Encoding::Fnuz && is_nan(f, a)) return a;
  return a & ~sign_mask_of(f);
}

namespace {

// A key that orders non-NaN words by value; with zero_order, -0 sorts just below +0.
__int128 order_key(const BinaryFormat& f, uint64_t w, bool zero_order) {
  bool neg = sign_bit(f, w);
  __int128 mag = static_cast<__int128>(w & ~sign_mask_of(f));
  if (!neg) return zero_order ? 2 * mag : mag;
  return zero_order ? -2 * mag - 1 : -mag;
}

uint64_t min_max(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b, bool want_max) {
  Decoded da, db;
  uint64_t out = 0;
  if (settle_pair(f, env, a, b, da, db, out)) return out;
  bool a_less = order_key(f, a, true) < order_key(f, b, true);
  return a_less == want_max ? b : a;
}

}  // namespace

uint64_t fp_min(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) { return min_max(f, env, a, b, false); }
uint64_t fp_max(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) { return min_max(f, env, a, b, true); }

FpOrder fp_compare(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b) {
  if (bad_word(f, env, a) || bad_word(f, env, b)) return FpOrder::Unordered;
  FloatClass ca = classify(f, a);
  FloatClass cb = classify(f, b);
  if (is_nan_class(ca) || is_nan_class(cb)) {
    if (ca == FloatClass::SignalingNaN || cb == FloatClass::SignalingNaN) env.flags |= kFpInvalid;
    return FpOrder::Unordered;
  }
  __int128 ka = order_key(f, a, false);
  __int128 kb = order_key(f, b, false);
  return ka < kb ? FpOrder::Less : (ka == kb ? FpOrder::Equal : FpOrder::Greater);
}

// ---- conversions ----

namespace {

// A NaN of `from` as a NaN of `to`: IEEE to IEEE keeps the sign and the top payload bits; an fn
// NaN keeps its sign (0xff is -NaN); the fnuz NaN (the -0 pattern) and e8m0's have no sign: +NaN.
uint64_t convert_nan(const BinaryFormat& from, const BinaryFormat& to, FpEnv& env, uint64_t a) {
  if (classify(from, a) == FloatClass::SignalingNaN) env.flags |= kFpInvalid;
  const bool neg = from.encoding != Encoding::Fnuz && sign_bit(from, a);
  if (to.encoding == Encoding::Fn) return canonical_nan(to) | (neg ? sign_mask_of(to) : 0);
  if (to.encoding != Encoding::Ieee) return canonical_nan(to);
  uint64_t out = canonical_nan(to) | (neg ? sign_mask_of(to) : 0);
  if (from.encoding != Encoding::Ieee) return out;
  uint64_t frac = a & ((uint64_t{1} << from.frac_bits) - 1);
  uint64_t payload = to.frac_bits >= from.frac_bits ? frac << (to.frac_bits - from.frac_bits)
                                                    : frac >> (from.frac_bits - to.frac_bits);
  return out | payload;
}

uint64_t convert_inf(const BinaryFormat& to, FpEnv& env, bool neg, bool saturate) {
  if (to.has_inf()) return infinity_word(to, neg);
  if (saturate && !(neg && to.encoding == Encoding::E8m0)) {
    env.flags |= kFpSaturated;
    return max_finite(to, neg);
  }
  if (to.encoding == Encoding::Finite) {
    set_error(env, fmt::format("{}: infinity has no value in a format without infinity and nan", to.name));
    return 0;
  }
  env.flags |= kFpMappedSpecial;
  return to.encoding == Encoding::Fn && neg ? canonical_nan(to) | sign_mask_of(to) : canonical_nan(to);
}

}  // namespace

uint64_t fp_convert(const BinaryFormat& from, const BinaryFormat& to, FpEnv& env, uint64_t a, bool saturate) {
  if (bad_word(from, env, a)) return meaningless(to);
  Decoded d = decode_word(from, a);
  if (d.is_nan()) {
    if (to.encoding == Encoding::Finite) {
      set_error(env, fmt::format("{}: nan has no value in a format without nan", to.name));
      return 0;
    }
    return convert_nan(from, to, env, a);
  }
  if (d.cls == FloatClass::Infinite) return convert_inf(to, env, d.neg, saturate);
  return round_pack(to, env, d.neg, d.sig, d.exp, false, saturate);
}

uint64_t fp_from_double(const BinaryFormat& f, FpEnv& env, double x, bool saturate) {
  static const BinaryFormat kBinary64 = binary64_format();
  return fp_convert(kBinary64, f, env, __builtin_bit_cast(uint64_t, x), saturate);
}

uint64_t fp_from_int(const BinaryFormat& f, FpEnv& env, int64_t v) {
  uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return round_pack(f, env, v < 0, mag, 0, false, false);
}

bool fp_to_int(const BinaryFormat& f, FpEnv& env, uint64_t a, int64_t& out) {
  if (bad_word(f, env, a)) return false;
  FloatClass c = classify(f, a);
  if (is_nan_class(c) || c == FloatClass::Infinite) {
    set_error(env, fmt::format("{}: {} has no integer value", f.name, c == FloatClass::Infinite ? "infinity" : "nan"));
    return false;
  }
  Unpacked u = unpack_finite(f, a);
  uint64_t mag = 0;
  bool fits = true;
  if (u.exp >= 0) {
    fits = u.sig == 0 || bit_length(u.sig) + u.exp <= 64;
    if (fits && u.sig != 0) mag = u.sig << u.exp;
  } else {
    bool inexact = false;
    mag = round_to_integer(u.sig, -u.exp, env.rounding, u.neg, inexact);
    if (inexact) env.flags |= kFpInexact;
  }
  uint64_t limit = u.neg ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  if (!fits || mag > limit) {
    set_error(env, fmt::format("{}: value {} is out of the int64 range", f.name, word_to_double(f, a)));
    return false;
  }
  out = u.neg ? static_cast<int64_t>(uint64_t{0} - mag) : static_cast<int64_t>(mag);
  return true;
}

}  // namespace denote
