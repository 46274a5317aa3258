// Forward linear bounds in the input (src/bounds/crown_symbolic.h; docs/NUMERICS.md, "Forward
// linear bounds"). Error arithmetic: kU, gamma, up/dn of src/bounds/crown_state.h.
#include "bounds/crown_symbolic.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "bounds/crown_conv.h"
#include "bounds/storage_map.h"
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
  bool keep = false;       // the functions go to the engine (EngineSetup::forward_cut_work)
  size_t keep_bytes = 0;   // what they may still take

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

// Storage-only ops (permute, transpose, broadcast_to, gather, concat, ...): output element j's
// functions are those of the parent element the op reads (src/bounds/storage_map.h); no rounding.
bool sym_move(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  std::vector<Shape> shapes;
  for (const Sym* s : p) shapes.push_back(s->shape);
  auto map = bounds::storage_map(n, shapes, out.shape);
  if (!map.ok()) return false;
  const size_t w = c.X.size(), m = map->elem.size();
  out.lo.resize(m * w);
  out.up.resize(m * w);
  for (size_t j = 0; j < m; ++j) {
    const Sym& s = *p[map->parent[j]];
    const auto e = static_cast<size_t>(map->elem[j]);
    if ((e + 1) * w > s.lo.size()) return false;
    std::copy_n(s.lo.data() + e * w, w, out.lo.data() + j * w);
    std::copy_n(s.up.data() + e * w, w, out.up.data() + j * w);
  }
  return true;
}

// batch_norm_eval: y = k v + b per channel, k = gamma / sqrt(var + eps), b = beta - mean k, both
// irrational in general: computed in binary64 (k to 4 roundings, so |k - k~| <= dk = 2^-50 |k~|; b
// to two more, |b - b~| <= db), the functions are k~ (lo or up, by k's sign) + b~, and the constant
// moves out by dk |v| + db (|v| from the parent's box), the two roundings of each coefficient
// (err2) and the evaluation's error, u_eval 12 (|k| (|v| + |mean|) + |beta|) plus underflows (the
// evaluation's sub, sqrt, div, mul, add, each reading a parameter rounded to its format).
bool sym_batch_norm(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  const auto* rec = find_record(c.eng.payload.batch_norm, n.id);
  const auto* attrs = std::get_if<BatchNormAttrs>(&n.attrs);
  const DoubleBox* vb = c.box(n.parents[0]);
  const Sym& v = *p[0];
  const size_t w = c.X.size();
  const int64_t rank = static_cast<int64_t>(v.shape.size());
  if (!rec || !attrs || !vb || v.lo.size() != vb->lo.size() * w || rank == 0) return false;
  const int64_t axis = attrs->channel_axis < 0 ? attrs->channel_axis + rank : attrs->channel_axis;
  const auto channels = static_cast<size_t>(attrs->channels);
  if (axis < 0 || axis >= rank || v.shape[static_cast<size_t>(axis)] != attrs->channels || rec->gamma.size() != channels ||
      rec->beta.size() != channels || rec->mean.size() != channels || rec->var.size() != channels)
    return false;
  int64_t stride = 1;
  for (int64_t a = axis + 1; a < rank; ++a) stride *= v.shape[static_cast<size_t>(a)];
  const double e_eval = up(12 * 1.01 * c.eng.err().u);
  out.lo.resize(v.lo.size());
  out.up.resize(v.lo.size());
  for (size_t j = 0; j < vb->lo.size(); ++j) {
    const size_t ch = (j / static_cast<size_t>(stride)) % channels;
    const double k = rec->gamma[ch] / std::sqrt(rec->var[ch] + rec->eps), mean = rec->mean[ch], beta = rec->beta[ch];
    const double b = beta - mean * k, dk = std::fabs(k) * 0x1p-50;
    const double db = up(std::fabs(mean) * dk + 0x1p-51 * (std::fabs(mean * k) + std::fabs(beta)) + 4 * kEta);
    if (!std::isfinite(k) || !std::isfinite(b) || !std::isfinite(db)) return false;
    const double* vl = (k >= 0 ? v.lo : v.up).data() + j * w;
    const double* vu = (k >= 0 ? v.up : v.lo).data() + j * w;
    double* ol = out.lo.data() + j * w;
    double* ou = out.up.data() + j * w;
    for (size_t t = 0; t < w; ++t) ol[t] = k * vl[t], ou[t] = k * vu[t];
    ol[w - 1] += b, ou[w - 1] += b;
    const double vmax = std::max(std::fabs(vb->lo[j]), std::fabs(vb->hi[j]));
    const double mag = up(std::fabs(k) * 1.01 * (vmax + std::fabs(mean)) + std::fabs(beta));
    const double move = up(dk * vmax + db + e_eval * mag + 16 * c.eng.err().tiny);
    ol[w - 1] = dn(ol[w - 1] - up(c.err2(c.abs_x(ol)) + move));
    ou[w - 1] = up(ou[w - 1] + up(c.err2(c.abs_x(ou)) + move));
  }
  return true;
}

// conv with point weights W (n = group_in k_vol products per output, plus the bias), on the conv
// plan's batched product (src/bounds/crown_conv.h). Parent element i's functions in midpoint-radius
// form, mid_i = (lo_i + up_i) / 2 and rad_i = (up_i - lo_i) / 2 (>= 0 on the box), so output o's
// lower function is W mid - |W| rad and its upper W mid + |W| rad: the sign split of the dense rule
// in two products of w columns (W on the mids, |W| on the radii and two error columns) instead of
// two of 2 w + 3. Errors, moved into the constant outward, over E_i = sum_k (|mid_ik| + |rad_ik|) X_k:
// the mids' and radii's rounding (1.01 u E_i per parent element, through |W|), the two products'
// (gamma(n + 1) |W| E, their underflows 2 (n + 2) eta sum X), the final difference and bias add
// (err2 of the row) and the evaluation's, as the dense rule's: u_eval (n_o + 2) 1.01 (|W| |v| + |b|),
// n_o the output's products that can be nonzero plus one (conv_live_fan).
bool sym_conv(SymCtx& c, const Node& n, std::span<const Sym* const> p, Sym& out) {
  ConvPlans* plans = c.eng.conv_plans();
  const ConvBackward* cb = plans ? plans->get(c.eng.g, c.eng.payload, n) : nullptr;
  const DoubleBox* vb = c.box(n.parents[0]);
  const Sym& v = *p[0];
  const size_t w = c.X.size();
  if (!cb || !vb || v.lo.size() != vb->lo.size() * w) return false;
  const size_t pm = vb->lo.size(), per_in = static_cast<size_t>(cb->cin * cb->in_vol);
  const size_t per_out = static_cast<size_t>(cb->cout * cb->out_vol);
  if (per_in == 0 || pm % per_in != 0) return false;
  const size_t lead = pm / per_in, m = lead * per_out;
  // Batch-major columns: mids [w][pm]; radii, E and |v| [w + 2][pm].
  std::vector<double> mid(w * pm), rad((w + 2) * pm), om(w * m), orad((w + 2) * m);
  for (size_t i = 0; i < pm; ++i) {
    const double* l = v.lo.data() + i * w;
    const double* u = v.up.data() + i * w;
    double e = 0;
    for (size_t k = 0; k < w; ++k) {
      const double a = (l[k] + u[k]) * 0.5, r = (u[k] - l[k]) * 0.5;
      mid[k * pm + i] = a, rad[k * pm + i] = r;
      e += (std::fabs(a) + std::fabs(r)) * c.X[k];
    }
    rad[w * pm + i] = c.sum_w(e) * 1.01 + 0x1p-1021 * c.sum_x;  // g_coef times it covers an underflow too
    rad[(w + 1) * pm + i] = std::max(std::fabs(vb->lo[i]), std::fabs(vb->hi[i]));
  }
  conv_forward(*cb, mid.data(), static_cast<int64_t>(w * lead), om.data());
  conv_forward(*cb, rad.data(), static_cast<int64_t>((w + 2) * lead), orad.data(), nullptr, /*magnitudes=*/true);
  const double terms = static_cast<double>(cb->group_in * cb->k_vol) + 1;
  const UpSum sum_n(terms);
  const double g_coef = up(gamma(terms + 1) + 1.01 * kU), eta = up(2 * (terms + 2) * kEta * c.sum_x);
  // The evaluation rounds each output as often as it has products that can be nonzero, plus the bias
  // (conv_live_fan: zero padding, dead relus and the zeros an upsampling inserts round nothing).
  const std::vector<double> fan =
      conv_live_fan(*cb, std::vector<double>(rad.begin() + static_cast<std::ptrdiff_t>((w + 1) * pm), rad.end()));
  if (fan.size() != m) return false;
  out.lo.resize(m * w);
  out.up.resize(m * w);
  for (size_t o = 0; o < m; ++o) {
    const double b = cb->bias[(o / static_cast<size_t>(cb->out_vol)) % static_cast<size_t>(cb->cout)];
    double* ol = out.lo.data() + o * w;
    double* ou = out.up.data() + o * w;
    for (size_t k = 0; k < w; ++k) ol[k] = om[k * m + o] - orad[k * m + o], ou[k] = om[k * m + o] + orad[k * m + o];
    ol[w - 1] += b, ou[w - 1] += b;
    const double coef = up(g_coef * sum_n(orad[w * m + o]) + eta);
    const double e_eval = c.eng.err().u * (fan[o] + 2) * 1.01, e_tiny = (fan[o] + 3) * c.eng.err().tiny;
    const double eval = up(e_eval * sum_n(orad[(w + 1) * m + o] + std::fabs(b)) + e_tiny);
    ol[w - 1] = dn(ol[w - 1] - up(coef + eval + c.err2(c.abs_x(ol))));
    ou[w - 1] = up(ou[w - 1] + up(coef + eval + c.err2(c.abs_x(ou))));
    if (!std::isfinite(ol[w - 1]) || !std::isfinite(ou[w - 1])) return false;
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
constexpr SymRule kSymRule = keeps_order(O)                                                 ? &sym_same
                             : has_flag(O, kFlagStorageOnly) && !has_flag(O, kFlagPayload) ? &sym_move
                                                                                           : nullptr;
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
constexpr SymRule kSymRule<Op::Conv> = &sym_conv;
template <>
constexpr SymRule kSymRule<Op::BatchNormEval> = &sym_batch_norm;

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
    if (c.keep && !n.parents.empty()) keep(n.id, out);
    if (!splits_at_zero(n.op)) {  // a relu's box follows its parent's (refresh_children)
      concretize(c, out, c.lo, c.hi);
      c.all.resize(c.lo.size());
      for (size_t j = 0; j < c.all.size(); ++j) c.all[j] = static_cast<int64_t>(j);
      c.eng.tighten(n.id, c.all, c.lo, c.hi);
      c.eng.refresh_children(n.id);
    }
    return out;
  }
  // Node id's functions for the passes to stop at, while they fit a quarter of the memory budget.
  void keep(int64_t id, const Sym& s) {
    const size_t w = c.X.size(), m = s.lo.size() / w, bytes = (2 * w + 1) * m * sizeof(double);
    if (bytes > c.keep_bytes) return;
    c.keep_bytes -= bytes;
    ForwardFns f{s.lo, s.up, std::vector<double>(m)};
    for (size_t j = 0; j < m; ++j) f.mag[j] = std::max(c.abs_x(s.lo.data() + j * w), c.abs_x(s.up.data() + j * w));
    c.eng.keep_forward(id, std::move(f));
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
  if (eng.setup().forward_cut_work > 0) {
    c.keep = true;
    c.keep_bytes = static_cast<size_t>(std::min<int64_t>(eng.setup().max_bytes / 4, int64_t{1} << 40));
    eng.set_forward_input(ForwardInput{c.xlo, c.xhi, c.X});
  }
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
