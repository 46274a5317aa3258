// Shared helpers for the binary-format tests: the library call for an oracle op, word generators
// that favour interesting cases (specials, close exponents, short significands, subnormals), and a
// checker that compares the library with the MPFR oracle bit for bit and flag for flag.
//
//   BinaryChecker ck(parse_format("bfloat16").value());
//   ck.check(Rounding::Upward, OracleOp::Div, 0x3f80, 0x4040);
//   EXPECT_EQ(ck.failures, 0);
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "denote/scalar/binary_ops.h"
#include "unit/binary_oracle.h"

namespace denote::testing {

inline constexpr Rounding kAllModes[] = {Rounding::NearestEven, Rounding::TowardZero, Rounding::Upward,
                                         Rounding::Downward, Rounding::NearestAway};

inline BinaryFormat format_named(const std::string& name) {
  Result<BinaryFormat> f = parse_format(name);
  EXPECT_TRUE(f.ok()) << f.message();
  return f.ok() ? *f : binary32_format();
}

inline uint64_t library_op(const BinaryFormat& f, FpEnv& env, OracleOp op, uint64_t a, uint64_t b, uint64_t c) {
  switch (op) {
    case OracleOp::Add: return fp_add(f, env, a, b);
    case OracleOp::Sub: return fp_sub(f, env, a, b);
    case OracleOp::Mul: return fp_mul(f, env, a, b);
    case OracleOp::Div: return fp_div(f, env, a, b);
    case OracleOp::Sqrt: return fp_sqrt(f, env, a);
    case OracleOp::Fma: return fp_fma(f, env, a, b, c);
  }
  return 0;
}

inline std::string hex(uint64_t w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(w));
  return buf;
}

struct BinaryChecker {
  explicit BinaryChecker(BinaryFormat fmt) : f(std::move(fmt)) {}
  BinaryFormat f;
  int64_t checks = 0;
  int64_t failures = 0;

  void check(Rounding r, OracleOp op, uint64_t a, uint64_t b = 0, uint64_t c = 0) {
    ++checks;
    FpEnv env;
    env.rounding = r;
    uint64_t got = library_op(f, env, op, a, b, c);
    OracleOut want = oracle_binary(f, r, op, a, b, c);
    bool lib_error = !env.error.empty();
    bool ok = want.error ? lib_error && (env.flags & kFpInvalid) != 0
                         : !lib_error && got == want.word && env.flags == want.flags;
    if (ok) return;
    if (++failures <= 8) {
      ADD_FAILURE() << f.name << " " << oracle_op_name(op) << " " << rounding_name(r) << " a=" << hex(a)
                    << " b=" << hex(b) << " c=" << hex(c) << ": library " << hex(got) << " "
                    << flags_to_string(env.flags) << (lib_error ? " error: " + env.error : "") << ", oracle "
                    << hex(want.word) << " " << flags_to_string(want.flags) << (want.error ? " error" : "");
    }
  }
};

// Random words of a format, biased towards the cases where rounding is hard.
class WordGen {
 public:
  WordGen(const BinaryFormat& f, uint64_t seed) : f_(f), rng_(seed) {}

  uint64_t any() {
    uint64_t kind = rng_() % 16;
    if (kind == 0) return special();
    if (kind <= 3) return near_one();
    if (kind <= 5) return short_sig(rng_() & f_.word_mask());
    if (kind == 6) return tiny();
    return rng_() & f_.word_mask();
  }

  // A word whose exponent is within a few of a's (cancellation, alignment ties).
  uint64_t near(uint64_t a) {
    int64_t field = static_cast<int64_t>((a >> f_.frac_bits) & field_ones());
    int64_t delta = static_cast<int64_t>(rng_() % (f_.frac_bits + 4)) - 2;
    if (rng_() & 1) delta = -delta;
    int64_t nf = std::clamp<int64_t>(field + delta, 0, static_cast<int64_t>(field_ones()));
    uint64_t frac = rng_() & frac_ones();
    uint64_t w = (static_cast<uint64_t>(nf) << f_.frac_bits) | frac | (rng_() & 1 ? sign_mask() : 0);
    return (rng_() & 3) == 0 ? short_sig(w) : w;
  }

  uint64_t pick(const std::vector<uint64_t>& v) { return v[rng_() % v.size()]; }
  std::mt19937_64& rng() { return rng_; }

  // A subnormal or one of the smallest normal words, either sign.
  uint64_t tiny() {
    uint64_t field = rng_() % 3;
    return (field << f_.frac_bits) | (rng_() & frac_ones()) | (rng_() & 1 ? sign_mask() : 0);
  }

 private:
  uint64_t field_ones() const { return (uint64_t{1} << f_.exp_bits) - 1; }
  uint64_t frac_ones() const { return (uint64_t{1} << f_.frac_bits) - 1; }
  uint64_t sign_mask() const { return f_.has_sign() ? uint64_t{1} << (f_.exp_bits + f_.frac_bits) : 0; }

  uint64_t special() {
    std::vector<uint64_t> s = {0, 1, frac_ones(), frac_ones() + 1, max_finite(f_, false), static_cast<uint64_t>(f_.bias) << f_.frac_bits};
    if (f_.has_inf()) s.push_back(infinity_word(f_, false));
    if (f_.has_nan()) s.push_back(canonical_nan(f_));
    if (f_.encoding == Encoding::Ieee && f_.frac_bits >= 2) s.push_back(infinity_word(f_, false) | 1);
    uint64_t w = pick(s);
    return rng_() & 1 ? w | sign_mask() : w;
  }
  uint64_t near_one() {
    uint64_t field = static_cast<uint64_t>(f_.bias) + rng_() % 7 - 3;
    return ((field & field_ones()) << f_.frac_bits) | (rng_() & frac_ones()) | (rng_() & 1 ? sign_mask() : 0);
  }
  // Keeps only the top few fraction bits: exact ties and exact results become likely.
  uint64_t short_sig(uint64_t w) {
    int keep = static_cast<int>(rng_() % 4);
    int drop = std::max(0, f_.frac_bits - keep);
    return w & ~((uint64_t{1} << drop) - 1);
  }

  BinaryFormat f_;
  std::mt19937_64 rng_;
};

}  // namespace denote::testing
