// Integer pointwise operations through GMP: exact integer results reduced modulo 2^width. Any width
// works (the machine-word path in int_ops.cc is used up to 64 bits; tests compare the two).
#include <fmt/format.h>

#include "denote/typed/int_ops.h"
#include "typed/gmp_util.h"

namespace denote::typed {

namespace {

// x^y modulo 2^width for y >= 0, or the negative-exponent rule.
void pow_wide(mpz_t r, const mpz_t x, const mpz_t y, int64_t width) {
  if (mpz_sgn(y) < 0) {
    if (mpz_cmp_si(x, 1) == 0) mpz_set_ui(r, 1);
    else if (mpz_cmp_si(x, -1) == 0) mpz_set_si(r, mpz_odd_p(y) ? -1 : 1);
    else mpz_set_ui(r, 0);
    return;
  }
  gmp::Int m, base;
  mpz_setbit(m.z, static_cast<mp_bitcnt_t>(width));
  mpz_fdiv_r_2exp(base.z, x, static_cast<mp_bitcnt_t>(width));
  mpz_powm(r, base.z, y, m.z);
}

}  // namespace

Status apply_elem_wide(Op op, const DType& t, std::span<const uint64_t> a, std::span<const uint64_t> b,
                       std::span<uint64_t> out) {
  if (!t.is_int()) return error_status(fmt::format("{} is not an integer dtype", dtype_name(t)));
  gmp::Int x, y, r;
  gmp::from_twos(x.z, a, t.width, t.is_signed);
  if (!is_unary_int_op(op)) gmp::from_twos(y.z, b, t.width, t.is_signed);
  const bool by_zero = mpz_sgn(y.z) == 0;
  switch (op) {
    case Op::Add: mpz_add(r.z, x.z, y.z); break;
    case Op::Sub: mpz_sub(r.z, x.z, y.z); break;
    case Op::MulElem: mpz_mul(r.z, x.z, y.z); break;
    case Op::Neg: mpz_neg(r.z, x.z); break;
    case Op::Abs: mpz_abs(r.z, x.z); break;
    case Op::MaxElem: mpz_set(r.z, mpz_cmp(x.z, y.z) < 0 ? y.z : x.z); break;
    case Op::MinElem: mpz_set(r.z, mpz_cmp(y.z, x.z) < 0 ? y.z : x.z); break;
    case Op::ClampMin: mpz_set(r.z, mpz_cmp(x.z, y.z) < 0 ? y.z : x.z); break;
    case Op::Pow: pow_wide(r.z, x.z, y.z, t.width); break;
    case Op::DivTrunc:
    case Op::DivFloor:
    case Op::Remainder:
      if (by_zero) return error_status(fmt::format("{}: division by zero (ZeroDivisionError in PyTorch)", op_tag(op)));
      if (op == Op::DivTrunc) mpz_tdiv_q(r.z, x.z, y.z);
      else if (op == Op::DivFloor) mpz_fdiv_q(r.z, x.z, y.z);
      else mpz_fdiv_r(r.z, x.z, y.z);
      break;
    default: return error_status(fmt::format("{} is not an integer operation", op_tag(op)));
  }
  gmp::to_twos(r.z, t.width, out);  // min / -1 = 2^(width-1) wraps to min here
  return ok_status();
}

}  // namespace denote::typed
