// alpha-CROWN's optimiser (src/bounds/crown_engine.h): projected Adam ascent on the relu lower
// slopes, one slope per (row, neuron) of every unstable relu the start node depends on, and on the
// tangent points of the S-shaped ops (tanh, sigmoid, erf: src/bounds/crown_tangents.h). The
// gradient of a row's bound is exact where the pass's choices are locally constant: with the
// lines fixed, the bound is the relaxed network's value at the box vertex that attains it, so
// d bound_r / d alpha_{r,j} = A_relu[r, j] * x_j, x_j the relu input of the relaxed network at
// that point (crown_forward's rules), when row r uses the lower line at j (A >= 0), else 0.
// Every evaluated bound is sound (any slope in [0, 1] is a valid lower line), and the best per
// row is kept, so the result is never looser than CROWN's.
#include <algorithm>
#include <span>
#include <chrono>
#include <cmath>
#include <optional>

#include "bounds/crown_engine.h"
#include "denote/base/deadline.h"
#include "bounds/crown_relax.h"
#include "bounds/crown_tangents.h"
#include "eval/walk.h"

namespace denote {
namespace {

// Rows [first, first + count) of a rows x n array (n = size / rows), or an empty range when it is not one.
std::span<const double> row_range(const std::vector<double>& a, size_t rows, size_t first, size_t count) {
  if (rows == 0 || a.empty() || a.size() % rows != 0 || first + count > rows) return {};
  const size_t n = a.size() / rows;
  return std::span<const double>(a).subspan(first * n, count * n);
}

}  // namespace
}  // namespace denote

namespace denote::crown {

namespace {

// Which node values the gradients read: a relu with slopes reads its parent at the unstable
// elements; elementwise ops pass their needs to their parent element by element, every other op
// needs all of its parents (a relu not the elements where it is dead). need[n] empty: nothing (n's value is not
// computed); all ones: all; crown_forward's linear rule computes only the marked outputs.
std::vector<std::vector<char>> needed_values(const Graph& g, int64_t start,
                                             const std::vector<std::vector<double>>& alpha,
                                             const std::vector<std::optional<DoubleBox>>& boxes,
                                             const std::vector<BetaTerm>& beta_terms) {
  std::vector<std::vector<char>> need(g.nodes.size());
  auto mark = [&](int64_t id) -> std::vector<char>& {
    auto& v = need[static_cast<size_t>(id)];
    if (v.empty()) v.assign(static_cast<size_t>(numel(g.nodes[static_cast<size_t>(id)].out_shape)), 0);
    return v;
  };
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    if (alpha[static_cast<size_t>(n.id)].empty()) return ok_status();
    const auto& xb = *boxes[static_cast<size_t>(n.parents[0])];
    auto& v = mark(n.parents[0]);
    const bool every = !splits_at_zero(n.op);  // tangent points: every element has some
    for (size_t j = 0; j < v.size(); ++j)
      if (every || (xb.lo[j] < 0 && xb.hi[j] > 0)) v[j] = 1;
    return ok_status();
  });
  for (const auto& bt : beta_terms) mark(bt.node)[static_cast<size_t>(bt.elem)] = 1;
  (void)walk::reverse(g, "IR bounds", [&](const Node& n) {
    const auto& v = need[static_cast<size_t>(n.id)];
    if (n.id > start || v.empty() || std::find(v.begin(), v.end(), 1) == v.end()) return ok_status();
    for (int64_t p : n.parents) {
      auto& pv = mark(p);
      if (is_elementwise(n.op) && n.parents.size() == 1 && pv.size() == v.size()) {
        // A dead relu's lines have slope 0: its value does not read the parent's.
        const DoubleBox* xb =
            splits_at_zero(n.op) && boxes[static_cast<size_t>(p)] ? &*boxes[static_cast<size_t>(p)] : nullptr;
        for (size_t j = 0; j < v.size(); ++j) pv[j] = pv[j] || (v[j] && !(xb && xb->hi[j] <= 0));
      } else {
        std::fill(pv.begin(), pv.end(), 1);
      }
    }
    return ok_status();
  });
  return need;
}

// Whether the steps have stalled (Engine::optimise's stall): appends this step's summed best bound to
// sums, then compares the last two steps' gain with the gain since the first, from the fourth step on.
// An infinite row (a bound that failed) never stalls the steps.
bool stalled(const std::vector<double>& best, double stall, std::vector<double>& sums) {
  if (stall <= 0) return false;
  double s = 0;
  for (double b : best) s += b;
  sums.push_back(s);
  const size_t t = sums.size();
  if (t < 4 || !std::isfinite(s) || !std::isfinite(sums[0])) return false;
  return sums[t - 1] - sums[t - 3] <= stall * (sums[t - 1] - sums[0]);
}

bool above(const std::vector<double>& best, const std::vector<double>* stop) {
  if (!stop) return false;
  for (size_t r = 0; r < stop->size() && r < best.size(); ++r)
    if (best[r] > (*stop)[r]) return true;
  return false;
}

// C's nonzero columns (ascending) and, when every row is a signed unit vector on them, its unit rows:
// found once for all of a run's passes (intermediate bounds' +-e_j take W's rows exactly).
struct StartRows {
  std::vector<int64_t> support;
  std::optional<UnitRows> unit;
  bool ok = false;  // C is rows x cols
};
StartRows start_rows(const std::vector<double>& C, int64_t rows) {
  StartRows s;
  const int64_t cols = rows > 0 ? static_cast<int64_t>(C.size()) / rows : 0;
  s.ok = static_cast<int64_t>(C.size()) == rows * cols;
  if (!s.ok) return s;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t r = 0; r < rows; ++r)
      if (C[static_cast<size_t>(r * cols + j)] != 0) {
        s.support.push_back(j);
        break;
      }
  s.unit = find_unit_rows(C, rows, s.support);
  return s;
}

// The slopes of every relu the start depends on (with a parent box): rows x m, each row CROWN's
// adaptive choice, and zero Adam moments; the tangent points of every S-shaped op likewise
// (crown_tangents.h); whether some relu is unstable or some tangent point exists (has a parameter).
bool init_slopes(const Graph& g, const std::vector<std::optional<DoubleBox>>& boxes, int64_t start, int64_t rows,
                 std::vector<std::vector<double>>& alpha, std::vector<Adam>& adam) {
  const std::vector<bool> anc = walk::ancestors(g, start);
  bool any = false;
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    if (!anc[static_cast<size_t>(n.id)] || n.id == start || n.parents.empty()) return ok_status();
    const auto& xb = boxes[static_cast<size_t>(n.parents[0])];
    if (!xb) return ok_status();
    if (tangent_smooth(n.op)) {
      auto& t = alpha[static_cast<size_t>(n.id)];
      init_tangents(*tangent_smooth(n.op), *xb, rows, t);
      any = any || std::any_of(t.begin(), t.end(), [](double d) { return !std::isnan(d); });
      adam[static_cast<size_t>(n.id)].m.assign(t.size(), 0.0);
      adam[static_cast<size_t>(n.id)].v.assign(t.size(), 0.0);
      return ok_status();
    }
    if (!splits_at_zero(n.op)) return ok_status();
    const size_t m = xb->lo.size();
    auto& a = alpha[static_cast<size_t>(n.id)];
    a.assign(static_cast<size_t>(rows) * m, 0.0);
    for (size_t j = 0; j < m; ++j) {
      a[j] = relax_relu(xb->lo[j], xb->hi[j]).lo.a;
      any = any || (xb->lo[j] < 0 && xb->hi[j] > 0);
    }
    for (int64_t r = 1; r < rows; ++r) std::copy_n(a.begin(), m, a.begin() + static_cast<std::ptrdiff_t>(r * m));
    adam[static_cast<size_t>(n.id)].m.assign(a.size(), 0.0);
    adam[static_cast<size_t>(n.id)].v.assign(a.size(), 0.0);
    return ok_status();
  });
  return any;
}

// One projected Adam step on a relu's slopes over its unstable elements: d bound / d alpha = A x where
// the row uses the lower line (A >= 0), else 0.
void adam_slopes(std::vector<double>& a, Adam& ad, const std::vector<double>& A, const std::vector<double>& X,
                 const DoubleBox& xb, int64_t rows, double lr, double c1, double c2) {
  const double b1 = 0.9, b2 = 0.999;
  const size_t m = xb.lo.size();
  std::vector<size_t> open;  // the unstable elements: the only ones with a slope to optimise
  for (size_t j = 0; j < m; ++j)
    if (xb.lo[j] < 0 && xb.hi[j] > 0) open.push_back(j);
  for (size_t row = 0; row < static_cast<size_t>(rows); ++row)
    for (size_t j : open) {
      const size_t i = row * m + j;
      const double grad = A[i] >= 0 ? A[i] * X[i] : 0.0;
      ad.m[i] = b1 * ad.m[i] + (1 - b1) * grad;
      ad.v[i] = b2 * ad.v[i] + (1 - b2) * grad * grad;
      const double step = lr * (ad.m[i] / c1) / (std::sqrt(ad.v[i] / c2) + 1e-8);
      a[i] = std::clamp(a[i] + step, 0.0, 1.0);
    }
}

}  // namespace

// The relaxed network at each row's attaining point, rows at once, into V: the nodes the pass
// reached and a gradient needs, except those the pass made itself (the fused first layer).
bool Engine::forward_values(int64_t start, int64_t rows, const std::vector<std::vector<double>>& alpha,
                            const PassResult& pr, const std::vector<std::vector<char>>& need,
                            std::vector<std::vector<double>>& V) const {
  PassRows st;
  st.rows = rows;
  const std::vector<const DoubleBox*> box = ptrs();
  RuleCtx rc{g, payload, box, setup_.err, st, &alpha};
  rc.lines = &line_cache_;
  rc.conv_plans = conv_plans();
  ForwardCtx fc{rc, pr.A, V, &need};
  bool ok = true;
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    const auto& nd = need[static_cast<size_t>(n.id)];
    if (!ok || n.id > start || !pr.reached[static_cast<size_t>(n.id)] || !V[static_cast<size_t>(n.id)].empty() ||
        nd.empty() || std::find(nd.begin(), nd.end(), 1) == nd.end())
      return ok_status();  // past the start, not reached, made by the pass, or not needed
    ok = crown_forward(n.op)(fc, n);
    return ok_status();
  });
  return ok;
}

namespace {

void copy_row(const std::vector<double>& from, std::vector<double>& to, size_t r, size_t len) {
  std::copy(from.begin() + static_cast<std::ptrdiff_t>(r * len), from.begin() + static_cast<std::ptrdiff_t>((r + 1) * len),
            to.begin() + static_cast<std::ptrdiff_t>(r * len));
}

// A pass's rows that beat the best so far, with their input coefficients (Engine::optimise's input_coef;
// nothing from a pass cut at a node other than the input: its coefficients are not the whole function)
// and their coefficients at the relus' input nodes (mu).
void keep_best_rows(const Graph& g, const PassResult& pr, int64_t x_id, int64_t rows, std::vector<double>& best,
                    std::vector<double>* coef, KeptMultipliers* mu) {
  static const std::vector<double> none;
  const std::vector<double>& a = coef && pr.A.size() > static_cast<size_t>(x_id) ? pr.A[static_cast<size_t>(x_id)] : none;
  if (coef && (pr.cut || a.size() != coef->size())) return;
  const size_t nx = coef && rows > 0 ? coef->size() / static_cast<size_t>(rows) : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    if (!(pr.lower[ri] > best[ri])) continue;
    best[ri] = pr.lower[ri];
    if (coef) copy_row(a, *coef, ri, nx);
    if (!mu) continue;
    mu->rows[ri] = 1;
    for (size_t p = 0; p < mu->at.size() && p < pr.A.size(); ++p) {
      if (!mu->relu_input[p]) continue;
      const size_t len = static_cast<size_t>(numel(g.nodes[p].out_shape));
      if (pr.A[p].size() != static_cast<size_t>(rows) * len) continue;
      if (mu->at[p].size() != pr.A[p].size()) mu->at[p].assign(pr.A[p].size(), 0.0);
      copy_row(pr.A[p], mu->at[p], ri, len);
    }
  }
}

// Sizes mu for `rows` rows and marks each relu's input node in it and in the pass's record mask.
void keep_relu_inputs(const Graph& g, std::vector<char>& rec, KeptMultipliers& mu, int64_t rows) {
  mu.at.assign(g.nodes.size(), {});
  mu.rows.assign(static_cast<size_t>(rows), 0);
  mu.relu_input.assign(g.nodes.size(), 0);
  mark_relu_inputs(g, mu.relu_input);
  mark_relu_inputs(g, rec);
}

// Row r's slopes and multipliers copied into `kept` where this step's bound of row r beats the best so far.
void keep_improved_rows(const std::vector<double>& lower, const std::vector<double>& best, int64_t rows,
                        const std::vector<std::vector<double>>& alpha, const std::vector<double>& beta, SlopeState& kept) {
  const auto R = static_cast<size_t>(rows);
  for (size_t r = 0; r < R && r < lower.size() && r < best.size(); ++r) {
    if (!(lower[r] > best[r])) continue;
    auto copy_row = [&](const std::vector<double>& from, std::vector<double>& to) {
      const std::span<const double> row = row_range(from, R, r, 1);
      if (!row.empty() && to.size() == from.size())
        std::copy(row.begin(), row.end(), to.begin() + (row.data() - from.data()));
    };
    for (size_t id = 0; id < alpha.size(); ++id) copy_row(alpha[id], kept.alpha[id]);
    copy_row(beta, kept.beta);
  }
}

}  // namespace

std::vector<double> Engine::optimise(int64_t start, const std::vector<double>& C, int64_t rows,
                                     std::vector<double> best, const CrownOptions& o,
                                     const std::vector<double>* stop_above,
                                     std::vector<std::vector<double>>* kept_scales, std::vector<double>* input_coef,
                                     KeptMultipliers* mu, SlopeState* last, double stall) {
  std::vector<std::vector<double>> alpha(g.nodes.size());
  std::vector<Adam> adam(g.nodes.size());
  const bool any = init_slopes(g, boxes_, start, rows, alpha, adam);
  const size_t terms = setup_.beta_terms.size();
  std::vector<double> beta(static_cast<size_t>(rows) * terms, 0.0);
  if (setup_.warm) warm_start(start, rows, alpha, beta);
  // The slopes and multipliers of each row's best step so far (for `last`: a child starts at its parent's
  // best, not at the last step, which a step of 0.5 can leave below it).
  SlopeState kept;
  if (last) kept.alpha = alpha, kept.beta = beta;
  Adam badam{std::vector<double>(beta.size(), 0.0), std::vector<double>(beta.size(), 0.0)};
  if (!any && terms == 0) {  // nothing to optimise: the start is the state
    if (last) keep_slopes(start, rows, alpha, beta, *last);
    return best;
  }
  const std::vector<std::vector<char>> need = needed_values(g, start, alpha, boxes_, setup_.beta_terms);
  const double b1 = 0.9, b2 = 0.999;
  double lr = o.alpha_lr;
  std::vector<std::vector<double>> own(kept_scales ? 0 : g.nodes.size());  // the boxes stay fixed in this loop
  std::vector<std::vector<double>>& scales = kept_scales ? *kept_scales : own;
  std::vector<std::vector<double>> V(g.nodes.size());  // kept across steps: the buffers are reused
  PassOptions po;
  po.alpha = &alpha;
  po.record = true;
  po.record_only = &forward_reads_;  // the coefficients the gradients read
  po.beta = terms ? &beta : nullptr;
  po.scales = &scales;
  const StartRows sr = start_rows(C, rows);
  if (sr.ok) {
    po.start_support = &sr.support;
    po.unit_rows = sr.unit ? &*sr.unit : nullptr;
  }
  const std::vector<int64_t> inputs = g.input_ids();
  const int64_t x_id = inputs.size() == 1 ? inputs[0] : -1;
  std::vector<char> record_only = forward_reads_;
  if (input_coef || mu) {  // the input's (relus' inputs') coefficients stored by every pass: no fused first layer
    if (input_coef && x_id < 0) return best;
    if (input_coef) record_only[static_cast<size_t>(x_id)] = 1;
    if (mu) keep_relu_inputs(g, record_only, *mu, rows);
    po.record_only = &record_only;
  } else if (setup_.fuse_forward) {  // a fused first layer makes its forward values in the pass
    po.vertex_need = &need;
    po.vertex_values = &V;
  }
  PassResult pr;
  std::vector<double> sums;  // per step: the rows' summed best bound (stall)
  // A step is not started past the deadline, nor where the last one would end past it (a step on a
  // large node's rows takes tens of seconds: TinyYOLO's ran 68 s past a 120-s timeout): the best
  // bounds so far hold.
  std::chrono::steady_clock::duration step{};
  for (int t = 0; t < o.alpha_iters; ++t) {
    if (past(o.deadline) || (t > 0 && past(o.deadline - step))) break;
    const auto started = std::chrono::steady_clock::now();
    ++stats_.alpha_steps;
    recycle(pr.A);
    for (auto& v : V) v.clear();
    pr = pass(start, C, rows, po);
    if (!pr.failure.empty()) break;
    if (last) keep_improved_rows(pr.lower, best, rows, alpha, beta, kept);
    if (input_coef || mu) {
      keep_best_rows(g, pr, x_id, rows, best, input_coef, mu);
    } else {
      for (int64_t r = 0; r < rows; ++r)
        best[static_cast<size_t>(r)] = std::max(best[static_cast<size_t>(r)], pr.lower[static_cast<size_t>(r)]);
    }
    step = std::chrono::steady_clock::now() - started;
    if (t + 1 == o.alpha_iters || above(best, stop_above) || stalled(best, stall, sums)) break;
    if (!forward_values(start, rows, alpha, pr, need, V)) break;
    const double c1 = 1 - std::pow(b1, t + 1), c2 = 1 - std::pow(b2, t + 1);
    (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
      auto& a = alpha[static_cast<size_t>(n.id)];
      const auto& Ar = pr.A[static_cast<size_t>(n.id)];
      const auto& X = V[static_cast<size_t>(n.parents.empty() ? 0 : n.parents[0])];
      if (const Smooth* sm = tangent_smooth(n.op); sm && !a.empty()) {
        auto& ad = adam[static_cast<size_t>(n.id)];
        tangent_step(*sm, *boxes_[static_cast<size_t>(n.parents[0])], Ar, X, rows, lr, c1, c2, a, ad.m, ad.v);
      } else if (!a.empty() && !Ar.empty() && X.size() == a.size()) {
        adam_slopes(a, adam[static_cast<size_t>(n.id)], Ar, X, *boxes_[static_cast<size_t>(n.parents[0])], rows, lr,
                    c1, c2);
      }
      return ok_status();
    });
    beta_step(V, badam, beta, rows, o.beta_lr * lr / o.alpha_lr, c1, c2);
    lr *= o.alpha_decay;
  }
  recycle(pr.A);
  if (last) keep_slopes(start, rows, kept.alpha, kept.beta, *last);
  return best;
}

// The warm slopes of every relu whose size matches (clamped to [0, 1]), and each split's multipliers where
// the warm state has the same split; nothing from a state of another start or row count.
void Engine::warm_start(int64_t start, int64_t rows, std::vector<std::vector<double>>& alpha,
                        std::vector<double>& beta) const {
  const SlopeState& w = *setup_.warm;
  if (w.start != start || w.rows != rows || w.alpha.size() != alpha.size()) return;
  for (const Node& n : g.nodes) {
    auto& a = alpha[static_cast<size_t>(n.id)];
    const auto& from = w.alpha[static_cast<size_t>(n.id)];
    if (!splits_at_zero(n.op) || a.empty() || from.size() != a.size()) continue;
    for (size_t i = 0; i < a.size(); ++i) a[i] = std::clamp(from[i], 0.0, 1.0);
  }
  const size_t terms = setup_.beta_terms.size(), wterms = w.splits.size();
  if (w.beta.size() != static_cast<size_t>(rows) * wterms) return;
  for (size_t t = 0; t < terms; ++t) {
    const BetaTerm& bt = setup_.beta_terms[t];
    for (size_t u = 0; u < wterms; ++u) {
      const ReluSplit& s = w.splits[u];
      if (s.node != bt.node || s.elem != bt.elem || (s.active ? 1.0 : -1.0) != bt.sign) continue;
      for (size_t r = 0; r < static_cast<size_t>(rows); ++r) beta[r * terms + t] = std::max(0.0, w.beta[r * wterms + u]);
      break;
    }
  }
}

// The last step's relu slopes and multipliers, moved into `last` (optimise's caller asked for them).
void Engine::keep_slopes(int64_t start, int64_t rows, std::vector<std::vector<double>>& alpha,
                         std::vector<double>& beta, SlopeState& last) const {
  last = SlopeState{start, rows, {}, {}, std::move(beta)};
  last.alpha.resize(alpha.size());
  for (const Node& n : g.nodes)
    if (splits_at_zero(n.op)) last.alpha[static_cast<size_t>(n.id)] = std::move(alpha[static_cast<size_t>(n.id)]);
  for (const BetaTerm& bt : setup_.beta_terms) last.splits.push_back({bt.node, bt.elem, bt.sign > 0, bt.margin});
}

// d bound_r / d beta_{r,t} = -(sign v_node[elem] + margin) at the attaining point; projected onto
// beta >= 0.
void Engine::beta_step(const std::vector<std::vector<double>>& V, Adam& ad, std::vector<double>& beta, int64_t rows,
                       double lr, double c1, double c2) const {
  const size_t terms = setup_.beta_terms.size();
  const double b1 = 0.9, b2 = 0.999;
  for (size_t t = 0; t < terms; ++t) {
    const BetaTerm& bt = setup_.beta_terms[t];
    const auto& X = V[static_cast<size_t>(bt.node)];
    const size_t m = static_cast<size_t>(numel(g.nodes[static_cast<size_t>(bt.node)].out_shape));
    if (X.size() != static_cast<size_t>(rows) * m) continue;
    for (size_t r = 0; r < static_cast<size_t>(rows); ++r) {
      const size_t i = r * terms + t;
      const double grad = -(bt.sign * X[r * m + static_cast<size_t>(bt.elem)] + bt.margin);
      ad.m[i] = b1 * ad.m[i] + (1 - b1) * grad;
      ad.v[i] = b2 * ad.v[i] + (1 - b2) * grad * grad;
      beta[i] = std::max(0.0, beta[i] + lr * (ad.m[i] / c1) / (std::sqrt(ad.v[i] / c2) + 1e-8));
    }
  }
}

}  // namespace denote::crown

namespace denote {

SlopeState slope_rows(const SlopeState& s, int64_t first, int64_t count) {
  if (first < 0 || count < 0 || first + count > s.rows) return SlopeState{};
  SlopeState out{s.start, count, std::vector<std::vector<double>>(s.alpha.size()), s.splits, {}};
  const auto f = static_cast<size_t>(first), c = static_cast<size_t>(count), rows = static_cast<size_t>(s.rows);
  for (size_t id = 0; id < s.alpha.size(); ++id) {
    const std::span<const double> a = row_range(s.alpha[id], rows, f, c);
    out.alpha[id].assign(a.begin(), a.end());
  }
  if (s.beta.size() == rows * s.splits.size()) {
    const std::span<const double> b = row_range(s.beta, rows, f, c);
    out.beta.assign(b.begin(), b.end());
  }
  return out;
}

}  // namespace denote
