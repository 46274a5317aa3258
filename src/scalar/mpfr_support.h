// Internal: the MPFR machinery behind the correctly rounded functions (binary_functions.cc) and the
// MPFR context (real_context.cc): exact decoding of words, exact rounding of an MPFR value to a
// format through the core's round_pack, rigorous enclosures of the elementary functions, and the
// Ziv loop that raises the working precision until the rounding is decided.
//
//   WideExponentRange guard;          // every MPFR computation on format values runs inside one
//   Mpfr x;
//   decode_word(f, word, x);          // exact
//   uint64_t r = ziv_word(f, env, [&](mpfr_ptr lo, mpfr_ptr hi) { enclose(FpFunction::Exp, x, lo, hi); });
#pragma once

#include <mpfr.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_functions.h"
#include "denote/scalar/binary_ops.h"

namespace denote::mpfr_support {

// An owned mpfr_t (not copyable).
class Mpfr {
 public:
  explicit Mpfr(mpfr_prec_t prec = 64) { mpfr_init2(v_, prec); }
  ~Mpfr() { mpfr_clear(v_); }
  Mpfr(const Mpfr&) = delete;
  Mpfr& operator=(const Mpfr&) = delete;
  mpfr_ptr get() { return v_; }
  mpfr_srcptr get() const { return v_; }
  operator mpfr_ptr() { return v_; }              // NOLINT: used like an mpfr_t
  operator mpfr_srcptr() const { return v_; }     // NOLINT

 private:
  mpfr_t v_;
};

// Widens MPFR's exponent range to its maximum while alive (restores the previous range after), so
// that no intermediate of a computation on format values overflows or underflows MPFR itself.
class WideExponentRange {
 public:
  WideExponentRange();
  ~WideExponentRange();
  WideExponentRange(const WideExponentRange&) = delete;
  WideExponentRange& operator=(const WideExponentRange&) = delete;

 private:
  mpfr_exp_t emin_, emax_;
};

// The exact value of a word (NaN words give an MPFR NaN); sets out's precision.
void decode_word(const BinaryFormat& f, uint64_t word, mpfr_ptr out);

// Rounds the exact value v once to the format in env.rounding (the core's round_pack), or-ing the
// flags into env. An infinite v is an exact infinity (the caller raises divide-by-zero where that
// is its cause); a NaN v gives the canonical NaN with invalid (an error in formats without NaN).
uint64_t round_to_word(const BinaryFormat& f, FpEnv& env, mpfr_srcptr v);

// A word for an exactly known double value (1, 0.5, -0, inf, ...).
uint64_t exact_word(const BinaryFormat& f, FpEnv& env, double v);

// IEEE special results, with the core's conventions: canonical NaN + invalid (an error where the
// format has no NaN), and x/0 (divide-by-zero + the format's infinite result).
uint64_t invalid_word(const BinaryFormat& f, FpEnv& env, const char* what);
uint64_t pole_word(const BinaryFormat& f, FpEnv& env, bool negative);
// The NaN rule for NaN operands: a signaling one wins (invalid), else the leftmost NaN; quiet bit set.
uint64_t nan_word(const BinaryFormat& f, FpEnv& env, uint64_t a, uint64_t b);
// True (and an error recorded, result word in `out`) when a word has bits above the format's width.
bool bad_words(const BinaryFormat& f, FpEnv& env, std::initializer_list<uint64_t> words, uint64_t& out);

// Encloses fn(x) for a finite, non-special x: lo <= fn(x) <= hi at the precision of lo and hi, from
// MPFR's correctly rounded primitives (a single primitive: one call rounded downward and its ternary
// value, hi = lo when exact, else the next number above lo; composites: a lower and an upper
// evaluation, every step rounded in the direction that keeps the bound, using its monotonicity).
void enclose(FpFunction fn, mpfr_srcptr x, mpfr_ptr lo, mpfr_ptr hi);
// One end of that enclosure: fn(x) rounded in direction dir (MPFR_RNDD or MPFR_RNDU) at out's precision,
// each step of a composite rounded the way that keeps the bound; also right for infinite x.
void bound_directed(FpFunction fn, mpfr_srcptr x, mpfr_ptr out, mpfr_rnd_t dir);

// The exact value of trunc(x / y), floor(x / y) or Python's x % y (sign of y, fmod-based; the zero
// keeps fmod's sign) for finite nonzero x and y; sets out's precision so that nothing is rounded.
enum class QuotientKind : uint8_t { Trunc, Floor, Remainder };
void exact_quotient(QuotientKind kind, mpfr_srcptr x, mpfr_srcptr y, mpfr_ptr out);

inline constexpr mpfr_prec_t kMaxWorkingPrecision = mpfr_prec_t{1} << 16;

// The Ziv loop. `enclose(lo, hi)` bounds the exact value f at the precision of lo and hi;
// `round(v, slot)` rounds an exact MPFR value into result slot 0 or 1; `same()` compares the
// slots. Soundness: lo == hi means f is that value; otherwise f lies strictly inside (lo, hi)
// (f is not representable at the working precision w >= target + 24: true for every single
// correctly rounded MPFR primitive, and for the composites because their values at nonzero
// dyadic arguments are transcendental, see binary_functions.cc). Rounding is monotone and its
// breakpoints have at most target + 1 bits, so none lies in (lo, lo'] or [hi', hi) where lo' and
// hi' are lo and hi moved inward by one unit at w + 4 bits; equal roundings of lo' and hi' are
// therefore the rounding of every value in (lo, hi), hence of f. The result is left in slot 0.
template <class Enclose, class Round, class Same>
void ziv(mpfr_prec_t target, Enclose&& enclose_fn, Round&& round, Same&& same) {
  for (mpfr_prec_t w = std::max<mpfr_prec_t>(target + 24, 48);; w *= 2) {
    Mpfr lo(w), hi(w);
    enclose_fn(lo.get(), hi.get());
    if (mpfr_equal_p(lo, hi) || mpfr_nan_p(lo) || mpfr_nan_p(hi)) {
      round(lo.get(), 0);  // exact (a NaN only from a bug in an enclosure; it rounds to invalid)
      return;
    }
    Mpfr a(w + 4), b(w + 4);
    mpfr_set(a, lo, MPFR_RNDN);  // exact
    mpfr_set(b, hi, MPFR_RNDN);
    mpfr_nextabove(a);
    mpfr_nextbelow(b);
    round(a.get(), 0);
    round(b.get(), 1);
    // Past the cap (never reached for the values above) slot 0 is the rounding of a point of (lo, hi).
    if (same() || w >= kMaxWorkingPrecision) return;
  }
}

// The rounding of a value to a format with its flags: the key the Ziv loop compares.
struct RoundedWord {
  uint64_t word = 0;
  uint32_t flags = 0;
  std::string error;
  bool operator==(const RoundedWord&) const = default;
};

// ziv() specialised to a binary format: returns the word and merges flags and error into env.
template <class Enclose>
uint64_t ziv_word(const BinaryFormat& f, FpEnv& env, Enclose&& enclose_fn) {
  RoundedWord slot[2];
  ziv(
      f.precision(), enclose_fn,
      [&](mpfr_srcptr v, int k) {
        FpEnv e{env.rounding, 0, {}};
        slot[k].word = round_to_word(f, e, v);
        slot[k].flags = e.flags;
        slot[k].error = e.error;
      },
      [&] { return slot[0] == slot[1]; });
  env.flags |= slot[0].flags;
  if (env.error.empty()) env.error = slot[0].error;
  return slot[0].word;
}

}  // namespace denote::mpfr_support
