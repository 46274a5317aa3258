// Internal: a tiny RAII holder for GMP integers and conversions between mpz values, Words and the
// limb spans of a TypedTensor (two's-complement words of a given width).
#pragma once

#include <gmp.h>

#include <cstdint>
#include <span>
#include <vector>

#include "denote/typed/dtype.h"

namespace denote::gmp {

struct Int {
  mpz_t z;
  Int() { mpz_init(z); }
  Int(const Int&) = delete;
  Int& operator=(const Int&) = delete;
  ~Int() { mpz_clear(z); }
};

// The natural number of little-endian limbs.
inline void from_limbs(mpz_t out, std::span<const uint64_t> limbs) {
  mpz_import(out, limbs.size(), -1, sizeof(uint64_t), 0, 0, limbs.data());
}

// |z| as limbs (the sign is ignored), exactly `count` limbs (higher bits dropped).
inline void to_limbs(const mpz_t z, std::span<uint64_t> out) {
  for (uint64_t& l : out) l = 0;
  size_t n = 0;
  const size_t need = (mpz_sizeinbase(z, 2) + 63) / 64;
  if (mpz_sgn(z) == 0) return;
  if (need <= out.size()) {
    mpz_export(out.data(), &n, -1, sizeof(uint64_t), 0, 0, z);
    return;
  }
  std::vector<uint64_t> all(need, 0);
  mpz_export(all.data(), &n, -1, sizeof(uint64_t), 0, 0, z);
  for (size_t k = 0; k < out.size(); ++k) out[k] = all[k];
}

inline Word to_word(const Int& z) {
  std::vector<uint64_t> limbs((mpz_sizeinbase(z.z, 2) + 63) / 64, 0);
  to_limbs(z.z, limbs);
  return Word::from_limbs(std::move(limbs));
}

// The integer a two's-complement word of `width` bits denotes (signed: minus 2^width when the top
// bit is set).
inline void from_twos(mpz_t out, std::span<const uint64_t> limbs, int64_t width, bool is_signed) {
  from_limbs(out, limbs);
  if (is_signed && mpz_tstbit(out, static_cast<mp_bitcnt_t>(width - 1))) {
    Int p;
    mpz_setbit(p.z, static_cast<mp_bitcnt_t>(width));
    mpz_sub(out, out, p.z);
  }
}

// z modulo 2^width (two's-complement wrap) as `out.size()` limbs.
inline void to_twos(const mpz_t z, int64_t width, std::span<uint64_t> out) {
  Int r;
  mpz_fdiv_r_2exp(r.z, z, static_cast<mp_bitcnt_t>(width));
  to_limbs(r.z, out);
}

// Whether z lies in the range of a width-bit integer.
inline bool fits(const mpz_t z, int64_t width, bool is_signed) {
  if (mpz_sgn(z) < 0) {
    if (!is_signed) return false;
    Int m;
    mpz_neg(m.z, z);
    mpz_sub_ui(m.z, m.z, 1);  // -z - 1 < 2^(width-1)
    return static_cast<int64_t>(mpz_sizeinbase(m.z, 2)) <= width - 1 || mpz_sgn(m.z) == 0;
  }
  if (mpz_sgn(z) == 0) return true;
  return static_cast<int64_t>(mpz_sizeinbase(z, 2)) <= (is_signed ? width - 1 : width);
}

}  // namespace denote::gmp
