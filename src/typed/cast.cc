#include "denote/typed/cast.h"

#include <fmt/format.h>

#include "denote/scalar/binary_ops.h"
#include "scalar/binary_round.h"
#include "typed/gmp_util.h"

namespace denote::typed {

namespace {

std::string pair_name(const DType& s, const DType& t) { return dtype_name(s) + "->" + dtype_name(t); }

// The exact integer z (any size) rounded once to the format.
uint64_t round_integer(const BinaryFormat& f, FpEnv& env, const mpz_t z) {
  const bool neg = mpz_sgn(z) < 0;
  gmp::Int mag;
  mpz_abs(mag.z, z);
  const int64_t bits = mpz_sgn(z) == 0 ? 0 : static_cast<int64_t>(mpz_sizeinbase(mag.z, 2));
  if (bits <= 64) return round_pack(f, env, neg, mpz_get_ui(mag.z), 0, false, false);
  const int64_t shift = bits - 64;  // keep the top 64 bits (>= precision + 1), the rest is sticky
  gmp::Int top;
  mpz_tdiv_q_2exp(top.z, mag.z, static_cast<mp_bitcnt_t>(shift));
  const bool sticky = mpz_scan1(mag.z, 0) < static_cast<mp_bitcnt_t>(shift);
  uint64_t sig = 0;
  gmp::to_limbs(top.z, std::span<uint64_t>(&sig, 1));
  return round_pack(f, env, neg, sig, shift, sticky, false);
}

// A finite binary value rounded to an integer (exact mpz result); false for NaN/inf.
bool binary_to_integer(const BinaryFormat& f, FpEnv& env, uint64_t w, mpz_t out) {
  const Decoded d = decode_word(f, w);
  if (d.is_nan() || d.cls == FloatClass::Infinite) return false;
  if (d.exp >= 0) {
    mpz_set_ui(out, d.sig);
    mpz_mul_2exp(out, out, static_cast<mp_bitcnt_t>(d.exp));
  } else {
    bool inexact = false;
    const uint64_t kept = round_to_integer(d.sig, -d.exp, env.rounding, d.neg, inexact);
    if (inexact) env.flags |= kFpInexact;
    mpz_set_ui(out, kept);
  }
  if (d.neg) mpz_neg(out, out);
  return true;
}

Result<CastResult> binary_to_int(const DType& s, const DType& t, FpEnv& env, const Word& w) {
  gmp::Int z;
  if (!binary_to_integer(s.format, env, w.low(), z.z)) {
    const bool inf = classify(s.format, w.low()) == FloatClass::Infinite;
    return error_status(fmt::format("cast {}: {} ({}) has no integer value", pair_name(s, t), inf ? "infinity" : "nan",
                                    to_hex(w)));
  }
  if (!gmp::fits(z.z, t.width, t.is_signed))
    return error_status(fmt::format("cast {}: {} ({}) rounds to a value out of the range of {}", pair_name(s, t),
                                    to_hex(w), word_to_double(s.format, w.low()), dtype_name(t)));
  std::vector<uint64_t> limbs(limb_count(t), 0);
  gmp::to_twos(z.z, t.width, limbs);
  return CastResult{Word::from_limbs(std::move(limbs)), env.flags};
}

}  // namespace

Status check_cast(const DType& s, const DType& t) {
  DENOTE_RETURN_IF_ERROR(supported(s));
  DENOTE_RETURN_IF_ERROR(supported(t));
  if (t.is_binary()) return ok_status();
  if (s.is_binary() && t.is_int()) return ok_status();
  if (s == t) return ok_status();
  return error_status(fmt::format("cast {}: conversions to a non-binary dtype need identical types (or a binary "
                                  "source and an int target)", pair_name(s, t)));
}

Result<CastResult> cast_word(const DType& s, const DType& t, Rounding rounding, const Word& w) {
  DENOTE_RETURN_IF_ERROR(check_cast(s, t));
  DENOTE_RETURN_IF_ERROR(check_word(s, w));
  FpEnv env{rounding, 0, {}};
  if (s.is_binary() && t.is_int()) return binary_to_int(s, t, env, w);
  if (!t.is_binary()) return CastResult{w, 0};
  uint64_t out = 0;
  if (s.is_binary()) {
    out = fp_convert(s.format, t.format, env, w.low());
  } else {
    gmp::Int z;
    const size_t l = limb_count(s);
    std::vector<uint64_t> limbs(l, 0);
    for (size_t k = 0; k < w.limbs.size(); ++k) limbs[k] = w.limbs[k];
    if (s.is_bool()) mpz_set_ui(z.z, w.low());
    else gmp::from_twos(z.z, limbs, s.width, s.is_signed);
    out = round_integer(t.format, env, z.z);
  }
  if (!env.error.empty()) return error_status(fmt::format("cast {}: {}", pair_name(s, t), env.error));
  return CastResult{Word::of(out), env.flags};
}

// binary -> binary: one limb a word, one environment for the tensor (the precision policies' casts);
// a word with bits above its width or an error goes the general way for its message.
Result<TypedTensor> cast_binary_tensor(const TypedTensor& x, const DType& target, Rounding rounding, uint32_t& flags) {
  TypedTensor out{target, x.shape, std::vector<uint64_t>(x.limbs.size(), 0)};
  const uint64_t mask = x.dtype.format.word_mask();
  FpEnv env{rounding, 0, {}};
  for (size_t i = 0; i < x.limbs.size(); ++i) {
    if ((x.limbs[i] & ~mask) != 0) {
      Result<CastResult> r = cast_word(x.dtype, target, rounding, word_at(x, static_cast<int64_t>(i)));
      return error_status(fmt::format("element {}: {}", i, r.ok() ? "internal: a word above its width" : r.message()));
    }
    out.limbs[i] = fp_convert(x.dtype.format, target.format, env, x.limbs[i]);
    if (!env.error.empty())
      return error_status(fmt::format("element {}: cast {}: {}", i, pair_name(x.dtype, target), env.error));
  }
  flags |= env.flags;
  return out;
}

Result<TypedTensor> cast_tensor(const TypedTensor& x, const DType& target, Rounding rounding, uint32_t& flags) {
  DENOTE_RETURN_IF_ERROR(check_cast(x.dtype, target));
  if (x.dtype.is_binary() && target.is_binary()) return cast_binary_tensor(x, target, rounding, flags);
  const size_t l = limb_count(target);
  TypedTensor out{target, x.shape, std::vector<uint64_t>(static_cast<size_t>(x.size()) * l, 0)};
  for (int64_t i = 0; i < x.size(); ++i) {
    auto r = cast_word(x.dtype, target, rounding, word_at(x, i));
    if (!r.ok()) return error_status(fmt::format("element {}: {}", i, r.message()));
    flags |= r->flags;
    auto dst = out.element(i);
    for (size_t k = 0; k < r->word.limbs.size(); ++k) dst[k] = r->word.limbs[k];
  }
  return out;
}

}  // namespace denote::typed
