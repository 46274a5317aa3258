// Fast exact arithmetic for the small binary formats (issue 20): bfloat16, binary16, the OCP
// fp8/fp6/fp4 encodings and binary(E,F) with p <= 24 and exponents inside binary32's. Results and
// flags are bit for bit those of binary_ops.h (fp_add, fp_mul, ...): the operation is done in double,
// an error-free transformation gives the side of the exact result, and the double is rounded to the
// format by integer operations on its bits. Overflowing and special results, special or malformed
// operands, and the (rare) subnormal results of bfloat16/binary16 leave the fast path for the general
// routine (docs/NUMERICS.md, "Fast exact formats (issue 20)").
//
//   std::optional<FastFormat> ff = FastFormat::of(*parse_format("bfloat16"));
//   FpEnv env;
//   uint64_t two = fast_add(*ff, env, 0x3f80, 0x3f80);   // 0x4000, env.flags == 0, as fp_add
//   fast_mul_n(*ff, env, a.data(), b.data(), c.data(), n); // c[i] = a[i] * b[i], flags or-ed
//   fast_mul_n16(*ff, env, pa, pb, pc, n);                 // the same on uint16_t words
#pragma once

#include <cstddef>
#include <vector>
#include <cstdint>
#include <optional>

#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_ops.h"

namespace denote {

// A word of a binary format (the format itself lives in the context: BinaryContext's Scalar).
struct FpWord {
  uint64_t bits = 0;
  bool operator==(const FpWord&) const = default;
};

// The parameters of a fast format, derived once from its BinaryFormat (which it keeps for the
// general path). `of` returns nullopt for formats the fast path does not cover (binary64, e8m0fnu,
// wide custom formats).
struct FastFormat {
  enum class Kind : uint8_t { Bfloat16, Binary16, Other };
  BinaryFormat format;
  Kind kind = Kind::Other;
  int frac_bits = 0;          // F
  int drop = 0;               // 52 - F: double bits below the format's last place (normal range)
  int sign_shift = 0;         // E + F
  uint64_t sign_word = 0;     // the sign bit of a word (0 in e8m0, which is never fast)
  uint64_t frac_mask = 0;
  uint64_t field_ones = 0;    // all-ones exponent field
  uint64_t word_mask = 0;
  uint64_t exp_adjust = 0;    // (1023 - bias) << F: double exponent field -> word exponent field
  uint64_t min_normal_bits = 0;  // bits of 2^emin as a double
  uint64_t max_bits = 0;         // bits of the largest finite value as a double
  double sub_scale = 0;          // 2^(emin - F): the value of the subnormal unit
  Encoding encoding = Encoding::Ieee;

  static std::optional<FastFormat> of(const BinaryFormat& f);
};

// One operation, same result and flags as the binary_ops.h function of the same name.
uint64_t fast_add(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fast_sub(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fast_mul(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fast_div(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b);
uint64_t fast_sqrt(const FastFormat& ff, FpEnv& env, uint64_t a);
uint64_t fast_fma(const FastFormat& ff, FpEnv& env, uint64_t a, uint64_t b, uint64_t c);

// out[i] = a[i] op b[i] for i < n, each exactly as fast_add/fast_sub/fast_mul (out may alias a or b);
// flags are or-ed into env.flags, errors (malformed words) reported in index order.
void fast_add_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n);
void fast_sub_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n);
void fast_mul_n(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, size_t n);

// The same on packed storage: words of at most 16 bits (bfloat16, binary16, fp8, fp6, fp4, small
// binary(E,F)) as uint16_t, the layout numpy, PyTorch and accelerator buffers use. Same words and
// flags as fast_add_n & co. on the widened words (a word with bits above the format's width is
// malformed there too). bfloat16 and binary16 to nearest-even have their own kernels that read and
// write the 16-bit words directly (AVX-512, or AVX2 + F16C); the rest widen blocks of 64 words. False, with
// nothing written, when the format's words are wider than 16 bits.
bool fast_add_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);
bool fast_sub_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);
bool fast_mul_n16(const FastFormat& ff, FpEnv& env, const uint16_t* a, const uint16_t* b, uint16_t* out, size_t n);

// relu over words: out[i] = x[i] for a positive finite value, the +0 word for zeros and negative
// finite values; the index of every other word (NaN, inf, malformed: the ones BinaryContext::relu
// must settle, with its flags) is appended to `special`, its out[i] left as x[i]. No flags change.
void fast_relu_n(const FastFormat& ff, const FpWord* x, FpWord* out, size_t n, std::vector<size_t>& special);

// Inner-product folds in the evaluator's order: out[i*n + j] = fold over r < k from +0 of
// acc = add(acc, mul(a[i*k + r], b[r*n + j])), every add and mul rounded, as a sequence of fast_add /
// fast_mul calls would give (same words, same flags, the same first error). Several outputs are
// folded at once; each keeps its own left-to-right order.
void fast_matmul(const FastFormat& ff, FpEnv& env, const FpWord* a, const FpWord* b, FpWord* out, int64_t m,
                 int64_t k, int64_t n);
// Linear: y[r*out + o] = add(fold over i of add(acc, mul(w[o*in + i], x[r*in + i])), bias[o]).
void fast_linear(const FastFormat& ff, FpEnv& env, const FpWord* x, const FpWord* w, const FpWord* bias,
                 FpWord* y, int64_t rows, int64_t in, int64_t out);

}  // namespace denote
