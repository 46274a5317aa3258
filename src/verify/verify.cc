// verify (include/denote/verify/verify.h): falsification of every (case, conjunction) first, then
// per conjunction bounds on the whole box and branch and bound by input splitting.
#include "denote/verify/verify.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "denote/base/deadline.h"
#include "denote/bounds/crown.h"
#include "verify/combine.h"
#include "verify/dense_chain.h"
#include "verify/fast_eval.h"
#include "verify/falsify.h"
#include "verify/pool.h"
#include "verify/relu_bab.h"

namespace denote {

std::string_view verify_result_name(VerifyResult r) {
  switch (r) {
    case VerifyResult::Sat: return "sat";
    case VerifyResult::Unsat: return "unsat";
    case VerifyResult::Timeout: return "timeout";
    default: return "unknown";
  }
}

std::optional<SplitMode> parse_split_mode(std::string_view text) {
  if (text == "auto") return SplitMode::Auto;
  if (text == "input") return SplitMode::Input;
  if (text == "relu") return SplitMode::Relu;
  return std::nullopt;
}

bool valid_intermediate(std::string_view name) {
  CrownOptions probe;
  return name == "auto" || set_intermediate(name, probe);
}

namespace {

using namespace verify_detail;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The conjunction's atoms as spec rows.
SpecMatrix spec_of(const std::vector<VnnAtom>& conj, int64_t outputs) {
  SpecMatrix s{static_cast<int64_t>(conj.size()), outputs, {}};
  for (const VnnAtom& a : conj) s.c.insert(s.c.end(), a.coef.begin(), a.coef.end());
  return s;
}

enum class Decision { Proven, Open, Error };

using Boxes = std::vector<std::optional<DoubleBox>>;

// One subdomain's bounds: thread-safe (reads the model and the conjunction only).
struct Bounded {
  Decision dec = Decision::Error;
  std::vector<double> spec_lo;          // the rows' lower bounds
  std::vector<double> coef;             // CROWN: the rows' lower bounds as linear functions of x (rows x nx)
  std::shared_ptr<const Boxes> boxes;   // every node's box on this domain (for the children)
  bool combined = false;                // proven by a combination of atoms (no single atom)
  bool alpha = false;                   // alpha-CROWN ran after CROWN left the box open
};

struct Domain {
  std::vector<double> lo, hi;
  std::shared_ptr<const Boxes> prior;  // the parent's node boxes (they hold on this sub-box too)
  std::shared_ptr<const Bounded> pre;  // its bounds, when they were computed to choose the split
  Domain(std::vector<double> l, std::vector<double> h, std::shared_ptr<const Boxes> p,
         std::shared_ptr<const Bounded> b = nullptr)
      : lo(std::move(l)), hi(std::move(h)), prior(std::move(p)), pre(std::move(b)) {}
};

// The model prepared once per instance for the IBP pass of every bound; nullptr when preparing
// fails (run_crown then reports the same error per call, and the bound stays open).
std::unique_ptr<const IbpPrepared> prepared_ibp(const Model& m, const VerifyOptions& o) {
  auto p = IbpPrepared::prepare(m.graph, m.payload, o.arith);
  if (!p.ok()) return nullptr;
  return std::make_unique<const IbpPrepared>(std::move(*p));
}

struct Bounder {
  const Model& m;
  const std::vector<VnnAtom>& conj;
  SpecMatrix spec;
  const VerifyOptions& o;
  std::vector<double> rhs;  // per atom: a lower bound above it proves the atom false
  const IbpPrepared* ibp = nullptr;  // the model prepared once for IBP (nullptr: run_crown prepares it)
  Clock::time_point deadline = Clock::time_point::max();  // the instance's: long passes stop there
  BoundErrors* errors = nullptr;  // where a failed pass is reported (null: nowhere)
  // The intermediate bounds in effect (VerifyOptions::intermediate; "auto" starts as "crown" and may
  // fall back: bound_roots).
  std::string intermediate = o.intermediate == "auto" ? "crown" : o.intermediate;
  // The whole-box CROWN pass's seconds (bound_roots; 0: not measured). alpha-CROWN on the whole box
  // optimises the intermediate bounds too only where about alpha_iters such passes fit in a quarter
  // of the time left: on cifar10_resnet's resnet_4b (CROWN 2.3 s) that optimisation took 142 s and
  // every 30 s instance timed out before branch and bound started.
  double crown_s = 0;
  // An IBP pass's seconds on the whole box (bound_roots measures it on inputs of at most kFewInputs
  // elements; 0: not measured).
  double ibp_s = 0;
  // Branch and bound over few inputs bounds its subdomains by IBP alone where a CROWN pass costs more
  // than kIbpFirstRatio IBP passes: splitting one or two inputs narrows IBP's boxes as fast as CROWN's
  // relaxation would, at a fraction of the cost. nn4sys's learned indexes (one input, 41 million
  // weights, 3 million of them nonzero): CROWN 1.5 s a box, IBP about 2 ms.
  static constexpr size_t kFewInputs = 2;
  static constexpr double kIbpFirstRatio = 32;
  bool ibp_domains() const { return ibp_s > 0 && crown_s > kIbpFirstRatio * ibp_s; }

  CrownOptions options(const Domain& d, BoundMethod method) const {
    CrownOptions co;
    co.method = method;
    if (method == BoundMethod::AlphaCrown && crown_s > 0) {
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      co.alpha_intermediate = crown_s * co.alpha_iters <= left / 4;
    }
    co.deadline = deadline;
    co.eval.max_bytes = bound_memory(o);
    co.arith = o.arith;
    co.input_coefficients = method == BoundMethod::Crown;
    co.lower_only = true;
    set_intermediate(intermediate, co);  // checked by verify(): a known name
    co.forward_intermediate = co.forward_intermediate || o.forward_bounds;
    return co;
  }
  // The domain's context: its parent's boxes, the atoms' right-hand sides to stop at, the prepared model.
  Subdomain where(const Domain& d) const {
    return Subdomain{d.prior, false, {}, rhs, ibp ? std::optional<IbpPrepared>(*ibp) : std::nullopt};
  }

  // Proven: some atom is false on the whole box (its lower bound exceeds the right-hand side), or a
  // combination of the atoms' CROWN bounds is. alpha_open > 0: a box CROWN leaves open also gets
  // alpha-CROWN with that many steps (tighten_alpha).
  Bounded bound(const Domain& d, BoundMethod method, int alpha_open = 0) const {
    const DoubleBox box{input_shape(m), d.lo, d.hi};
    auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec,
                       options(d, method), where(d));
    Bounded out;
    if (!r.ok()) {
      if (errors) errors->add(r.status());
      return out;
    }
    out.dec = Decision::Open;
    out.spec_lo = r->spec_lo;
    out.coef = std::move(r->input_coef);
    if (some_atom_impossible(conj, r->spec_lo)) out.dec = Decision::Proven;
    else if (o.combine_atoms && r->input_linear && conj.size() >= 2 &&
             refuting_combination(r->spec_lo, rhs, out.coef, d.lo, d.hi))
      out.dec = Decision::Proven, out.combined = true;
    if (out.dec == Decision::Open) out.boxes = std::make_shared<const Boxes>(std::move(r->boxes));
    if (out.dec == Decision::Open && alpha_open > 0 && method == BoundMethod::Crown) tighten_alpha(d, alpha_open, out);
    return out;
  }

  // A box CROWN left open: alpha-CROWN with `iters` steps too; the rows' lower bounds become the
  // larger of the two and the node boxes their intersection (both hold on the box). CROWN's input
  // coefficients stay (they serve the split choice).
  void tighten_alpha(const Domain& d, int iters, Bounded& out) const {
    const DoubleBox box{input_shape(m), d.lo, d.hi};
    CrownOptions co = options(d, BoundMethod::AlphaCrown);
    co.alpha_iters = iters;
    co.alpha_intermediate = o.bab_alpha_intermediate;
    out.alpha = true;
    auto a = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&box, 1), m.output_ids[0], &spec, co, where(d));
    if (!a.ok()) {
      if (errors) errors->add(a.status());
      return;
    }
    for (size_t k = 0; k < out.spec_lo.size() && k < a->spec_lo.size(); ++k)
      out.spec_lo[k] = std::max(out.spec_lo[k], a->spec_lo[k]);
    if (some_atom_impossible(conj, out.spec_lo)) {
      out.dec = Decision::Proven;
      out.boxes.reset();
      return;
    }
    if (!out.boxes) return;
    Boxes both = *out.boxes;
    intersect_node_boxes(both, a->boxes);
    out.boxes = std::make_shared<const Boxes>(std::move(both));
  }
};

// A split dimension: the largest width times the worst atom's slope in that dimension (the widest
// one when every slope vanishes), and that slope (its sign says which half the atom decreases
// toward: the half to search first for a witness). Two slopes are scored: the coefficient of x_i in
// CROWN's lower bound of the atom on this box (where the linear bound loses the most) and d atom / dx
// at the center (the network's own variation, which an unstable relu's relaxation can hide from
// CROWN's coefficients). Neither is better on every network (ACAS Xu property 1: 541 against 9,023
// boxes on 1_2, 23,000+ against 7,929 on 3_9), so where they differ both splits are bounded.
struct Split {
  size_t dim = 0;
  double slope = 0;
};

Split score_split(const std::vector<double>& g, const Domain& d, const Domain& root) {
  size_t best = 0, wi = 0;
  double score = -1, widest = -1;
  for (size_t i = 0; i < d.lo.size(); ++i) {
    const double w = d.hi[i] - d.lo[i];
    const double rel = w / std::max(root.hi[i] - root.lo[i], 1e-300);
    if (rel > widest) widest = rel, wi = i;
    // A dimension already cut to 2^-30 of its range is split only when nothing else is left.
    const double sc = g.size() == d.lo.size() && rel > 0x1p-30 ? w * std::fabs(g[i]) : -1;
    if (sc > score) score = sc, best = i;
  }
  if (score > 0) return {best, g[best]};
  return {wi, g.size() == d.lo.size() ? g[wi] : 0.0};
}

// The gradient's split, and CROWN's coefficients' one (nullopt without them).
std::pair<Split, std::optional<Split>> split_dims(const Search& s, const Bounded& r, const Domain& d,
                                                  const Domain& root) {
  const size_t nx = d.lo.size(), worst = closest_atom(s.conj, r.spec_lo);
  if (nx == 1) return {Split{0, 0}, std::nullopt};  // one input: no choice (a gradient costs a backward pass)
  std::vector<double> x(nx);
  for (size_t i = 0; i < nx; ++i) x[i] = d.lo[i] + (d.hi[i] - d.lo[i]) / 2;
  const std::vector<double> g = s.conj.empty() ? std::vector<double>{} : atom_gradient(s.m, s.conj[worst], x);
  std::optional<Split> by_coef;
  if (!s.conj.empty() && r.coef.size() == s.conj.size() * nx)
    by_coef = score_split(std::vector<double>(r.coef.begin() + static_cast<std::ptrdiff_t>(worst * nx),
                                              r.coef.begin() + static_cast<std::ptrdiff_t>((worst + 1) * nx)),
                          d, root);
  return {score_split(g, d, root), by_coef};
}

// How far a child's bounds are from proving it: the smallest gap rhs - lower bound over its atoms
// (<= 0: proven; +inf: no bounds), clipped at 0.
double open_gap(const Search& s, const Bounded& r) {
  if (r.dec == Decision::Error) return INFINITY;
  double gap = INFINITY;
  for (size_t k = 0; k < s.conj.size() && k < r.spec_lo.size(); ++k) gap = std::min(gap, s.conj[k].rhs_up - r.spec_lo[k]);
  return std::max(gap, 0.0);
}

enum class Step { Continue, Sat, Unknown };

// The search's stack as a FrontierHook sees it (bottom = front of the vector).
struct StackView final : FrontierStack {
  std::vector<Domain>& v;
  explicit StackView(std::vector<Domain>& s) : v(s) {}
  size_t size() const override { return v.size(); }
  FrontierBox take_bottom() override {
    FrontierBox b{std::move(v.front().lo), std::move(v.front().hi)};
    v.erase(v.begin());
    return b;
  }
  void push_bottom(FrontierBox b) override { v.insert(v.begin(), Domain{std::move(b.lo), std::move(b.hi), nullptr}); }
};

struct Bab {
  Search& s;
  const Bounder& b;
  WorkerPool& pool;
  Domain whole;
  SplitMix64 rng;
  std::vector<Domain> stack;
  bool undecided = false;
  int64_t visited = 0;
  // alpha-CROWN steps for the boxes CROWN leaves open: none until the search has bounded
  // o.bab_alpha_after subdomains (counted in batches: the same on any thread count).
  int alpha_open() const { return s.o.bab_alpha_iters > 0 && bounded >= s.o.bab_alpha_after ? s.o.bab_alpha_iters : 0; }
  FrontierHook* hook = nullptr;  // moves subdomains to and from other processes (or null)
  int job = 0;
  int64_t bounded = 0;  // subdomains bounded by this search (batches; the split candidates not counted)

  // After a subdomain's bounds: probe it, then split it onto the stack.
  Step expand(Domain&& d, const Bounded& r) {
    if (r.dec == Decision::Error) return Step::Unknown;
    if (r.combined) ++s.stats.combined;
    if (r.alpha) ++s.stats.alpha_calls;
    if (r.dec == Decision::Proven) return Step::Continue;
    std::vector<double> mid(d.lo.size());
    for (size_t i = 0; i < mid.size(); ++i) mid[i] = d.lo[i] + (d.hi[i] - d.lo[i]) / 2;
    if (may_hold_at(mid) && try_point(s, mid)) return Step::Sat;
    // Now and then a short descent inside the open box (a witness near its boundary), within a
    // quarter of the search's time (a step on a large network costs as much as many IBP bounds).
    if (++visited % 32 == 0 && probed_s <= since(started) / 4) {
      const auto tp = Clock::now();
      const bool found = probe(s, rng, d.lo, d.hi);
      probed_s += since(tp);
      if (found) return Step::Sat;
    }
    const auto [by_grad, by_coef] = split_dims(s, r, d, whole);
    auto cuts = [&](const Split& sp) { return mid[sp.dim] > d.lo[sp.dim] && mid[sp.dim] < d.hi[sp.dim]; };
    if (!cuts(by_grad)) {  // a box of single floats that CROWN cannot decide
      if (falsify(s, rng, d.lo, d.hi)) return Step::Sat;
      undecided = true;  // the other boxes may still hold a witness
      return Step::Continue;
    }
    Split sp = by_grad;
    std::pair<Domain, Domain> kids = halves(d, r, sp, mid);
    if (by_coef && by_coef->dim != by_grad.dim && cuts(*by_coef)) choose(d, r, mid, *by_coef, sp, kids);
    // The half where the worst atom is smaller goes on top (searched first).
    if (sp.slope < 0) std::swap(kids.first, kids.second);
    stack.push_back(std::move(kids.second));
    stack.push_back(std::move(kids.first));
    return Step::Continue;
  }

  // Whether x may be a witness: where subdomains are bounded by IBP (Bounder::ibp_domains), IBP's box at
  // the point x (it holds for the evaluation and the real network) must leave every atom possible
  // before the evaluator and the exact check run (on nn4sys, 60 ms against 2 ms).
  bool may_hold_at(const std::vector<double>& x) const {
    return !b.ibp_domains() || b.bound(Domain{x, x, nullptr}, BoundMethod::Ibp).dec != Decision::Proven;
  }

  // d's lower and upper halves in sp.dim, each with d's node boxes as its prior.
  static std::pair<Domain, Domain> halves(const Domain& d, const Bounded& r, const Split& sp,
                                          const std::vector<double>& mid) {
    Domain left{d.lo, d.hi, r.boxes}, right{d.lo, d.hi, r.boxes};
    left.hi[sp.dim] = mid[sp.dim];
    right.lo[sp.dim] = mid[sp.dim];
    return {std::move(left), std::move(right)};
  }

  // The gradient's and the coefficients' splits differ: both pairs of halves are bounded (on the
  // pool), and the pair with the smaller sum of open gaps is kept (the gradient's on a tie), its
  // bounds kept with it so that they are not computed again.
  void choose(const Domain& d, const Bounded& r, const std::vector<double>& mid, const Split& other, Split& sp,
              std::pair<Domain, Domain>& kids) {
    std::pair<Domain, Domain> alt = halves(d, r, other, mid);
    const Domain* four[4] = {&kids.first, &kids.second, &alt.first, &alt.second};
    Bounded rs[4];
    const auto tb = Clock::now();
    pool.run(4, [&](int i) { rs[i] = b.bound(*four[i], BoundMethod::Crown); });  // alpha-CROWN for the kept pair only
    s.stats.bab_bounds_s += since(tb);
    s.stats.crown_calls += 4;
    const bool take_other = open_gap(s, rs[2]) + open_gap(s, rs[3]) < open_gap(s, rs[0]) + open_gap(s, rs[1]);
    if (take_other) {
      kids = std::move(alt);
      sp = other;
    }
    kids.first.pre = std::make_shared<const Bounded>(std::move(rs[take_other ? 2 : 0]));
    kids.second.pre = std::make_shared<const Bounded>(std::move(rs[take_other ? 3 : 1]));
  }

  // The whole box (bounded already as `root`), then the search of its children.
  VerifyResult run(Clock::time_point deadline, int64_t& domains, Bounded root) {
    if (expand(Domain(whole), root) == Step::Sat) return sat();
    return search(deadline, domains);
  }

  // What the hook brought: remote subdomain counts, undecided subtrees, candidate witnesses
  // (re-checked here), the end of the search.
  std::optional<VerifyResult> absorb(const FrontierNews& n, int64_t& domains) {
    domains += n.domains;
    if (n.undecided) undecided = true;
    for (const auto& x : n.candidates) {
      if (try_point(s, x)) return sat();
      undecided = true;  // a subtree closed by a point that is no witness here: not a proof
    }
    if (n.stop) return VerifyResult::Unknown;
    if (n.timeout) return VerifyResult::Timeout;
    return std::nullopt;
  }

  // Batches of up to bab_batch subdomains from the top of the stack, bounded in parallel, then
  // expanded one by one (so the search is the same on any number of threads).
  VerifyResult search(Clock::time_point deadline, int64_t& domains) {
    const size_t batch = static_cast<size_t>(std::max(1, s.o.bab_batch));
    StackView view(stack);
    std::vector<Domain> ds;
    std::vector<Bounded> rs;
    int64_t per_set = 0;  // bytes of one set of node boxes, from the first subdomain that has one
    for (;;) {
      if (stack.empty() && hook)
        if (const auto r = absorb(hook->when_empty(job, view, deadline), domains)) return *r;
      if (stack.empty()) break;
      if (past(deadline)) return VerifyResult::Timeout;
      if (per_set == 0 && stack.back().prior) per_set = boxes_bytes(*stack.back().prior);
      // A subdomain holds its parent's boxes (shared with its sibling) and, when bounded ahead, its own.
      if (!search_fits(s, static_cast<int64_t>(stack.size() + batch), per_set)) return VerifyResult::Unknown;
      ds.clear();
      while (!stack.empty() && ds.size() < batch) ds.push_back(std::move(stack.back())), stack.pop_back();
      if ((domains += static_cast<int64_t>(ds.size())) > s.o.max_domains) return VerifyResult::Unknown;
      rs.assign(ds.size(), Bounded{});
      const auto tb = Clock::now();
      int64_t fresh = 0;
      for (const Domain& d : ds) fresh += d.pre ? 0 : 1;
      const int ai = alpha_open();
      pool.run(static_cast<int>(ds.size()), [&](int i) {
        const Domain& d = ds[static_cast<size_t>(i)];
        Bounded& r = rs[static_cast<size_t>(i)];
        r = d.pre ? *d.pre : b.bound(d, b.ibp_domains() ? BoundMethod::Ibp : BoundMethod::Crown, ai);
        if (d.pre && ai > 0 && r.dec == Decision::Open && !r.alpha) b.tighten_alpha(d, ai, r);
      });
      bounded += static_cast<int64_t>(ds.size());
      s.stats.bab_bounds_s += since(tb);
      s.stats.crown_calls += fresh;
      const auto tp = Clock::now();
      const double bounding_before = s.stats.bab_bounds_s;  // choose() bounds split candidates in here
      // Last popped first, so the top box's children end on top: the depth-first order of one box
      // at a time, only bounded a few boxes ahead.
      for (size_t i = ds.size(); i-- > 0;) {
        const Step st = expand(std::move(ds[i]), rs[i]);
        if (st == Step::Sat) return sat();
        // A bound that failed because the deadline passed inside it (CrownOptions::deadline) is a timeout.
        if (st == Step::Unknown) return past(deadline) ? VerifyResult::Timeout : VerifyResult::Unknown;
      }
      s.stats.bab_probe_s += since(tp) - (s.stats.bab_bounds_s - bounding_before);
      if (sample_batch()) return sat();
      if (hook)
        if (const auto r = absorb(hook->between_batches(job, view, deadline), domains)) return *r;
    }
    return undecided ? VerifyResult::Unknown : VerifyResult::Unsat;
  }
  // After kQuietBatches batches (an instance still open after about half a second), each batch
  // also draws kBatchPoints uniform points of the case's box and evaluates them at once through the
  // dense chain (src/verify/dense_chain.h); a point that (nearly) satisfies every atom there is
  // re-checked like any candidate. Some witnesses are needles that the search's depth-first order
  // reaches late (ACAS Xu 5_3 property 2, 1_9 property 7: about one point in 4 million). Counted
  // in batches, so the search stays the same on any number of threads.
  // The sampling takes at most a quarter of the search's time: on large networks a batch costs more
  // than bounding many subdomains (nn4sys: 1024 points through 41 million weights, about a second).
  static constexpr int64_t kQuietBatches = 256, kBatchPoints = 1024;
  int64_t batches = 0;
  std::vector<float> xs, ys, scratch;
  std::vector<double> point;
  Clock::time_point started = Clock::now();
  double sampled_s = 0, probed_s = 0;  // seconds of sampling batches and of descent probes
  bool sample_batch() {
    if (!s.chain || s.conj.empty() || ++batches <= kQuietBatches) return false;
    if (sampled_s > since(started) / 4) return false;
    const auto tp = Clock::now();
    const size_t n = s.c.lo_in.size(), ny = static_cast<size_t>(s.chain->outputs());
    xs.resize(static_cast<size_t>(kBatchPoints) * n);
    for (size_t r = 0; r < static_cast<size_t>(kBatchPoints); ++r) {
      random_point(rng, s.c.lo_in, s.c.hi_in, point);
      std::copy(point.begin(), point.end(), xs.begin() + static_cast<std::ptrdiff_t>(r * n));
    }
    s.chain->eval(xs, kBatchPoints, ys, scratch);
    s.stats.samples += kBatchPoints;
    bool found = false;
    for (size_t r = 0; r < static_cast<size_t>(kBatchPoints) && !found; ++r) {
      if (nearly_holds(s.conj, ys.data() + r * ny, ny, 1e-5)) found = try_point(s, std::vector<double>(xs.begin() + static_cast<std::ptrdiff_t>(r * n), xs.begin() + static_cast<std::ptrdiff_t>((r + 1) * n)));
    }
    s.stats.bab_probe_s += since(tp);
    sampled_s += since(tp);
    return found;
  }
  VerifyResult sat() {
    s.stats.decided_by = "bab-probe";
    return VerifyResult::Sat;
  }
};

// The forward error margins when this search splits relus (src/verify/relu_bab.h): asked for, or
// chosen on a box of many open inputs; never under a frontier hook (which moves input boxes).
std::optional<std::vector<std::vector<double>>> relu_margins(const Search& s, const Bounded& root, bool hooked) {
  const SplitMode mode = s.o.split;
  if (hooked || !root.boxes || mode == SplitMode::Input || (mode == SplitMode::Auto && !prefer_relu_split(s.c)))
    return std::nullopt;
  return eval_margins(s.m, *root.boxes, s.m.output_ids[0], s.o.arith);
}

// alpha-CROWN on the whole box (CROWN's root bounds given), then branch and bound; the root was
// falsified already.
VerifyResult decide(Search& s, const Bounder& b, WorkerPool& pool, Clock::time_point deadline, int64_t& domains,
                    Bounded root, int job) {
  Bab bab{s, b, pool, Domain{s.c.lo_out, s.c.hi_out, nullptr}, SplitMix64(s.o.seed ^ 0xbab), {}, false, 0, s.o.frontier, job};
  const auto tb = Clock::now();
  if (root.dec == Decision::Open && s.o.alpha_root && !root.alpha && !b.ibp_domains()) {  // root.alpha: joint_alpha ran
    ++s.stats.alpha_calls;
    Bounded a = b.bound(bab.whole, BoundMethod::AlphaCrown);
    if (a.dec != Decision::Error) root = std::move(a);
    if (root.dec == Decision::Proven) s.stats.decided_by = "alpha-crown";
  }
  s.stats.bounds_s += since(tb);
  if (root.dec == Decision::Proven) return VerifyResult::Unsat;
  if (root.dec == Decision::Error) return past(deadline) ? VerifyResult::Timeout : VerifyResult::Unknown;
  const auto t = Clock::now();
  VerifyResult r = VerifyResult::Unknown;
  if (const auto margins = relu_margins(s, root, bab.hook != nullptr))
    r = relu_bab(s, b.spec, pool, domains, root.boxes, *margins, b.ibp);
  else
    r = bab.run(deadline, domains, std::move(root));
  if (bab.hook) bab.hook->finish(job);
  s.stats.bab_s += since(t);
  return r;
}

// One alpha-CROWN call on the rows of several open conjunctions of one case (they share its input box,
// and the optimised intermediate bounds do not depend on the rows: a robustness property's nine
// conjunctions paid nine optimisations of the same intermediate bounds): a conjunction one of whose
// atoms is impossible by its row's bound is proven; the others keep these bounds and node boxes as their
// root (what their own alpha-CROWN would give: the rows are optimised independently), so decide() does
// not run it again. `open`: indices into bounders and roots. Returns whether it proved any; a failed
// pass changes nothing (each conjunction's own alpha-CROWN runs later).
// A quarter of the time left before `deadline`: the share of sampling, of gradient descent and, under
// intermediate "auto", of the whole-box CROWN pass.
Clock::time_point quarter_left(Clock::time_point deadline) {
  const auto now = Clock::now();
  return deadline <= now ? deadline : now + (deadline - now) / 4;
}

// Stage 2: CROWN on every conjunction's whole box (cases[i]: job i's case, null for no output
// condition), in parallel. With intermediate "auto" the pass gets a quarter of the time left; a
// conjunction whose pass runs past it (or past the memory budget) is bounded again with forward
// intermediate bounds (forward linear bounds on inputs of at most 64 elements, IBP's boxes beyond),
// which its branch and bound keeps: CROWN's intermediate passes can cost minutes and gigabytes on
// generator and detector networks where the cheaper boxes take seconds (issue 54).
std::vector<Bounded> bound_roots(const std::vector<const VnnCase*>& cases, std::vector<Bounder>& bounders,
                                 WorkerPool& pool, Clock::time_point deadline, const VerifyOptions& o, VerifyStats& st) {
  const bool automatic = o.intermediate == "auto";
  const auto share = automatic ? quarter_left(deadline) : deadline;
  for (Bounder& b : bounders) b.deadline = std::min(deadline, share);
  std::vector<Bounded> roots(cases.size());
  auto run = [&](int i) {
    const VnnCase* c = cases[static_cast<size_t>(i)];  // run_crown refuses to start past b.deadline
    if (!c) return;
    Bounder& b = bounders[static_cast<size_t>(i)];
    const auto t = Clock::now();
    roots[static_cast<size_t>(i)] = b.bound(Domain{c->lo_out, c->hi_out, nullptr}, BoundMethod::Crown);
    b.crown_s = since(t);
    if (c->lo_out.size() > Bounder::kFewInputs || roots[static_cast<size_t>(i)].dec != Decision::Open) return;
    const auto ti = Clock::now();
    (void)b.bound(Domain{c->lo_out, c->hi_out, nullptr}, BoundMethod::Ibp);
    b.ibp_s = std::max(since(ti), 1e-9);
  };
  pool.run(static_cast<int>(cases.size()), run);
  for (Bounder& b : bounders) b.deadline = deadline;
  std::vector<int> again;
  for (size_t i = 0; automatic && i < cases.size(); ++i)
    if (cases[i] && roots[i].dec == Decision::Error && !past(deadline)) again.push_back(static_cast<int>(i));
  for (int i : again) bounders[static_cast<size_t>(i)].intermediate = "forward";
  pool.run(static_cast<int>(again.size()), [&](int k) { run(again[static_cast<size_t>(k)]); });
  st.crown_calls += static_cast<int64_t>(again.size());
  st.intermediate = again.empty() ? (bounders.empty() ? "" : bounders[0].intermediate)
                                  : fmt::format("forward for {} of {} conjunctions (CROWN's whole-box pass ran past a "
                                                "quarter of the time left or the memory budget)", again.size(), cases.size());
  return roots;
}

bool joint_alpha(const Model& m, const VnnCase& c, const std::vector<size_t>& open, const std::vector<Bounder>& bounders,
                 std::vector<Bounded>& roots, BoundErrors& errors) {
  SpecMatrix spec{0, bounders[open.front()].spec.cols, {}};
  for (size_t i : open) {
    spec.rows += bounders[i].spec.rows;
    spec.c.insert(spec.c.end(), bounders[i].spec.c.begin(), bounders[i].spec.c.end());
  }
  const Domain whole{c.lo_out, c.hi_out, nullptr};
  CrownOptions co = bounders[open.front()].options(whole, BoundMethod::AlphaCrown);
  co.input_coefficients = false;
  Subdomain where = bounders[open.front()].where(whole);
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
    for (size_t k = 0; k < lower.size() && k < b.spec_lo.size(); ++k) lower[k] = std::max(lower[k], b.spec_lo[k]);
    if (some_atom_impossible(bounders[i].conj, lower)) {
      b.dec = Decision::Proven, any = true;
      continue;
    }
    b.spec_lo = std::move(lower), b.coef.clear(), b.boxes = boxes, b.alpha = true;
  }
  return any;
}

// An undecided answer says when points satisfied the property in the network's arithmetic but not
// for the exact real network (none of them is a witness: a sat needs both).
void add_disagreement_note(VerifyOutcome& out, const ArithSpec& arith) {
  const int64_t n = out.stats.disagreements;
  if (n == 0) return;
  const std::string what = fmt::format(
      "{} point{} satisfied the property in the {} evaluation but not for the exact real network (not witnesses)", n,
      n == 1 ? "" : "s", arith.name);
  out.note = out.note.empty() ? what : out.note + "; " + what;
}

Status check_model(const Model& m, const VnnProperty& p, const VerifyOptions& o) {
  if (!o.arith.is_f32() && !o.arith.is_f64())
    return error_status(ErrorCode::kInvalidInput, "verify: arith " + o.arith.name + ": expected f32 or f64")
        .with_field("arith");
  if (!valid_intermediate(o.intermediate))
    return error_status(ErrorCode::kInvalidInput,
                        "verify: intermediate " + o.intermediate + ": expected auto, crown, forward, forward+crown or ibp")
        .with_field("intermediate");
  if (m.graph.input_ids().size() != 1 || m.output_ids.size() != 1)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("verify: the model has {} inputs and {} outputs; expected one of each",
                                    m.graph.input_ids().size(), m.output_ids.size()));
  const int64_t nx = numel(input_shape(m));
  const int64_t ny = numel(m.graph.nodes[static_cast<size_t>(m.output_ids[0])].out_shape);
  if (nx != p.num_inputs || ny != p.num_outputs)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("verify: the property declares {} inputs and {} outputs, the model has {} and {}",
                                    p.num_inputs, p.num_outputs, nx, ny));
  return ok_status();
}

}  // namespace

Status check_instance(const Model& m, const VnnProperty& p, const VerifyOptions& o) { return check_model(m, p, o); }

Result<VerifyOutcome> verify(const Model& m, const VnnProperty& p, const VerifyOptions& o) {
  DENOTE_RETURN_IF_ERROR(check_model(m, p, o));
  const auto start = Clock::now();
  const auto deadline = deadline_after(start, o.timeout_s);
  VerifyOutcome out;
  VerifyStats& st = out.stats;
  const std::vector<VnnAtom> always;  // a case without an output condition
  auto conjunctions = [&](const VnnCase& c) {
    std::vector<const std::vector<VnnAtom>*> v;
    for (const auto& k : c.output) v.push_back(&k);
    if (c.output.empty()) v.push_back(&always);
    return v;
  };
  auto finish = [&](VerifyResult r) {
    out.result = r;
    st.total_s = since(start);
    if (r != VerifyResult::Sat && r != VerifyResult::Unsat) add_disagreement_note(out, o.arith);
    return out;
  };
  // The f32 payload once (every candidate point is evaluated in the network's arithmetic).
  std::unique_ptr<const Payload<float>> p32;
  if (o.arith.is_f32())
    p32 = std::make_unique<const Payload<float>>(
        convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); }));
  // Stage 1: random points of every case (cheap, and a sat anywhere decides the instance).
  SplitMix64 rng(o.seed);
  const auto t0 = Clock::now();
  auto stage_end = [&](std::optional<Witness> w) {
    out.witness = std::move(w);
    return finish(out.witness ? VerifyResult::Sat : VerifyResult::Timeout);
  };
  struct Job {
    const VnnCase* c;
    const std::vector<VnnAtom>* conj;
  };
  std::vector<Job> jobs;
  const std::optional<DenseChain> chain = DenseChain::of(m);
  const std::unique_ptr<FastEval> fast = chain ? nullptr : FastEval::of(m, o.arith);
  // Sampling stops at a quarter of the time (the cases after that are not sampled): properties of many
  // cases on large networks (nn4sys: 50 boxes of a 336 MB network) would otherwise spend the timeout here.
  const auto sampling_end = quarter_left(deadline);
  for (const VnnCase& c : p.cases) {
    std::vector<Search> ss;
    const auto conjs = conjunctions(c);
    ss.reserve(conjs.size());
    for (const auto* conj : conjs) ss.push_back(Search{m, c, *conj, o, st, {}, p32.get(), sampling_end}), jobs.push_back({&c, conj});
    const SearchBox sb = search_box(c, o.arith);
    const int k = past(sampling_end) ? -1 : sample_case(ss, rng, sb.lo, sb.hi, fast.get(), chain ? &*chain : nullptr);
    st.falsify_s = since(t0);
    if (k >= 0) return stage_end(ss[static_cast<size_t>(k)].found);
    if (past(deadline)) return stage_end(std::nullopt);
  }
  // Stage 2: CROWN on every conjunction's whole box, in parallel.
  WorkerPool pool(std::max(1, o.threads));
  st.threads = pool.threads();
  const auto prep = prepared_ibp(m, o);
  BoundErrors errors;
  std::vector<Bounder> bounders;
  bounders.reserve(jobs.size());
  for (const Job& j : jobs)
    bounders.push_back(
        Bounder{m, *j.conj, spec_of(*j.conj, p.num_outputs), o, atom_rhs(*j.conj), prep.get(), deadline, &errors});
  const auto tb = Clock::now();
  std::vector<const VnnCase*> cases;
  for (const Job& j : jobs) cases.push_back(j.conj->empty() ? nullptr : j.c);
  std::vector<Bounded> roots = bound_roots(cases, bounders, pool, deadline, o, st);
  for (const Job& j : jobs) st.crown_calls += !j.conj->empty(), st.domains += !j.conj->empty();
  for (const Bounded& r : roots) st.combined += r.combined;
  st.bounds_s += since(tb);
  // Stage 3: descent on the conjunctions CROWN left open, within a quarter of the time left (with 3b):
  // on networks whose gradient steps are slow (VNN-COMP 2023's cgan generators: 0.1 s a step) the
  // restarts would otherwise take the whole timeout from branch and bound.
  const auto descent_end = quarter_left(deadline);
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (roots[i].dec != Decision::Open) continue;
    const auto tp = Clock::now();  // per conjunction: the stage's time is their sum
    Search s{m, *jobs[i].c, *jobs[i].conj, o, st, {}, p32.get(), descent_end};
    const SearchBox sb = search_box(*jobs[i].c, o.arith);
    const bool found = falsify(s, rng, sb.lo, sb.hi, /*sample=*/false);
    st.falsify_s += since(tp);
    if (found) return stage_end(s.found);
    if (past(deadline)) return stage_end(std::nullopt);
  }
  // Stage 3b: descent on each case's open conjunctions at once (the one closest to holding at every
  // step): a robustness property's witness is often against whichever class is closest, not one
  // fixed class (mnistfc prop_9_0.05).
  for (const VnnCase& c : p.cases) {
    std::vector<Search> open;
    for (size_t i = 0; i < jobs.size(); ++i)
      if (jobs[i].c == &c && roots[i].dec == Decision::Open && !jobs[i].conj->empty())
        open.push_back(Search{m, c, *jobs[i].conj, o, st, {}, p32.get(), descent_end});
    if (open.size() < 2) continue;
    std::vector<Search*> ptrs;
    for (Search& s : open) ptrs.push_back(&s);
    const auto tp = Clock::now();
    const SearchBox sb = search_box(c, o.arith);
    const int k = descend_any(ptrs, rng, sb.lo, sb.hi, 4 * o.pgd_restarts, o.pgd_steps);
    st.falsify_s += since(tp);
    if (k >= 0) {
      st.decided_by = "pgd";
      return stage_end(open[static_cast<size_t>(k)].found);
    }
    if (past(deadline)) return stage_end(std::nullopt);
  }
  // Stage 4: alpha-CROWN on each case's open conjunctions at once (joint_alpha), then alpha-CROWN and
  // branch and bound conjunction by conjunction on the rest.
  if (o.alpha_root) {
    for (const VnnCase& c : p.cases) {
      std::vector<size_t> open;
      for (size_t i = 0; i < jobs.size(); ++i)
        if (jobs[i].c == &c && roots[i].dec == Decision::Open && !jobs[i].conj->empty()) open.push_back(i);
      if (open.size() < 2 || past(deadline) || bounders[open.front()].ibp_domains()) continue;
      const auto tb2 = Clock::now();
      ++st.alpha_calls;
      if (joint_alpha(m, c, open, bounders, roots, errors)) st.decided_by = "alpha-crown";
      st.bounds_s += since(tb2);
    }
  }
  bool all_unsat = true, timed_out = false;
  std::string search_note;  // why a search stopped undecided (its memory), the first one
  for (size_t i = 0; i < jobs.size() && !timed_out; ++i) {
    if (roots[i].dec == Decision::Proven) continue;
    Search s{m, *jobs[i].c, *jobs[i].conj, o, st, {}, p32.get(), deadline, chain ? &*chain : nullptr};
    const VerifyResult r = jobs[i].conj->empty() ? VerifyResult::Unknown
                                                 : decide(s, bounders[i], pool, deadline, st.domains, std::move(roots[i]), static_cast<int>(i));
    if (r == VerifyResult::Sat) return stage_end(s.found);
    if (r != VerifyResult::Unsat) all_unsat = false;
    if (r == VerifyResult::Unknown && !s.note.empty() && search_note.empty()) search_note = s.note;
    if (r == VerifyResult::Timeout) timed_out = true;
  }
  const int64_t roots_n = static_cast<int64_t>(jobs.size());
  if (all_unsat) {
    if (st.domains > roots_n) st.decided_by = "bab";
    else if (st.decided_by.empty()) st.decided_by = "crown";
    return finish(VerifyResult::Unsat);
  }
  out.note = timed_out ? "" : "branch and bound ended without a decision";
  for (const std::string& why : {search_note, errors.first.empty() ? std::string() : "a bound failed: " + errors.first})
    if (!why.empty()) out.note = out.note.empty() ? why : out.note + "; " + why;
  return finish(timed_out ? VerifyResult::Timeout : VerifyResult::Unknown);
}

int frontier_jobs(const VnnProperty& p) {
  int n = 0;
  for (const VnnCase& c : p.cases) n += std::max<int>(1, static_cast<int>(c.output.size()));
  return n;
}

namespace {

// Job `job`'s case and conjunction (null conj: a case without an output condition).
struct JobRef {
  const VnnCase* c = nullptr;
  const std::vector<VnnAtom>* conj = nullptr;
};
JobRef find_job(const VnnProperty& p, int job) {
  int k = 0;
  for (const VnnCase& c : p.cases) {
    if (c.output.empty() && k++ == job) return {&c, nullptr};
    for (const auto& conj : c.output)
      if (k++ == job) return {&c, &conj};
  }
  return {};
}

Status check_subdomain(const VnnProperty& p, int job, const JobRef& j, const FrontierBox& box) {
  if (!j.c)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("verify: job {}: the property has {} jobs", job, frontier_jobs(p)));
  const size_t n = j.c->lo_out.size();
  if (box.lo.size() != n || box.hi.size() != n)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("verify: subdomain of {} and {} values; the case has {} inputs", box.lo.size(), box.hi.size(), n));
  for (size_t i = 0; i < n; ++i)
    if (!(j.c->lo_out[i] <= box.lo[i] && box.lo[i] <= box.hi[i] && box.hi[i] <= j.c->hi_out[i]))
      return error_status(ErrorCode::kInvalidInput,
                          fmt::format("verify: subdomain input {}: [{}, {}] is not inside the case's box [{}, {}]", i,
                                      box.lo[i], box.hi[i], j.c->lo_out[i], j.c->hi_out[i]));
  return ok_status();
}

}  // namespace

Result<VerifyOutcome> verify_subdomain(const Model& m, const VnnProperty& p, int job, const FrontierBox& box,
                                       const VerifyOptions& o) {
  DENOTE_RETURN_IF_ERROR(check_model(m, p, o));
  const JobRef j = find_job(p, job);
  DENOTE_RETURN_IF_ERROR(check_subdomain(p, job, j, box));
  const auto start = Clock::now();
  const auto deadline = deadline_after(start, o.timeout_s);
  VerifyOutcome out;
  out.stats.threads = std::max(1, o.threads);
  if (!j.conj) {  // no output condition: verify() decides such a case by its first point
    out.note = "a case without an output condition has no subdomain search";
    return out;
  }
  std::unique_ptr<const Payload<float>> p32;
  if (o.arith.is_f32())
    p32 = std::make_unique<const Payload<float>>(
        convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); }));
  Search s{m, *j.c, *j.conj, o, out.stats, {}, p32.get(), deadline};
  const auto prep = prepared_ibp(m, o);
  BoundErrors errors;
  const Bounder b{m, *j.conj, spec_of(*j.conj, p.num_outputs), o, atom_rhs(*j.conj), prep.get(), deadline, &errors};
  WorkerPool pool(std::max(1, o.threads));
  Bab bab{s, b, pool, Domain{j.c->lo_out, j.c->hi_out, nullptr}, SplitMix64(o.seed ^ 0xbab ^ (static_cast<uint64_t>(job) << 32)),
          {}, false, 0, o.frontier, job};
  bab.stack.push_back(Domain{box.lo, box.hi, nullptr});
  const VerifyResult r = bab.search(deadline, out.stats.domains);
  out.result = r;
  if (r == VerifyResult::Sat) out.witness = s.found;
  if (r != VerifyResult::Sat && r != VerifyResult::Unsat && !s.note.empty()) out.note = s.note;
  if (r != VerifyResult::Sat && r != VerifyResult::Unsat && !errors.first.empty())
    out.note = (out.note.empty() ? "" : out.note + "; ") + "a bound failed: " + errors.first;
  if (r != VerifyResult::Sat && r != VerifyResult::Unsat) add_disagreement_note(out, o.arith);
  out.stats.bab_s = out.stats.total_s = since(start);
  return out;
}

}  // namespace denote
