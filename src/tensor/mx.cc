// OCP Microscaling (MX) v1.0: conversion, dequantization and block dot products (include/denote/tensor/mx.h).
// Every element goes through the binary layer's one rounding routine (round_pack) from the input's
// exact significand and exponent, so no quotient V / X is ever formed in floating point.
#include "denote/tensor/mx.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>

#include "scalar/binary_fast_simd.h"
#include "scalar/binary_round.h"
#include "tensor/mx_codes.h"

namespace denote {
namespace {

struct MxName {
  std::string_view name, element;
  MxKind kind;
  int bits;
};
constexpr std::array<MxName, 6> kMxNames{{{"mxfp8_e4m3", "e4m3fn", MxKind::Float, 8},
                                          {"mxfp8_e5m2", "e5m2", MxKind::Float, 8},
                                          {"mxfp6_e3m2", "e3m2fn", MxKind::Float, 6},
                                          {"mxfp6_e2m3", "e2m3fn", MxKind::Float, 6},
                                          {"mxfp4_e2m1", "e2m1fn", MxKind::Float, 4},
                                          {"mxint8", "", MxKind::Int8, 8}}};

// One line of blocks: the elements (o, i, j) for i in [0, n) at stride `inner`.
struct Lines {
  int64_t outer = 1, n = 1, inner = 1, blocks = 1;
  int64_t element(int64_t o, int64_t i, int64_t j) const { return (o * n + i) * inner + j; }
  int64_t scale(int64_t o, int64_t b, int64_t j) const { return (o * blocks + b) * inner + j; }
};

Lines lines_of(const Shape& shape, int64_t axis, int64_t block) {
  Lines l;
  l.outer = numel(shape.begin(), shape.begin() + axis);
  l.n = shape[static_cast<size_t>(axis)];
  l.inner = numel(shape.begin() + axis + 1, shape.end());
  l.blocks = (l.n + block - 1) / block;
  return l;
}

// The block's shared exponent, or nullopt when it holds a NaN or an infinity.
std::optional<int64_t> shared_exponent(const MxFormat& f, const double* x, const Lines& l, int64_t o, int64_t j,
                                       int64_t lo, int64_t hi) {
  double amax = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const double a = std::fabs(x[l.element(o, i, j)]);
    if (!std::isfinite(a)) return std::nullopt;
    amax = std::max(amax, a);
  }
  return mx_shared_exponent(f, amax);
}

struct Converter {
  const MxFormat& f;
  mx_detail::ElementParams params;
  bool fast = false;  // the thread's MXCSR is in its default state
  uint8_t code(double v, int64_t e, uint32_t& flags) const {
    return fast ? mx_detail::element_code_fast(params, v, e, flags) : mx_detail::element_code_exact(f, v, e, flags);
  }
};

void quantize_block(const Converter& c, const double* x, const Lines& l, int64_t o, int64_t b, int64_t j,
                    int64_t block, MxQuantized& out) {
  const MxFormat& f = c.f;
  const int64_t lo = b * block, hi = std::min(l.n, lo + block);
  const std::optional<int64_t> e = shared_exponent(f, x, l, o, j, lo, hi);
  out.q.scales[static_cast<size_t>(l.scale(o, b, j))] = e ? static_cast<uint8_t>(*e + kMxScaleBias) : kMxScaleNan;
  if (!e) out.flags |= kFpMappedSpecial;
  for (int64_t i = lo; i < hi; ++i) {
    const int64_t k = l.element(o, i, j);
    out.q.elements[static_cast<size_t>(k)] = e ? c.code(x[k], *e, out.flags) : 0;
  }
}

}  // namespace

namespace mx_detail {

ElementParams element_params(const MxFormat& f) {
  ElementParams p;
  p.int8 = f.kind == MxKind::Int8;
  if (p.int8) return p;
  p.frac = f.element.frac_bits;
  p.bias = f.element.bias;
  p.emin = 1 - p.bias;
  p.qmin = p.emin - p.frac;
  p.sign_shift = f.bits - 1;
  p.max_code = static_cast<uint8_t>(max_finite(f.element, false));
  p.max_value = word_to_double(f.element, p.max_code);
  // Tiny after rounding (IEEE 754-2019 7.5, as round_pack): below the midpoint between 2^emin and
  // the largest (frac + 1)-bit value under it.
  p.tiny = std::ldexp(1.0 - std::ldexp(1.0, -(p.frac + 2)), p.emin);
  return p;
}

uint8_t element_code_exact(const MxFormat& f, double v, int64_t e, uint32_t& flags) {
  bool neg = false;
  uint64_t sig = 0;
  int64_t exp = 0;
  decode_double(v, neg, sig, exp);
  if (f.kind == MxKind::Int8) {  // round-half-even(|V| / X * 64) = sig * 2^shift, at most 127
    if (sig == 0) return 0;
    const int64_t shift = exp - e + 6;
    uint64_t q = 128;  // anything above 127 saturates
    bool inexact = false;
    if (shift < 0) q = round_to_integer(sig, -shift, Rounding::NearestEven, neg, inexact);
    else if (bit_length(sig) + shift <= 8) q = sig << shift;
    if (inexact) flags |= kFpInexact;
    if (q > 127) q = 127, flags |= kFpOverflow | kFpInexact | kFpSaturated;
    return static_cast<uint8_t>(neg ? (256 - q) & 0xFF : q);
  }
  if (sig == 0) return static_cast<uint8_t>(zero_word(f.element, neg));
  FpEnv env;
  const auto code = static_cast<uint8_t>(round_pack(f.element, env, neg, sig, exp - e, false, /*saturate=*/true));
  flags |= env.flags;
  return code;
}

namespace {

// 2^k for a k of double's normal range, built from its bits.
double pow2(int k) { return std::bit_cast<double>(static_cast<uint64_t>(k + 1023) << 52); }

// The binary exponent of a positive normal double, from its bits (ilogb without the library call).
int exponent_of(double a) { return static_cast<int>((std::bit_cast<uint64_t>(a) >> 52) & 0x7ff) - 1023; }

// x rounded to an integer, ties to even, for |x| < 2^52 under the default rounding mode (the fast
// path's precondition): adding and subtracting 2^52 leaves no fraction bits (nearbyint without the call
// that baseline x86-64 code makes).
double round_even(double x) {
  constexpr double kBig = 0x1p52;
  return x >= 0 ? (x + kBig) - kBig : (x - kBig) + kBig;
}

uint8_t int8_fast(double v, int64_t e, uint32_t& flags) {
  const double s = v * pow2(static_cast<int>(6 - e));
  if (s == 0) {
    if (v != 0) flags |= kFpInexact;  // below double's range after scaling: rounds to 0
    return 0;
  }
  double q = std::fabs(s) < 0x1p52 ? round_even(s) : s;
  if (q != s) flags |= kFpInexact;
  if (std::fabs(q) > 127) q = std::copysign(127.0, q), flags |= kFpOverflow | kFpInexact | kFpSaturated;
  return static_cast<uint8_t>(static_cast<int>(q) & 0xFF);
}

}  // namespace

uint8_t element_code_fast(const ElementParams& p, double v, int64_t e, uint32_t& flags) {
  if (p.int8) return int8_fast(v, e, flags);
  const uint8_t sign = std::signbit(v) ? static_cast<uint8_t>(1u << p.sign_shift) : 0;
  const double a = std::fabs(v) * pow2(static_cast<int>(-e));  // exact unless it underflows
  if (a < 0x1p-1000) {  // zero, or far below the smallest subnormal (the scaling may have underflowed)
    if (v != 0) flags |= kFpInexact | kFpUnderflow;
    return sign;
  }
  const int q = std::max(exponent_of(a) - p.frac, p.qmin);
  const double scaled = a * pow2(-q), r = round_even(scaled);  // scaled < 2^(frac + 1): exact scalings
  const double value = r * pow2(q);
  if (r != scaled) flags |= kFpInexact | (a < p.tiny ? kFpUnderflow : 0u);
  if (value > p.max_value) {
    flags |= kFpOverflow | kFpInexact | kFpSaturated;
    return sign | p.max_code;
  }
  if (value == 0) return sign;
  const int e2 = exponent_of(value);
  const int field = e2 < p.emin ? 0 : e2 + p.bias;
  const auto mant = static_cast<unsigned>(value * pow2(e2 < p.emin ? -p.qmin : p.frac - e2)) & ((1u << p.frac) - 1);
  return static_cast<uint8_t>(sign | (field << p.frac) | mant);
}

}  // namespace mx_detail

Result<MxFormat> parse_mx_format(std::string_view name) {
  for (const MxName& n : kMxNames) {
    if (n.name != name) continue;
    MxFormat f;
    f.name = std::string(n.name);
    f.kind = n.kind;
    f.bits = n.bits;
    f.emax = 0;
    if (n.kind == MxKind::Float) {
      DENOTE_ASSIGN_OR_RETURN(f.element, parse_format(n.element));
      f.emax = f.element.emax();
    }
    return f;
  }
  return error_status(fmt::format("unknown MX format '{}': expected one of {}", name, mx_format_names()));
}

std::string mx_format_names() {
  std::string s;
  for (const MxName& n : kMxNames) s += (s.empty() ? "" : ", ") + std::string(n.name);
  return s;
}

Shape mx_scale_shape(const Shape& shape, int64_t axis, int64_t block) {
  Shape s = shape;
  s[static_cast<size_t>(axis)] = (shape[static_cast<size_t>(axis)] + block - 1) / block;
  return s;
}

Result<int64_t> mx_normalise_axis(const Shape& shape, int64_t axis) {
  const auto rank = static_cast<int64_t>(shape.size());
  if (rank == 0) return error_status("MX: expected an array of rank >= 1, got a scalar").with_field("shape");
  if (axis < -rank || axis >= rank)
    return error_status(fmt::format("MX: axis {} is out of range for rank {}", axis, rank)).with_field("axis");
  return axis < 0 ? axis + rank : axis;
}

Status check_mx(const MxTensor& q) {
  DENOTE_RETURN_IF_ERROR(mx_check_block(q.block));
  DENOTE_ASSIGN_OR_RETURN(int64_t axis, mx_normalise_axis(q.shape, q.axis));
  if (axis != q.axis) return error_status("MX: the axis must be normalised").with_field("axis");
  DENOTE_ASSIGN_OR_RETURN(int64_t n, checked_numel(q.shape));
  if (static_cast<int64_t>(q.elements.size()) != n)
    return error_status(fmt::format("MX: {} element codes for shape {}", q.elements.size(), to_string(q.shape)))
        .with_field("elements");
  const Shape ss = mx_scale_shape(q.shape, axis, q.block);
  if (static_cast<int64_t>(q.scales.size()) != numel(ss))
    return error_status(fmt::format("MX: {} scale codes, expected shape {} ({} codes)", q.scales.size(),
                                    to_string(ss), numel(ss)))
        .with_field("scales");
  const unsigned limit = 1u << q.format.bits;
  for (size_t k = 0; k < q.elements.size(); ++k)
    if (q.elements[k] >= limit)
      return error_status(fmt::format("MX: element code 0x{:x} at index {} has bits above the {}-bit width of {}",
                                      q.elements[k], k, q.format.bits, q.format.name))
          .with_field("elements");
  return ok_status();
}

double mx_scale_value(uint8_t code) {
  return code == kMxScaleNan ? std::nan("") : std::ldexp(1.0, static_cast<int>(code) - kMxScaleBias);
}

Status mx_check_block(int64_t block) {
  if (block >= 1 && block <= kMxMaxBlock) return ok_status();
  return error_status(fmt::format("MX: block {} is outside [1, {}]", block, kMxMaxBlock)).with_field("block");
}

double mx_element_value(const MxFormat& f, uint8_t code) {
  if (f.kind == MxKind::Int8) return static_cast<int8_t>(code) / 64.0;
  return word_to_double(f.element, code);
}

int64_t mx_shared_exponent(const MxFormat& f, double amax) {
  if (amax == 0) return -kMxScaleBias;
  return std::clamp<int64_t>(std::ilogb(amax) - f.emax, -kMxScaleBias, kMxScaleBias);
}

double mx_round_at_scale(const MxFormat& f, double v, int64_t e) {
  uint32_t flags = 0;
  return std::ldexp(mx_element_value(f, mx_detail::element_code_exact(f, v, e, flags)), static_cast<int>(e));
}

Result<MxQuantized> mx_quantize(const MxFormat& f, const Tensor<double>& x, int64_t axis, int64_t block) {
  DENOTE_RETURN_IF_ERROR(mx_check_block(block));
  DENOTE_ASSIGN_OR_RETURN(int64_t ax, mx_normalise_axis(x.shape, axis));
  MxQuantized out;
  out.q = MxTensor{f, block, ax, x.shape, std::vector<uint8_t>(x.data.size()), {}};
  out.q.scales.assign(static_cast<size_t>(numel(mx_scale_shape(x.shape, ax, block))), 0);
  const Lines l = lines_of(x.shape, ax, block);
  const Converter c{f, mx_detail::element_params(f), fastsimd::mxcsr_is_default()};
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t b = 0; b < l.blocks; ++b)
      for (int64_t j = 0; j < l.inner; ++j) quantize_block(c, x.data.data(), l, o, b, j, block, out);
  return out;
}

Result<Tensor<double>> mx_dequantize(const MxTensor& q) {
  DENOTE_RETURN_IF_ERROR(check_mx(q));
  const Lines l = lines_of(q.shape, q.axis, q.block);
  Tensor<double> y = Tensor<double>::filled(q.shape, 0.0);
  for (int64_t o = 0; o < l.outer; ++o)
    for (int64_t i = 0; i < l.n; ++i)
      for (int64_t j = 0; j < l.inner; ++j) {
        const int64_t k = l.element(o, i, j);
        const double x = mx_scale_value(q.scales[static_cast<size_t>(l.scale(o, i / q.block, j))]);
        y.data[static_cast<size_t>(k)] = x * mx_element_value(q.format, q.elements[static_cast<size_t>(k)]);
      }
  return y;
}

}  // namespace denote
