// BinaryContext: the scalar context of a software binary format (binary16, bfloat16, e4m3fn, ...,
// binary(E,F)) in one rounding mode. A scalar is the format's word (FpWord); every operation is
// the exact real result rounded once to the format (binary_ops.h, binary_functions.h), so a graph
// evaluated here is bit-reproducible. IEEE flags accumulate in the context (flags()). An operation
// without a value in the format (e.g. 0/0 in e2m1fn, which has no NaN) records an error that the
// evaluator turns into `IR eval: node {i}: ...` (take_error()).
//
//   BinaryContext ctx(*parse_format("bfloat16"), Rounding::Upward);
//   FpWord y = ctx.tanh(ctx.from_double(0.5));      // tanh(0.5) rounded upward to bfloat16
//   double v = ctx.to_double(y);                     // 0.4628906...
//   flags_to_string(ctx.flags());                    // "inexact"
//
// Differences from the native contexts (which follow hardware/libm): max/min/relu/clamp_min are
// IEEE 754-2019 maximum/minimum (max(-0, +0) = +0); sigmoid, softplus, gelu, rsqrt, pow, log1p,
// div_trunc, div_floor and remainder are exact functions rounded once, not formulas of rounded
// steps; rsqrt(-0) = -inf and gelu(-inf) = -0 (see binary_functions.h).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <array>
#include <memory>
#include <optional>

#include "denote/scalar/binary_fast.h"
#include "denote/scalar/binary_format.h"
#include "denote/scalar/binary_ops.h"

namespace denote {

struct FunctionTable;
namespace detail {
class ThreadPool;
}

// The binary format a cast target names: every format name, binary(E,F), and f32 / f64 for
// binary32 / binary64. An error for integer and bool dtypes (not binary formats).
Result<BinaryFormat> parse_cast_target(std::string_view dtype);

class BinaryContext {
 public:
  using Scalar = FpWord;
  static constexpr std::string_view kName = "binary";

  explicit BinaryContext(BinaryFormat format = binary32_format(), Rounding rounding = Rounding::NearestEven);

  const BinaryFormat& format() const { return format_; }
  Rounding rounding() const { return env_.rounding; }
  // The IEEE flags raised so far (FpFlag bits; flags_to_string names them).
  uint32_t flags() const { return env_.flags; }
  void clear_flags() const { env_.flags = 0; }
  // The first error recorded since the last call ("" if none), cleared by the call.
  std::string take_error() const;

  // The exact double rounded once in the context's mode; the word's exact value (formats wider
  // than binary64 are rounded to nearest binary64).
  Scalar from_double(double x) const;
  double to_double(Scalar x) const;
  Scalar zero() const { return {zero_}; }
  Scalar one() const { return {one_}; }
  Scalar nan() const { return {canonical_nan(format_)}; }

  // The fast path (binary_fast.h) where the format has one; the same words and flags either way.
  Scalar add(Scalar a, Scalar b) const {
    return {fast_ ? fast_add(*fast_, env_, a.bits, b.bits) : fp_add(format_, env_, a.bits, b.bits)};
  }
  Scalar sub(Scalar a, Scalar b) const {
    return {fast_ ? fast_sub(*fast_, env_, a.bits, b.bits) : fp_sub(format_, env_, a.bits, b.bits)};
  }
  Scalar mul(Scalar a, Scalar b) const {
    return {fast_ ? fast_mul(*fast_, env_, a.bits, b.bits) : fp_mul(format_, env_, a.bits, b.bits)};
  }
  Scalar div(Scalar a, Scalar b) const {
    return {fast_ ? fast_div(*fast_, env_, a.bits, b.bits) : fp_div(format_, env_, a.bits, b.bits)};
  }
  Scalar neg(Scalar a) const { return {fp_neg(format_, env_, a.bits)}; }
  Scalar fma(Scalar a, Scalar b, Scalar c) const {
    return {fast_ ? fast_fma(*fast_, env_, a.bits, b.bits, c.bits) : fp_fma(format_, env_, a.bits, b.bits, c.bits)};
  }

  // NaN propagates (quieted); relu(-0) = +0.
  Scalar relu(Scalar a) const;
  Scalar max(Scalar a, Scalar b) const { return {fp_max(format_, env_, a.bits, b.bits)}; }
  Scalar min(Scalar a, Scalar b) const { return {fp_min(format_, env_, a.bits, b.bits)}; }
  Scalar abs(Scalar a) const { return {fp_abs(format_, env_, a.bits)}; }
  // max(a, bound) with the bound rounded to the format in the context's mode.
  Scalar clamp_min(Scalar a, double bound) const { return max(a, from_double(bound)); }
  bool less(Scalar a, Scalar b) const { return fp_compare(format_, env_, a.bits, b.bits) == FpOrder::Less; }
  bool is_nan(Scalar a) const { return denote::is_nan(format_, a.bits); }
  bool log_domain_ok(Scalar a) const;

  Scalar exp(Scalar a) const;
  Scalar log(Scalar a) const;
  Scalar log1p(Scalar a) const;
  Scalar tanh(Scalar a) const;
  Scalar sigmoid(Scalar a) const;
  Scalar sqrt(Scalar a) const { return {fast_ ? fast_sqrt(*fast_, env_, a.bits) : fp_sqrt(format_, env_, a.bits)}; }
  Scalar rsqrt(Scalar a) const;
  Scalar erf(Scalar a) const;
  Scalar gelu(Scalar a) const;
  Scalar sin(Scalar a) const;
  Scalar cos(Scalar a) const;
  Scalar softplus(Scalar a) const;
  Scalar pow(Scalar a, Scalar b) const;
  Scalar div_trunc(Scalar a, Scalar b) const;
  Scalar div_floor(Scalar a, Scalar b) const;
  Scalar remainder(Scalar a, Scalar b) const;

  // Every binary-format target in every rounding mode; integer and bool targets are not available
  // yet. the evaluator's cast rule calls can_cast, then cast(x, dtype, rounding).
  bool can_cast(std::string_view dtype, std::string_view rounding) const;
  // Rounds a to `dtype` once in `rounding` (flags of that rounding included), then returns that
  // value in the context's format: exact when the target's values are all in the context's
  // format, otherwise rounded again in the context's mode (a second rounding: the context holds
  // only its own format).
  Scalar cast(Scalar a, std::string_view dtype, std::string_view rounding) const;
  // The same with the target already parsed (the cast rule parses once per node).
  Scalar cast(Scalar a, const BinaryFormat& target, Rounding rounding) const;

 // For whole-tensor kernels (the evaluator's fast rules): the fast format, or nullptr where the
  // format has none, and the context's environment (rounding mode, flags, error).
  const FastFormat* fast() const { return fast_ ? &*fast_ : nullptr; }
  // Threads for the evaluator's whole-tensor rules (linear and matmul split by rows, a one-row linear by
  // blocks of outputs, conv by output positions; every output's
  // operations and order are the same, so words and flags do not depend on the count, and the first
  // error is the lowest row's). 1 (the default) runs on the calling thread; at most 256.
  void set_threads(int threads);
  int threads() const;
  detail::ThreadPool* pool() const { return pool_.get(); }
  FpEnv& env() const { return env_; }

 private:
  // exp, log, ... of a format of at most 16 bits: a table filled once from fp_function (see
  // binary_tables.h) after kTableAfter calls of that function in this context.
  uint64_t function(int fn, uint64_t a) const;

  BinaryFormat format_;
  mutable FpEnv env_;
  uint64_t zero_ = 0, one_ = 0;
  std::optional<FastFormat> fast_;
  mutable std::array<const FunctionTable*, 11> tables_{};
  mutable std::array<uint32_t, 11> calls_{};
  std::shared_ptr<detail::ThreadPool> pool_;  // null: one thread
};

}  // namespace denote
