// OCP MX dot products (§6.1, §6.2): each block's sum of products is formed exactly in a 128-bit
// integer, rounded once to the accumulation format, and the blocks are summed there in order
// (include/denote/tensor/mx.h, docs/NUMERICS.md "MX block formats").
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "scalar/binary_round.h"
#include "typed/mx_dot.h"

namespace denote {
namespace mx_detail {

using i128 = __int128;

int64_t quantum_exp(const MxFormat& f) { return f.kind == MxKind::Int8 ? -6 : min_quantum_exp(f.element); }

Fixed fixed_of(const MxFormat& f, uint8_t code) {
  if (f.kind == MxKind::Int8) return {static_cast<int8_t>(code), false};
  const Decoded d = decode_word(f.element, code);
  if (d.is_nan() || d.cls == FloatClass::Infinite) return {0, true};
  const auto mag = static_cast<int64_t>(d.sig << (d.exp - min_quantum_exp(f.element)));
  return {d.neg ? -mag : mag, false};
}

int64_t max_fixed(const MxFormat& f) {
  int64_t m = 0;
  for (unsigned c = 0; c < (1u << f.bits); ++c) {
    const Fixed x = fixed_of(f, static_cast<uint8_t>(c));
    if (!x.special) m = std::max(m, x.value < 0 ? -x.value : x.value);
  }
  return m;
}

Operand operand_of(const MxTensor& t, bool transposed) {
  std::array<Fixed, 256> table{};
  for (unsigned c = 0; c < (1u << t.format.bits); ++c) table[c] = fixed_of(t.format, static_cast<uint8_t>(c));
  Operand o;
  o.rows = t.shape[transposed ? 1 : 0];
  o.k = t.shape[transposed ? 0 : 1];
  o.blocks = (o.k + t.block - 1) / t.block;
  o.fixed.resize(static_cast<size_t>(o.rows * o.k));
  o.codes.resize(o.fixed.size());
  o.scales.resize(static_cast<size_t>(o.rows * o.blocks));
  for (int64_t r = 0; r < o.rows; ++r) {
    for (int64_t i = 0; i < o.k; ++i) {
      const uint8_t code = t.elements[static_cast<size_t>(transposed ? i * o.rows + r : r * o.k + i)];
      o.codes[static_cast<size_t>(r * o.k + i)] = code;
      o.fixed[static_cast<size_t>(r * o.k + i)] = table[code];
    }
    for (int64_t b = 0; b < o.blocks; ++b)
      o.scales[static_cast<size_t>(r * o.blocks + b)] =
          t.scales[static_cast<size_t>(transposed ? b * o.rows + r : r * o.blocks + b)];
  }
  return o;
}

namespace {

double scaled_element(const MxFormat& f, uint8_t code, uint8_t scale) {
  return mx_scale_value(scale) * mx_element_value(f, code);
}

// A block holding a NaN or an infinity: its value is determined by the specials alone (NaN, or an
// infinity of one sign), so an ordinary double sum gives it; IEEE's invalid for an infinity times zero
// or a sum of opposite infinities (a quiet NaN operand raises nothing).
uint64_t special_block(const DotSetup& s, const Operand& a, const Operand& b, int64_t ra, int64_t rb, int64_t bk,
                       FpEnv& env) {
  double v = 0;
  bool plus = false, minus = false;
  const int64_t lo = bk * s.block, hi = std::min(a.k, lo + s.block);
  for (int64_t i = lo; i < hi; ++i) {
    const double x = scaled_element(s.a.format, a.codes[static_cast<size_t>(ra * a.k + i)],
                                    a.scales[static_cast<size_t>(ra * a.blocks + bk)]);
    const double y = scaled_element(s.b.format, b.codes[static_cast<size_t>(rb * b.k + i)],
                                    b.scales[static_cast<size_t>(rb * b.blocks + bk)]);
    if ((std::isinf(x) && y == 0) || (x == 0 && std::isinf(y))) env.flags |= kFpInvalid;
    const double p = x * y;
    plus = plus || p == HUGE_VAL;
    minus = minus || p == -HUGE_VAL;
    v += p;
  }
  if (plus && minus) env.flags |= kFpInvalid;
  return fp_from_double(s.acc, env, v);
}

}  // namespace

uint64_t block_dot(const DotSetup& s, const Operand& a, const Operand& b, int64_t ra, int64_t rb, int64_t bk,
                   FpEnv& env) {
  const uint8_t xa = a.scales[static_cast<size_t>(ra * a.blocks + bk)];
  const uint8_t xb = b.scales[static_cast<size_t>(rb * b.blocks + bk)];
  if (xa == kMxScaleNan || xb == kMxScaleNan) return canonical_nan(s.acc);
  const int64_t lo = bk * s.block, hi = std::min(a.k, lo + s.block);
  i128 sum = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const Fixed& p = a.fixed[static_cast<size_t>(ra * a.k + i)];
    const Fixed& q = b.fixed[static_cast<size_t>(rb * b.k + i)];
    if (p.special || q.special) return special_block(s, a, b, ra, rb, bk, env);
    sum += static_cast<i128>(p.value) * q.value;
  }
  const int64_t exp = quantum_exp(s.a.format) + quantum_exp(s.b.format) + xa + xb - 2 * kMxScaleBias;
  const bool neg = sum < 0;
  return round_pack_wide(s.acc, env, neg, static_cast<u128>(neg ? -sum : sum), exp, false, false);
}

namespace {

Status check_operands(const MxTensor& a, const MxTensor& b, const BinaryFormat& acc) {
  DENOTE_RETURN_IF_ERROR(check_mx(a).with_field("a"));
  DENOTE_RETURN_IF_ERROR(check_mx(b).with_field("b"));
  if (a.shape.size() != 2 || b.shape.size() != 2 || a.shape[1] != b.shape[0])
    return error_status(fmt::format("mx_matmul: expected a [M, K] and b [K, N], got {} and {}", to_string(a.shape),
                                    to_string(b.shape)))
        .with_field("b");
  if (a.axis != 1 || b.axis != 0 || a.block != b.block)
    return error_status(fmt::format("mx_matmul: expected a blocked along axis 1 and b along axis 0 with one block "
                                    "size, got axes {} and {}, blocks {} and {}",
                                    a.axis, b.axis, a.block, b.block))
        .with_field("block");
  if (acc.precision() < 24 || acc.precision() > 53 || acc.emax() < 127 || acc.emax() > 1023 || acc.emin() > -126 ||
      acc.emin() < -1022 || acc.encoding != Encoding::Ieee)
    return error_status(fmt::format("mx_matmul: accumulation format {} must be an IEEE format between binary32 and "
                                    "binary64",
                                    acc.name))
        .with_field("accumulate");
  return ok_status();
}

}  // namespace
}  // namespace mx_detail

namespace mx_detail {

MxMatmulResult multiply(const DotSetup& s, const Operand& oa, const Operand& ob) {
  MxMatmulResult r;
  if (mx_matmul_binary32(s, oa, ob, r)) return r;
  r.y = Tensor<double>::filled({oa.rows, ob.rows}, 0.0);
  FpEnv env;
  for (int64_t m = 0; m < oa.rows; ++m)
    for (int64_t n = 0; n < ob.rows; ++n) {
      uint64_t acc = oa.blocks == 0 ? zero_word(s.acc, false) : block_dot(s, oa, ob, m, n, 0, env);
      for (int64_t bk = 1; bk < oa.blocks; ++bk) acc = fp_add(s.acc, env, acc, block_dot(s, oa, ob, m, n, bk, env));
      r.y.data[static_cast<size_t>(m * ob.rows + n)] = word_to_double(s.acc, acc);
    }
  r.flags = env.flags;
  return r;
}

}  // namespace mx_detail

Result<MxMatmulResult> mx_matmul(const MxTensor& a, const MxTensor& b, const BinaryFormat& accumulate) {
  using namespace mx_detail;
  DENOTE_RETURN_IF_ERROR(check_operands(a, b, accumulate));
  return multiply(DotSetup{a, b, accumulate, a.block}, operand_of(a, false), operand_of(b, true));
}

}  // namespace denote
