// CROWN's rules for ops of two variables (src/bounds/crown_pair.h).
#include "bounds/crown_pair.h"

#include <algorithm>
#include <cmath>

#include "bounds/crown_relax.h"

namespace denote::crown {
namespace {

// ---- max_elem / min_elem of two variables: max(x, y) = y + relu(x - y), min(x, y) = x - relu(x - y),
// with relu's lines on d = x - y over [lx - uy, ux - ly]. For max, the side below uses
// beta x + (1 - beta) y (beta in {0, 1}: the adaptive choice); above, s x + (1 - s) y + t. min mirrored.
// Both are exact in floating point (no evaluation error).
struct PairLines {
  std::vector<double> bx_lo, by_lo, b_lo, bx_up, by_up, b_up, xm, ym;  // coefficient shares and intercepts
  std::vector<double> e;  // per element: slack per unit |lambda| (intercepts' and evaluation's rounding); empty: 0
};

// max(x, y) = y + relu(x - y); min(x, y) = x - relu(x - y).
template <bool Max>
bool pair_lines(const RuleCtx& c, const Node& n, PairLines& L) {
  const DoubleBox* xb = box_of(c, n.parents[0]);
  const DoubleBox* yb = box_of(c, n.parents[1]);
  if (!xb || !yb) return false;
  const size_t m = xb->lo.size();
  for (auto* v : {&L.bx_lo, &L.by_lo, &L.b_lo, &L.bx_up, &L.by_up, &L.b_up, &L.xm, &L.ym}) v->assign(m, 0.0);
  for (size_t j = 0; j < m; ++j) {
    const double dl = dn(xb->lo[j] - yb->hi[j]), du = up(xb->hi[j] - yb->lo[j]);
    if (!std::isfinite(dl) || !std::isfinite(du)) return false;
    const Relax r = relax_relu(dl, du);  // relu(d) >= r.lo.a d, relu(d) <= r.up.a d + r.up.b
    L.xm[j] = std::max(std::fabs(xb->lo[j]), std::fabs(xb->hi[j]));
    L.ym[j] = std::max(std::fabs(yb->lo[j]), std::fabs(yb->hi[j]));
    if constexpr (Max) {
      L.bx_lo[j] = r.lo.a, L.by_lo[j] = 1 - r.lo.a;  // y + a d
      L.bx_up[j] = r.up.a, L.by_up[j] = 1 - r.up.a, L.b_up[j] = r.up.b;
    } else {
      L.bx_lo[j] = 1 - r.up.a, L.by_lo[j] = r.up.a, L.b_lo[j] = -r.up.b;  // x - (s d + t)
      L.bx_up[j] = 1 - r.lo.a, L.by_up[j] = r.lo.a;                       // x - a d
    }
  }
  return true;
}

// x (.) y of two variables of the node's shape (McCormick's planes, auto_LiRPA's BoundMul choice):
// x y >= yl x + xl y - xl yl ((x - xl)(y - yl) >= 0) and x y <= yu x + xl y - xl yu ((x - xl)(y - yu) <= 0)
// on the parents' boxes, which hold the evaluated values; the intercepts' rounding (u |xl yl|, u |xl yu|)
// and the evaluation's (u_eval |x y| + tiny) per unit |lambda| in e. False where a parent has no finite
// box or a shape other than the node's (then cut).
bool bilinear_lines(const RuleCtx& c, const Node& n, PairLines& L) {
  const DoubleBox* xb = box_of(c, n.parents[0]);
  const DoubleBox* yb = box_of(c, n.parents[1]);
  const size_t m = static_cast<size_t>(c.numel_of(n.id));
  if (!xb || !yb || xb->lo.size() != m || yb->lo.size() != m) return false;
  for (auto* v : {&L.bx_lo, &L.by_lo, &L.b_lo, &L.bx_up, &L.by_up, &L.b_up, &L.xm, &L.ym, &L.e}) v->assign(m, 0.0);
  for (size_t j = 0; j < m; ++j) {
    const double xl = xb->lo[j], yl = yb->lo[j], yu = yb->hi[j];
    L.xm[j] = std::max(std::fabs(xl), std::fabs(xb->hi[j]));
    L.ym[j] = std::max(std::fabs(yl), std::fabs(yu));
    L.bx_lo[j] = yl, L.by_lo[j] = xl, L.b_lo[j] = -(xl * yl);
    L.bx_up[j] = yu, L.by_up[j] = xl, L.b_up[j] = -(xl * yu);
    L.e[j] = up(1.01 * kU * (std::fabs(L.b_lo[j]) + std::fabs(L.b_up[j])) + 1.01 * c.err.u * L.xm[j] * L.ym[j] + 2 * c.err.tiny);
    if (!std::isfinite(L.e[j]) || !std::isfinite(L.bx_up[j]) || !std::isfinite(L.by_lo[j])) return false;
  }
  return true;
}

// Every row through two-variable lines: the lower for a coefficient >= 0, else the upper one.
bool rule_pair_lines(RuleCtx& c, const Node& n, std::vector<double>&& A, const PairLines& L) {
  const int64_t m = c.numel_of(n.id);
  std::vector<double> ax(A.size()), ay(A.size());
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sum = 0, mag = 0, cnt = 0, slack = 0;
    for (int64_t j = 0; j < m; ++j) {
      const size_t i = static_cast<size_t>(r * m + j), k = static_cast<size_t>(j);
      const double lam = A[i];
      if (lam == 0) continue;
      const bool below = lam >= 0;
      // 1 - s is computed: its rounding is part of the coefficient's (one more u).
      ax[i] = lam * (below ? L.bx_lo[k] : L.bx_up[k]);
      ay[i] = lam * (below ? L.by_lo[k] : L.by_up[k]);
      const double b = below ? L.b_lo[k] : L.b_up[k];
      if (b != 0) {
        const double t = lam * b;
        sum += t, mag += std::fabs(t), cnt += 1;
      }
      slack += (std::fabs(ax[i]) * L.xm[k] + std::fabs(ay[i]) * L.ym[k]) * (kU * 2.02) +
               std::fabs(lam) * ((L.xm[k] + L.ym[k]) * kU * 1.01 + (L.e.empty() ? 0.0 : L.e[k]));
    }
    c.st.bias[r] += sum, c.st.mag[r] += mag, c.st.terms[r] += cnt;
    c.st.slack[r] += up_sum(slack, static_cast<double>(4 * m));
  }
  c.add_to(n.parents[0], std::move(ax));
  c.add_to(n.parents[1], std::move(ay));
  return c.st.failure.empty();
}

template <bool Max>
bool rule_pair(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  PairLines L;
  if (!pair_lines<Max>(c, n, L)) return c.concretize(n.id, A);
  return rule_pair_lines(c, n, std::move(A), L);
}

bool fwd_pair_lines(ForwardCtx& f, const Node& n, const PairLines& L) {
  const auto& X = f.V[static_cast<size_t>(n.parents[0])];
  const auto& Y = f.V[static_cast<size_t>(n.parents[1])];
  const auto& A = f.A[static_cast<size_t>(n.id)];
  if (X.empty() || Y.empty()) return false;
  const size_t m = L.xm.size();
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(X.size());
  for (size_t i = 0; i < X.size(); ++i) {
    const size_t k = i % m;
    const bool below = A[i] >= 0;
    V[i] = (below ? L.bx_lo[k] : L.bx_up[k]) * X[i] + (below ? L.by_lo[k] : L.by_up[k]) * Y[i] +
           (below ? L.b_lo[k] : L.b_up[k]);
  }
  return true;
}

template <bool Max>
bool fwd_pair(ForwardCtx& f, const Node& n) {
  PairLines L;
  return pair_lines<Max>(f.rc, n, L) && fwd_pair_lines(f, n, L);
}

}  // namespace

bool rule_max_elem(RuleCtx& c, const Node& n, std::vector<double>&& A) { return rule_pair<true>(c, n, std::move(A)); }
bool rule_min_elem(RuleCtx& c, const Node& n, std::vector<double>&& A) { return rule_pair<false>(c, n, std::move(A)); }
bool fwd_max_elem(ForwardCtx& f, const Node& n) { return fwd_pair<true>(f, n); }
bool fwd_min_elem(ForwardCtx& f, const Node& n) { return fwd_pair<false>(f, n); }

std::optional<bool> rule_bilinear(RuleCtx& c, const Node& n, std::vector<double>& A) {
  PairLines L;
  if (!bilinear_lines(c, n, L)) return std::nullopt;
  return rule_pair_lines(c, n, std::move(A), L);
}

std::optional<bool> fwd_bilinear(ForwardCtx& f, const Node& n) {
  PairLines L;
  if (!bilinear_lines(f.rc, n, L)) return std::nullopt;
  return fwd_pair_lines(f, n, L);
}

}  // namespace denote::crown
