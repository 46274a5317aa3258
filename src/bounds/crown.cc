// run_crown (include/denote/bounds/crown.h): IBP boxes, then intermediate bounds node by node,
// then the specification's bounds by one backward pass with the rows [C; -C].
#include "denote/bounds/crown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "bounds/crown_engine.h"
#include "denote/base/deadline.h"
#include "bounds/crown_symbolic.h"
#include "bounds/kernel_ops.h"
#include "eval/walk.h"

namespace denote {

std::optional<BoundMethod> parse_bound_method(std::string_view text) {
  std::string t(text);  // case-insensitive, as auto_LiRPA's method names ("IBP", "CROWN", "alpha-CROWN")
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "ibp") return BoundMethod::Ibp;
  if (t == "crown") return BoundMethod::Crown;
  if (t == "alpha-crown" || t == "crown-optimized") return BoundMethod::AlphaCrown;
  return std::nullopt;
}

std::vector<int64_t> cut_nodes(std::span<const CrownResult> runs) {
  std::vector<int64_t> all;
  for (const CrownResult& r : runs) all.insert(all.end(), r.cut.begin(), r.cut.end());
  std::sort(all.begin(), all.end());
  all.erase(std::unique(all.begin(), all.end()), all.end());
  return all;
}

std::string describe_cut(const Graph& g, const std::vector<int64_t>& cut) {
  std::string s;
  for (int64_t id : cut)
    s += fmt::format("{}node {} ({})", s.empty() ? "" : ", ", id, op_tag(g.nodes[static_cast<size_t>(id)].op));
  return s;
}

bool set_intermediate(std::string_view name, CrownOptions& o) {
  std::string t(name);
  for (char& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (t == "crown-ibp") t = "ibp";
  if (t != "crown" && t != "forward" && t != "forward+crown" && t != "ibp") return false;
  o.intermediate_crown = t == "crown" || t == "forward+crown";
  o.forward_intermediate = t == "forward" || t == "forward+crown";
  return true;
}

std::string_view bound_method_name(BoundMethod m) {
  return m == BoundMethod::Ibp ? "ibp" : m == BoundMethod::Crown ? "crown" : "alpha-crown";
}

namespace {

Result<crown::EvalErr> eval_err_for(std::string_view arith) {
  if (arith == "f64" || arith == "binary64") return crown::EvalErr{crown::kU, crown::kEta, false};
  if (arith == "f32" || arith == "binary32") return crown::EvalErr{0x1p-24, 0x1p-149, true};
  return error_status(ErrorCode::kInvalidInput,
                      fmt::format("IR bounds: --method crown/alpha-crown needs --arith f64 or f32, got {}", arith))
      .with_field("arith");
}

// Relaxations read their parent's box (ops.def's relaxed ops, and max_pool's lines): those parents get
// intermediate bounds, except a max_pool's split (relu) parent, whose box follows its own parent's
// (refresh_children). relu_only: every such consumer is a split op (only its unstable elements matter).
struct Consumers {
  std::vector<bool> needed, relu_only;
};
Consumers consumers(const Graph& g, const std::vector<bool>& anc) {
  Consumers c{std::vector<bool>(g.nodes.size(), false), std::vector<bool>(g.nodes.size(), true)};
  for (const Node& n : g.nodes) {
    if (!anc[static_cast<size_t>(n.id)]) continue;
    const bool pool = bound_kernel(n.op) == BoundKernel::Pool;
    if (!is_relaxed(n.op) && !pool) continue;
    const size_t p = static_cast<size_t>(n.parents[0]);
    if (pool && splits_at_zero(g.nodes[p].op)) continue;
    c.needed[p] = true;
    if (!splits_at_zero(n.op)) c.relu_only[p] = false;
  }
  return c;
}

// The nodes the output depends on whose op has no linear rule, or whose rule needs a constant operand that
// it lacks (mul_elem, matmul: one of the two; div: the divisor): CrownResult::cut.
std::vector<int64_t> cut_in_cone(const Graph& g, const Payload<double>& payload, int64_t output_id) {
  const std::vector<bool> anc = walk::ancestors(g, output_id);
  auto constant = [&](int64_t p) { return const_behind(g, payload, p) != nullptr; };
  std::vector<int64_t> out;
  for (const Node& n : g.nodes) {
    if (!anc[static_cast<size_t>(n.id)]) continue;
    bool cut = crown::crown_rule(n.op) == nullptr;
    const BoundKernel k = bound_kernel(n.op);
    if (k == BoundKernel::Product) cut = !constant(n.parents[0]) && !constant(n.parents.back());
    if (k == BoundKernel::Quotient) cut = !constant(n.parents.back());  // x / c only
    if (cut) out.push_back(n.id);
  }
  return out;
}

// alpha-CROWN on the rows +e_j, -e_j of the elements, as many at a time as the budget allows
// (elements whose rows do not fit keep their CROWN bounds).
void optimise_elements(crown::Engine& eng, int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo,
                       std::vector<double>& hi, const CrownOptions& o) {
  const int64_t m = numel(eng.g.nodes[static_cast<size_t>(id)].out_shape);
  const int64_t terms = static_cast<int64_t>(eng.beta_terms.size());
  const int64_t fit = eng.budget.pairs_per_chunk(eng.g, id, crown::PassKind::Alpha, terms);
  if (fit < 1) return eng.budget.refuse(eng.g, id, crown::PassKind::Alpha, terms, 2, "alpha-CROWN bound");
  for (size_t at = 0; at < elems.size(); at += static_cast<size_t>(fit)) {
    const size_t k = std::min(static_cast<size_t>(fit), elems.size() - at);
    std::vector<double> start(2 * k);
    for (size_t r = 0; r < k; ++r) start[r] = lo[at + r], start[k + r] = -hi[at + r];
    std::vector<double> C(2 * k * static_cast<size_t>(m));
    crown::UnitRows::plus_minus(std::vector<int64_t>(elems.begin() + static_cast<std::ptrdiff_t>(at),
                                                     elems.begin() + static_cast<std::ptrdiff_t>(at + k)))
        .fill(m, C.data());
    const std::vector<double> best = eng.optimise(id, C, static_cast<int64_t>(2 * k), start, o);
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

// The relu splits by node, applied to the engine's boxes (CrownOptions::splits).
struct SplitSet {
  std::vector<std::vector<CrownOptions::ReluSplit>> by_node;
  bool infeasible = false;

  // Bounds [lo, hi] just computed for elems of node id that contradict a split: the subdomain is empty.
  void check(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
             const std::vector<double>& hi) {
    if (by_node.empty()) return;
    for (const auto& sp : by_node[static_cast<size_t>(id)]) {
      const auto it = std::find(elems.begin(), elems.end(), sp.elem);
      if (it == elems.end()) continue;
      const size_t r = static_cast<size_t>(it - elems.begin());
      if (sp.active ? hi[r] < -sp.margin : lo[r] > sp.margin) infeasible = true;
    }
  }
  // Clamps node id's box by its splits.
  void apply(crown::Engine& eng, int64_t id) {
    auto& b = eng.boxes[static_cast<size_t>(id)];
    if (by_node.empty() || !b) return;
    for (const auto& sp : by_node[static_cast<size_t>(id)]) {
      double& l = b->lo[static_cast<size_t>(sp.elem)];
      double& h = b->hi[static_cast<size_t>(sp.elem)];
      if (sp.active ? h < -sp.margin : l > sp.margin) infeasible = true;
      if (sp.active)
        l = std::max(l, -sp.margin);
      else
        h = std::min(h, sp.margin);
    }
    eng.refresh_children(id);
  }
};

Result<SplitSet> split_set(const Graph& g, const CrownOptions& o) {
  SplitSet s;
  if (!o.splits || o.splits->empty()) return s;
  s.by_node.resize(g.nodes.size());
  for (size_t k = 0; k < o.splits->size(); ++k) {
    const auto& sp = (*o.splits)[k];
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

// The intermediate bounds of one node (intermediate_bounds).
void bound_node(crown::Engine& eng, const Node& n, bool relu_only, const CrownOptions& o, SplitSet& splits) {
  const Graph& g = eng.g;
  const bool lirpa = o.lirpa_compatible;
  if (!lirpa && bound_kernel(n.op) == BoundKernel::Conv && first_layer(g, n)) {  // no pass adds to the IBP box (rows x numel each)
    eng.refresh_children(n.id);
    return;
  }
  const int64_t m = numel(n.out_shape);
  std::vector<int64_t> all(static_cast<size_t>(m));
  for (int64_t j = 0; j < m; ++j) all[static_cast<size_t>(j)] = j;
  std::vector<double> lo, hi;
  eng.bound_elements(n.id, all, /*one_step=*/true, lo, hi);
  splits.check(n.id, all, lo, hi);
  eng.tighten(n.id, all, lo, hi, lirpa);
  splits.apply(eng, n.id);
  std::vector<int64_t> elems;
  const DoubleBox& b = *eng.boxes[static_cast<size_t>(n.id)];
  for (int64_t j = 0; j < m; ++j)
    if (!relu_only || (b.lo[static_cast<size_t>(j)] < 0 && b.hi[static_cast<size_t>(j)] > 0)) elems.push_back(j);
  if (first_layer(g, n))
    elems.clear();
  else if (lirpa && static_cast<double>(elems.size()) > 0.9 * static_cast<double>(m))
    elems = all;
  if (!elems.empty() && eng.budget.failure.empty()) {
    eng.bound_elements(n.id, elems, false, lo, hi);
    if (o.method == BoundMethod::AlphaCrown && o.alpha_intermediate) optimise_elements(eng, n.id, elems, lo, hi, o);
    splits.check(n.id, elems, lo, hi);
    eng.tighten(n.id, elems, lo, hi, lirpa);
    splits.apply(eng, n.id);
  }
  eng.refresh_children(n.id, lirpa);
}

// Node by node: the one-step box from the parents' boxes, then CROWN on the elements that matter
// (for relu consumers only the unstable ones), then alpha-CROWN on them; relu children follow.
// Split nodes are clamped after each bound; an empty subdomain stops the walk. Errors: the
// deadline passed (CrownOptions::deadline), or a pass does not fit the memory budget; each names
// the node.
Status intermediate_bounds(crown::Engine& eng, int64_t output, const CrownOptions& o, SplitSet& splits) {
  const Graph& g = eng.g;
  const Consumers c = consumers(g, walk::ancestors(g, output));
  auto late = [](int64_t at) {
    const std::string what = fmt::format("IR bounds: the deadline passed during the intermediate bounds, at node {}", at);
    return error_status(ErrorCode::kResource, what).with_node(at, what).with_field("deadline");
  };
  for (const Node& n : g.nodes) {
    const size_t id = static_cast<size_t>(n.id);
    if (!c.needed[id] || n.op == Op::Input || n.op == Op::Const || !eng.boxes[id]) continue;
    if (past(o.deadline)) return late(n.id);
    bound_node(eng, n, c.relu_only[id], o, splits);
    if (eng.late) return late(n.id);  // between chunks of one node's rows
    if (!eng.budget.failure.empty())
      return error_status(ErrorCode::kResource, eng.budget.failure)
          .with_node(eng.budget.node, eng.budget.failure)
          .with_field("max-memory");
    if (splits.infeasible) return ok_status();
  }
  return ok_status();
}

Status check_spec(const SpecMatrix& s, int64_t cols) {
  if (s.rows <= 0 || s.cols != cols || s.c.size() != static_cast<size_t>(s.rows * s.cols))
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("IR bounds: spec has {} rows of {} columns ({} values), expected columns = the "
                                    "output's {} elements",
                                    s.rows, s.cols, s.c.size(), cols))
        .with_field("spec");
  for (size_t i = 0; i < s.c.size(); ++i)
    if (!std::isfinite(s.c[i]))
      return error_status(ErrorCode::kInvalidInput, fmt::format("IR bounds: spec entry {} is not finite", i))
          .with_field("spec");
  return ok_status();
}

// CrownOptions::prior_only: the prior's boxes when it has one of the right size for every node and
// the inputs fit; nullopt otherwise (then IBP runs).
std::optional<DoubleIbp> prior_boxes(const Graph& g, std::span<const DoubleBox> inputs, const CrownOptions& o) {
  if (!o.prior_only || !o.prior || o.prior->size() != g.nodes.size()) return std::nullopt;
  for (const Node& n : g.nodes) {
    const auto& b = (*o.prior)[static_cast<size_t>(n.id)];
    if (!b || static_cast<int64_t>(b->lo.size()) != numel(n.out_shape)) return std::nullopt;
  }
  const std::vector<int64_t> ids = g.input_ids();
  if (ids.size() != inputs.size()) return std::nullopt;
  DoubleIbp out{*o.prior, {}};
  for (size_t k = 0; k < ids.size(); ++k) {
    DoubleBox& b = *out.boxes[static_cast<size_t>(ids[k])];
    if (inputs[k].lo.size() != b.lo.size() || inputs[k].hi.size() != b.lo.size()) return std::nullopt;
    for (size_t j = 0; j < b.lo.size(); ++j) {
      b.lo[j] = std::max(b.lo[j], inputs[k].lo[j]);
      b.hi[j] = std::min(b.hi[j], inputs[k].hi[j]);
      if (!(b.lo[j] <= b.hi[j])) return std::nullopt;
    }
  }
  return out;
}

// The splits leave no input: every bound holds vacuously.
CrownResult empty_subdomain(CrownResult res, crown::Engine&& eng, int64_t k) {
  res.infeasible = true;
  res.spec_lo.assign(static_cast<size_t>(k), INFINITY);
  res.spec_hi.assign(static_cast<size_t>(k), -INFINITY);
  res.boxes = std::move(eng.boxes);
  res.passes = eng.passes;
  res.rows = eng.rows_total;
  return res;
}

// The first k rows of the pass's coefficients at each relu node.
std::vector<std::vector<double>> relu_rows(const Graph& g, std::vector<std::vector<double>> A, int64_t k) {
  std::vector<std::vector<double>> out(g.nodes.size());
  for (const Node& n : g.nodes) {
    auto& a = A[static_cast<size_t>(n.id)];
    const size_t len = static_cast<size_t>(k * numel(n.out_shape));
    if (!splits_at_zero(n.op) || a.size() < len) continue;
    a.resize(len);
    out[static_cast<size_t>(n.id)] = std::move(a);
  }
  return out;
}

Status check_prepared(const Graph& g, const Payload<double>& payload, const CrownOptions& o) {
  if (!o.ibp) return ok_status();
  if (&o.ibp->graph() != &g || &o.ibp->payload() != &payload)
    return error_status(ErrorCode::kInvalidInput,
                        "IR bounds: CrownOptions.ibp was prepared for another graph or payload than the one bounded");
  if (o.ibp->arith() != o.arith)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("IR bounds: CrownOptions.ibp was prepared for arith '{}', the bound asks for '{}'",
                                    o.ibp->arith(), o.arith));
  return ok_status();
}

// The final pass's rows fit the memory budget (with the copies a record or alpha-CROWN keeps).
Status check_final_rows(crown::Engine& eng, int64_t output, int64_t rows, const CrownOptions& o, bool one_step) {
  const bool record = o.input_coefficients || o.relu_coefficients;
  const crown::PassKind kind = one_step ? crown::PassKind::OneStep
                               : o.method == BoundMethod::AlphaCrown ? crown::PassKind::Alpha
                               : record ? crown::PassKind::Record
                                        : crown::PassKind::Full;
  const int64_t terms = static_cast<int64_t>(eng.beta_terms.size());
  if (eng.budget.rows_that_fit(eng.g, output, kind, terms) >= rows) return ok_status();
  eng.budget.refuse(eng.g, output, kind, terms, rows, "bound of the specification's rows");
  return error_status(ErrorCode::kResource, eng.budget.failure)
      .with_node(output, eng.budget.failure)
      .with_field("max-memory");
}

}  // namespace

Result<CrownResult> run_crown(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                              int64_t output_id, const SpecMatrix* spec, const CrownOptions& o) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  if (output_id < 0 || output_id >= static_cast<int64_t>(g.nodes.size()))
    return error_status(ErrorCode::kInvalidInput, fmt::format("IR bounds: output id {} is not a node", output_id));
  const int64_t m = numel(g.nodes[static_cast<size_t>(output_id)].out_shape);
  if (spec) DENOTE_RETURN_IF_ERROR(check_spec(*spec, m));
  // Nothing starts past the deadline: IBP's pass and the final pass do not look at it (a property of 50
  // boxes on nn4sys: 1.4 s a call, 71 s in all on a 20 s timeout).
  if (past(o.deadline))
    return error_status(ErrorCode::kResource, "IR bounds: the deadline passed before the bounds started")
        .with_field("deadline");
  crown::EvalErr err{};
  auto known_err = eval_err_for(o.arith);
  if (o.method != BoundMethod::Ibp && !known_err.ok()) return known_err.status();
  if (known_err.ok()) err = *known_err;
  DENOTE_ASSIGN_OR_RETURN(SplitSet splits, split_set(g, o));
  DENOTE_RETURN_IF_ERROR(check_prepared(g, payload, o));
  std::optional<DoubleIbp> reused = prior_boxes(g, inputs, o);
  if (!reused) {
    DENOTE_ASSIGN_OR_RETURN(DoubleIbp fresh, o.ibp ? run_ibp_double(*o.ibp, inputs, o.eval)
                                                   : run_ibp_double(g, payload, inputs, o.arith, o.eval));
    if (o.prior) intersect_node_boxes(fresh.boxes, *o.prior);
    reused = std::move(fresh);
  }
  DoubleIbp& ibp = *reused;
  // CROWN's slack terms need the error model; where it fails the bounds are IBP's (sound there).
  std::string gap;
  if (o.method != BoundMethod::Ibp || known_err.ok())
    gap = crown_model_gap(o.ibp ? o.ibp->parameter_gap() : parameter_range_gap(payload, o.arith), ibp.boxes);
  const bool linear = known_err.ok() && gap.empty();
  crown::Engine eng(g, payload, err, std::move(ibp.boxes));
  eng.prepared = o.ibp;
  eng.set_budget(effective_max_bytes(o.eval));
  eng.deadline = o.deadline;
  CrownResult res;
  res.notes = std::move(ibp.notes);
  res.output = output_id;
  res.has_spec = spec != nullptr;
  res.fallback = std::move(gap);
  for (size_t id = 0; id < splits.by_node.size(); ++id) splits.apply(eng, static_cast<int64_t>(id));
  if (o.splits)
    for (const auto& sp : *o.splits) eng.beta_terms.push_back({sp.node, sp.elem, sp.active ? 1.0 : -1.0, sp.margin});
  const bool passes = linear && o.method != BoundMethod::Ibp;  // CROWN's passes, not only the one-step rule
  if (passes) res.cut = cut_in_cone(g, payload, output_id);
  if (passes && o.forward_intermediate && (!o.splits || o.splits->empty())) crown::symbolic_bounds(eng);
  if (passes && o.intermediate_crown && !splits.infeasible)
    DENOTE_RETURN_IF_ERROR(intermediate_bounds(eng, output_id, o, splits));
  const int64_t k = spec ? spec->rows : m;
  if (splits.infeasible) return empty_subdomain(std::move(res), std::move(eng), k);
  // The rows [C; -C] (C = identity without a spec), or C alone.
  const int64_t nr = spec && o.lower_only ? k : 2 * k;
  DENOTE_RETURN_IF_ERROR(check_final_rows(eng, output_id, nr, o, !passes));
  std::vector<double> C(static_cast<size_t>(nr * m), 0.0);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t j = 0; j < m; ++j) {
      const double v = spec ? spec->c[static_cast<size_t>(r * m + j)] : (r == j ? 1.0 : 0.0);
      C[static_cast<size_t>(r * m + j)] = v;
      if (nr == 2 * k) C[static_cast<size_t>((k + r) * m + j)] = -v;
    }
  const bool cut_output = !passes;
  crown::PassResult pr;
  const bool record = (o.input_coefficients || o.relu_coefficients) && passes;
  std::vector<std::vector<double>> scales(g.nodes.size());  // the boxes are final: kept for alpha-CROWN
  crown::PassOptions po;
  po.one_step = cut_output;
  po.record = record;
  po.scales = &scales;
  if (linear)
    pr = eng.pass(output_id, C, nr, po);
  else
    pr.lower.assign(static_cast<size_t>(nr), -INFINITY);  // IBP in a binary format, or no error model: the box only
  if (cut_output) {
    // IBP: C folded into the output node's own rule (the one-step pass above, auto_LiRPA's IBP with
    // C), or C at the output's box, whichever is tighter per row.
    if (const auto& b = eng.boxes[static_cast<size_t>(output_id)])
      for (int64_t r = 0; r < nr; ++r) {
        double s = 0, mag = 0;
        for (int64_t j = 0; j < m; ++j) {
          const double c = C[static_cast<size_t>(r * m + j)];
          if (c == 0) continue;
          const double t = c > 0 ? c * b->lo[static_cast<size_t>(j)] : c * b->hi[static_cast<size_t>(j)];
          s += t, mag += std::fabs(t);
        }
        const double v = crown::dn(s - crown::up(crown::gamma(static_cast<double>(m) + 2) * mag + m * crown::kEta));
        if (!std::isnan(v)) pr.lower[static_cast<size_t>(r)] = std::max(pr.lower[static_cast<size_t>(r)], v);
      }
  }
  if (record) {
    const std::vector<int64_t> in_ids = g.input_ids();
    const auto* a = in_ids.empty() || pr.A.size() <= static_cast<size_t>(in_ids[0])
                        ? nullptr
                        : &pr.A[static_cast<size_t>(in_ids[0])];
    const size_t nx =
        in_ids.empty() ? 0 : static_cast<size_t>(numel(g.nodes[static_cast<size_t>(in_ids[0])].out_shape));
    if (a && a->size() >= static_cast<size_t>(k) * nx)
      res.input_coef.assign(a->begin(), a->begin() + static_cast<std::ptrdiff_t>(k * nx));
    res.input_linear =
        !res.input_coef.empty() && !pr.cut && in_ids.size() == 1 && spec && o.method == BoundMethod::Crown;
    if (o.relu_coefficients) res.relu_coef = relu_rows(g, std::move(pr.A), k);
  }
  std::vector<double> lower = pr.lower;
  if (passes && o.method == BoundMethod::AlphaCrown) lower = eng.optimise(output_id, C, nr, lower, o, o.stop_above, &scales);
  res.spec_lo.resize(static_cast<size_t>(k));
  res.spec_hi.resize(static_cast<size_t>(k));
  for (int64_t r = 0; r < k; ++r) {
    res.spec_lo[static_cast<size_t>(r)] = lower[static_cast<size_t>(r)];
    res.spec_hi[static_cast<size_t>(r)] = nr == 2 * k ? -lower[static_cast<size_t>(k + r)] : INFINITY;
  }
  if (!spec && passes) {
    std::vector<int64_t> all(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) all[static_cast<size_t>(j)] = j;
    eng.tighten(output_id, all, res.spec_lo, res.spec_hi);
  }
  res.boxes = std::move(eng.boxes);
  res.passes = eng.passes;
  res.rows = eng.rows_total;
  res.alpha_steps = eng.alpha_steps;
  return res;
}

std::string crown_model_gap(const std::string& parameter_gap, const std::vector<std::optional<DoubleBox>>& boxes) {
  if (!parameter_gap.empty()) return "a parameter leaves the arithmetic's error model (" + parameter_gap + ")";
  for (size_t id = 0; id < boxes.size(); ++id) {
    if (!boxes[id]) continue;
    const DoubleBox& b = *boxes[id];
    for (size_t j = 0; j < b.lo.size(); ++j)
      if (!std::isfinite(b.lo[j]) || !std::isfinite(b.hi[j]))
        return fmt::format("node {} element {} has the box [{}, {}]: the evaluation may overflow there", id, j, b.lo[j],
                           b.hi[j]);
  }
  return "";
}

// Both enclose the same values, so they overlap; an element whose intersection would be empty
// (only possible from a caller's mistake) keeps its box.
void intersect_node_boxes(std::vector<std::optional<DoubleBox>>& boxes,
                          const std::vector<std::optional<DoubleBox>>& other) {
  for (size_t i = 0; i < boxes.size() && i < other.size(); ++i) {
    if (!boxes[i] || !other[i] || other[i]->lo.size() != boxes[i]->lo.size()) continue;
    DoubleBox& b = *boxes[i];
    for (size_t j = 0; j < b.lo.size(); ++j) {
      const double l = std::max(b.lo[j], other[i]->lo[j]), h = std::min(b.hi[j], other[i]->hi[j]);
      if (l <= h) b.lo[j] = l, b.hi[j] = h;
    }
  }
}

}  // namespace denote
