// Witness checks and falsification (include/denote/verify/verify.h): points of a case's box
// evaluated in the network's arithmetic and exactly, random sampling, projected signed-gradient
// descent on the conjunction's violated atoms.
#include <algorithm>
#include <cmath>
#include <optional>

#include <mpfr.h>

#include "denote/autodiff/grad.h"
#include "denote/base/splitmix.h"
#include "denote/bounds/ibp.h"
#include "denote/bounds/interval_real.h"
#include "denote/eval/eval.h"
#include "verify/falsify.h"
#include "verify/dense_chain.h"
#include "verify/fast_eval.h"

#include <fmt/format.h>

namespace denote {

namespace verify_detail {

const Shape& input_shape(const Model& m) { return m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape; }

int64_t boxes_bytes(const std::vector<std::optional<DoubleBox>>& boxes) {
  int64_t bytes = static_cast<int64_t>(boxes.size() * sizeof(std::optional<DoubleBox>));
  for (const auto& b : boxes)
    if (b) bytes += static_cast<int64_t>((b->lo.size() + b->hi.size()) * sizeof(double) + b->shape.size() * sizeof(int64_t));
  return bytes;
}

bool search_fits(Search& s, int64_t sets, int64_t per_set) {
  EvalOptions e;
  e.max_bytes = s.o.max_bytes;
  const int64_t budget = effective_max_bytes(e);
  if (per_set <= 0 || sets <= budget / per_set) return true;
  s.note = fmt::format("the open subdomains' node boxes ({} sets of {} bytes) exceed the --max-memory budget of {} bytes",
                       sets, per_set, budget);
  return false;
}

int64_t bound_memory(const VerifyOptions& o) {
  EvalOptions e;
  e.max_bytes = o.max_bytes;
  return std::max<int64_t>(1, effective_max_bytes(e) / std::max(1, o.threads));
}

std::vector<double> eval_point(const Model& m, const std::vector<double>& x, const ArithSpec& arith,
                               const Payload<float>* p32) {
  const int64_t out = m.output_ids[0];
  if (arith.is_f32()) {
    F32Context ctx;
    std::vector<Tensor<float>> in = {Tensor<float>(input_shape(m), std::vector<float>(x.begin(), x.end()))};
    Payload<float> own;
    if (!p32) own = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
    auto y = denote(m.graph, p32 ? *p32 : own, std::span<const Tensor<float>>(in), out, ctx);
    if (!y.ok()) return {};
    return std::vector<double>(y->data.begin(), y->data.end());
  }
  F64Context ctx;
  std::vector<Tensor<double>> in = {Tensor<double>(input_shape(m), x)};
  auto y = denote(m.graph, m.payload, std::span<const Tensor<double>>(in), out, ctx);
  return y.ok() ? y->data : std::vector<double>{};
}

// sum_j c_j y_j > rhs for every y in [lo, hi], for certain: the double sum of each term's smallest
// value minus its a-priori error (n + 2 roundings of the magnitudes, doubled for safety) still exceeds
// rhs_up >= rhs. A point is lo = hi; spares the exact checks of points (or boxes) far from a witness.
bool surely_above(const VnnAtom& a, const std::vector<double>& lo, const std::vector<double>& hi) {
  double sum = 0, mag = 0;
  for (size_t j = 0; j < lo.size() && j < hi.size() && j < a.coef.size(); ++j) {
    const double t = std::min(a.coef[j] * lo[j], a.coef[j] * hi[j]);
    sum += t, mag += std::fabs(t);
  }
  const double err = 2 * (static_cast<double>(lo.size()) + 2) * 0x1p-52 * mag + 0x1p-1000;
  return std::isfinite(sum) && std::isfinite(a.rhs_up) && sum - err > a.rhs_up;
}

// A decimal of the file enclosed at 256 bits: lo <= d <= hi (equal when d is a 256-bit number); false
// for a text MPFR cannot read. Every exact use of a pinned decimal reads it here.
bool enclose_decimal(const std::string& text, Interval<RealScalar>& v) {
  v = Interval<RealScalar>{RealScalar(256), RealScalar(256)};
  if (mpfr_set_str(v.lo.get(), text.c_str(), 10, MPFR_RNDD) != 0) return false;
  mpfr_set_str(v.hi.get(), text.c_str(), 10, MPFR_RNDU);
  return true;
}

// The input point at 256 bits: x, except where `decimals` names an exact decimal ("" elsewhere; empty:
// none), enclosed by its two roundings (equal when the decimal is a 256-bit number); false for a decimal
// MPFR cannot read.
bool real_inputs(const std::vector<double>& x, const std::vector<std::string>& decimals,
                 std::vector<Interval<RealScalar>>& in) {
  in.clear();
  for (size_t i = 0; i < x.size(); ++i) {
    Interval<RealScalar> v{RealScalar(256), RealScalar(256)};
    if (i < decimals.size() && !decimals[i].empty()) {
      if (!enclose_decimal(decimals[i], v)) return false;
    } else {
      mpfr_set_d(v.lo.get(), x[i], MPFR_RNDN), mpfr_set_d(v.hi.get(), x[i], MPFR_RNDN);  // exact
    }
    in.push_back(std::move(v));
  }
  return true;
}

// The real network's outputs over the input boxes `in`, enclosed in MPFR intervals (IBP over MPFR
// endpoints at 256 bits); false when some output has no box (an operation too close to call there).
bool enclose_outputs(const Model& m, const std::vector<Interval<RealScalar>>& in, std::vector<RealScalar>& lo,
                     std::vector<RealScalar>& hi) {
  const std::vector<Tensor<Interval<RealScalar>>> t = {Tensor<Interval<RealScalar>>(input_shape(m), in)};
  const int64_t out = m.output_ids[0];
  auto r = enclose_real(m.graph, m.payload, std::span<const Tensor<Interval<RealScalar>>>(t),
                        std::span<const int64_t>(&out, 1));
  if (!r.ok() || !(*r)[0]) return false;
  lo.clear(), hi.clear();
  for (auto& v : (*r)[0]->data) lo.push_back(std::move(v.lo)), hi.push_back(std::move(v.hi));
  return true;
}

// The real network's outputs at the lower endpoints of `in` evaluated in MPFR at 256 bits, rounded
// to nearest (no enclosure): only a filter, about 7x cheaper than the enclosure (docs/PERF.md,
// "Exact witness re-check").
bool nearest_holds(const Model& m, const std::vector<VnnAtom>& conj, const std::vector<Interval<RealScalar>>& in) {
  RealContext ctx(256);
  std::vector<RealScalar> d;
  for (const auto& v : in) d.push_back(v.lo);
  std::vector<Tensor<RealScalar>> t = {Tensor<RealScalar>(input_shape(m), std::move(d))};
  const auto p = convert_payload<RealScalar>(m.payload, [&](double v) { return ctx.from_double(v); });
  auto y = denote(m.graph, p, std::span<const Tensor<RealScalar>>(t), m.output_ids[0], ctx);
  if (!y.ok()) return true;  // no verdict: the enclosure decides
  for (const VnnAtom& a : conj)
    if (!atom_holds_on_box(a, y->data, y->data)) return false;
  return true;
}

// The verdict of IBP over f64 endpoints (every operation rounded outward, so its output box encloses
// the real network's value) on the input point, a pinned decimal entering as its two enclosing
// doubles: false when some atom fails everywhere on the output box (its smallest value, minus an
// a-priori bound of the double sum's error, exceeds the right-hand side), true when every atom holds
// everywhere on it (compared exactly), nullopt when the box is too wide to tell (a point within about
// 1e-12 of an atom's boundary, or an operation IBP has no box for). Milliseconds where the MPFR
// enclosure takes tens of seconds on convolutional generators (VNN-COMP 2023 cgan: 37 s).
std::optional<bool> ibp_verdict(const Model& m, const std::vector<VnnAtom>& conj, const std::vector<double>& x,
                                const std::vector<std::string>& decimals) {
  DoubleBox box{input_shape(m), x, x};
  for (size_t i = 0; i < decimals.size() && i < x.size(); ++i) {
    if (decimals[i].empty()) continue;
    Interval<RealScalar> d;
    if (!enclose_decimal(decimals[i], d)) return std::nullopt;
    box.lo[i] = mpfr_get_d(d.lo.get(), MPFR_RNDD), box.hi[i] = mpfr_get_d(d.hi.get(), MPFR_RNDU);
  }
  auto r = run_ibp_double(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), "f64");
  if (!r.ok()) return std::nullopt;
  const auto& out = r->boxes[static_cast<size_t>(m.output_ids[0])];
  if (!out) return std::nullopt;
  for (const VnnAtom& a : conj)
    if (surely_above(a, out->lo, out->hi)) return false;
  RealContext ctx(64);
  std::vector<RealScalar> lo, hi;
  for (size_t j = 0; j < out->lo.size(); ++j) lo.push_back(ctx.from_double(out->lo[j])), hi.push_back(ctx.from_double(out->hi[j]));
  for (const VnnAtom& a : conj)
    if (!atom_holds_on_box(a, lo, hi)) return std::nullopt;
  return true;
}

// Every atom holds for the real network at x (its inputs named in `decimals` at those exact decimals):
// its largest value over the enclosure of the outputs is below the decimal right-hand side (exact
// comparison), so rounding can never make a tie look crossed. The nearest evaluation first rejects
// most points that hold in the arithmetic only (a point it rejects is no witness either way; a point
// it accepts still needs the enclosure).
// The MPFR enclosure's cost, about 2 us per parameter with the nearest evaluation before it (ACAS Xu
// 13 ms, mnistfc 256x2 0.46 s: docs/PERF.md "Exact witness re-check"; nn4sys's 42M parameters: minutes).
double mpfr_check_seconds(const Model& m) {
  double params = 0;
  for (const auto& [id, r] : m.payload.linear) params += static_cast<double>(r.weight.size());
  for (const auto& [id, r] : m.payload.conv) params += static_cast<double>(r.weight.size());
  for (const auto& [id, r] : m.payload.consts) params += static_cast<double>(r.values.size());
  return 2e-6 * params;
}

bool all_hold_real(const Model& m, const std::vector<VnnAtom>& conj, const std::vector<double>& x,
                   const std::vector<std::string>& decimals = {},
                   std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if (const std::optional<bool> quick = ibp_verdict(m, conj, x, decimals)) return *quick;
  // Where IBP cannot tell, MPFR decides, unless it would run past the search's deadline: then the
  // point is not confirmed (never a witness without the check).
  if (deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() + std::chrono::duration<double>(mpfr_check_seconds(m)) > deadline)
    return false;
  std::vector<Interval<RealScalar>> in;
  if (!real_inputs(x, decimals, in) || !nearest_holds(m, conj, in)) return false;
  std::vector<RealScalar> lo, hi;
  if (!enclose_outputs(m, in, lo, hi)) return false;
  for (const VnnAtom& a : conj)
    if (!atom_holds_on_box(a, lo, hi)) return false;
  return true;
}

double float_at_or_above(double v) {
  float f = static_cast<float>(v);
  if (static_cast<double>(f) < v) f = std::nextafter(f, INFINITY);
  return static_cast<double>(f);
}

bool off_grid(const VnnCase& c, size_t i, const ArithSpec& arith) {
  if (!(c.lo_in[i] <= c.hi_in[i])) return true;
  return arith.is_f32() && float_at_or_above(c.lo_in[i]) > c.hi_in[i];
}

const VnnDecimal* exact_decimal(const VnnCase& c, size_t i) {
  if (i < c.lo_strict.size() && !c.lo_strict[i]) return &c.lo_text[i];
  if (i < c.hi_strict.size() && !c.hi_strict[i]) return &c.hi_text[i];
  return nullptr;
}

double near_value(const VnnCase& c, size_t i, const ArithSpec& arith) {
  const VnnDecimal* d = exact_decimal(c, i);
  Interval<RealScalar> e;
  if (!d || !enclose_decimal(d->text, e)) return NAN;
  return arith.is_f32() ? static_cast<double>(mpfr_get_flt(e.lo.get(), MPFR_RNDN)) : mpfr_get_d(e.lo.get(), MPFR_RNDN);
}

SearchBox search_box(const VnnCase& c, const ArithSpec& arith) {
  SearchBox b{c.lo_in, c.hi_in};
  for (size_t i = 0; i < b.lo.size(); ++i)
    if (off_grid(c, i, arith)) b.lo[i] = b.hi[i] = near_value(c, i, arith);
  return b;
}

// The point moved into the case's inward box and, for f32 networks, onto a float (the value an f32
// runtime reads) that is still inside; along an off-grid input, the value nearest its exact decimal.
std::vector<double> arith_point(const VnnCase& c, std::vector<double> x, const ArithSpec& arith) {
  for (size_t i = 0; i < x.size(); ++i) {
    if (off_grid(c, i, arith)) {
      x[i] = near_value(c, i, arith);  // outside the box: the exact check takes the decimal (pinned_point)
      continue;
    }
    x[i] = std::clamp(x[i], c.lo_in[i], c.hi_in[i]);
    if (!arith.is_f32()) continue;
    float f = static_cast<float>(x[i]);
    if (static_cast<double>(f) < c.lo_in[i]) f = std::nextafter(f, INFINITY);
    if (static_cast<double>(f) > c.hi_in[i]) f = std::nextafter(f, -INFINITY);
    x[i] = static_cast<double>(f);
  }
  return x;
}


bool all_hold(const std::vector<VnnAtom>& conj, const std::vector<double>& y) {
  if (y.empty()) return false;
  for (const VnnAtom& a : conj)
    if (surely_above(a, y, y)) return false;
  for (const VnnAtom& a : conj)
    if (!atom_holds_exact(a, y)) return false;
  return true;
}

// c . y - rhs (in double; only a guide for the search): above 0 the atom is violated.
double atom_margin(const VnnAtom& a, const std::vector<double>& y) {
  double s = -a.rhs_down;
  for (size_t j = 0; j < y.size() && j < a.coef.size(); ++j) s += a.coef[j] * y[j];
  return s;
}

// max_k (c_k . y - rhs_k) and the worst atom.
double violation(const std::vector<VnnAtom>& conj, const std::vector<double>& y, size_t* worst) {
  double v = -INFINITY;
  for (size_t k = 0; k < conj.size(); ++k)
    if (const double s = atom_margin(conj[k], y); s > v) v = s, *worst = k;
  return conj.empty() ? -1 : v;
}

}  // namespace verify_detail

using namespace verify_detail;

namespace verify_detail {

// Inside the file's interval along input i exactly: d_lo <= v <= d_hi, and d_lo < v (d_hi > v) where
// the bound is strict; a NaN is never inside (compare_exact gives 2).
bool in_exact_interval(const VnnCase& c, size_t i, double v) {
  const int lo = compare_exact(v, c.lo_text[i]), hi = compare_exact(v, c.hi_text[i]);
  const bool lo_strict = i < c.lo_strict.size() && c.lo_strict[i], hi_strict = i < c.hi_strict.size() && c.hi_strict[i];
  return (lo == 1 || (lo == 0 && !lo_strict)) && (hi == -1 || (hi == 0 && !hi_strict));
}

bool in_exact_box(const VnnCase& c, const std::vector<double>& x) {
  bool in = x.size() == c.lo_text.size() && x.size() == c.hi_text.size();
  for (size_t i = 0; in && i < x.size(); ++i) in = in_exact_interval(c, i, x[i]);
  return in;
}

namespace {

// Where x lies outside the exact box only along off-grid inputs, each at the arithmetic's value
// nearest that input's exact decimal: those decimals ("" at the other inputs); empty otherwise.
std::vector<std::string> pinned_decimals(const VnnCase& c, const std::vector<double>& x, const ArithSpec& arith) {
  if (x.size() != c.lo_text.size() || x.size() != c.hi_text.size()) return {};
  std::vector<std::string> d(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (in_exact_interval(c, i, x[i])) continue;
    if (!off_grid(c, i, arith) || !(x[i] == near_value(c, i, arith))) return {};
    d[i] = exact_decimal(c, i)->text;
  }
  return d;
}

// |v - d| rounded up (its largest value over the decimal's enclosure, then to a double upward); +inf
// for an unreadable decimal.
double distance_up(double v, const VnnDecimal& d) {
  Interval<RealScalar> e;
  if (!enclose_decimal(d.text, e)) return INFINITY;
  double far = 0;
  for (RealScalar* end : {&e.lo, &e.hi}) {
    mpfr_sub_d(end->get(), end->get(), v, MPFR_RNDU);
    mpfr_abs(end->get(), end->get(), MPFR_RNDU);
    far = std::max(far, mpfr_get_d(end->get(), MPFR_RNDU));
  }
  return far;
}

// How far x lies outside the exact box (the largest distance along one input, an upper bound; 0 inside).
double distance_outside(const VnnCase& c, const std::vector<double>& x) {
  double far = 0;
  for (size_t i = 0; i < x.size() && i < c.lo_text.size(); ++i)
    if (!in_exact_interval(c, i, x[i]))
      far = std::max(far, compare_exact(x[i], c.lo_text[i]) <= 0 ? distance_up(x[i], c.lo_text[i]) : distance_up(x[i], c.hi_text[i]));
  return far;
}

// The arithmetic's verdict at x holds and w.in_box is set; the rest of the check: inside the box, the real network at x;
// outside it only along off-grid inputs, the real network at their exact decimals; else within the
// tolerance (VerifyOptions::witness_tolerance), the arithmetic alone.
void finish_check(const Model& m, const VnnCase& c, const std::vector<VnnAtom>& conj, const std::vector<double>& x,
                  const ArithSpec& arith, double tolerance, WitnessCheck& w,
                  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max()) {
  if (w.in_box) {
    w.holds_exact = all_hold_real(m, conj, x, {}, deadline);
    return;
  }
  w.outside = distance_outside(c, x);
  w.x_exact = pinned_decimals(c, x, arith);
  if (!w.x_exact.empty()) w.holds_exact = all_hold_real(m, conj, x, w.x_exact, deadline);
  if (w.holds_exact || !(tolerance > 0) || !(w.outside <= tolerance)) return;
  w.x_exact.clear();
  w.within_tolerance = true;
  w.holds_exact = all_hold_real(m, conj, x, {}, deadline);  // at x itself: reported, not required
}

}  // namespace

// check_witness with the f32 payload given and the cheap test first: the exact box comparisons
// (one MPFR decimal comparison per input) only for a point that satisfies the conjunction in the
// arithmetic; the result is the same as check_witness's except `in_box` and `y` for other points.
WitnessCheck check_point(const Model& m, const VnnCase& c, const std::vector<VnnAtom>& conj,
                         const std::vector<double>& x, const ArithSpec& arith, const Payload<float>* p32,
                         double tolerance, std::chrono::steady_clock::time_point deadline) {
  WitnessCheck w;
  w.y = eval_point(m, x, arith, p32);
  w.holds_arith = all_hold(conj, w.y);
  if (!w.holds_arith) return w;
  w.in_box = in_exact_box(c, x);
  finish_check(m, c, conj, x, arith, tolerance, w, deadline);
  return w;
}

}  // namespace verify_detail

bool WitnessCheck::confirmed() const {
  if (!holds_arith) return false;
  if (in_box || !x_exact.empty()) return holds_exact;
  return within_tolerance;
}

std::string WitnessCheck::semantics(const ArithSpec& arith) const {
  if (in_box) return arith.name + " and real";
  if (!x_exact.empty())
    return fmt::format("real at the exact decimal inputs; {} at the nearest values, {:.3g} outside the box", arith.name, outside);
  return fmt::format("{} within the tolerance, {:.3g} outside the box", arith.name, outside);
}

WitnessCheck check_witness(const Model& m, const VnnCase& c, const std::vector<VnnAtom>& conj,
                           const std::vector<double>& x, const ArithSpec& arith, double tolerance) {
  WitnessCheck w;
  w.in_box = in_exact_box(c, x);
  w.y = eval_point(m, x, arith);
  w.holds_arith = all_hold(conj, w.y);
  if (w.holds_arith) finish_check(m, c, conj, x, arith, tolerance, w);
  return w;
}

namespace verify_detail {

namespace {

// False when IBP's box at x puts some atom surely false (the arithmetic's evaluation at x is inside it).
bool ibp_may_hold(const Search& s, const std::vector<double>& x) {
  const DoubleBox box{input_shape(s.m), x, x};
  auto r = run_ibp_double(*s.ibp, std::span<const DoubleBox>(&box, 1));
  if (!r.ok()) return true;
  const auto& y = r->boxes[static_cast<size_t>(s.m.output_ids[0])];
  if (!y) return true;
  for (const VnnAtom& a : s.conj)
    if (surely_above(a, y->lo, y->hi)) return false;
  return true;
}

}  // namespace

// Checks one candidate; a confirmed witness goes to `found`.
bool try_point(Search& s, const std::vector<double>& raw) {
  // No check starts past the deadline: on large models one costs seconds (the exact evaluation, then
  // IBP over the whole payload; nn4sys's 336 MB learned indices), and a search's probes can ask for many.
  if (s.past_deadline()) return false;
  const std::vector<double> x = arith_point(s.c, raw, s.o.arith);
  if (s.ibp && !ibp_may_hold(s, x)) return false;
  const WitnessCheck w = check_point(s.m, s.c, s.conj, x, s.o.arith, s.p32, s.o.witness_tolerance, s.deadline);
  const bool compared = w.in_box || !w.x_exact.empty();
  if (compared && w.holds_arith != w.holds_exact) ++s.stats.disagreements;
  if (!w.confirmed()) return false;
  s.found = Witness{x, w.y, w.x_exact, w.semantics(s.o.arith), w.outside};
  return true;
}

// falsify.h. The window is auto_LiRPA's loose SignMerge backward (1/5 where |x| < 5), wide enough to pass a
// sign of a sign plus an offset (traffic_signs_recognition's binarized layers: sign(sign(x) + 0.1)).
constexpr double kStepWindow = 5;
double step_window(const Graph& g) {
  for (const Node& n : g.nodes)
    if (is_step_op(n.op)) return kStepWindow;
  return 0;
}

// The gradient of c_k . y (f64) at x, flat; empty on an error.
std::vector<double> atom_gradient(const Model& m, const VnnAtom& a, const std::vector<double>& x, double w) {
  F64Context ctx;
  std::vector<Tensor<double>> in = {Tensor<double>(input_shape(m), x)};
  const Shape& ys = m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape;
  const Tensor<double> cot(ys, a.coef);
  GradOptions go;
  go.step_window = w;
  go.kernels = GradKernels::Blas;  // a direction only: gemms for batches, conv cotangents of 0 skipped
  auto g = vjp(m.graph, m.payload, std::span<const Tensor<double>>(in), m.output_ids[0], &cot, ctx, go);
  if (!g.ok() || g->inputs.empty()) return {};
  return g->inputs[0].data;
}

void random_point(SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
                  std::vector<double>& x) {
  x.resize(lo.size());
  for (size_t i = 0; i < lo.size(); ++i)
    x[i] = lo[i] + static_cast<double>(rng.next() >> 11) * 0x1p-53 * (hi[i] - lo[i]);
}

namespace {

// One signed-gradient step against g: each coordinate moves eta of its range, clamped to [lo, hi].
void signed_step(std::vector<double>& x, const std::vector<double>& g, const std::vector<double>& lo,
                 const std::vector<double>& hi, double eta) {
  for (size_t i = 0; i < x.size(); ++i)
    if (g[i] != 0) x[i] = std::clamp(x[i] - eta * (hi[i] - lo[i]) * (g[i] > 0 ? 1 : -1), lo[i], hi[i]);
}

}  // namespace

// falsify.h. On marabou-cifar10's cifar10_large index6413 a 30 x 100 attack came 3x closer with the
// sum of the violated atoms' margins than with the worst atom's (docs/PERF.md).
VnnAtom descent_atom(const std::vector<VnnAtom>& conj, const std::vector<double>& y, size_t worst) {
  VnnAtom sum;
  sum.coef.assign(y.size(), 0.0);
  bool any = false;
  for (const VnnAtom& a : conj) {
    if (!(atom_margin(a, y) > 0)) continue;
    any = true;
    for (size_t j = 0; j < y.size() && j < a.coef.size(); ++j) sum.coef[j] += a.coef[j];
  }
  return any ? sum : conj[worst];
}

// Signed-gradient descent on the violated atoms (descent_atom) from x, inside [lo, hi]; true on a confirmed witness.
bool descend(Search& s, std::vector<double> x, const std::vector<double>& lo, const std::vector<double>& hi, int steps,
             double* best) {
  const size_t n = lo.size();
  const double w = step_window(s.m.graph);
  for (int step = 0; step < steps; ++step) {
    if (s.past_deadline()) return false;
    ++s.stats.pgd_steps;
    const std::vector<double> y = eval_point(s.m, x, ArithSpec::f64());
    size_t worst = 0;
    if (y.empty()) return false;
    const double v = violation(s.conj, y, &worst);
    if (best) *best = std::min(*best, v);
    if (v <= 0 && try_point(s, x)) return true;
    const std::vector<double> g = atom_gradient(s.m, descent_atom(s.conj, y, worst), x, w);
    if (g.size() != n) return false;
    signed_step(x, g, lo, hi, 0.25 * std::pow(0.9, step));
  }
  return try_point(s, x);
}

int descend_any(std::vector<Search*>& ss, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
                int restarts, int steps) {
  if (ss.empty()) return -1;
  const size_t n = lo.size();
  Search& s0 = *ss[0];
  const double w = step_window(s0.m.graph);
  std::vector<double> x(n);
  RestartStall stall{4};
  for (int r = 0; r < restarts; ++r) {
    random_point(rng, lo, hi, x);
    double closest = INFINITY;
    for (int step = 0; step <= steps; ++step) {
      if (s0.past_deadline()) return -1;
      ++s0.stats.pgd_steps;
      const std::vector<double> y = eval_point(s0.m, x, ArithSpec::f64());
      if (y.empty()) return -1;
      // The conjunction closest to holding, and its worst atom.
      size_t best = 0, atom = 0;
      double v = INFINITY;
      for (size_t k = 0; k < ss.size(); ++k) {
        size_t w = 0;
        const double vk = violation(ss[k]->conj, y, &w);
        if (vk < v) v = vk, best = k, atom = w;
      }
      closest = std::min(closest, v);
      if (v <= 0 && try_point(*ss[best], x)) return static_cast<int>(best);
      if (step == steps || ss[best]->conj.empty()) break;
      const std::vector<double> g = atom_gradient(s0.m, descent_atom(ss[best]->conj, y, atom), x, w);
      if (g.size() != n) return -1;
      signed_step(x, g, lo, hi, 0.5 * (1 - static_cast<double>(step) / steps));
    }
    if (stall.stop(closest)) break;
  }
  return -1;
}

bool probe(Search& s, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi) {
  if (s.conj.empty()) return false;
  for (size_t i = 0; i < lo.size(); ++i)
    if (!(lo[i] <= hi[i])) return false;
  std::vector<double> x;
  random_point(rng, lo, hi, x);
  return descend(s, x, lo, hi, 10);
}

namespace {

// The sampling screen's slack (nearly_holds): 1e-4 of the terms' magnitude.
constexpr double kScreenSlack = 1e-4;

// The search whose conjunction the raw point satisfies (checked by try_point), given the outputs y at
// its arithmetic point: exact when y is the evaluator's, a screen (nearly_holds) otherwise; or -1.
int first_witness(std::vector<Search>& ss, const std::vector<double>& raw, const std::vector<double>& y, bool screened) {
  for (size_t k = 0; k < ss.size(); ++k)
    if ((ss[k].conj.empty() ||
         (screened ? nearly_holds(ss[k].conj, y.data(), y.size(), kScreenSlack) : all_hold(ss[k].conj, y))) &&
        try_point(ss[k], raw)) {
      ss[k].stats.decided_by = "sampling";
      return static_cast<int>(k);
    }
  return -1;
}

// sample_case through the dense chain: the same points in the same order, evaluated 256 at a time.
int sample_batched(std::vector<Search>& ss, SplitMix64& rng, const std::vector<double>& lo,
                   const std::vector<double>& hi, const DenseChain& chain) {
  constexpr int64_t kBatch = 256;
  Search& s0 = ss[0];
  const size_t n = lo.size(), ny = static_cast<size_t>(chain.outputs());
  std::vector<std::vector<double>> raws;
  std::vector<float> xs, ys, scratch;
  std::vector<double> raw(n), y(ny);
  for (int64_t t = -1; t < s0.o.samples;) {  // t = -1: the center
    if (s0.past_deadline()) return -1;
    raws.clear(), xs.clear();
    for (; t < s0.o.samples && static_cast<int64_t>(raws.size()) < kBatch; ++t) {
      if (t < 0) {
        for (size_t i = 0; i < n; ++i) raw[i] = lo[i] + (hi[i] - lo[i]) / 2;
      } else {
        random_point(rng, lo, hi, raw);
        ++s0.stats.samples;
      }
      raws.push_back(raw);
      for (double v : arith_point(s0.c, raw, s0.o.arith)) xs.push_back(static_cast<float>(v));
    }
    chain.eval(xs, static_cast<int64_t>(raws.size()), ys, scratch);
    for (size_t r = 0; r < raws.size(); ++r) {
      for (size_t j = 0; j < ny; ++j) y[j] = ys[r * ny + j];
      if (const int k = first_witness(ss, raws[r], y, /*screened=*/true); k >= 0) return k;
    }
  }
  return -1;
}

}  // namespace

int sample_case(std::vector<Search>& ss, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
                FastEval* fast, const DenseChain* chain) {
  if (ss.empty()) return -1;
  const size_t n = lo.size();
  for (size_t i = 0; i < n; ++i)
    if (!(lo[i] <= hi[i])) return -1;
  Search& s0 = ss[0];
  if (chain && chain->inputs() == static_cast<int64_t>(n)) return sample_batched(ss, rng, lo, hi, *chain);
  std::vector<double> raw(n);
  for (size_t i = 0; i < n; ++i) raw[i] = lo[i] + (hi[i] - lo[i]) / 2;
  for (int64_t t = -1; t < s0.o.samples; ++t) {  // t = -1: the center
    if (t >= 0) {
      if (t % 64 == 0 && s0.past_deadline()) return -1;
      random_point(rng, lo, hi, raw);
      ++s0.stats.samples;
    }
    const std::vector<double> x = arith_point(s0.c, raw, s0.o.arith);
    std::vector<double> y;
    const bool screened = fast && fast->eval(x, y);  // else the evaluator, whose verdict is exact
    if (!screened) y = eval_point(s0.m, x, s0.o.arith, s0.p32);
    if (const int k = first_witness(ss, raw, y, screened); k >= 0) return k;
  }
  return -1;
}

bool falsify(Search& s, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi, bool sample) {
  const size_t n = lo.size();
  for (size_t i = 0; i < n; ++i)
    if (!(lo[i] <= hi[i])) return false;  // no value to search along some input (search_box)
  std::vector<double> x(n);
  for (size_t i = 0; i < n; ++i) x[i] = lo[i] + (hi[i] - lo[i]) / 2;
  if (sample && try_point(s, x)) return (s.stats.decided_by = "sampling", true);
  for (int64_t t = 0; sample && t < s.o.samples; ++t) {
    if (t % 64 == 0 && s.past_deadline()) return false;
    random_point(rng, lo, hi, x);
    ++s.stats.samples;
    if (try_point(s, x)) return (s.stats.decided_by = "sampling", true);
  }
  if (s.conj.empty()) return false;
  RestartStall stall;
  for (int r = 0; r < s.o.pgd_restarts; ++r) {
    if (r == 0)
      for (size_t i = 0; i < n; ++i) x[i] = lo[i] + (hi[i] - lo[i]) / 2;
    else
      random_point(rng, lo, hi, x);
    double best = INFINITY;
    if (descend(s, x, lo, hi, s.o.pgd_steps, &best)) return (s.stats.decided_by = "pgd", true);
    if (stall.stop(best)) break;
  }
  return false;
}

std::vector<double> atom_rhs(const std::vector<VnnAtom>& conj) {
  std::vector<double> r;
  for (const VnnAtom& a : conj) r.push_back(a.rhs_up);
  return r;
}

bool some_atom_impossible(const std::vector<VnnAtom>& conj, const std::vector<double>& lower) {
  for (size_t k = 0; k < conj.size() && k < lower.size(); ++k)
    if (conj[k].strict ? lower[k] >= conj[k].rhs_up : lower[k] > conj[k].rhs_up) return true;
  return false;
}

size_t closest_atom(const std::vector<VnnAtom>& conj, const std::vector<double>& lower) {
  size_t worst = 0;
  double gap = INFINITY;
  for (size_t k = 0; k < conj.size() && k < lower.size(); ++k)
    if (conj[k].rhs_up - lower[k] < gap) gap = conj[k].rhs_up - lower[k], worst = k;
  return worst;
}

}  // namespace verify_detail

}  // namespace denote
