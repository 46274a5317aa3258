// Integer pointwise operations on machine words (widths <= 64, no undefined behaviour: all
// arithmetic is on uint64_t or on int64_t values that cannot overflow) and bool logic.
#include "denote/typed/int_ops.h"

#include <bit>

#include <fmt/format.h>

namespace denote::typed {

namespace {

struct Small {
  int64_t width;
  bool is_signed;
  uint64_t mask;
};

Small small_of(const DType& t) {
  return Small{t.width, t.is_signed, t.width == 64 ? ~uint64_t{0} : (uint64_t{1} << t.width) - 1};
}

// The signed value of a word (sign-extended from the width).
int64_t sval(const Small& t, uint64_t a) {
  const bool neg = (a >> (t.width - 1)) & 1;
  return std::bit_cast<int64_t>(neg ? (a | ~t.mask) : a);
}

uint64_t enc(const Small& t, int64_t v) { return std::bit_cast<uint64_t>(v) & t.mask; }

bool less(const Small& t, uint64_t a, uint64_t b) { return t.is_signed ? sval(t, a) < sval(t, b) : a < b; }

bool is_min_over_minus_one(const Small& t, uint64_t a, uint64_t b) {
  return t.is_signed && a == (uint64_t{1} << (t.width - 1)) && b == t.mask;
}

uint64_t pow_small(const Small& t, uint64_t a, uint64_t b) {
  if (t.is_signed && sval(t, b) < 0) {
    const int64_t base = sval(t, a);
    if (base == 1) return 1;
    if (base == -1) return (b & 1) ? t.mask : 1;
    return 0;
  }
  uint64_t result = 1, base = a;
  for (uint64_t e = b; e != 0; e >>= 1) {
    if (e & 1) result *= base;
    base *= base;
  }
  return result & t.mask;
}

uint64_t div_small(Op op, const Small& t, uint64_t a, uint64_t b) {
  if (!t.is_signed) return op == Op::Remainder ? a % b : a / b;
  if (is_min_over_minus_one(t, a, b)) return op == Op::Remainder ? 0 : a;
  const int64_t x = sval(t, a), y = sval(t, b);
  if (op == Op::DivTrunc) return enc(t, x / y);
  if (y == -1) return op == Op::Remainder ? 0 : enc(t, -x);  // -x fits: x is not the minimum here
  const int64_t q = x / y, r = x % y;
  const bool adjust = r != 0 && ((r < 0) != (y < 0));
  if (op == Op::DivFloor) return enc(t, adjust ? q - 1 : q);
  return enc(t, adjust ? r + y : r);
}

uint64_t apply_small(Op op, const Small& t, uint64_t a, uint64_t b) {
  switch (op) {
    case Op::Add: return (a + b) & t.mask;
    case Op::Sub: return (a - b) & t.mask;
    case Op::MulElem: return (a * b) & t.mask;
    case Op::Neg: return (uint64_t{0} - a) & t.mask;
    case Op::Abs: return t.is_signed && ((a >> (t.width - 1)) & 1) ? (uint64_t{0} - a) & t.mask : a;
    case Op::MaxElem: return less(t, a, b) ? b : a;
    case Op::MinElem: return less(t, b, a) ? b : a;
    case Op::ClampMin: return less(t, a, b) ? b : a;
    case Op::Pow: return pow_small(t, a, b);
    default: return div_small(op, t, a, b);
  }
}

bool is_division(Op op) { return op == Op::DivTrunc || op == Op::DivFloor || op == Op::Remainder; }

bool all_zero(std::span<const uint64_t> w) {
  for (uint64_t l : w)
    if (l != 0) return false;
  return true;
}

}  // namespace

bool is_unary_int_op(Op op) { return op == Op::Neg || op == Op::Abs; }

Status check_int_op(Op op, const DType& t) {
  DENOTE_RETURN_IF_ERROR(supported(t));
  const std::string_view tag = op_tag(op);
  if (t.is_bool()) {
    if (op == Op::Add || op == Op::MulElem || op == Op::MaxElem || op == Op::MinElem) return ok_status();
    return error_status(fmt::format("{} is not defined on bool (bool has add and max_elem as logical or, mul_elem "
                                    "and min_elem as logical and)", tag));
  }
  if (!t.is_int()) return error_status(fmt::format("{} is not an integer or bool dtype", dtype_name(t)));
  switch (op) {
    case Op::Add: case Op::Sub: case Op::MulElem: case Op::MaxElem: case Op::MinElem: case Op::DivTrunc:
    case Op::DivFloor: case Op::Remainder: case Op::Pow: case Op::Neg: case Op::Abs: case Op::ClampMin:
      return ok_status();
    default:
      return error_status(fmt::format("{} is not defined on {}: integers have no {} (PyTorch promotes them to "
                                      "floating point); insert an explicit cast to a binary format", tag,
                                      dtype_name(t), tag));
  }
}

Status apply_elem(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                  std::span<uint64_t> out) {
  if (is_division(op) && all_zero(b))
    return error_status(fmt::format("{}: division by zero (ZeroDivisionError in PyTorch)", op_tag(op)));
  if (t.is_bool()) {
    out[0] = (op == Op::Add || op == Op::MaxElem) ? (a[0] | b[0]) : (a[0] & b[0]);
    return ok_status();
  }
  if (t.width > 64) return apply_elem_wide(op, t, a, b, out);
  out[0] = apply_small(op, small_of(t), a[0], is_unary_int_op(op) ? 0 : b[0]);
  return ok_status();
}

Result<Word> apply_words(Op op, const DType& t, const Word& a, const Word& b) {
  DENOTE_RETURN_IF_ERROR(check_int_op(op, t));
  const size_t l = limb_count(t);
  std::vector<uint64_t> x(l, 0), y(l, 0), r(l, 0);
  DENOTE_RETURN_IF_ERROR(check_word(t, a));
  for (size_t k = 0; k < a.limbs.size(); ++k) x[k] = a.limbs[k];
  if (!is_unary_int_op(op)) {
    DENOTE_RETURN_IF_ERROR(check_word(t, b));
    for (size_t k = 0; k < b.limbs.size(); ++k) y[k] = b.limbs[k];
  }
  DENOTE_RETURN_IF_ERROR(apply_elem(op, t, x, y, r));
  return Word::from_limbs(std::move(r));
}

Result<TypedTensor> apply_tensors(Op op, const TypedTensor& a, const TypedTensor* b) {
  DENOTE_RETURN_IF_ERROR(check_int_op(op, a.dtype));
  const bool unary = is_unary_int_op(op);
  if (!unary && !b) return error_status(fmt::format("{} takes two operands", op_tag(op)));
  if (!unary && !(b->dtype == a.dtype))
    return error_status(fmt::format("{}: operand dtypes differ ({} and {}); insert a cast", op_tag(op),
                                    dtype_name(a.dtype), dtype_name(b->dtype)));
  if (!unary && (b->shape != a.shape || b->size() != a.size()))
    return error_status(fmt::format("{}: operand shapes differ ({} and {})", op_tag(op), to_string(a.shape),
                                    to_string(b->shape)));
  TypedTensor out{a.dtype, a.shape, std::vector<uint64_t>(a.limbs.size(), 0)};
  for (int64_t i = 0; i < a.size(); ++i) {
    const auto y = unary ? a.element(i) : b->element(i);
    if (Status s = apply_elem(op, a.dtype, a.element(i), y, out.element(i)); !s.ok())
      return error_status(fmt::format("element {}: {}", i, s.message()));
  }
  return out;
}

}  // namespace denote::typed
