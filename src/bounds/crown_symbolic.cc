// Forward linear bounds in the input (src/bounds/crown_symbolic.h; docs/NUMERICS.md, "Forward
// linear bounds"). Error arithmetic: kU, gamma, up/dn of src/bounds/crown_state.h.
#include "bounds/crown_symbolic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "eval/walk.h"
#include "kernels/gemm.h"

namespace denote::crown {
namespace {

// Per element j, rows lo[j * w ...] and up[j * w ...] of width w = n + 1: the coefficients of
// x_0..x_{n-1}, then the constant.
struct Sym {
  Shape shape;
  int64_t w = 0;
  std::vector<double> lo, up;
};

// The error of coefficients computed with `terms` roundings each, whose products with X sum to at
// most `mag` in absolute value: gamma(terms + 1) mag plus the underflows (each product's at most
// one smallest subnormal, times sum X). Constants computed once.
struct CoefErr {
  double g = 0, eta = 0;
  CoefErr() = default;
  CoefErr(double terms, double sum_x) : g(gamma(terms + 1)), eta(up((terms + 2) * kEta * sum_x)) {}
  double operator()(double mag) const { return up(g * mag + eta); }
};

struct SymCtx {
  Engine& eng;
  int64_t n = 0;  // input elements
  std::vector<double> xlo, xhi;
  std::vector<double> X;      // max |x_k| on the box, then 1 for the constant (w entries)
  double sum_x = 0;           // an upper bound of sum X (underflow terms)
  UpSum sum_w{1};             // up_sum of w terms
  CoefErr err1{}, err2{}, err_w{};  // one, two and w roundings (init_errors)
  // Buffers reused node to node: the linear rule's parent rows and sums, concretised bounds, indices.
  std::vector<double> R{}, S{}, acc{}, lo{}, hi{};
  std::vector<int64_t> all{};

  void init_errors() {
    sum_w = UpSum(static_cast<double>(X.size()));
    err1 = CoefErr(1, sum_x), err2 = CoefErr(2, sum_x), err_w = CoefErr(static_cast<double>(X.size()), sum_x);
  }
  const DoubleBox* box(int64_t id) const {
    const auto& b = eng.box(id);
    return b ? &*b : nullptr;
  }
  // sum_k |row_k| X_k, rounded up (w nonnegative terms).
  double abs_x(const double* row) const {
    double s = 0;
    for (size_t k = 0; k < X.size(); ++k) s += std::fabs(row[k]) * X[k];
    return sum_w(s);
  }
  // Element j's functions (ol, ou: w coefficients each) of an op whose coefficients are one rounding each
  // and whose evaluation rounds once: the constants moved out by the coefficients' error (err1) and the
  // evaluation's, 1.01 u_eval |y| (y in the node's box yb) plus an underflow.
  void widen_one_rounding(const DoubleBox& yb, size_t j, double* ol, double* ou) const {
    const size_t w = X.size();
    const double y = std::max(std::fabs(yb.lo[j]), std::fabs(yb.hi[j]));
    const double e_eval = up(1.01 * eng.err().u * y + eng.err().tiny);
    ol[w - 1] = dn(ol[w - 1] - up(err1(abs_x(ol)) + e_eval));
    ou[w - 1] = up(ou[w - 1] + up(err1(abs_x(ou)) + e_eval));
  }
};

using SymRule = bool (*)(SymCtx&, const Node&, std::span<const Sym* const>, Sym&);

bool sym_const(SymCtx& c, const Node& n, std::span<const Sym* const>, Sym& out) {
  const auto* rec = find_record(c.eng.payload.consts, n.id);
  const size_t m = static_cast<size_t>(numel(n.out_shape)), w = c.X.size();
  if (!rec || rec->values.size() != m) return false;
  out.lo.assign(m * w, 0.0);
  out.up.assign(m * w, 0.0);
  for (size_t j = 0; j < m; ++j) {
    const double v = rec->values[j];
    // The f32 evaluation reads the constant rounded to binary32.
    const double r = c.eng.err().f32 ? static_cast<double>(static_cast<float>(v)) : v;
    if (!std::isfinite(v) || !std::isfinite(r)) return false;
    out.lo[j * w + w - 1] = std::min(v, r);
    out.up[j * w + w - 1] = std::max(v, r);
  }
  return true;
}

// Reshape, flatten, detach: the same elements in the same order.
bool sym_same(SymCtx&, const Node&, std::span<const Sym* const> p, Sym& out) {
  out.lo = p[0]->lo;
  out.up = p[0]->up;
  return true;
}

// y = a + s b (s = +-1), equal shapes. Each coefficient is one rounding (u |result|); the
// evaluation's rounding is at most 1.01 u_eval |y| (y in the node's box) plus an underflow.
bool sym_add_sub(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out, double s) {
  const Sym& a = *p[0];
  const Sym& b = *p[1];
  const DoubleBox* yb = c.box(n.id);
  if (a.shape != b.shape || a.lo.size() != b.lo.size() || !yb) return false;
  const size_t w = c.X.size(), m = a.lo.size() / w;
  out.lo.resize(a.lo.size());
  out.up.resize(a.lo.size());
  for (size_t j = 0; j < m; ++j) {
    const double* bl = (s > 0 ? b.lo : b.up).data() + j * w;
    const double* bu = (s > 0 ? b.up : b.lo).data() + j * w;
    double* ol = out.lo.data() + j * w;
    double* ou = out.up.data() + j * w;
    for (size_t k = 0; k < w; ++k) {
      ol[k] = a.lo[j * w + k] + s * bl[k];
      ou[k] = a.up[j * w + k] + s * bu[k];
    }
    c.widen_one_rounding(*yb, j, ol, ou);
  }
  return true;
}
bool sym_add(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) { return sym_add_sub(c, n, p, out, 1); }
bool sym_sub(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  return sym_add_sub(c, n, p, out, -1);
}

// broadcast_to from one element (a normalisation's mean or std) or from as many elements (the same order).
bool sym_broadcast(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  const size_t w = c.X.size(), pm = p[0]->lo.size() / w, m = static_cast<size_t>(numel(n.out_shape));
  if (pm == m) return sym_same(c, n, p, out);
  if (pm != 1) return false;
  out.lo.resize(m * w);
  out.up.resize(m * w);
  for (size_t j = 0; j < m; ++j) {
    std::copy(p[0]->lo.begin(), p[0]->lo.begin() + static_cast<std::ptrdiff_t>(w), out.lo.begin() + j * w);
    std::copy(p[0]->up.begin(), p[0]->up.begin() + static_cast<std::ptrdiff_t>(w), out.up.begin() + j * w);
  }
  return true;
}

// Element j of s as one exact constant: its functions are one point v (no input coefficient), as a
// constant node's are where the arithmetic holds its value exactly.
bool exact_constant(const Sym& s, size_t j, size_t w, double& v) {
  const double* l = s.lo.data() + j * w;
  const double* u = s.up.data() + j * w;
  for (size_t k = 0; k + 1 < w; ++k)
    if (l[k] != 0 || u[k] != 0) return false;
  v = l[w - 1];
  return u[w - 1] == v && std::isfinite(v);
}

// y = a * k (either operand the constant) or a / k for an exact constant k per element, equal shapes
// (a normalisation's scale). Each coefficient is one rounding (u of its magnitude: err1); the
// evaluation's rounding is at most 1.01 u_eval |y| plus an underflow, as for add.
bool sym_scale(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out, bool divide) {
  const size_t w = c.X.size();
  const DoubleBox* yb = c.box(n.id);
  if (!yb || p[0]->lo.size() != p[1]->lo.size()) return false;
  const size_t m = p[0]->lo.size() / w;
  double k0 = 0;
  const bool swap = !divide && exact_constant(*p[0], 0, w, k0) && !exact_constant(*p[1], 0, w, k0);
  const Sym& a = swap ? *p[1] : *p[0];
  const Sym& ks = swap ? *p[0] : *p[1];
  out.lo.resize(a.lo.size());
  out.up.resize(a.lo.size());
  for (size_t j = 0; j < m; ++j) {
    double k = 0;
    if (!exact_constant(ks, j, w, k) || (divide && k == 0)) return false;
    const double* al = (k >= 0 ? a.lo : a.up).data() + j * w;  // a negative scale swaps the functions
    const double* au = (k >= 0 ? a.up : a.lo).data() + j * w;
    double* ol = out.lo.data() + j * w;
    double* ou = out.up.data() + j * w;
    for (size_t t = 0; t < w; ++t) {
      ol[t] = divide ? al[t] / k : al[t] * k;
      ou[t] = divide ? au[t] / k : au[t] * k;
      if (!std::isfinite(ol[t]) || !std::isfinite(ou[t])) return false;
    }
    c.widen_one_rounding(*yb, j, ol, ou);
  }
  return true;
}
bool sym_mul(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) { return sym_scale(c, n, p, out, false); }
bool sym_div(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) { return sym_scale(c, n, p, out, true); }

// y = W v + b on the last axis. Row o's lower function: sum_i W_oi (W_oi > 0 ? lo_i : up_i) + b_o;
// each coefficient is a sum of in + 1 rounded terms, so its error is at most
// gamma(in + 1) sum_i |W_oi| |coef_ik|; over the box that is gamma(in + 1) sum_i |W_oi| M_i with
// M_i = sum_k |coef_ik| X_k. The evaluation's error is src/bounds/crown_rules.cc's linear_scale:
// u_eval (in + 3) 1.01 (sum_i |W_oi| |v_i| + |b_o|) + 4 tiny, with |v_i| from the parent's box.
// One product computes both functions and the three error sums: parent element i's row is
// R_i = [lo_i | up_i | M(lo_i), M(up_i), |v_i|] for a positive weight and S_i = [up_i | lo_i |
// -M(up_i), -M(lo_i), -|v_i|] for a negative one (so the error sums add |W_oi| times them).
bool sym_linear(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  const auto* rec = find_record(c.eng.payload.linear, n.id);
  const DoubleBox* xb = c.box(n.parents[0]);
  const Sym& v = *p[0];
  const size_t w = c.X.size();
  if (!rec || !xb || rec->in_dim <= 0 || v.lo.size() != xb->lo.size() * w) return false;
  const size_t in = static_cast<size_t>(rec->in_dim), out_dim = static_cast<size_t>(rec->out_dim);
  if (rec->weight.size() != in * out_dim || xb->lo.size() % in != 0) return false;
  const size_t lead = xb->lo.size() / in, K = (2 * w + 3 + 3) / 4 * 4;
  std::vector<double>&R = c.R, &S = c.S, &acc = c.acc;
  R.assign(in * K, 0.0), S.assign(in * K, 0.0), acc.resize(out_dim * K);
  const double e_eval = c.eng.err().u * (static_cast<double>(in) + 3) * 1.01;
  const double terms = static_cast<double>(in) + 1;
  const UpSum sum_in(terms);
  const CoefErr err_in(terms, c.sum_x);
  out.lo.resize(lead * out_dim * w);
  out.up.resize(out.lo.size());
  for (size_t l = 0; l < lead; ++l) {
    for (size_t i = 0; i < in; ++i) {
      const size_t e = l * in + i;
      const double* lo = v.lo.data() + e * w;
      const double* up_ = v.up.data() + e * w;
      double* r = R.data() + i * K;
      double* s = S.data() + i * K;
      std::copy(lo, lo + w, r), std::copy(up_, up_ + w, r + w);
      std::copy(up_, up_ + w, s), std::copy(lo, lo + w, s + w);
      const double ml = c.abs_x(lo), mu = c.abs_x(up_);
      const double mag = std::max(std::fabs(xb->lo[e]), std::fabs(xb->hi[e]));
      r[2 * w] = ml, r[2 * w + 1] = mu, r[2 * w + 2] = mag;
      s[2 * w] = -mu, s[2 * w + 1] = -ml, s[2 * w + 2] = -mag;
    }
    kernels::sign_rows(rec->weight.data(), out_dim, in, R.data(), S.data(), K, acc.data());
    for (size_t o = 0; o < out_dim; ++o) {
      const double* a = acc.data() + o * K;
      const double b = rec->bias.empty() ? 0.0 : rec->bias[o];
      double* ol = out.lo.data() + (l * out_dim + o) * w;
      double* ou = out.up.data() + (l * out_dim + o) * w;
      std::copy(a, a + w, ol), std::copy(a + w, a + 2 * w, ou);
      ol[w - 1] += b;
      ou[w - 1] += b;
      const double el = a[2 * w] + std::fabs(b), eu = a[2 * w + 1] + std::fabs(b), ev = a[2 * w + 2] + std::fabs(b);
      const double eval = up(e_eval * sum_in(ev) + (static_cast<double>(in) + 4) * c.eng.err().tiny);
      ol[w - 1] = dn(ol[w - 1] - up(err_in(sum_in(el)) + eval));
      ou[w - 1] = up(ou[w - 1] + up(err_in(sum_in(eu)) + eval));
    }
  }
  return true;
}

// relu on the parent's box [l, u]: 0 (u <= 0), the identity (l >= 0), else the lower function
// times CROWN's adaptive slope (1 when u > -l, else 0) and the upper one through the chord:
// v <= s (z - l) with s >= u / (u - l) rounded up (a steeper line through (l, 0) stays above).
bool sym_relu(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  const DoubleBox* zb = c.box(n.parents[0]);
  const Sym& z = *p[0];
  const size_t w = c.X.size();
  if (!zb || z.lo.size() != zb->lo.size() * w) return false;
  out.lo.assign(z.lo.size(), 0.0);
  out.up.assign(z.lo.size(), 0.0);
  for (size_t j = 0; j < zb->lo.size(); ++j) {
    const double l = zb->lo[j], u = zb->hi[j];
    const double* zl = z.lo.data() + j * w;
    const double* zu = z.up.data() + j * w;
    double* ol = out.lo.data() + j * w;
    double* ou = out.up.data() + j * w;
    if (!(u > 0)) continue;
    if (l >= 0) {
      std::copy(zl, zl + w, ol);
      std::copy(zu, zu + w, ou);
      continue;
    }
    if (u > -l) std::copy(zl, zl + w, ol);
    const double s = up(u / dn(u - l));
    if (!std::isfinite(s)) return false;
    for (size_t k = 0; k + 1 < w; ++k) ou[k] = s * zu[k];
    const double a = s * zu[w - 1], b = s * l;
    ou[w - 1] = a - b;
    const double mag = up(c.abs_x(ou) + std::fabs(a) + std::fabs(b));
    ou[w - 1] = up(ou[w - 1] + c.err2(mag));
  }
  (void)n;
  return true;
}

// The forward rule of each op: same-order views pass the functions on; the rows below have their own;
// any other op has none (input: supplied; the rest: no functions).
template <Op O>
constexpr SymRule kSymRule = keeps_order(O) ? &sym_same : nullptr;
template <>
constexpr SymRule kSymRule<Op::Const> = &sym_const;
template <>
constexpr SymRule kSymRule<Op::Linear> = &sym_linear;
template <>
constexpr SymRule kSymRule<Op::Relu> = &sym_relu;
template <>
constexpr SymRule kSymRule<Op::Add> = &sym_add;
template <>
constexpr SymRule kSymRule<Op::Sub> = &sym_sub;
template <>
constexpr SymRule kSymRule<Op::MulElem> = &sym_mul;
template <>
constexpr SymRule kSymRule<Op::Div> = &sym_div;
template <>
constexpr SymRule kSymRule<Op::BroadcastTo> = &sym_broadcast;

SymRule symbolic_rule(Op op) {
  static constexpr SymRule kRules[] = {
#define DENOTE_OP(name, ...) kSymRule<Op::name>,
#include "denote/ir/ops.def"
#undef DENOTE_OP
  };
  static_assert(std::size(kRules) == kNumOps);
  return kRules[static_cast<size_t>(op)];
}

// Each element's functions at their minimum / maximum on the box, outward (w - 1 products and a
// sum of w terms: gamma(w + 1) of the magnitude).
void concretize(const SymCtx& c, const Sym& s, std::vector<double>& lo, std::vector<double>& hi) {
  const size_t w = c.X.size(), m = s.lo.size() / w;
  lo.resize(m);
  hi.resize(m);
  for (size_t j = 0; j < m; ++j) {
    const double* a = s.lo.data() + j * w;
    const double* b = s.up.data() + j * w;
    double sl = a[w - 1], su = b[w - 1], ml = std::fabs(sl), mu = std::fabs(su);
    for (size_t k = 0; k + 1 < w; ++k) {
      const double tl = a[k] >= 0 ? a[k] * c.xlo[k] : a[k] * c.xhi[k];
      const double tu = b[k] >= 0 ? b[k] * c.xhi[k] : b[k] * c.xlo[k];
      sl += tl, su += tu, ml += std::fabs(tl), mu += std::fabs(tu);
    }
    lo[j] = dn(sl - c.err_w(ml));
    hi[j] = up(su + c.err_w(mu));
  }
}

struct SymPass {
  using Value = Sym;
  SymCtx& c;
  static const Shape& shape_of(const Sym& s) { return s.shape; }
  static bool well_sized(const Sym& s) {
    return s.w > 0 && s.lo.size() == static_cast<size_t>(numel(s.shape) * s.w) && s.up.size() == s.lo.size();
  }
  int64_t bytes_per_element() const { return static_cast<int64_t>(16 * c.X.size()); }
  Result<Sym> visit(const Node& n, std::span<const Sym* const> parents, const Shape& out_shape, const Sym* supplied) {
    if (supplied) return *supplied;
    const SymRule rule = symbolic_rule(n.op);
    Sym out{out_shape, static_cast<int64_t>(c.X.size()), {}, {}};
    if (!rule || !rule(c, n, parents, out)) return error_status("no forward linear bound");
    if (!splits_at_zero(n.op)) {  // a relu's box follows its parent's (refresh_children)
      concretize(c, out, c.lo, c.hi);
      c.all.resize(c.lo.size());
      for (size_t j = 0; j < c.all.size(); ++j) c.all[j] = static_cast<int64_t>(j);
      c.eng.tighten(n.id, c.all, c.lo, c.hi);
      c.eng.refresh_children(n.id);
    }
    return out;
  }
  // A node without functions: it and its descendants keep their boxes.
  Status on_error(const Node& n, const Status& s) {
    (void)n;
    return s.code() == ErrorCode::kResource ? s : ok_status();
  }
};

}  // namespace

bool symbolic_bounds(Engine& eng) {
  const std::vector<int64_t> ids = eng.g.input_ids();
  if (ids.size() != 1 || !eng.box(ids[0])) return false;
  const DoubleBox& input = *eng.box(ids[0]);
  const int64_t n = static_cast<int64_t>(input.lo.size());
  if (n <= 0 || n > kMaxSymbolicInputs || input.hi.size() != input.lo.size()) return false;
  SymCtx c{eng, n, input.lo, input.hi, std::vector<double>(static_cast<size_t>(n) + 1, 1.0), 0};
  for (int64_t k = 0; k < n; ++k) {
    const size_t i = static_cast<size_t>(k);
    if (!std::isfinite(input.lo[i]) || !std::isfinite(input.hi[i])) return false;
    c.X[i] = std::max(std::fabs(input.lo[i]), std::fabs(input.hi[i]));
    c.sum_x += c.X[i];
  }
  c.sum_x = up(c.sum_x * 1.01 + 1);
  c.init_errors();
  const size_t w = static_cast<size_t>(n) + 1;
  Sym x{eng.g.nodes[static_cast<size_t>(ids[0])].out_shape, static_cast<int64_t>(w), {}, {}};
  x.lo.assign(static_cast<size_t>(n) * w, 0.0);
  for (size_t j = 0; j < static_cast<size_t>(n); ++j) x.lo[j * w + j] = 1;
  x.up = x.lo;
  SymPass pass{c};
  walk::Config cfg;
  cfg.layer = "IR bounds";
  cfg.structure_checked = true;
  cfg.value_noun = "forward bound";
  std::vector<Sym> table;
  std::vector<bool> present;
  return walk::forward(eng.g, pass, std::span<const Sym>(&x, 1), cfg, table, present).ok();
}

}  // namespace denote::crown
