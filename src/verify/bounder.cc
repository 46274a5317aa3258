// The bounds of verify's subdomains (src/verify/bounder.h).
#include "verify/bounder.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "denote/base/deadline.h"
#include "verify/combine.h"

namespace denote::verify_detail {

SpecMatrix spec_of(const std::vector<VnnAtom>& conj, int64_t outputs) {
  SpecMatrix s{static_cast<int64_t>(conj.size()), outputs, {}};
  for (const VnnAtom& a : conj) s.c.insert(s.c.end(), a.coef.begin(), a.coef.end());
  return s;
}

std::unique_ptr<const IbpPrepared> prepared_ibp(const Model& m, const VerifyOptions& o) {
  auto p = IbpPrepared::prepare(m.graph, m.payload, o.arith);
  if (!p.ok()) return nullptr;
  return std::make_unique<const IbpPrepared>(std::move(*p));
}

CrownOptions Bounder::options(const Domain& d, BoundMethod method) const {
  CrownOptions co;
  co.method = method;
  if (method == BoundMethod::AlphaCrown && crown_s > 0) {
    // The intermediate nodes' slopes are optimised for at most a third of the time left (a node not
    // started by then keeps CROWN's bounds): cifar10_resnet's resnet_2b takes 15 s for all of them, and
    // those it reaches in 10 s cut prop_27's branch and bound from 2,146 subdomains to 82 (29.6 -> 11.8 s
    // at a 30 s timeout). The final rows' steps run after it.
    const auto now = Clock::now();
    const double left = std::chrono::duration<double>(deadline - now).count();
    co.alpha_intermediate = left > 0 && !o.certificate;  // a certificate's checker derives CROWN's
    co.alpha_intermediate_until = now + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(left / kAlphaIntermediateShare));
    co.alpha_intermediate_stall = kAlphaIntermediateStall;
  }
  co.deadline = deadline;
  co.eval.max_bytes = bound_memory(o);
  co.arith = o.arith;
  co.input_coefficients = method == BoundMethod::Crown;
  co.relu_multipliers = o.certificate;
  co.lower_only = true;
  set_intermediate(intermediate, co);  // checked by verify(): a known name
  co.forward_intermediate = (co.forward_intermediate || o.forward_bounds) && !o.certificate;
  return co;
}

Subdomain Bounder::where(const Domain& d) const {
  return Subdomain{d.prior, false, {}, rhs, ibp ? std::optional<IbpPrepared>(*ibp) : std::nullopt};
}

Bounded Bounder::bound(const Domain& d, BoundMethod method, int alpha_open) const {
  const DoubleBox box{input_shape(m), d.lo, d.hi};
  auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec,
                     options(d, method), where(d));
  if (!r.ok()) {
    if (errors) errors->add(r.status());
    return Bounded{};
  }
  AtomMultipliers mu;
  std::shared_ptr<const certify::Slopes> slopes;
  if (o.certificate)
    mu = atom_multipliers(m.graph, r->relu_mu, r->relu_mu_rows, 0, conj.size(), r->boxes), slopes = slopes_of(m.graph, r->boxes);
  Bounded out = judge(d, std::move(r->spec_lo), std::move(r->input_coef), r->input_linear,
                      std::make_shared<const Boxes>(std::move(r->boxes)));
  out.warm = std::move(r->slopes);
  out.atom_mu = std::move(mu);
  out.slopes = std::move(slopes);
  if (out.dec == Decision::Open && alpha_open > 0 && method == BoundMethod::Crown) tighten_alpha(d, alpha_open, out);
  return out;
}

Bounded Bounder::judge(const Domain& d, std::vector<double> lower, std::vector<double> coef, bool input_linear,
                       std::shared_ptr<const Boxes> boxes) const {
  Bounded out;
  out.dec = Decision::Open;
  out.spec_lo = std::move(lower);
  out.coef = std::move(coef);
  if (some_atom_impossible(conj, out.spec_lo)) out.dec = Decision::Proven;
  else if (o.combine_atoms && input_linear && conj.size() >= 2)
    if (auto lambda = refuting_combination(out.spec_lo, rhs, out.coef, d.lo, d.hi))
      out.dec = Decision::Proven, out.combined = true, out.lambda = std::move(*lambda);
  if (out.dec == Decision::Open) out.boxes = std::move(boxes);
  return out;
}

void Bounder::tighten_alpha(const Domain& d, int iters, Bounded& out) const {
  const DoubleBox box{input_shape(m), d.lo, d.hi};
  CrownOptions co = options(d, BoundMethod::AlphaCrown);
  co.alpha_iters = iters;
  co.alpha_intermediate = o.bab_alpha_intermediate && !o.certificate;
  out.alpha = true;
  auto a = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec, co, where(d));
  if (!a.ok()) {
    if (errors) errors->add(a.status());
    return;
  }
  std::vector<char> by_alpha(out.spec_lo.size(), 0);  // the rows whose bound is now alpha-CROWN's
  for (size_t k = 0; k < out.spec_lo.size() && k < a->spec_lo.size(); ++k) {
    by_alpha[k] = a->spec_lo[k] > out.spec_lo[k] && k < a->relu_mu_rows.size() && a->relu_mu_rows[k];
    out.spec_lo[k] = std::max(out.spec_lo[k], a->spec_lo[k]);
  }
  if (some_atom_impossible(conj, out.spec_lo)) {
    if (o.certificate) take_alpha_rows(m.graph, *a, by_alpha, 0, a->boxes, out.atom_mu);
    out.dec = Decision::Proven;
    out.boxes.reset();
    return;
  }
  if (!out.boxes) return;
  Boxes both = *out.boxes;
  intersect_node_boxes(both, a->boxes);
  out.boxes = std::make_shared<const Boxes>(std::move(both));
}

void take_alpha_rows(const Graph& g, const CrownResult& alpha, const std::vector<char>& by_alpha, size_t offset,
                     const NodeBoxes& boxes, AtomMultipliers& mu) {
  AtomMultipliers a = atom_multipliers(g, alpha.relu_mu, by_alpha, offset, mu.size(), boxes);
  for (size_t k = 0; k < mu.size(); ++k)
    if (offset + k < by_alpha.size() && by_alpha[offset + k]) mu[k] = std::move(a[k]);
}

Clock::time_point quarter_left(Clock::time_point deadline) {
  const auto now = Clock::now();
  return deadline <= now ? deadline : now + (deadline - now) / 4;
}

namespace {

// The jobs of each case with two or more conjunctions over more than Bounder::kFewInputs inputs.
std::vector<std::vector<size_t>> shared_boxes(const std::vector<const VnnCase*>& cases) {
  std::vector<std::vector<size_t>> groups;
  std::vector<const VnnCase*> of;
  for (size_t i = 0; i < cases.size(); ++i) {
    const VnnCase* c = cases[i];
    if (!c || c->lo_out.size() <= Bounder::kFewInputs) continue;
    const auto at = std::find(of.begin(), of.end(), c);
    if (at == of.end()) of.push_back(c), groups.push_back({i});
    else groups[static_cast<size_t>(at - of.begin())].push_back(i);
  }
  std::erase_if(groups, [](const std::vector<size_t>& g) { return g.size() < 2; });
  return groups;
}

// One CROWN pass on the stacked rows of a case's conjunctions (`jobs`): they share its input box, and
// the intermediate bounds, nearly all of a pass's cost on a deep network, do not depend on the rows
// (cifar10_resnet's resnet_4b: nine conjunctions paid nine 2.3 s passes, and at a 30 s timeout the
// last ones ran past their share of the time). Each conjunction is judged on its rows as by its own
// pass (Bounder::judge). False where the pass failed (the jobs then run their own passes).
bool joint_crown(const Model& m, const std::vector<size_t>& jobs, const VnnCase& c, std::vector<Bounder>& bounders,
                 std::vector<Bounded>& roots) {
  SpecMatrix spec{0, bounders[jobs.front()].spec.cols, {}};
  for (size_t i : jobs) {
    spec.rows += bounders[i].spec.rows;
    spec.c.insert(spec.c.end(), bounders[i].spec.c.begin(), bounders[i].spec.c.end());
  }
  const Domain whole{c.lo_out, c.hi_out, nullptr};
  const Bounder& b0 = bounders[jobs.front()];
  Subdomain where = b0.where(whole);
  where.stop_above.clear();  // one conjunction's rows above its rhs do not decide the others
  const DoubleBox box{input_shape(m), c.lo_out, c.hi_out};
  const auto t = Clock::now();
  auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec,
                     b0.options(whole, BoundMethod::Crown), where);
  if (!r.ok()) return false;
  const double took = since(t);
  const auto boxes = std::make_shared<const Boxes>(std::move(r->boxes));
  const size_t nx = c.lo_out.size();
  const bool coef = r->input_coef.size() == static_cast<size_t>(spec.rows) * nx;
  size_t at = 0;
  for (size_t i : jobs) {
    const size_t k = static_cast<size_t>(bounders[i].spec.rows);
    std::vector<double> lower(r->spec_lo.begin() + static_cast<std::ptrdiff_t>(at),
                              r->spec_lo.begin() + static_cast<std::ptrdiff_t>(at + k));
    std::vector<double> a;
    if (coef)
      a.assign(r->input_coef.begin() + static_cast<std::ptrdiff_t>(at * nx),
               r->input_coef.begin() + static_cast<std::ptrdiff_t>((at + k) * nx));
    roots[i] = bounders[i].judge(whole, std::move(lower), std::move(a), r->input_linear && coef, boxes);
    if (bounders[i].o.certificate) {
      roots[i].atom_mu = atom_multipliers(m.graph, r->relu_mu, r->relu_mu_rows, at, k, *boxes);
      roots[i].slopes = slopes_of(m.graph, *boxes);
    }
    bounders[i].crown_s = took;
    at += k;
  }
  return true;
}

}  // namespace

std::vector<Bounded> bound_roots(const std::vector<const VnnCase*>& cases, std::vector<Bounder>& bounders,
                                 WorkerPool& pool, Clock::time_point deadline, const VerifyOptions& o, VerifyStats& st) {
  const bool automatic = o.intermediate == "auto";
  const auto share = automatic ? quarter_left(deadline) : deadline;
  // Over a small input (more than kFewInputs, at most kMaxForwardInputs elements) where CROWN's
  // intermediate passes would take more than kCrownWorkLimit multiply-adds, forward+crown from the start
  // (VNN-COMP 2023's cGAN generators: about 1.7e12; CROWN's pass ran past its quarter of the time first).
  std::string upfront;
  if (automatic && !bounders.empty()) {
    const Model& m = bounders[0].m;
    const int64_t nx = numel(input_shape(m));
    const double work = nx > static_cast<int64_t>(Bounder::kFewInputs) && nx <= kMaxForwardInputs
                            ? crown_intermediate_work(m.graph, m.payload) : 0;
    if (work > Bounder::kCrownWorkLimit) {
      for (Bounder& b : bounders) b.intermediate = "forward+crown";
      upfront = fmt::format("forward+crown (CROWN's intermediate passes: about {:.1e} multiply-adds)", work);
    }
  }
  for (Bounder& b : bounders) b.deadline = std::min(deadline, share);
  std::vector<Bounded> roots(cases.size());
  // Over few inputs, IBP's pass first, then CROWN's within the time of kIbpFirstRatio IBP passes: past
  // that, subdomains are bounded by IBP (Bounder::ibp_domains), and once one conjunction has chosen so,
  // the others take the choice without their own CROWN pass (a 50-case nn4sys property paid 50 whole-box
  // CROWN passes of 1.5 s or more).
  const Bounder* measured = nullptr;
  std::vector<char> joint(cases.size(), 0);
  const auto groups = shared_boxes(cases);
  pool.run(static_cast<int>(groups.size()), [&](int k) {
    const auto& g = groups[static_cast<size_t>(k)];
    if (joint_crown(bounders[g.front()].m, g, *cases[g.front()], bounders, roots))
      for (size_t i : g) joint[i] = 1;
  });
  // One whole-box call per stacked group that ran, and one per other conjunction (with an output condition).
  for (const auto& g : groups) st.crown_calls += joint[g.front()];
  for (size_t i = 0; i < cases.size(); ++i) st.crown_calls += cases[i] && !joint[i];
  auto run = [&](int i) {
    const VnnCase* c = cases[static_cast<size_t>(i)];  // run_crown refuses to start past b.deadline
    if (!c || joint[static_cast<size_t>(i)]) return;
    Bounder& b = bounders[static_cast<size_t>(i)];
    const Domain whole{c->lo_out, c->hi_out, nullptr};
    Bounded& root = roots[static_cast<size_t>(i)];
    if (c->lo_out.size() <= Bounder::kFewInputs) {
      if (measured) b.crown_s = measured->crown_s, b.ibp_s = measured->ibp_s;
      const auto ti = Clock::now();
      root = b.bound(whole, BoundMethod::Ibp);
      if (measured || root.dec != Decision::Open) return;
      b.ibp_s = std::max(since(ti), 1e-9);
      const auto saved = b.deadline;
      b.deadline = std::min(saved, Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                                     Bounder::kIbpFirstRatio * 1.5 * b.ibp_s)));
      const auto t = Clock::now();
      Bounded crown = b.bound(whole, BoundMethod::Crown);
      b.crown_s = crown.dec == Decision::Error ? 2 * Bounder::kIbpFirstRatio * b.ibp_s : since(t);
      b.deadline = saved;
      if (crown.dec != Decision::Error) root = std::move(crown);
      return;
    }
    const auto t = Clock::now();
    root = b.bound(whole, BoundMethod::Crown);
    b.crown_s = since(t);
  };
  // Over few inputs, the conjunctions one by one until one has measured the two (then the rest in parallel).
  size_t first = 0;
  for (; first < cases.size() && !measured; ++first) {
    if (!cases[first] || cases[first]->lo_out.size() > Bounder::kFewInputs) break;
    run(static_cast<int>(first));
    if (bounders[first].ibp_domains()) measured = &bounders[first];
    else if (bounders[first].ibp_s > 0) {  // measured, and CROWN is cheap enough: the rest in parallel
      ++first;
      break;
    }
  }
  pool.run(static_cast<int>(cases.size() - first), [&](int k) { run(static_cast<int>(first) + k); });
  for (Bounder& b : bounders) b.deadline = deadline;
  // Where CROWN's whole-box pass failed: forward functions with CROWN passes that stop at them
  // (forward+crown, inputs of at most 64 elements: the passes' work is bounded), then forward bounds alone.
  const std::vector<std::string> fallbacks = {"forward+crown", "forward"};
  std::vector<size_t> fell(fallbacks.size(), 0);
  const bool small_input = !cases.empty() && !bounders.empty() &&
                           numel(input_shape(bounders[0].m)) <= kMaxForwardInputs;
  for (size_t f = small_input ? 0 : 1; automatic && f < fallbacks.size(); ++f) {
    std::vector<int> again;
    for (size_t i = 0; i < cases.size(); ++i)
      if (cases[i] && roots[i].dec == Decision::Error && !past(deadline)) again.push_back(static_cast<int>(i));
    for (int i : again) bounders[static_cast<size_t>(i)].intermediate = fallbacks[f];
    pool.run(static_cast<int>(again.size()), [&](int k) { run(again[static_cast<size_t>(k)]); });
    st.crown_calls += static_cast<int64_t>(again.size());
    fell[f] = again.size();
  }
  std::string fallback;
  for (size_t f = 0; f < fallbacks.size(); ++f)
    if (fell[f] > 0) fallback += fmt::format("{}{} for {} of {} conjunctions", fallback.empty() ? "" : ", ", fallbacks[f], fell[f], cases.size());
  st.intermediate = !upfront.empty() && fallback.empty() ? upfront
                    : fallback.empty() ? (bounders.empty() ? "" : bounders[0].intermediate)
                                     : fallback + " (CROWN's whole-box pass ran past a quarter of the time left or the "
                                                  "memory budget)";
  return roots;
}

bool joint_alpha(const Model& m, const VnnCase& c, const std::vector<size_t>& open, const std::vector<Bounder>& bounders,
                 std::vector<Bounded>& roots, BoundErrors& errors) {
  SpecMatrix spec{0, bounders[open.front()].spec.cols, {}};
  for (size_t i : open) {
    spec.rows += bounders[i].spec.rows;
    spec.c.insert(spec.c.end(), bounders[i].spec.c.begin(), bounders[i].spec.c.end());
  }
  // Where the roots' boxes came from forward+crown, whose alpha-CROWN optimises the final rows only on
  // intermediate boxes made the same way: those boxes as the prior, no intermediate passes again (the
  // cGAN generators' 9 s). Not for a certificate, whose checker re-derives CROWN's boxes.
  const Bounder& b0 = bounders[open.front()];
  const bool reuse = b0.intermediate == "forward+crown" && roots[open.front()].boxes && !b0.o.certificate;
  const Domain whole{c.lo_out, c.hi_out, reuse ? roots[open.front()].boxes : nullptr};
  CrownOptions co = b0.options(whole, BoundMethod::AlphaCrown);
  co.input_coefficients = false;
  if (reuse) set_intermediate("ibp", co);  // IBP inside the prior: the roots' boxes
  Subdomain where = b0.where(whole);
  where.stop_above.clear();  // the rows of one conjunction above its rhs do not decide the others
  const DoubleBox box{input_shape(m), c.lo_out, c.hi_out};
  auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec, co, where);
  if (!r.ok()) {
    errors.add(r.status());
    return false;
  }
  bool any = false;
  auto at = r->spec_lo.begin();
  const auto boxes = std::make_shared<const Boxes>(std::move(r->boxes));
  for (size_t i : open) {
    std::vector<double> lower(at, at + bounders[i].spec.rows);
    at += bounders[i].spec.rows;
    Bounded& b = roots[i];
    const size_t offset = static_cast<size_t>(at - r->spec_lo.begin()) - lower.size();
    std::vector<char> by_alpha(r->relu_mu_rows.size(), 0);  // the rows whose bound is alpha-CROWN's
    for (size_t k = 0; k < lower.size(); ++k) {
      if (offset + k < by_alpha.size()) by_alpha[offset + k] = r->relu_mu_rows[offset + k] && !(k < b.spec_lo.size() && b.spec_lo[k] > lower[k]);
      if (k < b.spec_lo.size()) lower[k] = std::max(lower[k], b.spec_lo[k]);
    }
    if (some_atom_impossible(bounders[i].conj, lower)) {
      if (bounders[i].o.certificate) take_alpha_rows(m.graph, *r, by_alpha, offset, *boxes, b.atom_mu);
      b.dec = Decision::Proven, any = true, b.spec_lo = std::move(lower), b.alpha = true;
      continue;
    }
    b.spec_lo = std::move(lower), b.coef.clear(), b.boxes = boxes, b.alpha = true;
    if (r->slopes) b.warm = std::make_shared<const SlopeState>(slope_rows(*r->slopes, offset, bounders[i].spec.rows));
  }
  return any;
}

}  // namespace denote::verify_detail
