// Pointwise operations of integer and bool dtypes with PyTorch's meanings (docs/TYPED.md): results
// wrap modulo 2^width; neg(min) = min; div_trunc rounds toward zero, div_floor toward -inf,
// remainder takes the divisor's sign; division or remainder by zero is an error; min / -1 wraps to
// min; pow by repeated squaring (a negative exponent gives 1 for base 1, +-1 for base -1, else 0;
// 0^0 = 1; wide pow work is bounded, see pow_work); clamp_min(x, bound) is the bound where x is below it. Bool has add and max (logical or),
// mul_elem and min (logical and); every other op on bool is an error naming it, as in PyTorch.
// Widths <= 64 run on uint64_t words; wider ones on GMP (apply_elem_wide, usable at any width).
//
//   DType u8 = DType::integer(8, false);
//   Result<Word> r = typed::apply_words(Op::Neg, u8, Word::of(1), {});        // 0xff
//   Result<Word> m = typed::apply_words(Op::MulElem, u8, Word::of(255), Word::of(2));  // 0xfe
#pragma once

#include <cstdint>
#include <span>

#include "denote/base/status.h"
#include "denote/ir/op.h"
#include "denote/typed/dtype.h"
#include "denote/typed/value.h"

namespace denote::typed {

// The ops with an integer meaning are the ops.def rows flagged kFlagInteger (kFlagBool: defined on
// bool too); their rules are tables generated from ops.def (int_ops.cc, int_wide.cc).
// Neg and Abs; the others take two operands (clamp_min: x and the bound).
bool is_unary_int_op(Op op);
// div_trunc, div_floor, remainder: the second operand may not be zero.
bool is_int_division(Op op);
// pow: the second operand is an exponent, and the work grows with it (pow_work).
bool is_int_power(Op op);
// ok when `op` is defined on t (an int or bool dtype); otherwise an error naming the op and dtype
// (for true division, exp, log, rsqrt, erf, gelu ... on ints: a cast to a binary format is needed).
Status check_int_op(Op op, const DType& t);

// One element: a and b are element words of t (limb_count(t) limbs each, b ignored for unary ops),
// the result goes to out. Errors: division or remainder by zero.
Status apply_elem(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                  std::span<uint64_t> out);
// The GMP path of apply_elem for an int dtype of any width (apply_elem uses it above 64 bits).
Status apply_elem_wide(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                       std::span<uint64_t> out);

// The work of pow(a, b) on t in bit-squarings: the bits of the exponent the GMP path raises to
// (after its exact shortcuts: a negative exponent, base 0, an even base with exponent >= width give
// the result at once; an odd base's exponent is reduced modulo 2^(width-2)), times the width. 0
// for widths <= 64 (machine words: at most 64 multiplications) and for shortcut results; at most
// 65536 * 65536 = 2^32 for one element.
int64_t pow_work(const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b);
// The default bound on the pow work of one apply_tensors call (one typed pow node): 2^32
// bit-squarings, one int(65536) element with a full exponent (seconds), or any number of elements
// whose exponents the shortcuts make short.
inline constexpr int64_t kDefaultMaxPowWork = int64_t{1} << 32;

// Words in, word out (checks both words first).
Result<Word> apply_words(Op op, const DType& t, const Word& a, const Word& b);
// Elementwise over tensors of one dtype and equal shapes (b == nullptr for unary ops); errors name
// the element index. A pow whose summed pow_work exceeds max_pow_work is an error before any
// squaring: "pow: the exponents up to element {i} need {w} bit-squarings of {dtype} (exponent bits
// x width), above the limit of {max} per pow node".
Result<TypedTensor> apply_tensors(Op op, const TypedTensor& a, const TypedTensor* b,
                                  int64_t max_pow_work = kDefaultMaxPowWork);

}  // namespace denote::typed
