// MPFR endpoints for the interval context (denote/bounds/interval.h): every operation and function
// is the exact real result rounded once in the direction asked (MPFR's correct rounding, at `bits`
// bits, with MPFR's exponent range: nothing overflows a double's range). An interval of these
// endpoints encloses the exact real value, so IBP over them at a point box gives a rigorous,
// arbitrarily narrow enclosure of the real network's output there: what verify's witness re-check
// compares with a property's decimals (src/verify/falsify.cc).
//
//   IntervalContext<MpfrEndpoints> ctx(MpfrEndpoints(256));
//   auto y = ctx.sigmoid(ctx.from_double(0.1));   // [lo, hi] with hi - lo of about 2^-256
//   auto boxes = enclose_real(model.graph, model.payload, {x}, 256);
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denote/bounds/ibp.h"
#include "denote/bounds/interval.h"
#include "denote/scalar/real_context.h"

namespace denote {

class MpfrEndpoints {
 public:
  using Value = RealScalar;
  static constexpr std::string_view kName = "real";
  // At least 64 bits, so that every cast target's values (binary formats of up to 64 storage bits)
  // are held exactly.
  explicit MpfrEndpoints(mpfr_prec_t bits = 256) : real_(bits < 64 ? 64 : bits) {}
  mpfr_prec_t bits() const { return real_.bits(); }

  RealScalar from_double(double x, Dir) const { return real_.from_double(x); }
  double to_double(const RealScalar& x, Dir d) const;
  RealScalar zero() const { return real_.zero(); }
  RealScalar one() const { return real_.one(); }
  bool less(const RealScalar& a, const RealScalar& b) const { return mpfr_less_p(a.get(), b.get()) != 0; }
  bool is_nan(const RealScalar& a) const { return mpfr_nan_p(a.get()) != 0; }
  bool is_inf(const RealScalar& a) const { return mpfr_inf_p(a.get()) != 0; }
  RealScalar neg(const RealScalar& a) const { return real_.neg(a); }
  RealScalar add(const RealScalar& a, const RealScalar& b, Dir d) const;
  RealScalar sub(const RealScalar& a, const RealScalar& b, Dir d) const;
  RealScalar mul(const RealScalar& a, const RealScalar& b, Dir d) const;
  RealScalar div(const RealScalar& a, const RealScalar& b, Dir d) const;
  RealScalar fn(Fn f, const RealScalar& x, Dir d) const;
  RealScalar pow(const RealScalar& x, const RealScalar& p, Dir d) const;
  // Rounding to a binary format is monotone and its values are held exactly (bits >= 64).
  bool can_cast(std::string_view dtype, std::string_view rounding) const { return real_.can_cast(dtype, rounding); }
  RealScalar cast(const RealScalar& a, std::string_view dtype, std::string_view rounding, Dir) const {
    return real_.cast(a, dtype, rounding);
  }
  RealScalar cast(const RealScalar& a, const BinaryFormat& target, Rounding rounding, Dir) const {
    return real_.cast(a, target, rounding);
  }
  std::string take_error() const { return real_.take_error(); }

 private:
  RealContext real_;
};

DENOTE_DECLARE_IBP(MpfrEndpoints)

// The boxes of `outputs` (node ids) when the inputs are the points `inputs` (doubles, exact), by IBP
// over MPFR endpoints at `bits` bits: each box encloses the exact real value of its node. nullopt
// for a node without a box (an operation with no sound box, e.g. a comparison too close to call);
// errors as run_ibp's.
Result<std::vector<std::optional<Tensor<Interval<RealScalar>>>>> enclose_real(
    const Graph& g, const Payload<double>& payload, std::span<const Tensor<double>> inputs,
    std::span<const int64_t> outputs, mpfr_prec_t bits = 256, const EvalOptions& options = {});
// The same from input boxes (MPFR endpoints, e.g. a decimal input enclosed at `bits` bits): each output
// box encloses the node's exact value at every input point of the boxes.
Result<std::vector<std::optional<Tensor<Interval<RealScalar>>>>> enclose_real(
    const Graph& g, const Payload<double>& payload, std::span<const Tensor<Interval<RealScalar>>> inputs,
    std::span<const int64_t> outputs, mpfr_prec_t bits = 256, const EvalOptions& options = {});

}  // namespace denote
