// MPFR endpoints (denote/bounds/interval_real.h) and IBP over them: rigorous enclosures of the
// exact real network at points.
#include "denote/bounds/interval_real.h"

#include <cmath>

#include "bounds/ibp_pass.h"
#include "scalar/mpfr_support.h"

namespace denote {

namespace {

mpfr_rnd_t rnd(Dir d) { return d == Dir::Down ? MPFR_RNDD : MPFR_RNDU; }

}  // namespace

double MpfrEndpoints::to_double(const RealScalar& x, Dir d) const { return mpfr_get_d(x.get(), rnd(d)); }

RealScalar MpfrEndpoints::add(const RealScalar& a, const RealScalar& b, Dir d) const {
  RealScalar r(bits());
  mpfr_add(r.get(), a.get(), b.get(), rnd(d));
  return r;
}
RealScalar MpfrEndpoints::sub(const RealScalar& a, const RealScalar& b, Dir d) const {
  RealScalar r(bits());
  mpfr_sub(r.get(), a.get(), b.get(), rnd(d));
  return r;
}
RealScalar MpfrEndpoints::mul(const RealScalar& a, const RealScalar& b, Dir d) const {
  RealScalar r(bits());
  mpfr_mul(r.get(), a.get(), b.get(), rnd(d));
  return r;
}
RealScalar MpfrEndpoints::div(const RealScalar& a, const RealScalar& b, Dir d) const {
  RealScalar r(bits());
  mpfr_div(r.get(), a.get(), b.get(), rnd(d));
  return r;
}

RealScalar MpfrEndpoints::pow(const RealScalar& x, const RealScalar& p, Dir d) const {
  RealScalar r(bits());
  mpfr_pow(r.get(), x.get(), p.get(), rnd(d));
  return r;
}

// Every function but sqrt has a directed MPFR bound already (src/scalar/mpfr_support.h, the one the
// binary formats' correctly rounded functions enclose with).
RealScalar MpfrEndpoints::fn(Fn f, const RealScalar& x, Dir d) const {
  static constexpr FpFunction kFp[] = {FpFunction::Exp,      FpFunction::Log,     FpFunction::Log1p, FpFunction::Tanh,
                                       FpFunction::Sigmoid,  FpFunction::Softplus, FpFunction::Erf,  FpFunction::Exp /* Sqrt: below */,
                                       FpFunction::Rsqrt,    FpFunction::Gelu,    FpFunction::Sin,   FpFunction::Cos};
  RealScalar r(bits());
  if (f == Fn::Sqrt) mpfr_sqrt(r.get(), x.get(), rnd(d));
  else mpfr_support::bound_directed(kFp[static_cast<size_t>(f)], x.get(), r.get(), rnd(d));
  return r;
}

// The format model of the dedicated rules (softmax, layernorm): a unit roundoff of 2^-bits, no
// underflow or overflow within MPFR's exponent range. Found by argument-dependent lookup.
ibp::FormatModel format_model(const MpfrEndpoints& e) {
  ibp::FormatModel m;
  m.u = std::ldexp(1.0, -static_cast<int>(e.bits()));
  m.fn_rel = m.u;
  m.eta = 0;
  m.max_finite = INFINITY;
  return m;
}

DENOTE_INSTANTIATE_IBP(MpfrEndpoints)

Result<std::vector<std::optional<Tensor<Interval<RealScalar>>>>> enclose_real(
    const Graph& g, const Payload<double>& payload, std::span<const Tensor<Interval<RealScalar>>> inputs,
    std::span<const int64_t> outputs, mpfr_prec_t bits, const EvalOptions& options) {
  using S = Interval<RealScalar>;
  IntervalContext<MpfrEndpoints> ctx{MpfrEndpoints(bits)};
  const Payload<S> p = convert_payload<S>(payload, [&](double v) { return ctx.from_double(v); });
  DENOTE_ASSIGN_OR_RETURN(auto r, run_ibp(g, p, inputs, ctx, options));
  std::vector<std::optional<Tensor<S>>> out;
  for (int64_t id : outputs) {
    if (id < 0 || static_cast<size_t>(id) >= r.boxes.size())
      return error_status(fmt::format("IR bounds: output node {} is not in the graph ({} nodes)", id, r.boxes.size()))
          .with_field("outputs");
    out.push_back(std::move(r.boxes[static_cast<size_t>(id)]));
  }
  return out;
}

Result<std::vector<std::optional<Tensor<Interval<RealScalar>>>>> enclose_real(
    const Graph& g, const Payload<double>& payload, std::span<const Tensor<double>> inputs,
    std::span<const int64_t> outputs, mpfr_prec_t bits, const EvalOptions& options) {
  using S = Interval<RealScalar>;
  IntervalContext<MpfrEndpoints> ctx{MpfrEndpoints(bits)};
  std::vector<Tensor<S>> in;
  in.reserve(inputs.size());
  for (const Tensor<double>& t : inputs) {
    std::vector<S> d;
    d.reserve(t.data.size());
    for (double v : t.data) d.push_back(ctx.from_double(v));
    in.emplace_back(t.shape, std::move(d));
  }
  return enclose_real(g, payload, std::span<const Tensor<S>>(in), outputs, bits, options);
}

}  // namespace denote
