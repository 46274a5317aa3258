// The bound methods as strategies of run_crown (src/bounds/crown_strategy.h): IBP, CROWN, alpha-CROWN.
#include "bounds/crown_strategy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "bounds/crown_symbolic.h"
#include "bounds/kernel_ops.h"
#include "denote/base/deadline.h"
#include "eval/walk.h"

namespace denote::crown {

void SplitSet::check(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
                     const std::vector<double>& hi) {
  if (by_node.empty()) return;
  for (const auto& sp : by_node[static_cast<size_t>(id)]) {
    const auto it = std::find(elems.begin(), elems.end(), sp.elem);
    if (it == elems.end()) continue;
    const size_t r = static_cast<size_t>(it - elems.begin());
    if (sp.active ? hi[r] < -sp.margin : lo[r] > sp.margin) infeasible = true;
  }
}

void SplitSet::apply(Engine& eng, int64_t id) {
  if (by_node.empty()) return;
  if (!eng.apply_splits(id, by_node[static_cast<size_t>(id)])) infeasible = true;
}

Result<SplitSet> split_set(const Graph& g, const std::vector<ReluSplit>& splits) {
  SplitSet s;
  if (splits.empty()) return s;
  s.by_node.resize(g.nodes.size());
  for (size_t k = 0; k < splits.size(); ++k) {
    const auto& sp = splits[k];
    const bool node_ok = sp.node >= 0 && sp.node < static_cast<int64_t>(g.nodes.size());
    if (!node_ok || sp.elem < 0 || sp.elem >= numel(g.nodes[static_cast<size_t>(sp.node)].out_shape) ||
        !(sp.margin >= 0) || !std::isfinite(sp.margin))
      return error_status(ErrorCode::kInvalidInput,
                          fmt::format("IR bounds: split {} (node {}, element {}, margin {}): expected a node, one "
                                      "of its elements and a finite margin >= 0",
                                      k, sp.node, sp.elem, sp.margin))
          .with_field("splits");
    s.by_node[static_cast<size_t>(sp.node)].push_back(sp);
  }
  return s;
}

namespace {

// restrict_to_cone runs where the output has at least this many elements (a small output's rows read
// most of it, and branch and bound's tens of thousands of calls on small MLPs would pay its pass).
constexpr int64_t kConeMinOutputs = 256;

// Relaxations read their parent's box (ops.def's relaxed ops, and max_pool's lines): those parents get
// intermediate bounds, except a max_pool's split (relu) parent, whose box follows its own parent's
// (refresh_children). relu_only: every such consumer is a split op (only its unstable elements matter).
struct Consumers {
  std::vector<bool> needed, relu_only;
};
Consumers consumers(const Graph& g, const std::vector<bool>& anc) {
  Consumers c{std::vector<bool>(g.nodes.size(), false), std::vector<bool>(g.nodes.size(), true)};
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    const bool pool = bound_kernel(n.op) == BoundKernel::Pool;
    if (!anc[static_cast<size_t>(n.id)] || (!is_relaxed(n.op) && !pool)) return ok_status();
    const size_t p = static_cast<size_t>(n.parents[0]);
    if (pool && splits_at_zero(g.nodes[p].op)) return ok_status();
    c.needed[p] = true;
    if (!splits_at_zero(n.op)) c.relu_only[p] = false;
    return ok_status();
  });
  return c;
}

// The nodes the output depends on that their rule cuts at their box (crown_cuts): CrownResult::cut.
std::vector<int64_t> cut_in_cone(const Graph& g, const Payload<double>& payload, int64_t output_id) {
  const std::vector<bool> anc = walk::ancestors(g, output_id);
  std::vector<int64_t> out;
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    if (anc[static_cast<size_t>(n.id)] && crown_cuts(g, payload, n)) out.push_back(n.id);
    return ok_status();
  });
  return out;
}

// alpha-CROWN on the rows +e_j, -e_j of the elements, as many at a time as the budget allows
// (elements whose rows do not fit keep their CROWN bounds).
void optimise_elements(Engine& eng, int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo,
                       std::vector<double>& hi, const CrownOptions& o) {
  const int64_t m = numel(eng.g.nodes[static_cast<size_t>(id)].out_shape);
  const int64_t terms = static_cast<int64_t>(eng.setup().beta_terms.size());
  const int64_t fit = eng.budget().pairs_per_chunk(eng.g, id, PassKind::Alpha, terms);
  if (fit < 1) return eng.budget().refuse(eng.g, id, PassKind::Alpha, terms, 2, "alpha-CROWN bound");
  for (size_t at = 0; at < elems.size(); at += static_cast<size_t>(fit)) {
    const size_t k = std::min(static_cast<size_t>(fit), elems.size() - at);
    std::vector<double> start(2 * k);
    for (size_t r = 0; r < k; ++r) start[r] = lo[at + r], start[k + r] = -hi[at + r];
    std::vector<double> C(2 * k * static_cast<size_t>(m));
    UnitRows::plus_minus(std::vector<int64_t>(elems.begin() + static_cast<std::ptrdiff_t>(at),
                                              elems.begin() + static_cast<std::ptrdiff_t>(at + k)))
        .fill(m, C.data());
    const std::vector<double> best = eng.optimise(id, C, static_cast<int64_t>(2 * k), start, o, nullptr, nullptr,
                                                  nullptr, nullptr, nullptr, o.alpha_intermediate_stall);
    for (size_t r = 0; r < k; ++r) lo[at + r] = best[r], hi[at + r] = -best[k + r];
  }
}

// A linear or conv node whose parent is an input up to reshapes and constant offsets or scales: its
// one-step box is already what CROWN gives (auto_LiRPA: "IBP is exact there"), and so is IBP's box up
// to rounding (every input element enters each output once).
bool first_layer(const Graph& g, const Node& n) {
  const BoundKernel k = bound_kernel(n.op);
  if (k != BoundKernel::Dense && k != BoundKernel::Conv) return false;
  int64_t p = n.parents[0];
  for (;;) {
    const Node& q = g.nodes[static_cast<size_t>(p)];
    if (q.op == Op::Input) return true;
    const bool offset = offset_or_scale(q.op) && g.nodes[static_cast<size_t>(q.parents[1])].op == Op::Const;
    if (!keeps_order(q.op) && !offset) return false;
    p = q.parents[0];
  }
}

// Where the final rows read few of a large output's elements (a detection head's cells: TinyYOLO's
// property reads 5 of 21,125), one pass of [C; -C] on the boxes so far records the coefficients at each
// relaxed elementwise node: an element of its parent whose coefficient is 0 in every row is read by no
// path the final rows take, so its intermediate rows are skipped. Soundness does not rest on this: a
// skipped element keeps its one-step (IBP-like) box, a sound box; only where a tighter box would have
// opened a path does the final bound lose tightness (rows [C; -C] take the upper lines, of nonzero slope,
// where one sign takes a lower slope of 0).
void restrict_to_cone(Run& run) {
  run.cone_done = true;
  const FinalRows* f = run.rows;
  if (!f || f->m < kConeMinOutputs || f->k <= 0) return;
  std::vector<char> used(static_cast<size_t>(f->m), 0);
  int64_t n_used = 0;
  for (int64_t r = 0; r < f->k; ++r)
    for (int64_t j = 0; j < f->m; ++j)
      if (f->C[static_cast<size_t>(r * f->m + j)] != 0 && !used[static_cast<size_t>(j)]) used[static_cast<size_t>(j)] = 1, ++n_used;
  if (2 * n_used > f->m) return;
  const Graph& g = run.eng.g;
  // The recording pass fits the memory budget, or there is no cone (nothing refused: a plain run).
  if (run.eng.budget().rows_that_fit(g, run.output, PassKind::Record, 0) < 2 * f->k) return;
  std::vector<char> keep(g.nodes.size(), 0);
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {  // relaxed ops: element j reads its parent's j
    keep[static_cast<size_t>(n.id)] = is_relaxed(n.op) && n.parents.size() == 1 &&
                                      numel(n.out_shape) == numel(g.nodes[static_cast<size_t>(n.parents[0])].out_shape);
    return ok_status();
  });
  std::vector<double> rows(static_cast<size_t>(2 * f->k * f->m));
  for (size_t i = 0; i < static_cast<size_t>(f->k * f->m); ++i) rows[i] = f->C[i], rows[i + static_cast<size_t>(f->k * f->m)] = -f->C[i];
  PassOptions po;
  po.record = true;
  po.record_only = &keep;
  PassResult pr = run.eng.pass(run.output, std::move(rows), 2 * f->k, po);
  if (!pr.failure.empty() || pr.A.size() != g.nodes.size()) return;
  std::vector<char> whole(g.nodes.size(), 0);  // parents some relaxed consumer reads whole (unrecorded)
  run.cone.assign(g.nodes.size(), {});
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    if (!is_relaxed(n.op) || n.parents.empty()) return ok_status();
    const size_t id = static_cast<size_t>(n.id), p = static_cast<size_t>(n.parents[0]);
    const size_t len = static_cast<size_t>(numel(n.out_shape));
    if (!keep[id] || (pr.reached[id] && pr.A[id].size() != static_cast<size_t>(2 * f->k) * len)) {
      whole[p] = 1;
      return ok_status();
    }
    std::vector<char>& mask = run.cone[p];
    mask.resize(len, 0);
    if (!pr.reached[id]) return ok_status();  // no path from the rows: nothing of p is read here
    const std::vector<double>& a = pr.A[id];
    for (size_t r = 0; r < static_cast<size_t>(2 * f->k); ++r)
      for (size_t j = 0; j < len; ++j) mask[j] = static_cast<char>(mask[j] || a[r * len + j] != 0);
    return ok_status();
  });
  for (size_t p = 0; p < whole.size(); ++p)
    if (whole[p]) run.cone[p].clear();
}

// The intermediate bounds of one node (intermediate_bounds): the one-step box from its parents' boxes,
// then CROWN on the elements that matter (for relu consumers only the unstable ones), then alpha-CROWN
// on them (with method AlphaCrown and alpha_intermediate); split nodes are clamped after each bound.
void bound_node(Run& run, const Node& n, bool relu_only) {
  Engine& eng = run.eng;
  const CrownOptions& o = run.o;
  const Graph& g = eng.g;
  const bool lirpa = o.lirpa_compatible;
  // On a ball the first layer's CROWN bound is the ball's, tighter than its box's (IBP's).
  const bool first = first_layer(g, n) && !run.where.ball;
  if (!lirpa && bound_kernel(n.op) == BoundKernel::Conv && first) {  // no pass adds to the IBP box (rows x numel each)
    eng.refresh_children(n.id);
    return;
  }
  const int64_t m = numel(n.out_shape);
  std::vector<int64_t> all(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) all[static_cast<size_t>(j)] = j;
  std::vector<double> lo, hi;
  eng.bound_elements(n.id, all, /*one_step=*/true, lo, hi);
  run.splits.check(n.id, all, lo, hi);
  eng.tighten(n.id, all, lo, hi, lirpa);
  run.splits.apply(eng, n.id);
  std::vector<int64_t> elems;
  const DoubleBox& b = *eng.box(n.id);
  for (int64_t j = 0; j < m; ++j)
    if (!relu_only || (b.lo[static_cast<size_t>(j)] < 0 && b.hi[static_cast<size_t>(j)] > 0)) elems.push_back(j);
  if (first)
    elems.clear();
  else if (lirpa && static_cast<double>(elems.size()) > 0.9 * static_cast<double>(m))
    elems = all;
  if (!elems.empty() && !lirpa && !run.cone_done) restrict_to_cone(run);
  if (!run.cone.empty() && !run.cone[static_cast<size_t>(n.id)].empty()) {
    const std::vector<char>& in = run.cone[static_cast<size_t>(n.id)];
    std::erase_if(elems, [&](int64_t j) { return !in[static_cast<size_t>(j)]; });
  }
  // Passes that would stop at forward functions before any relaxation give those functions' box, already here.
  if (eng.stops_before_relaxation(n.id, 2 * static_cast<int64_t>(elems.size()))) elems.clear();
  if (!elems.empty() && eng.budget().failure.empty()) {
    eng.bound_elements(n.id, elems, false, lo, hi);
    // Optimised passes go down to the input: not where the passes stop at forward functions.
    const bool cut = eng.setup().forward_cut_work > 0 && eng.has_forward();
    if (o.method == BoundMethod::AlphaCrown && o.alpha_intermediate && !cut && !past(o.alpha_intermediate_until)) {
      CrownOptions until = o;  // the node's optimisation stops its steps at the intermediate budget too
      until.deadline = std::min(o.deadline, o.alpha_intermediate_until);
      optimise_elements(eng, n.id, elems, lo, hi, until);
    }
    run.splits.check(n.id, elems, lo, hi);
    eng.tighten(n.id, elems, lo, hi, lirpa);
    run.splits.apply(eng, n.id);
  }
  eng.refresh_children(n.id, lirpa);
}

// Whether refresh_box can narrow a box something reads: not a relu after a bounded node
// (refresh_children set it, exactly), not the output of a branch and bound subdomain's pass (stop
// thresholds set) that returns its rows' linear functions: run_crown's box_rows does not apply there.
// Branch and bound calls run_crown tens of thousands of times on small MLPs, where these steps cost
// 15-20% of ACAS Xu's time.
bool refreshes(const Run& run, const Consumers& c, const Node& n) {
  if (splits_at_zero(n.op) && n.parents.size() == 1 && c.needed[static_cast<size_t>(n.parents[0])]) return false;
  return n.id != run.output || run.where.stop_above.empty() ||
         !(run.o.input_coefficients || run.o.relu_coefficients);
}

// Whether the subdomain lets node id have intermediate passes after `bounded` other nodes had them
// (Subdomain::refresh_after, refresh_nodes).
bool passes_allowed(const Subdomain& where, int64_t id, int64_t bounded) {
  return id > where.refresh_after && (where.refresh_nodes < 0 || bounded < where.refresh_nodes);
}

// bound_node on every node some relaxation reads, in id order (the one walk); an empty subdomain
// stops it. Errors: the deadline passed (CrownOptions::deadline), or a pass does not fit the memory
// budget; each names the node.
Status intermediate_bounds(Run& run) {
  Engine& eng = run.eng;
  const Graph& g = eng.g;
  const auto anc = walk::ancestors(g, run.output);
  const Consumers c = consumers(g, anc);
  auto late = [](int64_t at) {
    const std::string what = fmt::format("IR bounds: the deadline passed during the intermediate bounds, at node {}", at);
    return error_status(ErrorCode::kResource, what).with_node(at, what).with_field("deadline");
  };
  // Nodes downstream of a CROWN-bounded one: their boxes may narrow from their parents' (refresh_box).
  std::vector<char> moved(g.nodes.size(), 0);
  int64_t bounded = 0;  // nodes bound_node ran on
  return walk::in_order(g, "IR bounds", [&](const Node& n) -> Status {
    const size_t id = static_cast<size_t>(n.id);
    for (int64_t p : n.parents) moved[id] = moved[id] || moved[static_cast<size_t>(p)];
    if (!run.o.lirpa_compatible && moved[id] && !c.needed[id] && anc[id] && refreshes(run, c, n)) eng.refresh_box(n.id);
    // Sources (no parents) keep their boxes: a pass would only concretise them at themselves.
    if (run.splits.infeasible || !c.needed[id] || n.parents.empty() || !eng.box(id) ||
        !passes_allowed(run.where, n.id, bounded))
      return ok_status();
    ++bounded;
    if (past(run.o.deadline)) return late(n.id);
    bound_node(run, n, c.relu_only[id]);
    moved[id] = 1;
    if (eng.stats().late) return late(n.id);  // between chunks of one node's rows
    if (!eng.budget().failure.empty())
      return error_status(ErrorCode::kResource, eng.budget().failure)
          .with_node(eng.budget().node, eng.budget().failure)
          .with_field("max-memory");
    return ok_status();
  });
}

// The first k rows of the pass's coefficients at each relu node.
std::vector<std::vector<double>> relu_rows(const Graph& g, std::vector<std::vector<double>> A, int64_t k) {
  std::vector<std::vector<double>> out(g.nodes.size());
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    auto& a = A[static_cast<size_t>(n.id)];
    const size_t len = static_cast<size_t>(k * numel(n.out_shape));
    if (splits_at_zero(n.op) && a.size() >= len) {
      a.resize(len);
      out[static_cast<size_t>(n.id)] = std::move(a);
    }
    return ok_status();
  });
  return out;
}

// The coefficients the final pass recorded, into the result (CrownOptions::input_coefficients,
// relu_coefficients).
void keep_coefficients(const Run& run, PassResult& pr, int64_t k, CrownResult& res) {
  const Graph& g = run.eng.g;
  const std::vector<int64_t> in_ids = g.input_ids();
  const auto* a =
      in_ids.empty() || pr.A.size() <= static_cast<size_t>(in_ids[0]) ? nullptr : &pr.A[static_cast<size_t>(in_ids[0])];
  const size_t nx = in_ids.empty() ? 0 : static_cast<size_t>(numel(g.nodes[static_cast<size_t>(in_ids[0])].out_shape));
  if (a && a->size() >= static_cast<size_t>(k) * nx)
    res.input_coef.assign(a->begin(), a->begin() + static_cast<std::ptrdiff_t>(k * nx));
  res.input_linear = !res.input_coef.empty() && !pr.cut && in_ids.size() == 1 && res.has_spec;
  if (run.o.relu_multipliers) {  // every row's coefficients at each relu's input node
    std::vector<char> inputs(g.nodes.size(), 0);
    mark_relu_inputs(g, inputs);
    res.relu_mu.assign(g.nodes.size(), {});
    res.relu_mu_rows.assign(static_cast<size_t>(k), 1);
    for (size_t p = 0; p < inputs.size() && p < pr.A.size(); ++p) {
      const size_t len = static_cast<size_t>(k * numel(g.nodes[p].out_shape));
      if (inputs[p] && pr.A[p].size() >= len)
        res.relu_mu[p].assign(pr.A[p].begin(), pr.A[p].begin() + static_cast<std::ptrdiff_t>(len));
    }
  }
  if (run.o.relu_coefficients) res.relu_coef = relu_rows(g, std::move(pr.A), k);
}

// What keep_coefficients reads, the only coefficients the final pass copies: the input's, and the relus'
// (relu_coefficients) and their inputs' (relu_multipliers). It copied every node's before.
std::vector<char> kept_nodes(const Run& run) {
  const Graph& g = run.eng.g;
  std::vector<char> keep(g.nodes.size(), 0);
  for (int64_t x : g.input_ids()) keep[static_cast<size_t>(x)] = 1;
  if (run.o.relu_multipliers) mark_relu_inputs(g, keep);
  if (run.o.relu_coefficients)
    for (const Node& n : g.nodes) keep[static_cast<size_t>(n.id)] = keep[static_cast<size_t>(n.id)] || splits_at_zero(n.op);
  return keep;
}

}  // namespace

void box_rows(const Run& run, const FinalRows& f, std::vector<double>& lower) {
  const auto& b = run.eng.box(run.output);
  if (!b) return;
  for (int64_t r = 0; r < f.nr; ++r) {
    double s = 0, mag = 0;
    for (int64_t j = 0; j < f.m; ++j) {
      const double c = f.C[static_cast<size_t>(r * f.m + j)];
      if (c == 0) continue;
      const double t = c > 0 ? c * b->lo[static_cast<size_t>(j)] : c * b->hi[static_cast<size_t>(j)];
      s += t, mag += std::fabs(t);
    }
    const double v = dn(s - up(gamma(static_cast<double>(f.m) + 2) * mag + f.m * kEta));
    if (!std::isnan(v)) lower[static_cast<size_t>(r)] = std::max(lower[static_cast<size_t>(r)], v);
  }
}

namespace {

// The multipliers of the rows an optimised step improved (Engine::optimise) over CROWN's.
void merge_rows(const Graph& g, const KeptMultipliers& mu, CrownResult& res) {
  if (res.relu_mu.size() != mu.at.size()) res.relu_mu.assign(mu.at.size(), {});
  res.relu_mu_rows.resize(mu.rows.size(), 0);
  for (size_t p = 0; p < mu.at.size(); ++p) {
    if (mu.at[p].empty()) continue;
    const size_t len = static_cast<size_t>(numel(g.nodes[p].out_shape));
    if (res.relu_mu[p].size() != mu.at[p].size()) res.relu_mu[p].assign(mu.at[p].size(), 0.0);
    for (size_t r = 0; r < mu.rows.size(); ++r)
      if (mu.rows[r])
        std::copy(mu.at[p].begin() + static_cast<std::ptrdiff_t>(r * len), mu.at[p].begin() + static_cast<std::ptrdiff_t>((r + 1) * len),
                  res.relu_mu[p].begin() + static_cast<std::ptrdiff_t>(r * len));
  }
  for (size_t r = 0; r < mu.rows.size(); ++r) res.relu_mu_rows[r] = res.relu_mu_rows[r] || mu.rows[r];
}

// IBP: no intermediate passes; the final rows by C folded into the output node's own rule (the
// one-step pass, auto_LiRPA's IBP with C) or C at the output's box, whichever is tighter per row.
class IbpStrategy final : public BoundStrategy {
 public:
  Status intermediate(Run&, CrownResult&) const override { return ok_status(); }
  PassKind final_kind(const CrownOptions&) const override { return PassKind::OneStep; }
  bool tightens_output() const override { return false; }
  std::vector<double> final_rows(Run& run, const FinalRows& f, CrownResult&) const override {
    std::vector<double> lower(static_cast<size_t>(f.nr), -INFINITY);
    PassOptions po;
    po.one_step = true;
    po.scales = &run.scales;
    if (run.linear) lower = run.eng.pass(run.output, f.C, f.nr, po).lower;  // else IBP in a binary format: the box only
    box_rows(run, f, lower);
    return lower;
  }
};

// CROWN: forward bounds (CrownOptions::forward_intermediate, without splits) and CROWN passes node by
// node for the intermediate boxes; one backward pass for the final rows, recording its coefficients
// where asked.
class CrownStrategy : public BoundStrategy {
 public:
  Status intermediate(Run& run, CrownResult& res) const override {
    res.cut = cut_in_cone(run.eng.g, run.eng.payload, run.output);
    if (run.o.forward_intermediate && run.where.splits.empty()) symbolic_bounds(run.eng);
    if (!run.o.intermediate_crown || run.splits.infeasible) return ok_status();
    return intermediate_bounds(run);
  }
  PassKind final_kind(const CrownOptions& o) const override {
    return o.input_coefficients || o.relu_coefficients || o.relu_multipliers ? PassKind::Record : PassKind::Full;
  }
  std::vector<double> final_rows(Run& run, const FinalRows& f, CrownResult& res) const override {
    PassOptions po;
    po.record = run.o.input_coefficients || run.o.relu_coefficients || run.o.relu_multipliers;
    const std::vector<char> keep = po.record ? kept_nodes(run) : std::vector<char>{};
    if (po.record) po.record_only = &keep;
    po.scales = &run.scales;
    PassResult pr = run.eng.pass(run.output, f.C, f.nr, po);
    if (po.record) keep_coefficients(run, pr, f.k, res);
    return std::move(pr.lower);
  }
};

// alpha-CROWN: CROWN's hooks (bound_node optimises the intermediate rows too), then Adam on the final
// rows' relu slopes (and beta-CROWN's split multipliers) from CROWN's bounds, keeping the best per row.
class AlphaCrownStrategy final : public CrownStrategy {
 public:
  PassKind final_kind(const CrownOptions&) const override { return PassKind::Alpha; }
  std::vector<double> final_rows(Run& run, const FinalRows& f, CrownResult& res) const override {
    const std::vector<double> crown = CrownStrategy::final_rows(run, f, res);
    const std::vector<double>* stop = run.where.stop_above.empty() ? nullptr : &run.where.stop_above;
    // The input coefficients of each row's best pass (return_A): every row's own (lower-only rows).
    const bool keep = res.input_linear && f.nr == f.k;
    res.input_linear = keep;
    KeptMultipliers mu;
    SlopeState last;
    std::vector<double> best = run.eng.optimise(run.output, f.C, f.nr, crown, run.o, stop, &run.scales,
                                                keep ? &res.input_coef : nullptr, run.o.relu_multipliers ? &mu : nullptr,
                                                &last);
    if (run.o.relu_multipliers) merge_rows(run.eng.g, mu, res);  // a row no step beat keeps CROWN's
    if (last.start >= 0) res.slopes = std::make_shared<const SlopeState>(std::move(last));
    return best;
  }
};

}  // namespace

const BoundStrategy& strategy_for(BoundMethod method, bool linear) {
  static const IbpStrategy ibp;
  static const CrownStrategy crown;
  static const AlphaCrownStrategy alpha;
  if (!linear || method == BoundMethod::Ibp) return ibp;
  return method == BoundMethod::AlphaCrown ? static_cast<const BoundStrategy&>(alpha) : crown;
}

}  // namespace denote::crown
