// denote bounds --method crown|alpha-crown [--spec C] [--alpha-iters N]: linear bounds (run_crown,
// include/denote/bounds/crown.h). Text: the output boxes (every box with --all-nodes), then one
// line per spec row; --json adds "output" to each box and {"spec": {"lo", "hi"}}.
#include <algorithm>
#include <cmath>
#include <iostream>

#include <optional>

#include <fmt/format.h>

#include "cli_bounds.h"

namespace denote::cli {

namespace {

std::string json_list(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_number(v[i]);
  return out + "]";
}

Result<SpecMatrix> parse_spec(const std::string& text, int64_t cols) {
  DENOTE_ASSIGN_OR_RETURN(Tensor<double> t, parse_tensor(text, "--spec"));
  SpecMatrix s;
  if (t.shape.size() == 1) {
    s.rows = 1, s.cols = t.shape[0];
  } else if (t.shape.size() == 2) {
    s.rows = t.shape[0], s.cols = t.shape[1];
  } else {
    return error_status(fmt::format("--spec: expected a matrix (rows x {}), got shape {}", cols, to_string(t.shape)));
  }
  if (s.rows == 0) return error_status("--spec: the matrix has 0 rows; expected at least one row to bound");
  if (s.cols != cols)
    return error_status(fmt::format("--spec: rows have {} entries, the output has {} elements", s.cols, cols));
  for (size_t i = 0; i < t.data.size(); ++i)
    if (!std::isfinite(t.data[i]))
      return error_status(fmt::format("--spec: entry {} is {}; expected a finite number", i, json_number(t.data[i])));
  s.c = std::move(t.data);
  return s;
}

struct Run {
  std::vector<CrownResult> per_output;  // one per model output (the spec run: one)
  // The nodes every run took at their IBP box (CrownResult::cut), ascending, once each.
  std::vector<int64_t> cut() const { return cut_nodes(per_output); }
};

void print_text(const Model& m, const Run& run, const BoxOptions& o, BoundMethod method) {
  std::cout << "method: " << bound_method_name(method) << ", arith: " << o.arith
            << (o.norm == "inf" ? "" : ", norm " + o.norm + (method != BoundMethod::Ibp ? " (bounded on the ball)" : " (the ball's bounding box)"))
            << (o.all_nodes ? "" : ", output nodes (--all-nodes for every node)") << "\n";
  const CrownResult& first = run.per_output.front();
  std::vector<int64_t> ids = m.output_ids;
  if (o.all_nodes) {
    ids.clear();
    for (size_t i = 0; i < first.boxes.size(); ++i) ids.push_back(static_cast<int64_t>(i));
  }
  for (int64_t i : ids) {
    // The run whose pass started at node i (an output) holds its tightest box.
    const CrownResult* r = &first;
    for (const auto& pr : run.per_output)
      if (pr.output == i) r = &pr;
    const auto& b = r->boxes[static_cast<size_t>(i)];
    if (b)
      std::cout << fmt::format("node {}: {} .. {}\n", i, six_decimals(b->lo), six_decimals(b->hi));
    else
      std::cout << fmt::format("node {}: none\n  why: {}\n", i, r->notes[static_cast<size_t>(i)]);
  }
  if (first.has_spec)
    for (size_t k = 0; k < first.spec_lo.size(); ++k)
      std::cout << fmt::format("spec row {}: [{:.9g}, {:.9g}]\n", k, first.spec_lo[k], first.spec_hi[k]);
  if (const auto cut = run.cut(); !cut.empty())
    std::cout << "note: no linear relaxation at " << describe_cut(m.graph, cut)
              << "; the linear bounds take their IBP box there (docs/NUMERICS.md, \"Linear bounds\")\n";
  if (!first.fallback.empty())
    std::cout << "note: the linear bounds are IBP's: " << first.fallback << " (CROWN's error model does not hold)\n";
}

void print_json(const Model& m, const Run& run, const BoxOptions& o, BoundMethod method) {
  const CrownResult& first = run.per_output.front();
  std::vector<int64_t> ids = m.output_ids;
  if (o.all_nodes) {
    ids.clear();
    for (size_t i = 0; i < first.boxes.size(); ++i) ids.push_back(static_cast<int64_t>(i));
  }
  std::string out = fmt::format("{{\"method\": \"{}\", \"arith\": \"{}\", \"nodes\": \"{}\", \"boxes\": [",
                                bound_method_name(method), o.arith, o.all_nodes ? "all" : "outputs");
  for (size_t k = 0; k < ids.size(); ++k) {
    const int64_t i = ids[k];
    const CrownResult* r = &first;
    for (const auto& pr : run.per_output)
      if (pr.output == i) r = &pr;
    bool is_out = false;
    for (int64_t id : m.output_ids) is_out = is_out || id == i;
    const auto& b = r->boxes[static_cast<size_t>(i)];
    out += k ? ", " : "";
    if (b)
      out += fmt::format("{{\"id\": {}, \"output\": {}, \"shape\": [{}], \"lo\": {}, \"hi\": {}}}", i, is_out,
                         join_ints(b->shape), json_list(b->lo), json_list(b->hi));
    else
      out += fmt::format("{{\"id\": {}, \"output\": {}, \"box\": null, \"why\": \"{}\"}}", i, is_out,
                         json_escape(r->notes[static_cast<size_t>(i)]));
  }
  out += "]";
  if (first.has_spec)
    out += fmt::format(", \"spec\": {{\"output\": {}, \"lo\": {}, \"hi\": {}}}", first.output, json_list(first.spec_lo),
                       json_list(first.spec_hi));
  out += fmt::format(", \"cut\": [{}]", join_ints(run.cut()));
  out += fmt::format(", \"fallback\": \"{}\"", json_escape(first.fallback));  // "" when the linear passes ran
  out += fmt::format(", \"stats\": {{\"passes\": {}, \"rows\": {}, \"alpha_steps\": {}}}}}\n", first.passes, first.rows,
                     first.alpha_steps);
  std::cout << out;
}

}  // namespace

// --norm 2 / 1 with --method crown or alpha-crown (one input): the ball itself, for the bound engine
// (Subdomain::ball); the boxes otherwise.
Result<Subdomain> ball_domain(const Model& m, const std::vector<DoubleBox>& boxes, const BoxOptions& o,
                              const CrownOptions& co) {
  Subdomain where;
  if (std::isinf(o.p) || co.method == BoundMethod::Ibp || boxes.size() != 1) return where;
  DENOTE_ASSIGN_OR_RETURN(auto centers, parse_inputs(m.graph, o.center, "--center"));
  where.ball = std::make_shared<const InputBall>(InputBall{std::move(centers[0].data), o.eps, o.p});
  return where;
}

int run_linear_bounds(BoxOptions& o, BoundMethod method, const LinearBoundOptions& lb) {
  auto budget = check_box_usage(o);
  if (!budget.ok()) return usage_error(budget.message());
  std::optional<Result<Model>> loaded;  // with --arith auto, loaded first: the file says which arith
  if (o.arith == "auto") loaded = load_box_model(o);
  if (loaded && !loaded->ok()) return fail(loaded->message());
  const Result<ArithSpec> arith = parse_arith_name(o.arith, /*allow_real=*/false);
  if (method != BoundMethod::Ibp && (!arith.ok() || !(arith->is_f64() || arith->is_f32())))
    return usage_error("--arith " + o.arith + ": --method " + std::string(bound_method_name(method)) +
                       " bounds the f64 or f32 evaluation; expected f64 or f32");
  if (!arith.ok()) return usage_error("--arith " + o.arith + ": expected f64, f32 or a binary format (" + arith.message() + ")");
  if (lb.alpha_iters_given && method != BoundMethod::AlphaCrown)
    return usage_error("--alpha-iters goes with --method alpha-crown");
  if (lb.alpha_iters < 1 || lb.alpha_iters > 100000)
    return usage_error(fmt::format("--alpha-iters {}: expected 1 to 100000", lb.alpha_iters));
  CrownOptions co;
  if (!set_intermediate(lb.intermediate, co))
    return usage_error("--intermediate " + lb.intermediate + ": expected crown, forward, forward+crown or ibp");
  auto m = loaded ? std::move(*loaded) : load_box_model(o);
  if (!m.ok()) return fail(m.message());
  auto boxes = parse_boxes(m->graph, o);
  if (!boxes.ok()) return fail(boxes.message());
  co.method = method;
  co.arith = *arith;
  co.alpha_iters = lb.alpha_iters;
  co.lirpa_compatible = lb.lirpa_compatible;
  set_max_bytes(co.eval, *budget);
  Run run;
  std::optional<SpecMatrix> spec;
  if (!lb.spec.empty()) {
    if (m->output_ids.size() != 1)
      return fail(fmt::format("--spec: the model has {} outputs; a spec needs exactly one", m->output_ids.size()));
    auto s = parse_spec(lb.spec, numel(m->graph.nodes[static_cast<size_t>(m->output_ids[0])].out_shape));
    if (!s.ok()) return fail(s.message());
    spec = std::move(*s);
  }
  const Result<Subdomain> where = ball_domain(*m, *boxes, o, co);
  if (!where.ok()) return fail(where.message());
  for (int64_t out : m->output_ids) {
    auto r = run_crown(m->graph, m->payload, *boxes, out, spec ? &*spec : nullptr, co, *where);
    if (!r.ok()) return fail(r.message());
    run.per_output.push_back(std::move(*r));
  }
  if (run.per_output.empty()) return fail("the model has no outputs");
  if (o.json)
    print_json(*m, run, o, method);
  else
    print_text(*m, run, o, method);
  return kExitOk;
}

}  // namespace denote::cli
