// Branch and bound over relu phases (src/verify/relu_bab.h).
#include "verify/relu_bab.h"
#include "denote/base/deadline.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "bounds/crown_conv.h"
#include "bounds/crown_relax.h"
#include "bounds/kernel_ops.h"
#include "eval/walk.h"
#include "verify/cert_record.h"

namespace denote::verify_detail {

namespace {

using Clock = std::chrono::steady_clock;
using Split = ReluSplit;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }


struct Bounds {
  bool error = false, proven = false;
  std::vector<double> spec_lo, coef;            // coef: rows x nx, the rows' lower bounds at the input
  std::vector<std::vector<double>> relu_coef;   // per relu node: rows x numel
  std::shared_ptr<const NodeBoxes> boxes;
  std::shared_ptr<const SlopeState> slopes;     // alpha-beta-CROWN's last step: the children start there
  AtomMultipliers atom_mu;                      // proven, for a certificate: each atom's relu multipliers
};

// Split candidates scored per subdomain (VerifyOptions::bab_candidates). With one scoring pass per relu
// (half_gains) more candidates cost little and pick better splits: mnistfc prop_1_0.03 timeout at 60 s
// with 10, 49 s with 24, 12.0 s with 48 (9,914 subdomains), 12.9 s with 64; oval21 cifar_deep img5168
// timeout at 60 s with 32, 21 s with 48, 13.4 s with 64 (508 subdomains), 16.3 s with 96; cifar_base
// img6638 timeout with 24, 11.9 s with 32, 13.9 s with 48, 16.5 s with 64. (Scored by 2k passes each,
// before: mnistfc prop_5_0.03 346 subdomains with 10, 3,276 with 1.)
constexpr double kSubdomainAlphaLr = 0.1;  // bound()'s alpha-CROWN step size

bool has_conv(const Model& m) {
  for (const Node& n : m.graph.nodes)
    if (bound_kernel(n.op) == BoundKernel::Conv) return true;
  return false;
}

size_t candidate_count(const Model& m, int asked) {
  if (asked > 0) return static_cast<size_t>(asked);
  return has_conv(m) ? 64 : 48;
}

// Nodes refreshed after a split (VerifyOptions::bab_refresh): on a deep MLP a split in an early layer
// makes the next layers' relus stable, which the parent's boxes cannot show (mnistfc 256x4 prop_0_0.03:
// 47,340 subdomains without, 1,104 with 2); on oval21's and cifar10_resnet's CNNs the subdomain counts
// stayed the same at twice the cost.
int64_t refresh_count(const Model& m, const VerifyOptions& o) {
  if (o.certificate) return 0;
  if (o.bab_refresh >= 0) return o.bab_refresh;
  return has_conv(m) ? 0 : 2;
}

struct ReluBab {
  Search& s;
  const SpecMatrix& spec;
  WorkerPool& pool;
  const std::vector<std::vector<double>>& margins;
  std::vector<Subdomain> stack;
  bool undecided = false;
  std::vector<double> rhs;  // per atom: a lower bound above it proves the subdomain
  const IbpPrepared* ibp = nullptr;  // the model prepared once, or null
  // Falsification interleaved with the search (descend_more).
  SplitMix64 rng{0};
  SearchBox box;
  double descent_s = 0;
  size_t n_candidates = 10;  // split candidates per subdomain (candidate_count)
  int64_t n_refresh = 0;     // nodes refreshed after a split (refresh_count)
  DoubleBox input;           // the case's input box, as run_crown takes it
  std::vector<char> affine;  // per node: affine in the input (affine_in_input; half_gains)
  // The conv plans the cones point into: the prepared model's, else the search's own.
  std::unique_ptr<crown::ConvPlans> own_plans;
  GainCones cones;  // per relu input: its convolutional cone (gain_cones; half_gains)

  // A subdomain of the search: its splits and its parent's node boxes (they hold on it too, and are the
  // only boxes: prior_only), with the search's atoms to stop at and the prepared model, so that bound()
  // hands it to run_crown as it is.
  Subdomain open(std::vector<Split> splits, std::shared_ptr<const NodeBoxes> prior,
                 std::shared_ptr<const SlopeState> warm = nullptr) const {
    Subdomain d;
    d.splits = std::move(splits);
    d.prior = std::move(prior);
    d.warm = std::move(warm);
    d.prior_only = true;
    d.stop_above = rhs;
    if (!d.splits.empty()) d.refresh_after = d.splits.back().node, d.refresh_nodes = n_refresh;
    if (ibp) d.prepared = *ibp;
    return d;
  }

  // CROWN with the splits; proven when empty or some atom is impossible. With a certificate, the
  // multipliers too.
  Bounds bound(const Subdomain& d, int iters) const {
    CrownOptions co;
    co.method = iters > 0 ? BoundMethod::AlphaCrown : BoundMethod::Crown;
    co.alpha_iters = iters;
    co.alpha_intermediate = false;
    // Smaller steps than a whole-box run's 0.5: a subdomain starts from its parent's slopes (warm starts),
    // which a step of 0.5 throws away (alpha-beta-CROWN's branch and bound: 0.01). Subdomains to decide,
    // 0.5 -> 0.1: oval21 cifar_deep img5168 2,294 -> 490, img5533 3,028 -> 2,476, cifar_base img4631
    // 15,058 -> 12,942, cifar_wide img19 6,090 -> 5,788, mnistfc prop_1_0.03 6,722 -> 6,450 (0.05 and
    // 0.02 about the same; docs/PERF.md).
    co.alpha_lr = kSubdomainAlphaLr;
    // The parent's boxes, clamped by the splits; CROWN's passes only on the first n_refresh nodes after
    // the newest split (open()): recomputing all of them visits fewer subdomains but costs 3x more per
    // subdomain (mnistfc prop_5_0.03: 1,958 against 3,276 subdomains, 15.4 s against 4.6 s).
    co.intermediate_crown = n_refresh > 0 && !d.splits.empty();
    co.lower_only = true;
    co.arith = s.o.arith;
    co.eval.max_bytes = bound_memory(s.o);
    co.input_coefficients = co.relu_coefficients = true;
    co.relu_multipliers = s.o.certificate;
    auto r = run_crown(s.m.graph, s.m.payload, std::span<const DoubleBox>(&input, 1), s.m.output_ids[0], &spec, co, d);
    Bounds out;
    if (!r.ok()) {
      out.error = true;
      return out;
    }
    out.proven = r->infeasible || some_atom_impossible(s.conj, r->spec_lo);
    out.spec_lo = std::move(r->spec_lo);
    if (out.proven && s.o.certificate)
      out.atom_mu = atom_multipliers(s.m.graph, r->relu_mu, r->relu_mu_rows, 0, s.conj.size(), r->boxes);
    if (out.proven) return out;
    out.coef = std::move(r->input_coef);
    out.relu_coef = std::move(r->relu_coef);
    out.boxes = std::make_shared<const NodeBoxes>(std::move(r->boxes));
    out.slopes = std::move(r->slopes);
    return out;
  }

  // The unstable unsplit elements with the largest |A| u(-l)/(u-l) for row w, at most k, best first.
  std::vector<Candidate> candidates(const Subdomain& d, const Bounds& b, size_t w, size_t k) const {
    std::vector<std::pair<double, Candidate>> all;  // Candidate: relu_bab.h
    const Graph& g = s.m.graph;
    for (size_t id = 0; id < b.relu_coef.size(); ++id) {
      const auto& A = b.relu_coef[id];
      if (A.empty()) continue;
      const int64_t p = g.nodes[id].parents[0];
      const auto& pb = (*b.boxes)[static_cast<size_t>(p)];
      const auto& e = margins[static_cast<size_t>(p)];
      if (!pb || e.size() != pb->lo.size()) continue;
      const size_t len = pb->lo.size();
      std::vector<char> split_here(len, 0);
      for (const Split& sp : d.splits)
        if (sp.node == p && static_cast<size_t>(sp.elem) < len) split_here[static_cast<size_t>(sp.elem)] = 1;
      for (size_t j = 0; j < len; ++j) {
        const double l = pb->lo[j], u = pb->hi[j];
        if (!(l < -e[j] && u > e[j]) || split_here[j]) continue;
        all.push_back({std::fabs(A[w * len + j]) * (u * -l / (u - l)),
                       Candidate{Split{p, static_cast<int64_t>(j), true, e[j]}, static_cast<int64_t>(id)}});
      }
    }
    const size_t n = std::min(k, all.size());
    std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(n), all.end(),
                      [](const auto& x, const auto& y) { return x.first > y.first; });
    std::vector<Candidate> out;
    for (size_t i = 0; i < n; ++i) out.push_back(all[i].second);
    return out;
  }

  // Of the candidates, the one whose halves' CROWN lower bounds of row w (without multipliers) have the
  // largest maximum (VerifyOptions::bab_score; or minimum); the first on a tie. One pass per relu with
  // candidates (half_gains).
  Split pick(const Subdomain& d, const Bounds& b, size_t w, const std::vector<Candidate>& cands, int64_t& passes) const {
    if (cands.size() == 1) return cands[0].sp;
    CrownOptions co;
    co.arith = s.o.arith;
    co.eval.max_bytes = bound_memory(s.o);
    const std::vector<HalfGain> gain =
        half_gains(s.m, input, co, open(d.splits, b.boxes), b.relu_coef, w, cands, affine, &cones, &passes);
    std::vector<double> score(gain.size());
    for (size_t q = 0; q < gain.size(); ++q)
      score[q] = s.o.bab_score == SplitScore::Worse ? std::min(gain[q].active, gain[q].inactive)
                                                    : std::max(gain[q].active, gain[q].inactive);
    size_t best = 0;
    for (size_t q = 1; q < cands.size(); ++q)
      if (score[q] > score[best]) best = q;
    return cands[best].sp;
  }

  // The input vertex minimising row w's linear lower bound: where the relaxation says the atom is
  // smallest, so the likeliest witness of this subdomain.
  bool probe(const Bounds& b, size_t w) {
    const size_t nx = s.c.lo_in.size();
    if (b.coef.size() < (w + 1) * nx) return false;
    std::vector<double> x(nx);
    for (size_t i = 0; i < nx; ++i) x[i] = b.coef[w * nx + i] > 0 ? s.c.lo_in[i] : s.c.hi_in[i];
    return try_point(s, x);
  }

  // A bounded subdomain's split: the atom row it aims at (the closest to proven) and the split, none when
  // no unstable element is left; nothing for a proven or failed one. Pure: run() makes a batch's choices
  // on the pool.
  struct Choice {
    size_t w = 0;
    std::optional<Split> split;
    int64_t passes = 0;
  };
  Choice choose(const Subdomain& d, const Bounds& b) const {
    Choice c;
    if (b.error || b.proven) return c;
    c.w = closest_atom(s.conj, b.spec_lo);
    const std::vector<Candidate> cands = candidates(d, b, c.w, n_candidates);
    if (!cands.empty()) c.split = pick(d, b, c.w, cands, c.passes);
    return c;
  }

  // After a subdomain's bounds and choice: probe it, then split it onto the stack (active on top).
  std::optional<VerifyResult> expand(Subdomain&& d, const Bounds& b, const Choice& c) {
    if (b.error) return VerifyResult::Unknown;
    if (b.proven) {
      if (s.cert) s.cert->relu_leaf(s.job, d.splits, leaf_from_bounds(b.spec_lo, rhs, {}, b.atom_mu));
      return std::nullopt;
    }
    if (probe(b, c.w)) return VerifyResult::Sat;
    if (!c.split) {  // every relu decided: the linear bound over the box misses the splits' constraints
      undecided = true;
      return std::nullopt;
    }
    const Split& sp = *c.split;
    Subdomain off = open(d.splits, b.boxes, b.slopes), on = open(std::move(d.splits), b.boxes, b.slopes);
    off.splits.push_back(Split{sp.node, sp.elem, false, sp.margin});
    on.splits.push_back(sp);
    stack.push_back(std::move(off));
    stack.push_back(std::move(on));
    return std::nullopt;
  }

  // One more descent restart from a random point while the descents have had less than a tenth of
  // this search's time: a witness the stage before missed can still turn up while the search runs
  // (marabou-cifar10 cifar10_small index1783 eps 0.012: the 21st restart found it, the stage runs 8;
  // alpha-beta-CROWN: sat in 6.9 s). True with s.found set.
  bool descend_more(Clock::time_point started) {
    if (s.conj.empty() || box.lo.empty() || descent_s >= 0.1 * since(started)) return false;
    const auto t = Clock::now();
    std::vector<double> x(box.lo.size());
    random_point(rng, box.lo, box.hi, x);
    const bool found = descend(s, x, box.lo, box.hi, s.o.pgd_steps);
    descent_s += since(t);
    return found;
  }

  VerifyResult run(int64_t& domains) {
    const auto started = Clock::now();
    const size_t batch = static_cast<size_t>(std::max(1, s.o.bab_batch));
    std::vector<Subdomain> ds;
    std::vector<Bounds> rs;
    std::vector<Choice> cs;
    const int64_t per_set = stack.empty() || !stack.back().prior ? 0 : boxes_bytes(*stack.back().prior);
    while (!stack.empty()) {
      if (s.past_deadline()) return VerifyResult::Timeout;
      // Siblings share their parent's boxes: about one set per two open subdomains, one per bounded one.
      if (!search_fits(s, static_cast<int64_t>(stack.size() / 2 + batch), per_set)) return VerifyResult::Unknown;
      ds.clear();
      while (!stack.empty() && ds.size() < batch) ds.push_back(std::move(stack.back())), stack.pop_back();
      if ((domains += static_cast<int64_t>(ds.size())) > s.o.max_domains) return VerifyResult::Unknown;
      rs.assign(ds.size(), Bounds{});
      cs.assign(ds.size(), Choice{});
      const auto tb = Clock::now();
      pool.run(static_cast<int>(ds.size()), [&](int i) {
        const size_t k = static_cast<size_t>(i);
        rs[k] = bound(ds[k], s.o.beta_iters);
        cs[k] = choose(ds[k], rs[k]);
      });
      s.stats.bab_bounds_s += since(tb);
      s.stats.crown_calls += static_cast<int64_t>(ds.size());
      for (const Choice& c : cs) s.stats.crown_calls += c.passes;
      const auto tp = Clock::now();
      for (size_t i = ds.size(); i-- > 0;)  // last popped first: depth-first, as verify()'s input search
        if (const auto r = expand(std::move(ds[i]), rs[i], cs[i])) return *r;
      const bool found = descend_more(started);
      s.stats.bab_probe_s += since(tp);
      if (found) return (s.stats.decided_by = "pgd", VerifyResult::Sat);
    }
    return undecided ? VerifyResult::Unknown : VerifyResult::Unsat;
  }
};

}  // namespace

VerifyResult relu_bab(Search& s, const SpecMatrix& spec, WorkerPool& pool, int64_t& domains,
                      std::shared_ptr<const NodeBoxes> root_boxes, const std::vector<std::vector<double>>& margins,
                      const IbpPrepared* ibp, std::shared_ptr<const SlopeState> root_warm) {
  ReluBab bab{s, spec, pool, margins, {}, false, atom_rhs(s.conj), ibp, SplitMix64(s.o.seed ^ 0x5eed0bab),
              search_box(s.c, s.o.arith), 0.0, candidate_count(s.m, s.o.bab_candidates), refresh_count(s.m, s.o),
              DoubleBox{input_shape(s.m), s.c.lo_out, s.c.hi_out}, affine_in_input(s.m.graph), nullptr, {}};
  for (size_t i = 0; i < bab.box.lo.size(); ++i)
    if (!(bab.box.lo[i] <= bab.box.hi[i])) bab.box = {};  // no value of the arithmetic along input i
  crown::ConvPlans* plans = ibp ? ibp->conv_plans() : nullptr;
  if (!plans) bab.own_plans = std::make_unique<crown::ConvPlans>(s.m.graph.nodes.size()), plans = bab.own_plans.get();
  bab.cones = gain_cones(s.m, *plans);
  bab.stack.push_back(bab.open({}, std::move(root_boxes), std::move(root_warm)));
  const VerifyResult r = bab.run(domains);
  if (r == VerifyResult::Sat && s.stats.decided_by != "pgd") s.stats.decided_by = "bab-probe";
  return r;
}

}  // namespace denote::verify_detail
