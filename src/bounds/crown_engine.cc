// The CROWN engine's passes (src/bounds/crown_engine.h).
#include "bounds/crown_engine.h"

#include <algorithm>
#include <cmath>

#include "eval/walk.h"

namespace denote::crown {

Engine::Engine(const Graph& g_, const Payload<double>& p, EvalErr e, std::vector<std::optional<DoubleBox>> b)
    : g(g_), payload(p), err(e), boxes(std::move(b)) {}

std::vector<const DoubleBox*> Engine::ptrs() const {
  std::vector<const DoubleBox*> out(boxes.size(), nullptr);
  for (size_t i = 0; i < boxes.size(); ++i)
    if (boxes[i]) out[i] = &*boxes[i];
  return out;
}

namespace {

// bias - gamma(terms + 2) mag - slack, rounded down; NaN (inf - inf) reads as no bound.
double finish_row(const PassRows& st, int64_t r) {
  const double err = up(up(gamma(st.terms[r] + 2) * st.mag[r]) + st.slack[r] + (st.terms[r] + 2) * kEta);
  const double v = dn(st.bias[r] - err);
  return std::isnan(v) ? -INFINITY : v;
}

}  // namespace

PassResult Engine::pass(int64_t start, const std::vector<double>& C, int64_t rows, bool one_step,
                        const std::vector<std::vector<double>>* alpha, bool record) {
  ++passes;
  rows_total += rows;
  PassRows st;
  st.rows = rows;
  st.A.resize(g.nodes.size());
  st.bias.assign(static_cast<size_t>(rows), 0.0);
  st.mag = st.terms = st.slack = st.bias;
  st.A[static_cast<size_t>(start)] = C;
  const std::vector<const DoubleBox*> box = ptrs();
  RuleCtx ctx{g, payload, box, err, st, alpha};
  PassResult out;
  if (record) out.A.resize(g.nodes.size());
  (void)walk::reverse(g, "IR bounds", [&](const Node& n) {
    auto& slot = st.A[static_cast<size_t>(n.id)];
    if (n.id > start || !slot || !st.failure.empty()) return ok_status();
    std::vector<double> A = std::move(*slot);
    slot.reset();
    if (record) out.A[static_cast<size_t>(n.id)] = A;
    const Rule rule = one_step && n.id != start ? nullptr : crown_rule(n.op);
    if (rule)
      rule(ctx, n, std::move(A));
    else
      ctx.concretize(n.id, A);
    return ok_status();
  });
  out.lower.assign(static_cast<size_t>(rows), -INFINITY);
  out.failure = st.failure;
  if (st.failure.empty())
    for (int64_t r = 0; r < rows; ++r) out.lower[static_cast<size_t>(r)] = finish_row(st, r);
  return out;
}

void Engine::bound_elements(int64_t id, const std::vector<int64_t>& elems, bool one_step, std::vector<double>& lo,
                            std::vector<double>& hi, const std::vector<std::vector<double>>* alpha) {
  const int64_t m = numel(g.nodes[static_cast<size_t>(id)].out_shape);
  const int64_t k = static_cast<int64_t>(elems.size());
  std::vector<double> C(static_cast<size_t>(2 * k * m), 0.0);
  for (int64_t r = 0; r < k; ++r) {
    C[static_cast<size_t>(r * m + elems[static_cast<size_t>(r)])] = 1;
    C[static_cast<size_t>((k + r) * m + elems[static_cast<size_t>(r)])] = -1;
  }
  PassResult pr = pass(id, C, 2 * k, one_step, alpha);
  lo.assign(pr.lower.begin(), pr.lower.begin() + k);
  hi.resize(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) hi[static_cast<size_t>(r)] = -pr.lower[static_cast<size_t>(k + r)];
}

void Engine::tighten(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
                     const std::vector<double>& hi, bool replace) {
  auto& b = boxes[static_cast<size_t>(id)];
  if (!b) return;
  for (size_t r = 0; r < elems.size(); ++r) {
    const size_t j = static_cast<size_t>(elems[r]);
    // Both enclose the same set, so they overlap; a crossing can only come from a bug upstream.
    double nl = replace ? lo[r] : std::max(b->lo[j], lo[r]), nh = replace ? hi[r] : std::min(b->hi[j], hi[r]);
    if (nl <= nh) b->lo[j] = nl, b->hi[j] = nh;
  }
}

void Engine::refresh_children(int64_t id, bool replace) {
  const DoubleBox* b = boxes[static_cast<size_t>(id)] ? &*boxes[static_cast<size_t>(id)] : nullptr;
  if (!b) return;
  for (const Node& n : g.nodes) {
    if (n.op != Op::Relu || n.parents[0] != id || !boxes[static_cast<size_t>(n.id)]) continue;
    DoubleBox& y = *boxes[static_cast<size_t>(n.id)];
    for (size_t j = 0; j < y.lo.size(); ++j) {
      const double l = std::max(b->lo[j], 0.0), h = std::max(b->hi[j], 0.0);
      y.lo[j] = replace ? l : std::max(y.lo[j], l);
      y.hi[j] = replace ? h : std::min(y.hi[j], h);
    }
  }
}

}  // namespace denote::crown
