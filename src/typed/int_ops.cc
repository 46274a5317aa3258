// Integer pointwise operations on machine words (widths <= 64, no undefined behaviour: all
// arithmetic is on uint64_t or on int64_t values that cannot overflow) and bool logic.
#include "denote/typed/int_ops.h"

#include <bit>
#include <iterator>
#include <utility>

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

// The signed quotient and remainder of a / b rounded toward -inf (b != 0, not min / -1).
std::pair<int64_t, int64_t> floor_div(const Small& t, uint64_t a, uint64_t b) {
  const int64_t x = sval(t, a), y = sval(t, b);
  if (y == -1) return {-x, 0};  // -x fits: x is not the minimum here
  const int64_t q = x / y, r = x % y;
  const bool adjust = r != 0 && ((r < 0) != (y < 0));
  return {adjust ? q - 1 : q, adjust ? r + y : r};
}

uint64_t div_trunc_small(const Small& t, uint64_t a, uint64_t b) {
  if (!t.is_signed) return a / b;
  if (is_min_over_minus_one(t, a, b)) return a;
  return enc(t, sval(t, a) / sval(t, b));
}

uint64_t div_floor_small(const Small& t, uint64_t a, uint64_t b) {
  if (!t.is_signed) return a / b;
  if (is_min_over_minus_one(t, a, b)) return a;
  return enc(t, floor_div(t, a, b).first);
}

uint64_t remainder_small(const Small& t, uint64_t a, uint64_t b) {
  if (!t.is_signed) return a % b;
  if (is_min_over_minus_one(t, a, b)) return 0;
  return enc(t, floor_div(t, a, b).second);
}

uint64_t logic_or(uint64_t a, uint64_t b) { return a | b; }
uint64_t logic_and(uint64_t a, uint64_t b) { return a & b; }

// One op's integer rule: the word function (b is 0 for unary ops), arity, whether b is a divisor
// that may not be zero, and the bool meaning (nullptr: none). Ops without an integer meaning
// keep the empty row; the rows are generated in ops.def order and checked against its flags.
struct IntRule {
  uint64_t (*small)(const Small&, uint64_t, uint64_t) = nullptr;
  bool unary = false;
  bool divides = false;
  uint64_t (*logic)(uint64_t, uint64_t) = nullptr;
  bool exponent = false;  // the second operand is an exponent: work grows with it (pow_work)
};

template <Op>
constexpr IntRule kIntRule{};
template <>
constexpr IntRule kIntRule<Op::Add>{[](const Small& t, uint64_t a, uint64_t b) { return (a + b) & t.mask; },
                                    false, false, logic_or};
template <>
constexpr IntRule kIntRule<Op::Sub>{[](const Small& t, uint64_t a, uint64_t b) { return (a - b) & t.mask; }};
template <>
constexpr IntRule kIntRule<Op::MulElem>{[](const Small& t, uint64_t a, uint64_t b) { return (a * b) & t.mask; },
                                        false, false, logic_and};
template <>
constexpr IntRule kIntRule<Op::MaxElem>{[](const Small& t, uint64_t a, uint64_t b) { return less(t, a, b) ? b : a; },
                                        false, false, logic_or};
template <>
constexpr IntRule kIntRule<Op::MinElem>{[](const Small& t, uint64_t a, uint64_t b) { return less(t, b, a) ? b : a; },
                                        false, false, logic_and};
template <>
constexpr IntRule kIntRule<Op::DivTrunc>{div_trunc_small, false, true};
template <>
constexpr IntRule kIntRule<Op::DivFloor>{div_floor_small, false, true};
template <>
constexpr IntRule kIntRule<Op::Remainder>{remainder_small, false, true};
template <>
constexpr IntRule kIntRule<Op::Pow>{pow_small, false, false, nullptr, true};
template <>
constexpr IntRule kIntRule<Op::Neg>{[](const Small& t, uint64_t a, uint64_t) { return (uint64_t{0} - a) & t.mask; },
                                    true};
template <>
constexpr IntRule kIntRule<Op::Abs>{[](const Small& t, uint64_t a, uint64_t) {
                                      const bool negative = t.is_signed && ((a >> (t.width - 1)) & 1);
                                      return negative ? (uint64_t{0} - a) & t.mask : a;
                                    },
                                    true};
template <>  // clamp_min(x, bound): the bound is the second operand
constexpr IntRule kIntRule<Op::ClampMin>{[](const Small& t, uint64_t a, uint64_t b) { return less(t, a, b) ? b : a; }};

constexpr IntRule kIntRules[] = {
#define DENOTE_OP(name, ...) kIntRule<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
};

constexpr bool rules_match_ops_def() {
  for (const OpInfo& info : kOpTable) {
    const IntRule& r = kIntRules[static_cast<size_t>(info.op)];
    if ((r.small != nullptr) != ((info.flags & kFlagInteger) != 0)) return false;
    if ((r.logic != nullptr) != ((info.flags & kFlagBool) != 0) || (r.logic && !r.small)) return false;
    if (r.unary && info.max_parents != 1) return false;
  }
  return std::size(kIntRules) == static_cast<size_t>(kNumOps);
}
static_assert(rules_match_ops_def(), "kIntRules: a rule exactly for the ops.def rows flagged kFlagInteger "
                                     "(and a bool meaning exactly for kFlagBool)");

const IntRule& rule_of(Op op) { return kIntRules[static_cast<size_t>(op)]; }

bool all_zero(std::span<const uint64_t> w) {
  for (uint64_t l : w)
    if (l != 0) return false;
  return true;
}

}  // namespace

bool is_unary_int_op(Op op) { return rule_of(op).unary; }
bool is_int_division(Op op) { return rule_of(op).divides; }
bool is_int_power(Op op) { return rule_of(op).exponent; }

Status check_int_op(Op op, const DType& t) {
  DENOTE_RETURN_IF_ERROR(supported(t));
  const std::string_view tag = op_tag(op);
  if (t.is_bool()) {
    if (has_flag(op, kFlagBool)) return ok_status();
    return error_status(fmt::format("{} is not defined on bool (bool has add and max_elem as logical or, mul_elem "
                                    "and min_elem as logical and)", tag));
  }
  if (!t.is_int()) return error_status(fmt::format("{} is not an integer or bool dtype", dtype_name(t)));
  if (has_flag(op, kFlagInteger)) return ok_status();
  return error_status(fmt::format("{} is not defined on {}: integers have no {} (PyTorch promotes them to "
                                  "floating point); insert an explicit cast to a binary format", tag,
                                  dtype_name(t), tag));
}

Status apply_elem(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                  std::span<uint64_t> out) {
  const IntRule& rule = rule_of(op);
  if (!rule.small) return error_status(fmt::format("{} is not an integer operation", op_tag(op)));
  if (rule.divides && all_zero(b))
    return error_status(fmt::format("{}: division by zero (ZeroDivisionError in PyTorch)", op_tag(op)));
  if (t.is_bool()) {
    if (!rule.logic) return error_status(fmt::format("{} is not defined on bool", op_tag(op)));
    out[0] = rule.logic(a[0], b[0]);
    return ok_status();
  }
  if (t.width > 64) return apply_elem_wide(op, t, a, b, out);
  out[0] = rule.small(small_of(t), a[0], rule.unary ? 0 : b[0]);
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

// The pow work of the whole tensor pair against the bound, before any squaring.
Status check_pow_work(const TypedTensor& a, const TypedTensor& b, int64_t max_pow_work) {
  int64_t total = 0;
  for (int64_t i = 0; i < a.size(); ++i) {
    total += pow_work(a.dtype, a.element(i), b.element(i));  // each <= 2^32: no overflow before the test
    if (total > max_pow_work)
      return error_status(fmt::format("pow: the exponents up to element {} need {} bit-squarings of {} (exponent "
                                      "bits x width), above the limit of {} per pow node",
                                      i, total, dtype_name(a.dtype), max_pow_work));
  }
  return ok_status();
}

Result<TypedTensor> apply_tensors(Op op, const TypedTensor& a, const TypedTensor* b, int64_t max_pow_work) {
  DENOTE_RETURN_IF_ERROR(check_int_op(op, a.dtype));
  const bool unary = is_unary_int_op(op);
  if (!unary && !b) return error_status(fmt::format("{} takes two operands", op_tag(op)));
  if (!unary && !(b->dtype == a.dtype))
    return error_status(fmt::format("{}: operand dtypes differ ({} and {}); insert a cast", op_tag(op),
                                    dtype_name(a.dtype), dtype_name(b->dtype)));
  if (!unary && (b->shape != a.shape || b->size() != a.size()))
    return error_status(fmt::format("{}: operand shapes differ ({} and {})", op_tag(op), to_string(a.shape),
                                    to_string(b->shape)));
  if (is_int_power(op) && a.dtype.is_int() && a.dtype.width > 64) DENOTE_RETURN_IF_ERROR(check_pow_work(a, *b, max_pow_work));
  TypedTensor out{a.dtype, a.shape, std::vector<uint64_t>(a.limbs.size(), 0)};
  for (int64_t i = 0; i < a.size(); ++i) {
    const auto y = unary ? a.element(i) : b->element(i);
    if (Status s = apply_elem(op, a.dtype, a.element(i), y, out.element(i)); !s.ok())
      return error_status(fmt::format("element {}: {}", i, s.message()));
  }
  return out;
}

}  // namespace denote::typed
