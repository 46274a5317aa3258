// run_crown (include/denote/bounds/crown.h): the checks, the one IBP entry and the engine, then the
// method's hooks (src/bounds/crown_strategy.h): intermediate bounds, the rows [C; -C].
#include "denote/bounds/crown.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "bounds/crown_engine.h"
#include "bounds/crown_strategy.h"
#include "denote/base/deadline.h"
#include "denote/check/check.h"
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
  o.forward_cut_work = t == "forward+crown" ? kForwardCutWork : 0;
  return true;
}

double crown_intermediate_work(const Graph& g, const Payload<double>& payload) {
  // below[id]: one row's backward steps through nodes 0..id (id order); a relaxed node's parent counts once.
  std::vector<double> below(g.nodes.size(), 0.0);
  std::vector<char> counted(g.nodes.size(), 0);
  double sum = 0, work = 0;
  (void)walk::in_order(g, "IR bounds", [&](const Node& n) {
    below[static_cast<size_t>(n.id)] = sum += crown::backward_cost(payload, n);
    if (!is_relaxed(n.op) || n.parents.empty() || counted[static_cast<size_t>(n.parents[0])]) return ok_status();
    const size_t p = static_cast<size_t>(n.parents[0]);
    counted[p] = 1;
    work += 2 * static_cast<double>(numel(g.nodes[p].out_shape)) * below[p];
    return ok_status();
  });
  return work;
}

std::string_view bound_method_name(BoundMethod m) {
  return m == BoundMethod::Ibp ? "ibp" : m == BoundMethod::Crown ? "crown" : "alpha-crown";
}

namespace {

Result<crown::EvalErr> eval_err_for(const ArithSpec& arith) {
  if (arith.is_f64()) return crown::EvalErr{crown::kU, crown::kEta, false};
  if (arith.is_f32()) return crown::EvalErr{0x1p-24, 0x1p-149, true};
  return error_status(ErrorCode::kInvalidInput,
                      fmt::format("IR bounds: --method crown/alpha-crown needs --arith f64 or f32, got {}", arith.name))
      .with_field("arith");
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

// What is checked before anything runs: the graph, the output id, the spec's size, the deadline.
Status check_call(const Graph& g, int64_t output_id, const SpecMatrix* spec, const CrownOptions& o) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  if (output_id < 0 || output_id >= static_cast<int64_t>(g.nodes.size()))
    return error_status(ErrorCode::kInvalidInput, fmt::format("IR bounds: output id {} is not a node", output_id));
  if (spec) DENOTE_RETURN_IF_ERROR(check_spec(*spec, numel(g.nodes[static_cast<size_t>(output_id)].out_shape)));
  // Nothing starts past the deadline: IBP's pass and the final pass do not look at it (a property of 50
  // boxes on nn4sys: 1.4 s a call, 71 s in all on a 20 s timeout).
  if (past(o.deadline))
    return error_status(ErrorCode::kResource, "IR bounds: the deadline passed before the bounds started")
        .with_field("deadline");
  return ok_status();
}

// Subdomain::prior_only: the prior's boxes when it has one of the right size for every node and the
// inputs fit; nullopt otherwise (then IBP runs).
std::optional<DoubleIbp> prior_boxes(const Graph& g, std::span<const DoubleBox> inputs, const Subdomain& where) {
  if (!where.prior_only || !where.prior || where.prior->size() != g.nodes.size()) return std::nullopt;
  for (const Node& n : g.nodes) {
    const auto& b = (*where.prior)[static_cast<size_t>(n.id)];
    if (!b || static_cast<int64_t>(b->lo.size()) != numel(n.out_shape)) return std::nullopt;
  }
  const std::vector<int64_t> ids = g.input_ids();
  if (ids.size() != inputs.size()) return std::nullopt;
  DoubleIbp out{*where.prior, {}};
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

// Subdomain::ball: one input, a center of its size, p 1 or 2, eps finite >= 0 (IBP bounds the box).
Status check_ball(const Graph& g, const CrownOptions& o, const Subdomain& where) {
  if (!where.ball) return ok_status();
  const InputBall& b = *where.ball;
  auto bad = [](const std::string& what) {
    return error_status(ErrorCode::kInvalidInput, "IR bounds: ball: " + what).with_field("ball");
  };
  const std::vector<int64_t> ids = g.input_ids();
  if (ids.size() != 1) return bad(fmt::format("a ball needs a model with one input, not {}", ids.size()));
  const int64_t n = numel(g.nodes[static_cast<size_t>(ids[0])].out_shape);
  if (static_cast<int64_t>(b.center.size()) != n)
    return bad(fmt::format("center of {} values, the input has {}", b.center.size(), n));
  if (b.p != 1 && b.p != 2) return bad(fmt::format("p {}: expected 1 or 2", b.p));
  if (!(b.eps >= 0) || !std::isfinite(b.eps)) return bad(fmt::format("eps {}: expected a finite number >= 0", b.eps));
  for (double c : b.center)
    if (!std::isfinite(c)) return bad(fmt::format("the center has a non-finite value {}", c));
  return ok_status();
}

// alpha-CROWN on a ball: its steps optimise the box's bound (their gradients read the box's vertices), so
// alpha-CROWN runs on the box and CROWN on the ball, each bound and box the tighter of the two (both hold
// on the ball).
Result<CrownResult> alpha_on_ball(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                  int64_t output_id, const SpecMatrix* spec, const CrownOptions& o,
                                  const Subdomain& where) {
  Subdomain box = where;
  box.ball = nullptr;
  DENOTE_ASSIGN_OR_RETURN(CrownResult res, run_crown(g, payload, inputs, output_id, spec, o, box));
  CrownOptions crown = o;
  crown.method = BoundMethod::Crown;
  DENOTE_ASSIGN_OR_RETURN(CrownResult ball, run_crown(g, payload, inputs, output_id, spec, crown, where));
  for (size_t k = 0; k < res.spec_lo.size() && k < ball.spec_lo.size(); ++k) {
    res.spec_lo[k] = std::max(res.spec_lo[k], ball.spec_lo[k]);
    res.spec_hi[k] = std::min(res.spec_hi[k], ball.spec_hi[k]);
  }
  intersect_node_boxes(res.boxes, ball.boxes);
  return res;
}

Status check_prepared(const Graph& g, const Payload<double>& payload, const CrownOptions& o, const Subdomain& where) {
  if (!where.prepared) return ok_status();
  const IbpPrepared& p = *where.prepared;
  if (&p.graph() != &g || &p.payload() != &payload)
    return error_status(ErrorCode::kInvalidInput,
                        "IR bounds: Subdomain.prepared was prepared for another graph or payload than the one bounded");
  if (p.arith().name != o.arith.name)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("IR bounds: Subdomain.prepared was prepared for arith '{}', the bound asks for '{}'",
                                    p.arith().name, o.arith.name));
  return ok_status();
}

// The one IBP entry of run_crown: the subdomain's prior boxes (prior_only), else a pass on the prepared
// model or the graph, intersected with the prior boxes.
Result<DoubleIbp> ibp_boxes(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                            const CrownOptions& o, const Subdomain& where) {
  DENOTE_RETURN_IF_ERROR(check_prepared(g, payload, o, where));
  if (std::optional<DoubleIbp> reused = prior_boxes(g, inputs, where)) return std::move(*reused);
  DENOTE_ASSIGN_OR_RETURN(DoubleIbp fresh, where.prepared ? run_ibp_double(*where.prepared, inputs, o.eval)
                                                          : run_ibp_double(g, payload, inputs, o.arith, o.eval));
  if (where.prior) intersect_node_boxes(fresh.boxes, *where.prior);
  return fresh;
}

// The splits leave no input: every bound holds vacuously.
CrownResult empty_subdomain(CrownResult res, crown::Engine& eng, int64_t k) {
  res.infeasible = true;
  res.spec_lo.assign(static_cast<size_t>(k), INFINITY);
  res.spec_hi.assign(static_cast<size_t>(k), -INFINITY);
  res.boxes = eng.take_boxes();
  res.passes = eng.stats().passes;
  res.rows = eng.stats().rows_total;
  return res;
}

// [C; -C] (C = the spec, or the identity without one), or C alone with lower_only and a spec.
crown::FinalRows final_rows(const SpecMatrix* spec, int64_t m, const CrownOptions& o) {
  crown::FinalRows f;
  f.m = m;
  f.k = spec ? spec->rows : m;
  f.nr = spec && o.lower_only ? f.k : 2 * f.k;
  f.C.assign(static_cast<size_t>(f.nr * m), 0.0);
  for (int64_t r = 0; r < f.k; ++r)
    for (int64_t j = 0; j < m; ++j) {
      const double v = spec ? spec->c[static_cast<size_t>(r * m + j)] : (r == j ? 1.0 : 0.0);
      f.C[static_cast<size_t>(r * m + j)] = v;
      if (f.nr == 2 * f.k) f.C[static_cast<size_t>((f.k + r) * m + j)] = -v;
    }
  return f;
}

// The final rows fit the memory budget (with the copies a record or alpha-CROWN keeps).
Status check_final_rows(crown::Engine& eng, int64_t output, int64_t rows, crown::PassKind kind) {
  const int64_t terms = static_cast<int64_t>(eng.setup().beta_terms.size());
  if (eng.budget().rows_that_fit(eng.g, output, kind, terms) >= rows) return ok_status();
  eng.budget().refuse(eng.g, output, kind, terms, rows, "bound of the specification's rows");
  return error_status(ErrorCode::kResource, eng.budget().failure)
      .with_node(output, eng.budget().failure)
      .with_field("max-memory");
}

// The engine on the IBP boxes, with the call's budget, deadline, prepared model and split terms.
crown::Engine make_engine(const Graph& g, const Payload<double>& payload, crown::EvalErr err, DoubleIbp& ibp,
                          const CrownOptions& o, const Subdomain& where) {
  crown::EngineSetup setup;
  setup.err = err;
  setup.prepared = where.prepared ? &*where.prepared : nullptr;
  setup.max_bytes = effective_max_bytes(o.eval);
  setup.deadline = o.deadline;
  setup.warm = where.warm.get();
  setup.forward_cut_work = o.forward_intermediate && o.intermediate_crown && where.splits.empty() ? o.forward_cut_work : 0;
  if (where.ball) setup.ball = where.ball.get(), setup.ball_input = g.input_ids()[0];
  for (const ReluSplit& sp : where.splits)
    setup.beta_terms.push_back({sp.node, sp.elem, sp.active ? 1.0 : -1.0, sp.margin});
  return crown::Engine(g, payload, std::move(setup), std::move(ibp.boxes));
}

// A subdomain with stop thresholds (Subdomain::stop_above) that IBP's output box already decides (a row's
// bound at the box above its threshold): those bounds, and no linear pass. Empty otherwise. Large sparse
// networks (nn4sys) split their one input into pieces that the boxes decide at a fraction of a pass.
std::vector<double> ibp_screen(crown::Run& run, const crown::FinalRows& f) {
  const std::vector<double>& stop = run.where.stop_above;
  if (stop.empty() || run.o.method == BoundMethod::Ibp || f.nr != f.k) return {};
  std::vector<double> lower(static_cast<size_t>(f.nr), -INFINITY);
  crown::box_rows(run, f, lower);
  for (size_t r = 0; r < stop.size() && r < lower.size(); ++r)
    if (lower[r] > stop[r]) return lower;
  return {};
}

}  // namespace

Result<CrownResult> run_crown(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                              int64_t output_id, const SpecMatrix* spec, const CrownOptions& o,
                              const Subdomain& where_in) {
  DENOTE_RETURN_IF_ERROR(check_call(g, output_id, spec, o));
  DENOTE_RETURN_IF_ERROR(check_ball(g, o, where_in));
  if (where_in.ball && o.method == BoundMethod::AlphaCrown)
    return alpha_on_ball(g, payload, inputs, output_id, spec, o, where_in);
  // One prepared model serves the IBP pass and the refreshed boxes of the nodes without a pass
  // (Engine::refresh_box); where preparing fails, run_ibp_double reports why.
  std::optional<Subdomain> own;
  if (!where_in.prepared && o.method != BoundMethod::Ibp)
    if (auto p = IbpPrepared::prepare(g, payload, o.arith); p.ok()) own = where_in, own->prepared = std::move(*p);
  const Subdomain& where = own ? *own : where_in;
  const Result<crown::EvalErr> err = eval_err_for(o.arith);
  if (o.method != BoundMethod::Ibp && !err.ok()) return err.status();
  DENOTE_ASSIGN_OR_RETURN(crown::SplitSet splits, crown::split_set(g, where.splits));
  DENOTE_ASSIGN_OR_RETURN(DoubleIbp ibp, ibp_boxes(g, payload, inputs, o, where));
  // The linear passes need the evaluation's error model; where it fails the bounds are IBP's (sound there).
  std::string gap;
  if (err.ok())
    gap = crown_model_gap(where.prepared ? where.prepared->parameter_gap() : parameter_range_gap(payload, o.arith),
                          ibp.boxes);
  crown::Engine eng = make_engine(g, payload, err.ok() ? *err : crown::EvalErr{}, ibp, o, where);
  CrownResult res;
  res.notes = std::move(ibp.notes);
  res.output = output_id;
  res.has_spec = spec != nullptr;
  crown::Run run{eng, o, where, splits, output_id, err.ok() && gap.empty(), {}};
  res.fallback = std::move(gap);
  run.scales.resize(g.nodes.size());
  for (size_t id = 0; id < splits.by_node.size(); ++id) splits.apply(eng, static_cast<int64_t>(id));
  const crown::BoundStrategy& method = crown::strategy_for(o.method, run.linear);
  const crown::FinalRows f = final_rows(spec, numel(g.nodes[static_cast<size_t>(output_id)].out_shape), o);
  std::vector<double> lower = ibp_screen(run, f);
  run.rows = &f;
  if (lower.empty()) {
    DENOTE_RETURN_IF_ERROR(method.intermediate(run, res));
    if (splits.infeasible) return empty_subdomain(std::move(res), eng, f.k);
    DENOTE_RETURN_IF_ERROR(check_final_rows(eng, output_id, f.nr, method.final_kind(o)));
    lower = method.final_rows(run, f, res);
    // The output's box may be tighter on some row than the final pass (IBP's step of a monotone output
    // on its CROWN-bounded parent, Engine::refresh_box): never looser than C at that box. Not where the
    // rows' linear functions are returned (their minimum is the row's bound: verify's combined atoms).
    if (!o.lirpa_compatible && !o.input_coefficients && !o.relu_coefficients) crown::box_rows(run, f, lower);
  }
  res.spec_lo.resize(static_cast<size_t>(f.k));
  res.spec_hi.resize(static_cast<size_t>(f.k));
  for (int64_t r = 0; r < f.k; ++r) {
    res.spec_lo[static_cast<size_t>(r)] = lower[static_cast<size_t>(r)];
    res.spec_hi[static_cast<size_t>(r)] = f.nr == 2 * f.k ? -lower[static_cast<size_t>(f.k + r)] : INFINITY;
  }
  if (!spec && method.tightens_output()) {
    std::vector<int64_t> all(static_cast<size_t>(f.m));
    for (int64_t j = 0; j < f.m; ++j) all[static_cast<size_t>(j)] = j;
    eng.tighten(output_id, all, res.spec_lo, res.spec_hi);  // the output's box, when the final rows bound it
  }
  res.boxes = eng.take_boxes();
  res.passes = eng.stats().passes;
  res.rows = eng.stats().rows_total;
  res.alpha_steps = eng.stats().alpha_steps;
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
