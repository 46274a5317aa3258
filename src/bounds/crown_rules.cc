// The CROWN column of the op table (src/bounds/crown_rules.h): backward rules and alpha-CROWN's
// forward rules. docs/NUMERICS.md, "Linear bounds", has the error terms each rule adds.
#include "bounds/crown_rules.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "bounds/crown_affine.h"
#include "bounds/crown_conv.h"
#include "kernels/gemm.h"
#include "bounds/crown_linear.h"
#include "bounds/crown_lines.h"
#include "bounds/crown_maxpool.h"
#include "bounds/crown_pair.h"
#include "bounds/kernel_ops.h"
#include "bounds/crown_relax.h"
#include "bounds/crown_tangents.h"
#include "kernels/row_sums.h"

namespace denote::crown {

namespace {


// ---- add / sub: exact coefficients; the evaluation's rounding is at most 1.01 u |y| per element.
void eval_rounding_slack(RuleCtx& c, const Node& n, const std::vector<double>& A, double ulps) {
  const DoubleBox* yb = box_of(c, n.id);
  const int64_t m = c.numel_of(n.id);
  std::vector<double> scale(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) scale[static_cast<size_t>(j)] = (yb ? c.absmax(n.id, j) : INFINITY) * ulps * c.err.u + c.err.tiny;
  c.slack_abs_dot(A, scale, 1.0);
}

bool rule_add(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  eval_rounding_slack(c, n, A, 1.01);
  std::vector<double> copy = A;
  c.add_to(n.parents[0], std::move(copy));
  c.add_to(n.parents[1], std::move(A));
  return c.st.failure.empty();
}

bool rule_sub(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  eval_rounding_slack(c, n, A, 1.01);
  std::vector<double> neg = A;
  for (double& v : neg) v = -v;
  c.add_to(n.parents[0], std::move(A));
  c.add_to(n.parents[1], std::move(neg));
  return c.st.failure.empty();
}

// ---- mul_elem with a constant operand: coefficients A (.) c; div by a constant: A (.) (1 / c); otherwise cut.
// The constant operand of a binary node (parent `k` when k >= 0, else either): a const of the node's size,
// or a storage-only op (broadcast_to: ONNX import's form) of a one-element const, its value repeated; the
// other parent goes to `other`. nullopt: none.
std::optional<std::vector<double>> const_operand(const RuleCtx& c, const Node& n, int64_t& other, int only = -1) {
  const size_t m = static_cast<size_t>(c.numel_of(n.id));
  for (int k = 0; k < 2; ++k) {
    if (only >= 0 && k != only) continue;
    const auto* rec = const_behind(c.g, c.payload, n.parents[static_cast<size_t>(k)]);
    if (!rec || (rec->values.size() != m && rec->values.size() != 1)) continue;
    other = n.parents[static_cast<size_t>(1 - k)];
    return rec->values.size() == m ? rec->values : std::vector<double>(m, rec->values[0]);
  }
  return std::nullopt;
}
// x (.) v for a constant v (mul_elem: v = c; div: v = 1 / c rounded, one more u of the coefficients).
bool rule_scale(RuleCtx& c, const Node& n, std::vector<double>&& A, const std::vector<double>& v, int64_t other,
                double coef_u) {
  const int64_t m = c.numel_of(n.id);
  std::vector<double> scale(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) {
    const double cj = std::fabs(v[static_cast<size_t>(j)]);
    // coefficient rounding u |A v| xmax, evaluation rounding (and f32 rounding of the constant): 3 u_eval |v| xmax.
    scale[static_cast<size_t>(j)] = (coef_u + 3 * c.err.u) * cj * c.absmax(other, j) + c.err.tiny;
  }
  c.slack_abs_dot(A, scale, 1.0);
  for (int64_t r = 0; r < c.st.rows; ++r)
    for (int64_t j = 0; j < m; ++j) A[static_cast<size_t>(r * m + j)] *= v[static_cast<size_t>(j)];
  c.add_to(other, std::move(A));
  return c.st.failure.empty();
}

bool rule_mul_elem(RuleCtx& c, const Node& n, std::vector<double>&& A);  // below (two variables: bilinear_lines)

// The reciprocals of a divisor that is nonzero and finite everywhere, else nullopt (cut).
std::optional<std::vector<double>> reciprocals(std::optional<std::vector<double>> cv) {
  if (!cv) return std::nullopt;
  for (double& v : *cv) {
    if (!(v != 0) || !std::isfinite(v) || !std::isfinite(1 / v)) return std::nullopt;
    v = 1 / v;
  }
  return cv;
}

bool rule_div(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  int64_t other = -1;
  const auto q = reciprocals(const_operand(c, n, other, /*only=*/1));
  if (!q || !box_of(c, other)) return c.concretize(n.id, A);
  return rule_scale(c, n, std::move(A), *q, other, 2 * kU * 1.01);
}

// ---- elementwise relaxations.
using RelaxFn = Relax (*)(double l, double u);

double sigmoid_f(double x) { return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x)); }
double sigmoid_df(double x) {
  const double s = sigmoid_f(x);
  return s * (1 - s);
}
double tanh_f(double x) { return std::tanh(x); }
double tanh_df(double x) {
  const double t = std::tanh(x);
  return 1 - t * t;
}
double erf_f(double x) { return std::erf(x); }
double erf_df(double x) { return 1.1283791670955126 * std::exp(-x * x); }
double exp_f(double x) { return std::exp(x); }
double softplus_f(double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
double log_f(double x) { return std::log(x); }
double log_df(double x) { return 1 / x; }
double sqrt_f(double x) { return std::sqrt(x); }
double sqrt_df(double x) { return 0.5 / std::sqrt(x); }
double inv_f(double x) { return 1 / x; }
double inv_df(double x) { return -1 / (x * x); }

constexpr double kCancel = 8 * kU;
Relax r_relu(double l, double u) { return relax_relu(l, u); }
Relax r_abs(double l, double u) { return relax_abs(l, u); }
Relax r_neg(double, double) { return Relax{{-1, 0}, {-1, 0}, true}; }
Relax r_exp(double l, double u) { return relax_convex(Smooth{exp_f, exp_f}, l, u); }
Relax r_softplus(double l, double u) { return relax_convex(Smooth{softplus_f, sigmoid_f, 16 * kU, kCancel}, l, u); }
constexpr Smooth kTanh{tanh_f, tanh_df, 16 * kU, kCancel};
constexpr Smooth kSigmoid{sigmoid_f, sigmoid_df, 16 * kU, kCancel};
constexpr Smooth kErf{erf_f, erf_df};
Relax r_tanh(double l, double u) { return relax_s_shaped(kTanh, l, u); }
Relax r_sigmoid(double l, double u) { return relax_s_shaped(kSigmoid, l, u); }
Relax r_erf(double l, double u) { return relax_s_shaped(kErf, l, u); }

// The S-shaped ops whose tangent points alpha-CROWN optimises (crown_tangents.h), a table over ops.def.
template <Op O>
constexpr const Smooth* kTangents = nullptr;
template <>
constexpr const Smooth* kTangents<Op::Tanh> = &kTanh;
template <>
constexpr const Smooth* kTangents<Op::Sigmoid> = &kSigmoid;
template <>
constexpr const Smooth* kTangents<Op::Erf> = &kErf;
Relax r_log(double l, double u) { return l > 0 ? relax_concave(Smooth{log_f, log_df}, l, u) : Relax{{}, {}, false}; }
Relax r_sqrt(double l, double u) {
  if (!(l >= 0) || !(u > 0)) return Relax{{}, {}, false};
  return relax_concave(Smooth{sqrt_f, sqrt_df}, l, u);
}
Relax r_inv(double l, double u) {
  if (l > 0) return relax_convex(Smooth{inv_f, inv_df}, l, u);
  if (u < 0) return relax_concave(Smooth{inv_f, inv_df}, l, u);
  return Relax{{}, {}, false};
}

Relax r_sin(double l, double u) { return relax_sin(l, u); }
Relax r_cos(double l, double u) { return relax_cos(l, u); }

template <Op O>
struct Elementwise {
  static constexpr RelaxFn fn = nullptr;
  static constexpr double eval_ulps = 0;  // the evaluation's error, in u_eval |y| (libm functions)
};
#define DENOTE_CROWN_ELEM(op, f, ulps)             \
  template <>                                      \
  struct Elementwise<Op::op> {                     \
    static constexpr RelaxFn fn = &f;              \
    static constexpr double eval_ulps = ulps;      \
  };
DENOTE_CROWN_ELEM(Relu, r_relu, 0)
DENOTE_CROWN_ELEM(Abs, r_abs, 0)
DENOTE_CROWN_ELEM(Neg, r_neg, 0)
DENOTE_CROWN_ELEM(Exp, r_exp, 16)
DENOTE_CROWN_ELEM(Softplus, r_softplus, 16)
DENOTE_CROWN_ELEM(Tanh, r_tanh, 16)
DENOTE_CROWN_ELEM(Sigmoid, r_sigmoid, 16)
DENOTE_CROWN_ELEM(Erf, r_erf, 16)
DENOTE_CROWN_ELEM(Log, r_log, 16)
DENOTE_CROWN_ELEM(Sqrt, r_sqrt, 16)
DENOTE_CROWN_ELEM(Inv, r_inv, 16)
DENOTE_CROWN_ELEM(Sin, r_sin, 16)
DENOTE_CROWN_ELEM(Cos, r_cos, 16)
#undef DENOTE_CROWN_ELEM

const std::vector<double>* alpha_of(const RuleCtx& c, int64_t id) {
  if (!c.alpha) return nullptr;
  const auto& v = (*c.alpha)[static_cast<size_t>(id)];
  return v.empty() ? nullptr : &v;
}

// The lines of relaxation fn on every element (eval_ulps: the evaluation's error in u_eval |y|; split: a
// relu-like op whose open elements take alpha slopes).
Lines lines_with(RelaxFn fn, double kEvalUlps, bool split, const DoubleBox& xb, const DoubleBox& yb, double u_eval,
                 double tiny_eval) {
  const size_t m = xb.lo.size();
  Lines L;
  L.la.resize(m), L.lb.resize(m), L.ua.resize(m), L.ub.resize(m), L.xm.resize(m), L.ye.resize(m);
  L.ok.resize(m), L.open.resize(m);
  for (size_t j = 0; j < m; ++j) {
    const Relax rx = fn(xb.lo[j], xb.hi[j]);
    L.la[j] = rx.lo.a, L.lb[j] = rx.lo.b, L.ua[j] = rx.up.a, L.ub[j] = rx.up.b, L.ok[j] = rx.ok;
    L.open[j] = split && xb.lo[j] < 0 && xb.hi[j] > 0;
    L.xm[j] = std::max(std::fabs(xb.lo[j]), std::fabs(xb.hi[j])) * (kU * 1.01);
    L.ye[j] = kEvalUlps > 0 ? std::max(std::fabs(yb.lo[j]), std::fabs(yb.hi[j])) * kEvalUlps * u_eval + 2 * tiny_eval : 0;
    if (!rx.ok) {  // cut at the output's box: slope 0, intercepts the box's ends, no error terms
      L.la[j] = L.ua[j] = L.xm[j] = L.ye[j] = 0;
      L.lb[j] = yb.lo[j], L.ub[j] = yb.hi[j];
      L.open[j] = 0;
    }
  }
  return L;
}
template <Op O>
Lines element_lines(const DoubleBox& xb, const DoubleBox& yb, double u_eval, double tiny_eval) {
  return lines_with(Elementwise<O>::fn, Elementwise<O>::eval_ulps, splits_at_zero(O), xb, yb, u_eval, tiny_eval);
}

// Node id's lines: the cache's where its boxes are unchanged, else made into `local` (and kept).
template <Op O>
const Lines& lines_of(const RuleCtx& c, int64_t id, const DoubleBox& xb, const DoubleBox& yb, Lines& local) {
  if (c.lines)
    if (const Lines* kept = c.lines->find(id, xb, yb)) return *kept;
  local = element_lines<O>(xb, yb, c.err.u, c.err.tiny);
  if (c.lines) c.lines->store(id, xb, yb, local);
  return local;
}

using LinesFn = Lines (*)(const DoubleBox&, const DoubleBox&, double, double);
template <Op O>
constexpr LinesFn lines_fn() {
  if constexpr (Elementwise<O>::fn != nullptr) return &element_lines<O>;
  else return nullptr;
}

// Every row through the lines, without branches (the signs of the coefficients are unpredictable):
// the lower line for a coefficient >= 0, else the upper one; a zero coefficient adds nothing (also
// against an infinite intercept). Cut elements have slope 0 and the box's ends as intercepts.
// Sums of nonnegative or signed terms with four partial sums (vectorises; the a-priori bounds of
// the pass hold for any summation order).
// One row's terms in four partial sums by j mod 4 (the tail into the first), then (s0 + s1) + (s2 + s3).
template <bool HasAlpha>
[[gnu::always_inline]] inline void relax_row(const Lines& L, double* __restrict a, const double* __restrict al,
                                             int64_t m, double out[4]) {
  const double* __restrict la_ = L.la.data();
  const double* __restrict lb_ = L.lb.data();
  const double* __restrict ua_ = L.ua.data();
  const double* __restrict ub_ = L.ub.data();
  const double* __restrict xm_ = L.xm.data();
  const double* __restrict ye_ = L.ye.data();
  const char* __restrict open_ = L.open.data();
  double st[4] = {0, 0, 0, 0}, sa[4] = {0, 0, 0, 0}, sc[4] = {0, 0, 0, 0}, ss[4] = {0, 0, 0, 0};
  auto term = [&](int64_t j, int k) {  // every load unconditional: selects, not branches
    const double lam = a[j];
    double lo_a = la_[j];
    if constexpr (HasAlpha) lo_a = open_[j] != 0 ? al[j] : lo_a;
    const double up_a = ua_[j], lo_b = lb_[j], up_b = ub_[j], xm = xm_[j], ye = ye_[j];
    const bool below = lam >= 0, live = lam != 0;
    const double la = below ? lo_a : up_a;
    const double lb = below ? lo_b : up_b;
    const double prod = lam * lb, na = lam * la;
    const double t = live ? prod : 0.0;
    st[k] += t;
    sa[k] += std::fabs(t);
    sc[k] += static_cast<double>(live & (lb != 0.0));
    const double sl = std::fabs(na) * xm + std::fabs(lam) * ye;
    ss[k] += live ? sl : 0.0;
    a[j] = live ? na : 0.0;
  };
  int64_t j = 0;
  for (; j + 4 <= m; j += 4)
    for (int k = 0; k < 4; ++k) term(j + k, k);
  for (; j < m; ++j) term(j, 0);
  out[0] = (st[0] + st[1]) + (st[2] + st[3]);
  out[1] = (sa[0] + sa[1]) + (sa[2] + sa[3]);
  out[2] = (sc[0] + sc[1]) + (sc[2] + sc[3]);
  out[3] = (ss[0] + ss[1]) + (ss[2] + ss[3]);
}

// relax_row over the columns `cols` only (the others are 0 and stay 0), in one sum each.
template <bool HasAlpha>
void relax_row_cols(const Lines& L, double* a, const double* al, const std::vector<int64_t>& cols, double out[4]) {
  out[0] = out[1] = out[2] = out[3] = 0;
  for (int64_t j : cols) {
    const double lam = a[j];
    if (lam == 0) continue;
    double lo_a = L.la[static_cast<size_t>(j)];
    if constexpr (HasAlpha) lo_a = L.open[static_cast<size_t>(j)] != 0 ? al[j] : lo_a;
    a[j] = relax_one(L, static_cast<size_t>(j), lam, lo_a, out);
  }
}

// Row r's four sums into the pass: bias terms, their magnitudes and count; the slack terms (2 per
// element summed), rounded up.
[[gnu::always_inline]] inline void add_row_sums(RuleCtx& c, int64_t r, const double sums[4], const UpSum& up_sum_2m) {
  c.st.bias[r] += sums[0];
  c.st.mag[r] += sums[1];
  c.st.terms[r] += sums[2];
  c.st.slack[r] += up_sum_2m(sums[3]);
}

template <bool HasAlpha>
void relax_rows_cols(RuleCtx& c, const Lines& L, double* A, const double* alpha, int64_t m,
                     const std::vector<int64_t>& cols) {
  const UpSum up_sum_2m(static_cast<double>(2 * cols.size()));
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sums[4];
    relax_row_cols<HasAlpha>(L, A + r * m, HasAlpha ? alpha + r * m : nullptr, cols, sums);
    add_row_sums(c, r, sums, up_sum_2m);
  }
}

template <bool HasAlpha>
[[gnu::always_inline]] inline void relax_rows_in(RuleCtx& c, const Lines& L, double* A, const double* alpha,
                                                 int64_t m) {
  const UpSum up_sum_2m(static_cast<double>(2 * m));
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sums[4];
    relax_row<HasAlpha>(L, A + r * m, HasAlpha ? alpha + r * m : nullptr, m, sums);
    add_row_sums(c, r, sums, up_sum_2m);
  }
}
// Compiled for AVX2 where the CPU has it (no FMA: each product is rounded as written).
template <bool HasAlpha>
__attribute__((target("avx2"))) void relax_rows_avx2(RuleCtx& c, const Lines& L, double* A, const double* alpha,
                                                     int64_t m) {
  relax_rows_in<HasAlpha>(c, L, A, alpha, m);
}
template <bool HasAlpha>
void relax_rows_base(RuleCtx& c, const Lines& L, double* A, const double* alpha, int64_t m) {
  relax_rows_in<HasAlpha>(c, L, A, alpha, m);
}
template <bool HasAlpha>
void relax_rows(RuleCtx& c, const Lines& L, double* A, const double* alpha, int64_t m) {
  if (have_avx2())
    relax_rows_avx2<HasAlpha>(c, L, A, alpha, m);
  else
    relax_rows_base<HasAlpha>(c, L, A, alpha, m);
}

// Row r's lines from the node's tangent points t (rows x m lower, then rows x m upper; crown_tangents.h):
// L's lines where a point is NaN or the element is cut. E: the elements' tangent boxes.
void row_lines(const Smooth& s, const std::vector<TangentBox>& E, const Lines& L, const std::vector<double>& t,
               int64_t r, int64_t m, Lines& R) {
  const size_t n = t.size() / 2, at = static_cast<size_t>(r * m);
  for (size_t j = 0; j < static_cast<size_t>(m); ++j) {
    R.la[j] = L.la[j], R.lb[j] = L.lb[j], R.ua[j] = L.ua[j], R.ub[j] = L.ub[j];
    if (!L.ok[j]) continue;
    Line ln;
    if (tangent_lower(s, E[j], t[at + j], ln)) R.la[j] = ln.a, R.lb[j] = ln.b;
    if (tangent_upper(s, E[j], t[n + at + j], ln)) R.ua[j] = ln.a, R.ub[j] = ln.b;
  }
}
std::vector<TangentBox> tangent_boxes(const Smooth& s, const DoubleBox& xb) {
  std::vector<TangentBox> E(xb.lo.size());
  for (size_t j = 0; j < E.size(); ++j) E[j] = tangent_box(s, xb.lo[j], xb.hi[j]);
  return E;
}
void relax_rows_tangents(RuleCtx& c, const Smooth& s, const DoubleBox& xb, const Lines& L, double* A,
                         const std::vector<double>& t, int64_t m) {
  Lines R = L;
  const std::vector<TangentBox> E = tangent_boxes(s, xb);
  const UpSum up_sum_2m(static_cast<double>(2 * m));
  for (int64_t r = 0; r < c.st.rows; ++r) {
    row_lines(s, E, L, t, r, m, R);
    double sums[4];
    relax_row<false>(R, A + r * m, nullptr, m, sums);
    add_row_sums(c, r, sums, up_sum_2m);
  }
}

// The line row r uses at element j: the lower one for a coefficient >= 0, else the upper one.
template <Op O>
bool rule_elementwise(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  const int64_t p = n.parents[0];
  const DoubleBox* xb = box_of(c, p);
  const DoubleBox* yb = box_of(c, n.id);
  if (!xb || !yb) return c.fail(fmt::format("node {}: no box for the relaxation", n.id));
  const int64_t m = c.numel_of(n.id);
  Lines local;
  const Lines& L = lines_of<O>(c, n.id, *xb, *yb, local);
  const std::vector<double>* alpha = splits_at_zero(O) ? alpha_of(c, n.id) : nullptr;
  const std::vector<int64_t>* S = c.support_of(n.id);
  if constexpr (kTangents<O> != nullptr) {
    const std::vector<double>* t = alpha_of(c, n.id);
    if (t && t->size() == static_cast<size_t>(2 * c.st.rows * m)) {
      relax_rows_tangents(c, *kTangents<O>, *xb, L, A.data(), *t, m);
      std::optional<std::vector<int64_t>> kept;
      if (S) kept = *S;
      c.add_to(p, std::move(A), std::move(kept));
      return c.st.failure.empty();
    }
  }
  if (S && 2 * static_cast<int64_t>(S->size()) <= m) {  // few nonzero columns: those only
    if (alpha)
      relax_rows_cols<true>(c, L, A.data(), alpha->data(), m, *S);
    else
      relax_rows_cols<false>(c, L, A.data(), nullptr, m, *S);
    std::vector<int64_t> kept = *S;
    c.add_to(p, std::move(A), std::move(kept));
    return c.st.failure.empty();
  }
  if (alpha)
    relax_rows<true>(c, L, A.data(), alpha->data(), m);
  else
    relax_rows<false>(c, L, A.data(), nullptr, m);
  std::optional<std::vector<int64_t>> kept;
  if (S) kept = *S;
  c.add_to(p, std::move(A), std::move(kept));
  return c.st.failure.empty();
}

bool rule_cut(RuleCtx& c, const Node& n, std::vector<double>&& A) { return c.concretize(n.id, A); }

bool fwd_vertex(ForwardCtx& f, const Node& n);  // below

// pow by the constant exponent 2 (ml4acopf's squares): x^2 is convex, relax_convex's lines, the evaluation's
// error 16 u_eval |y| (libm's pow); any other exponent is cut at the box.
double square_f(double x) { return x * x; }
double square_df(double x) { return 2 * x; }
Relax r_square(double l, double u) { return relax_convex(Smooth{square_f, square_df}, l, u); }
bool squares(const Graph& g, const Payload<double>& p, const Node& n) {
  const auto* rec = const_behind(g, p, n.parents[1]);
  const size_t m = static_cast<size_t>(numel(n.out_shape));
  if (!rec || (rec->values.size() != m && rec->values.size() != 1)) return false;
  for (double v : rec->values)
    if (v != 2) return false;
  return true;
}
const DoubleBox* squared_base(const RuleCtx& c, const Node& n) {
  return squares(c.g, c.payload, n) ? box_of(c, n.parents[0]) : nullptr;
}
bool rule_pow(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  const DoubleBox* xb = squared_base(c, n);
  const DoubleBox* yb = box_of(c, n.id);
  if (!xb || !yb || xb->lo.size() != yb->lo.size()) return c.concretize(n.id, A);
  const Lines L = lines_with(&r_square, 16, false, *xb, *yb, c.err.u, c.err.tiny);
  relax_rows<false>(c, L, A.data(), nullptr, c.numel_of(n.id));
  c.add_to(n.parents[0], std::move(A));
  return c.st.failure.empty();
}
bool fwd_through_lines(ForwardCtx& f, const Node& n, const DoubleBox& xb, const DoubleBox& yb, const Lines& L,
                       const std::vector<double>* alpha, const Smooth* tangents);  // below
bool fwd_pow(ForwardCtx& f, const Node& n) {
  const DoubleBox* xb = squared_base(f.rc, n);
  const DoubleBox* yb = box_of(f.rc, n.id);
  if (!xb || !yb || f.V[static_cast<size_t>(n.parents[0])].empty() || xb->lo.size() != yb->lo.size())
    return fwd_vertex(f, n);
  const Lines L = lines_with(&r_square, 16, false, *xb, *yb, f.rc.err.u, f.rc.err.tiny);
  return fwd_through_lines(f, n, *xb, *yb, L, nullptr, nullptr);
}

// x (.) c for a constant operand; x (.) y of two variables through McCormick's planes; else cut.
bool rule_mul_elem(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  int64_t other = -1;
  const auto cv = const_operand(c, n, other);
  if (cv && box_of(c, other)) return rule_scale(c, n, std::move(A), *cv, other, kU * 1.01);
  if (!cv)
    if (const std::optional<bool> done = rule_bilinear(c, n, A)) return *done;
  return c.concretize(n.id, A);
}

// ---- forward rules (alpha-CROWN).
bool fwd_vertex(ForwardCtx& f, const Node& n) {
  const DoubleBox* b = box_of(f.rc, n.id);
  const auto& A = f.A[static_cast<size_t>(n.id)];
  if (!b) return false;
  const int64_t m = f.rc.numel_of(n.id);
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(A.size());
  kernels::vertex_rows(A.data(), b->lo.data(), b->hi.data(), f.rc.st.rows, m, V.data());
  return true;
}

bool fwd_linear(ForwardCtx& f, const Node& n) {
  const auto* rec = find_record(f.rc.payload.linear, n.id);
  const auto& X = f.V[static_cast<size_t>(n.parents[0])];
  if (!rec || X.empty()) return false;
  const int64_t in = rec->in_dim, out = rec->out_dim;
  const int64_t rows = static_cast<int64_t>(X.size()) / in;
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.assign(static_cast<size_t>(rows * out), 0);
  const std::vector<char>* need = f.need ? &(*f.need)[static_cast<size_t>(n.id)] : nullptr;
  const int64_t lead = rows / std::max<int64_t>(f.rc.st.rows, 1);
  if (need && !need->empty() && lead == 1) {  // only the needed outputs (next to an optimised relu)
    std::vector<int64_t> outs;
    for (int64_t o = 0; o < out; ++o)
      if ((*need)[static_cast<size_t>(o)]) outs.push_back(o);
    const int64_t k = static_cast<int64_t>(outs.size());
    if (k * rows >= 64) {  // many: their weight rows gathered into one product
      std::vector<double> w(static_cast<size_t>(k * in)), y(static_cast<size_t>(rows * k));
      gather_weights(rec->weight.data(), out, in, &outs, nullptr, w.data());
      kernels::gemm_nt(rows, k, in, X.data(), w.data(), y.data());
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t t = 0; t < k; ++t) {
          const int64_t o = outs[static_cast<size_t>(t)];
          V[r * out + o] = (rec->bias.empty() ? 0.0 : rec->bias[static_cast<size_t>(o)]) + y[r * k + t];
        }
      return true;
    }
    for (int64_t o : outs) {
      const double* w = rec->weight.data() + o * in;
      const double b = rec->bias.empty() ? 0.0 : rec->bias[static_cast<size_t>(o)];
      for (int64_t r = 0; r < rows; ++r) V[r * out + o] = b + kernels::dot(w, X.data() + r * in, in);
    }
    return true;
  }
  kernels::gemm_nt(rows, out, in, X.data(), rec->weight.data(), V.data());
  if (!rec->bias.empty())
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t o = 0; o < out; ++o) V[r * out + o] += rec->bias[static_cast<size_t>(o)];
  return true;
}

bool fwd_add_sub(ForwardCtx& f, const Node& n, double sign) {
  const auto& X = f.V[static_cast<size_t>(n.parents[0])];
  const auto& Y = f.V[static_cast<size_t>(n.parents[1])];
  if (X.empty() || Y.empty()) return false;
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(X.size());
  for (size_t i = 0; i < X.size(); ++i) V[i] = X[i] + sign * Y[i];
  return true;
}
bool fwd_add(ForwardCtx& f, const Node& n) { return fwd_add_sub(f, n, 1); }
bool fwd_sub(ForwardCtx& f, const Node& n) { return fwd_add_sub(f, n, -1); }

bool fwd_scale(ForwardCtx& f, const Node& n, const std::vector<double>& v, int64_t other) {
  const auto& X = f.V[static_cast<size_t>(other)];
  if (X.empty()) return false;
  const size_t m = v.size();
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(X.size());
  for (size_t i = 0; i < X.size(); ++i) V[i] = X[i] * v[i % m];
  return true;
}
bool fwd_mul_elem(ForwardCtx& f, const Node& n) {
  int64_t other = -1;
  const auto cv = const_operand(f.rc, n, other);
  if (cv) return fwd_scale(f, n, *cv, other);
  const std::optional<bool> done = fwd_bilinear(f, n);
  return done ? *done : fwd_vertex(f, n);
}
bool fwd_div(ForwardCtx& f, const Node& n) {
  int64_t other = -1;
  const auto q = reciprocals(const_operand(f.rc, n, other, 1));
  return q ? fwd_scale(f, n, *q, other) : fwd_vertex(f, n);
}

// Every row's forward values through an elementwise op's lines (alpha: relu's slopes per row, or null;
// tangents: the op's tangent points per row in alpha_of, or null).
bool fwd_through_lines(ForwardCtx& f, const Node& n, const DoubleBox& xb, const DoubleBox& yb, const Lines& L,
                       const std::vector<double>* alpha, const Smooth* tangents) {
  const auto& X = f.V[static_cast<size_t>(n.parents[0])];
  const auto& A = f.A[static_cast<size_t>(n.id)];
  const int64_t m = f.rc.numel_of(n.id);
  // The parent's value is not computed where no gradient needs it (a dead relu's elements, slope
  // 0): read as 0 there; with none computed, every slope must be 0.
  if (X.empty())
    for (int64_t j = 0; j < m; ++j)
      if (L.la[j] != 0 || L.ua[j] != 0) return false;
  const std::vector<double>* t = tangents ? alpha_of(f.rc, n.id) : nullptr;
  if (t && t->size() != static_cast<size_t>(2 * f.rc.st.rows * m)) t = nullptr;
  Lines R = L;  // row r's lines (the tangent points' where the op has them)
  std::vector<TangentBox> E;
  if (t) E = tangent_boxes(*tangents, xb);
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(static_cast<size_t>(f.rc.st.rows * m));
  for (int64_t r = 0; r < f.rc.st.rows; ++r) {
    const double* al = alpha ? alpha->data() + r * m : nullptr;
    if (t) row_lines(*tangents, E, L, *t, r, m, R);
    for (int64_t j = 0; j < m; ++j) {
      const double lam = A[r * m + j];
      if (!L.ok[j]) {
        V[r * m + j] = lam >= 0 ? yb.lo[j] : yb.hi[j];
        continue;
      }
      const bool below = lam >= 0;
      const double la = below ? (al && L.open[j] ? al[j] : R.la[j]) : R.ua[j];
      V[r * m + j] = (la != 0 ? la * X[r * m + j] : 0.0) + (below ? R.lb[j] : R.ub[j]);
    }
  }
  return true;
}

template <Op O>
bool fwd_elementwise(ForwardCtx& f, const Node& n) {
  const DoubleBox* xb = box_of(f.rc, n.parents[0]);
  const DoubleBox* yb = box_of(f.rc, n.id);
  if (!xb || !yb) return false;
  Lines local;
  const Lines& L = lines_of<O>(f.rc, n.id, *xb, *yb, local);
  const std::vector<double>* alpha = splits_at_zero(O) ? alpha_of(f.rc, n.id) : nullptr;
  return fwd_through_lines(f, n, *xb, *yb, L, alpha, kTangents<O>);
}

bool fwd_matmul(ForwardCtx& f, const Node& n) {
  return matmul_is_affine(f.rc, n) ? fwd_affine(f, n) : fwd_vertex(f, n);
}

// Each op's rules, a table over ops.def: backward (nullptr: cut at its box) and forward (alpha-CROWN's
// relaxed network; a cut node gives its box's vertex). A relaxed elementwise op goes through its two lines,
// an affine op back through its VJP (crown_affine.h); the rows below have their own.
using CutsFn = bool (*)(const Graph&, const Payload<double>&, const Node&);
struct Rules {
  Rule back;
  ForwardRule fwd;
  CutsFn cuts = nullptr;  // null: the rule never cuts (crown_cuts)
};
bool constant_at(const Graph& g, const Payload<double>& p, int64_t id) { return const_behind(g, p, id) != nullptr; }
// mul_elem, matmul: a constant operand, or (elementwise) two variables of the node's shape.
bool cuts_product(const Graph& g, const Payload<double>& p, const Node& n) {
  if (constant_at(g, p, n.parents[0]) || constant_at(g, p, n.parents.back())) return false;
  for (int64_t q : n.parents)
    if (g.nodes[static_cast<size_t>(q)].out_shape != n.out_shape) return true;
  return !is_elementwise(n.op);
}
bool cuts_quotient(const Graph& g, const Payload<double>& p, const Node& n) { return !constant_at(g, p, n.parents.back()); }
bool cuts_pow(const Graph& g, const Payload<double>& p, const Node& n) { return !squares(g, p, n); }
template <Op O>
constexpr Rules default_rules() {
  if constexpr (Elementwise<O>::fn != nullptr) return {&rule_elementwise<O>, &fwd_elementwise<O>};
  else if constexpr (is_affine(O)) return {&rule_affine, &fwd_affine};
  else return {nullptr, &fwd_vertex};
}
template <Op O>
constexpr Rules kRules = default_rules<O>();
template <>
constexpr Rules kRules<Op::Input> = {&rule_cut, &fwd_vertex};
template <>
constexpr Rules kRules<Op::Const> = {&rule_cut, &fwd_vertex};
template <>
constexpr Rules kRules<Op::Linear> = {&rule_linear, &fwd_linear};
template <>
constexpr Rules kRules<Op::Add> = {&rule_add, &fwd_add};
template <>
constexpr Rules kRules<Op::Sub> = {&rule_sub, &fwd_sub};
template <>
constexpr Rules kRules<Op::MulElem> = {&rule_mul_elem, &fwd_mul_elem, &cuts_product};
template <>
constexpr Rules kRules<Op::Div> = {&rule_div, &fwd_div, &cuts_quotient};
template <>
constexpr Rules kRules<Op::Pow> = {&rule_pow, &fwd_pow, &cuts_pow};
template <>
constexpr Rules kRules<Op::Matmul> = {&rule_matmul, &fwd_matmul, &cuts_product};
template <>
constexpr Rules kRules<Op::MaxElem> = {&rule_max_elem, &fwd_max_elem};
template <>
constexpr Rules kRules<Op::MinElem> = {&rule_min_elem, &fwd_min_elem};
template <>
constexpr Rules kRules<Op::MaxPool> = {&rule_max_pool, &fwd_max_pool};
template <>
constexpr Rules kRules<Op::Conv> = {&rule_conv, &fwd_conv};  // one transposed conv over all rows

constexpr Rules kRuleTable[] = {
#define DENOTE_OP(name, ...) kRules<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
};
static_assert(std::size(kRuleTable) == kNumOps);

}  // namespace

const Smooth* tangent_smooth(Op op) {
  static constexpr const Smooth* kTable[] = {
#define DENOTE_OP(name, ...) kTangents<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kTable) == kNumOps);
  return kTable[static_cast<size_t>(op)];
}

bool element_lines_of(Op op, const DoubleBox& xb, const DoubleBox& yb, double u_eval, double tiny_eval, Lines& L) {
  static constexpr LinesFn kTable[] = {
#define DENOTE_OP(name, ...) lines_fn<Op::name>(),
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kTable) == kNumOps);
  const LinesFn f = kTable[static_cast<size_t>(op)];
  if (!f) return false;
  L = f(xb, yb, u_eval, tiny_eval);
  return true;
}

Rule crown_rule(Op op) { return kRuleTable[static_cast<size_t>(op)].back; }
bool crown_cuts(const Graph& g, const Payload<double>& payload, const Node& n) {
  const Rules& r = kRuleTable[static_cast<size_t>(n.op)];
  return r.back == nullptr || (r.cuts != nullptr && r.cuts(g, payload, n));
}
ForwardRule crown_forward(Op op) { return kRuleTable[static_cast<size_t>(op)].fwd; }

bool forward_reads_coefficients(Op op) {
  const ForwardRule f = crown_forward(op);
  return f != &fwd_linear && f != &fwd_add && f != &fwd_sub && f != &fwd_affine && f != &fwd_conv;
}

}  // namespace denote::crown
