// Integer pointwise operations through GMP: exact integer results reduced modulo 2^width. Any width
// works (the machine-word path in int_ops.cc is used up to 64 bits; tests compare the two).
#include <iterator>

#include <fmt/format.h>

#include "denote/typed/int_ops.h"
#include "typed/gmp_util.h"

namespace denote::typed {

namespace {

// x^y modulo 2^width costs one width-bit squaring per bit of the exponent it is computed with;
// these exact shortcuts keep that exponent short where the result allows (docs/TYPED.md, "Integer
// pow"). Returns true with r set when the result is known without squarings; otherwise false with
// `base` = x mod 2^width and `e` the exponent to raise it to (x^y == base^e mod 2^width).
// - y < 0: 1 for x = 1, +-1 for x = -1, else 0 (PyTorch's rule).
// - an even base 2^v * odd (v >= 1): x^y is a multiple of 2^(v*y), so y >= ceil(width / v) gives 0
//   and otherwise e = y < width.
// - base 1: 1. Another odd base b: with 2^s the power of two in b^2 - 1 (s = v2(b-1) + v2(b+1) >= 3,
//   capped at width), b^2 = 1 + 2^s u and squaring j times gives 1 + 2^(s+j) u', so b has order
//   dividing 2^(width - s + 1) (2 when s >= width: b = -1, 2^(width-1) +- 1) and e = y mod that:
//   at most width - 2 bits (the unit group's exponent 2^(width-2)), fewer near +-1.
bool pow_shortcut(mpz_ptr r, mpz_ptr base, mpz_ptr e, mpz_srcptr x, mpz_srcptr y, int64_t width) {
  if (mpz_sgn(y) < 0) {
    if (mpz_cmp_si(x, 1) == 0) mpz_set_ui(r, 1);
    else if (mpz_cmp_si(x, -1) == 0) mpz_set_si(r, mpz_odd_p(y) ? -1 : 1);
    else mpz_set_ui(r, 0);
    return true;
  }
  if (mpz_sgn(y) == 0) {  // x^0 = 1, 0^0 included
    mpz_set_ui(r, 1);
    return true;
  }
  const auto w = static_cast<mp_bitcnt_t>(width);
  mpz_fdiv_r_2exp(base, x, w);
  if (mpz_sgn(base) == 0) {
    mpz_set_ui(r, 0);
    return true;
  }
  if (mpz_even_p(base)) {
    const mp_bitcnt_t v = mpz_scan1(base, 0);  // 1 <= v < width
    if (mpz_cmp_ui(y, static_cast<unsigned long>((w + v - 1) / v)) >= 0) {
      mpz_set_ui(r, 0);
      return true;
    }
    mpz_set(e, y);
    return false;
  }
  if (mpz_cmp_ui(base, 1) == 0) {
    mpz_set_ui(r, 1);
    return true;
  }
  mpz_sub_ui(e, base, 1);
  mp_bitcnt_t s = mpz_scan1(e, 0);
  mpz_add_ui(e, base, 1);
  s += mpz_scan1(e, 0);
  mpz_fdiv_r_2exp(e, y, s >= w ? 1 : w - s + 1);
  return false;
}

void pow_wide(mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t width) {
  gmp::Int base, e, m;
  if (pow_shortcut(r, base.z, e.z, x, y, width)) return;
  mpz_setbit(m.z, static_cast<mp_bitcnt_t>(width));
  mpz_powm(r, base.z, e.z, m.z);
}

using WideFn = void (*)(mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t width);

// The exact integer result of each op with an integer meaning (reduced modulo 2^width by the
// caller); nullptr for the others. Generated in ops.def order and checked against kFlagInteger.
template <Op>
constexpr WideFn kWideRule = nullptr;
template <>
constexpr WideFn kWideRule<Op::Add> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_add(r, x, y); };
template <>
constexpr WideFn kWideRule<Op::Sub> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_sub(r, x, y); };
template <>
constexpr WideFn kWideRule<Op::MulElem> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_mul(r, x, y); };
template <>
constexpr WideFn kWideRule<Op::Neg> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr, int64_t) { mpz_neg(r, x); };
template <>
constexpr WideFn kWideRule<Op::Abs> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr, int64_t) { mpz_abs(r, x); };
template <>
constexpr WideFn kWideRule<Op::MaxElem> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) {
  mpz_set(r, mpz_cmp(x, y) < 0 ? y : x);
};
template <>
constexpr WideFn kWideRule<Op::MinElem> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) {
  mpz_set(r, mpz_cmp(y, x) < 0 ? y : x);
};
template <>  // clamp_min(x, bound): the bound is y
constexpr WideFn kWideRule<Op::ClampMin> = kWideRule<Op::MaxElem>;
template <>
constexpr WideFn kWideRule<Op::Pow> = pow_wide;
template <>
constexpr WideFn kWideRule<Op::DivTrunc> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_tdiv_q(r, x, y); };
template <>
constexpr WideFn kWideRule<Op::DivFloor> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_fdiv_q(r, x, y); };
template <>
constexpr WideFn kWideRule<Op::Remainder> = [](mpz_ptr r, mpz_srcptr x, mpz_srcptr y, int64_t) { mpz_fdiv_r(r, x, y); };

constexpr WideFn kWideRules[] = {
#define DENOTE_OP(name, ...) kWideRule<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
};

constexpr bool rules_match_ops_def() {
  for (const OpInfo& info : kOpTable)
    if ((kWideRules[static_cast<size_t>(info.op)] != nullptr) != ((info.flags & kFlagInteger) != 0)) return false;
  return std::size(kWideRules) == static_cast<size_t>(kNumOps);
}
static_assert(rules_match_ops_def(), "kWideRules: a rule exactly for the ops.def rows flagged kFlagInteger");

}  // namespace

int64_t pow_work(const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b) {
  if (!t.is_int() || t.width <= 64) return 0;  // machine words: at most 64 multiplications
  gmp::Int x, y, r, base, e;
  gmp::from_twos(x.z, a, t.width, t.is_signed);
  gmp::from_twos(y.z, b, t.width, t.is_signed);
  if (pow_shortcut(r.z, base.z, e.z, x.z, y.z, t.width)) return 0;
  return static_cast<int64_t>(mpz_sizeinbase(e.z, 2)) * t.width;  // <= 65536 * 65536
}

Status apply_elem_wide(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                       std::span<uint64_t> out) {
  if (!t.is_int()) return error_status(fmt::format("{} is not an integer dtype", dtype_name(t)));
  const WideFn rule = kWideRules[static_cast<size_t>(op)];
  if (!rule) return error_status(fmt::format("{} is not an integer operation", op_tag(op)));
  gmp::Int x, y, r;
  gmp::from_twos(x.z, a, t.width, t.is_signed);
  if (!is_unary_int_op(op)) gmp::from_twos(y.z, b, t.width, t.is_signed);
  if (is_int_division(op) && mpz_sgn(y.z) == 0)
    return error_status(fmt::format("{}: division by zero (ZeroDivisionError in PyTorch)", op_tag(op)));
  rule(r.z, x.z, y.z, t.width);
  gmp::to_twos(r.z, t.width, out);  // min / -1 = 2^(width-1) wraps to min here
  return ok_status();
}

}  // namespace denote::typed
