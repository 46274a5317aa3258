// MPFR endpoints (denote/bounds/interval_real.h) and IBP over them: rigorous enclosures of the
// exact real network at points.
#include "denote/bounds/interval_real.h"

#include <cmath>

#include "bounds/ibp_pass.h"

namespace denote {

namespace {

mpfr_rnd_t rnd(Dir d) { return d == Dir::Down ? MPFR_RNDD : MPFR_RNDU; }
Dir other(Dir d) { return d == Dir::Down ? Dir::Up : Dir::Down; }

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

namespace {

// sigmoid(x) = 1 / (1 + exp(-x)), increasing: the denominator rounded against d, the quotient with d.
void sigmoid_dir(mpfr_ptr r, mpfr_srcptr x, Dir d) {
  mpfr_neg(r, x, MPFR_RNDN);  // exact
  mpfr_exp(r, r, rnd(other(d)));
  mpfr_add_ui(r, r, 1, rnd(other(d)));
  mpfr_ui_div(r, 1, r, rnd(d));
}

// gelu(x) = x/2 * erfc(-x / sqrt 2): t = -x / sqrt 2 enclosed, erfc decreasing on it, then the
// product with the point x (its sign picks the end).
void gelu_dir(mpfr_ptr r, mpfr_srcptr x, Dir d, mpfr_prec_t bits) {
  RealScalar s_lo(bits), s_hi(bits), t_lo(bits), t_hi(bits), mx(bits);
  mpfr_sqrt_ui(s_lo.get(), 2, MPFR_RNDD);
  mpfr_sqrt_ui(s_hi.get(), 2, MPFR_RNDU);
  mpfr_neg(mx.get(), x, MPFR_RNDN);
  const bool nonneg = mpfr_sgn(x) >= 0;  // -x <= 0: dividing by the larger root gives the upper end
  mpfr_div(t_lo.get(), mx.get(), nonneg ? s_lo.get() : s_hi.get(), MPFR_RNDD);
  mpfr_div(t_hi.get(), mx.get(), nonneg ? s_hi.get() : s_lo.get(), MPFR_RNDU);
  // erfc over [t_lo, t_hi] is [erfc(t_hi), erfc(t_lo)] (positive); x * that, ends by x's sign.
  const bool low_end = (d == Dir::Down) == nonneg;  // which erfc end gives the asked end of x * erfc
  if (low_end) mpfr_erfc(r, t_hi.get(), MPFR_RNDD);
  else mpfr_erfc(r, t_lo.get(), MPFR_RNDU);
  mpfr_mul(r, r, x, rnd(d));
  mpfr_div_2ui(r, r, 1, rnd(d));
}

}  // namespace

RealScalar MpfrEndpoints::fn(Fn f, const RealScalar& x, Dir d) const {
  RealScalar r(bits());
  mpfr_ptr o = r.get();
  mpfr_srcptr a = x.get();
  const mpfr_rnd_t m = rnd(d);
  switch (f) {
    case Fn::Exp: mpfr_exp(o, a, m); break;
    case Fn::Log: mpfr_log(o, a, m); break;
    case Fn::Log1p: mpfr_log1p(o, a, m); break;
    case Fn::Tanh: mpfr_tanh(o, a, m); break;
    case Fn::Erf: mpfr_erf(o, a, m); break;
    case Fn::Sqrt: mpfr_sqrt(o, a, m); break;
    case Fn::Rsqrt: mpfr_rec_sqrt(o, a, m); break;
    case Fn::Sin: mpfr_sin(o, a, m); break;
    case Fn::Cos: mpfr_cos(o, a, m); break;
    case Fn::Sigmoid: sigmoid_dir(o, a, d); break;
    case Fn::Softplus:  // log1p(exp(x)): increasing, both steps rounded with d
      mpfr_exp(o, a, m);
      mpfr_log1p(o, o, m);
      break;
    case Fn::Gelu: gelu_dir(o, a, d, bits()); break;
  }
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
    const Graph& g, const Payload<double>& payload, std::span<const Tensor<double>> inputs,
    std::span<const int64_t> outputs, mpfr_prec_t bits, const EvalOptions& options) {
  using S = Interval<RealScalar>;
  IntervalContext<MpfrEndpoints> ctx{MpfrEndpoints(bits)};
  const Payload<S> p = convert_payload<S>(payload, [&](double v) { return ctx.from_double(v); });
  std::vector<Tensor<S>> in;
  in.reserve(inputs.size());
  for (const Tensor<double>& t : inputs) {
    std::vector<S> d;
    d.reserve(t.data.size());
    for (double v : t.data) d.push_back(ctx.from_double(v));
    in.emplace_back(t.shape, std::move(d));
  }
  DENOTE_ASSIGN_OR_RETURN(auto r, run_ibp(g, p, std::span<const Tensor<S>>(in), ctx, options));
  std::vector<std::optional<Tensor<S>>> out;
  for (int64_t id : outputs) {
    if (id < 0 || static_cast<size_t>(id) >= r.boxes.size())
      return error_status(fmt::format("IR bounds: output node {} is not in the graph ({} nodes)", id, r.boxes.size()))
          .with_field("outputs");
    out.push_back(std::move(r.boxes[static_cast<size_t>(id)]));
  }
  return out;
}

}  // namespace denote
