// alpha-CROWN's optimiser (src/bounds/crown_engine.h): projected Adam ascent on the relu lower
// slopes, one slope per (row, neuron) of every unstable relu the start node depends on. The
// gradient of a row's bound is exact where the pass's choices are locally constant: with the
// lines fixed, the bound is the relaxed network's value at the box vertex that attains it, so
// d bound_r / d alpha_{r,j} = A_relu[r, j] * x_j, x_j the relu input of the relaxed network at
// that point (crown_forward's rules), when row r uses the lower line at j (A >= 0), else 0.
// Every evaluated bound is sound (any slope in [0, 1] is a valid lower line), and the best per
// row is kept, so the result is never looser than CROWN's.
#include <algorithm>
#include <cmath>

#include "bounds/crown_engine.h"
#include "bounds/crown_relax.h"
#include "eval/walk.h"

namespace denote::crown {

namespace {

// Which node values the gradients read: a relu with slopes reads its parent at the unstable
// elements; elementwise ops pass their needs to their parent element by element, every other op
// needs all of its parents (a relu not the elements where it is dead). need[n] empty: nothing (n's value is not
// computed); all ones: all; crown_forward's linear rule computes only the marked outputs.
std::vector<std::vector<char>> needed_values(const Graph& g, int64_t start,
                                             const std::vector<std::vector<double>>& alpha,
                                             const std::vector<std::optional<DoubleBox>>& boxes,
                                             const std::vector<Engine::BetaTerm>& beta_terms) {
  std::vector<std::vector<char>> need(g.nodes.size());
  auto mark = [&](int64_t id) -> std::vector<char>& {
    auto& v = need[static_cast<size_t>(id)];
    if (v.empty()) v.assign(static_cast<size_t>(numel(g.nodes[static_cast<size_t>(id)].out_shape)), 0);
    return v;
  };
  for (const Node& n : g.nodes) {
    if (alpha[static_cast<size_t>(n.id)].empty()) continue;
    const auto& xb = *boxes[static_cast<size_t>(n.parents[0])];
    auto& v = mark(n.parents[0]);
    for (size_t j = 0; j < v.size(); ++j)
      if (xb.lo[j] < 0 && xb.hi[j] > 0) v[j] = 1;
  }
  for (const auto& bt : beta_terms) mark(bt.node)[static_cast<size_t>(bt.elem)] = 1;
  for (int64_t id = start; id >= 0; --id) {
    const Node& n = g.nodes[static_cast<size_t>(id)];
    const auto& v = need[static_cast<size_t>(id)];
    if (v.empty() || std::find(v.begin(), v.end(), 1) == v.end()) continue;
    for (int64_t p : n.parents) {
      auto& pv = mark(p);
      if (is_elementwise(n.op) && n.parents.size() == 1 && pv.size() == v.size()) {
        // A dead relu's lines have slope 0: its value does not read the parent's.
        const DoubleBox* xb =
            n.op == Op::Relu && boxes[static_cast<size_t>(p)] ? &*boxes[static_cast<size_t>(p)] : nullptr;
        for (size_t j = 0; j < v.size(); ++j) pv[j] = pv[j] || (v[j] && !(xb && xb->hi[j] <= 0));
      } else {
        std::fill(pv.begin(), pv.end(), 1);
      }
    }
  }
  return need;
}

bool above(const std::vector<double>& best, const std::vector<double>* stop) {
  if (!stop) return false;
  for (size_t r = 0; r < stop->size() && r < best.size(); ++r)
    if (best[r] > (*stop)[r]) return true;
  return false;
}

}  // namespace

std::vector<double> Engine::optimise(int64_t start, const std::vector<double>& C, int64_t rows,
                                     std::vector<double> best, const CrownOptions& o,
                                     const std::vector<double>* stop_above,
                                     std::vector<std::vector<double>>* kept_scales) {
  const std::vector<bool> anc = walk::ancestors(g, start);
  std::vector<std::vector<double>> alpha(g.nodes.size());
  std::vector<Adam> adam(g.nodes.size());
  bool any = false;
  for (const Node& n : g.nodes) {
    if (n.op != Op::Relu || !anc[static_cast<size_t>(n.id)] || n.id == start) continue;
    const auto& xb = boxes[static_cast<size_t>(n.parents[0])];
    if (!xb) continue;
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
  }
  const size_t terms = beta_terms.size();
  std::vector<double> beta(static_cast<size_t>(rows) * terms, 0.0);
  Adam badam{beta, beta};
  if (!any && terms == 0) return best;
  const std::vector<std::vector<char>> need = needed_values(g, start, alpha, boxes, beta_terms);
  const double b1 = 0.9, b2 = 0.999;
  double lr = o.alpha_lr;
  std::vector<std::vector<double>> own(kept_scales ? 0 : g.nodes.size());  // the boxes stay fixed in this loop
  std::vector<std::vector<double>>& scales = kept_scales ? *kept_scales : own;
  std::vector<std::vector<double>> V(g.nodes.size());  // kept across steps: the buffers are reused
  // The coefficients the gradients read: the relus' and those of the nodes whose forward rule reads them.
  std::vector<char> keep(g.nodes.size(), 0);
  for (const Node& n : g.nodes) keep[static_cast<size_t>(n.id)] = forward_reads_coefficients(n.op) ? 1 : 0;
  PassOptions po;
  po.alpha = &alpha;
  po.record = true;
  po.record_only = &keep;
  po.beta = terms ? &beta : nullptr;
  po.scales = &scales;
  // C's nonzero columns: with them the pass sees unit rows (intermediate bounds' +-e_j) as such.
  const int64_t cols = rows > 0 ? static_cast<int64_t>(C.size()) / rows : 0;
  std::vector<int64_t> support;
  for (int64_t j = 0; j < cols; ++j)
    for (int64_t r = 0; r < rows; ++r)
      if (C[static_cast<size_t>(r * cols + j)] != 0) {
        support.push_back(j);
        break;
      }
  std::optional<UnitRows> unit;  // scanned once for the run's passes
  if (static_cast<int64_t>(C.size()) == rows * cols) {
    po.start_support = &support;
    unit = find_unit_rows(C, rows, support);
    po.unit_rows = unit ? &*unit : nullptr;
  }
  if (fuse_forward) {  // a fused first layer makes its forward values in the pass
    po.vertex_need = &need;
    po.vertex_values = &V;
  }
  PassResult pr;
  for (int t = 0; t < o.alpha_iters; ++t) {
    ++alpha_steps;
    recycle(pr.A);
    for (auto& v : V) v.clear();
    pr = pass(start, C, rows, po);
    if (!pr.failure.empty()) break;
    for (int64_t r = 0; r < rows; ++r)
      best[static_cast<size_t>(r)] = std::max(best[static_cast<size_t>(r)], pr.lower[static_cast<size_t>(r)]);
    if (t + 1 == o.alpha_iters || above(best, stop_above)) break;
    // The relaxed network at the attaining point, rows at once.
    PassRows st;
    st.rows = rows;
    const std::vector<const DoubleBox*> box = ptrs();
    RuleCtx rc{g, payload, box, err, st, &alpha};
    ForwardCtx fc{rc, pr.A, V, &need};
    bool ok = true;
    for (const Node& n : g.nodes) {
      if (n.id > start) break;
      const auto& nd = need[static_cast<size_t>(n.id)];
      if (!pr.reached[static_cast<size_t>(n.id)] || !V[static_cast<size_t>(n.id)].empty() || nd.empty() ||
          std::find(nd.begin(), nd.end(), 1) == nd.end())
        continue;  // not reached, made by the pass, or not needed
      if (!crown_forward(n.op)(fc, n)) {
        ok = false;
        break;
      }
    }
    if (!ok) break;
    const double c1 = 1 - std::pow(b1, t + 1), c2 = 1 - std::pow(b2, t + 1);
    for (const Node& n : g.nodes) {
      auto& a = alpha[static_cast<size_t>(n.id)];
      const auto& Ar = pr.A[static_cast<size_t>(n.id)];
      const auto& X = V[static_cast<size_t>(n.parents.empty() ? 0 : n.parents[0])];
      if (a.empty() || Ar.empty() || X.size() != a.size()) continue;
      const auto& xb = *boxes[static_cast<size_t>(n.parents[0])];
      const size_t m = xb.lo.size();
      Adam& ad = adam[static_cast<size_t>(n.id)];
      std::vector<size_t> open;  // the unstable elements: the only ones with a slope to optimise
      for (size_t j = 0; j < m; ++j)
        if (xb.lo[j] < 0 && xb.hi[j] > 0) open.push_back(j);
      for (size_t row = 0; row < static_cast<size_t>(rows); ++row)
        for (size_t j : open) {
          const size_t i = row * m + j;
          const double grad = Ar[i] >= 0 ? Ar[i] * X[i] : 0.0;
          ad.m[i] = b1 * ad.m[i] + (1 - b1) * grad;
          ad.v[i] = b2 * ad.v[i] + (1 - b2) * grad * grad;
          const double step = lr * (ad.m[i] / c1) / (std::sqrt(ad.v[i] / c2) + 1e-8);
          a[i] = std::clamp(a[i] + step, 0.0, 1.0);
        }
    }
    beta_step(V, badam, beta, rows, o.beta_lr * lr / o.alpha_lr, c1, c2);
    lr *= o.alpha_decay;
  }
  recycle(pr.A);
  return best;
}

// d bound_r / d beta_{r,t} = -(sign v_node[elem] + margin) at the attaining point; projected onto
// beta >= 0.
void Engine::beta_step(const std::vector<std::vector<double>>& V, Adam& ad, std::vector<double>& beta, int64_t rows,
                       double lr, double c1, double c2) const {
  const size_t terms = beta_terms.size();
  const double b1 = 0.9, b2 = 0.999;
  for (size_t t = 0; t < terms; ++t) {
    const BetaTerm& bt = beta_terms[t];
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
