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
#include "verify/bounder.h"
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
  const std::vector<double> g =
      s.conj.empty() ? std::vector<double>{} : atom_gradient(s.m, s.conj[worst], x, step_window(s.m.graph));
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
    if (r.dec == Decision::Proven) {
      record_proof(s.cert, s.job, d.path, r, b.rhs);
      return Step::Continue;
    }
    std::vector<double> mid(d.lo.size());
    for (size_t i = 0; i < mid.size(); ++i) mid[i] = d.lo[i] + (d.hi[i] - d.lo[i]) / 2;
    if (try_point(s, mid)) return Step::Sat;
    // Now and then a short descent inside the open box (a witness near its boundary); not where IBP
    // bounds the subdomains of one or two inputs, whose midpoints already cover the box (and a step on
    // such a network costs as much as many IBP bounds). Counted in subdomains: the same search on any
    // thread count.
    if (++visited % 32 == 0 && !b.ibp_domains() && probe(s, rng, d.lo, d.hi)) return Step::Sat;
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

  // d's lower and upper halves in sp.dim, each with d's node boxes as its prior.
  static std::pair<Domain, Domain> halves(const Domain& d, const Bounded& r, const Split& sp,
                                          const std::vector<double>& mid) {
    Domain left{d.lo, d.hi, r.boxes}, right{d.lo, d.hi, r.boxes};
    left.hi[sp.dim] = mid[sp.dim];
    right.lo[sp.dim] = mid[sp.dim];
    const certify::Split cut{certify::Split::Kind::Input, static_cast<int64_t>(sp.dim), 0, mid[sp.dim]};
    left.path = extend(d.path, cut, false, r.slopes);
    right.path = extend(d.path, cut, true, r.slopes);
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
  // Not where IBP bounds the subdomains (Bounder::ibp_domains): there a batch costs more than bounding
  // many subdomains (nn4sys: 1024 points through 41 million weights, about a second).
  static constexpr int64_t kQuietBatches = 256, kBatchPoints = 1024;
  int64_t batches = 0;
  std::vector<float> xs, ys, scratch;
  std::vector<double> point;
  bool sample_batch() {
    if (!s.chain || s.conj.empty() || ++batches <= kQuietBatches || b.ibp_domains()) return false;
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
    if (root.dec == Decision::Proven) record_proof(s.cert, job, nullptr, root, b.rhs);
  }
  s.stats.bounds_s += since(tb);
  if (root.dec == Decision::Proven) return VerifyResult::Unsat;
  if (root.dec == Decision::Error) return past(deadline) ? VerifyResult::Timeout : VerifyResult::Unknown;
  const auto t = Clock::now();
  VerifyResult r = VerifyResult::Unknown;
  if (const auto margins = relu_margins(s, root, bab.hook != nullptr)) {
    if (s.cert) s.cert->root_slopes(job, root.slopes);
    r = relu_bab(s, b.spec, pool, domains, root.boxes, *margins, b.ibp, root.warm);
  }
  else
    r = bab.run(deadline, domains, std::move(root));
  if (bab.hook) bab.hook->finish(job);
  s.stats.bab_s += since(t);
  return r;
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
  if (o.certificate && o.frontier)
    return error_status(ErrorCode::kInvalidInput, "verify: a certificate is not made under a frontier hook (MPI)")
        .with_field("certificate");
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
  // The model prepared for IBP once: every bound pass, and the screen of candidate points (try_point).
  const auto prep = prepared_ibp(m, o);
  // Sampling stops at a quarter of the time (the cases after that are not sampled): properties of many
  // cases on large networks (nn4sys: 50 boxes of a 336 MB network) would otherwise spend the timeout here.
  const auto sampling_end = quarter_left(deadline);
  std::vector<std::pair<int64_t, int64_t>> job_ids;  // (case, conjunction) of each job, for a certificate
  for (const VnnCase& c : p.cases) {
    std::vector<Search> ss;
    const auto conjs = conjunctions(c);
    ss.reserve(conjs.size());
    for (const auto* conj : conjs) {
      ss.push_back(Search{m, c, *conj, o, st, {}, p32.get(), sampling_end});
      ss.back().ibp = prep.get();
      job_ids.push_back({static_cast<int64_t>(&c - p.cases.data()), static_cast<int64_t>(ss.size() - 1)});
      jobs.push_back({&c, conj});
    }
    const SearchBox sb = search_box(c, o.arith);
    const int k = past(sampling_end) ? -1 : sample_case(ss, rng, sb.lo, sb.hi, fast.get(), chain ? &*chain : nullptr);
    st.falsify_s = since(t0);
    if (k >= 0) return stage_end(ss[static_cast<size_t>(k)].found);
    if (past(deadline)) return stage_end(std::nullopt);
  }
  // Stage 2: CROWN on every conjunction's whole box, in parallel.
  WorkerPool pool(std::max(1, o.threads));
  st.threads = pool.threads();
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
  for (const Job& j : jobs) st.domains += !j.conj->empty();
  for (const Bounded& r : roots) st.combined += r.combined;
  st.bounds_s += since(tb);
  // Stage 3: descent on the conjunctions CROWN left open, within a quarter of the time left (with 3b):
  // on networks whose gradient steps are slow (VNN-COMP 2023's cgan generators: 0.1 s a step) the
  // restarts would otherwise take the whole timeout from branch and bound.
  const auto descent_end = quarter_left(deadline);
  // Over few inputs with IBP-bounded subdomains (Bounder::ibp_domains), no descent: branch and bound's
  // midpoint checks cover the one or two inputs (nn4sys: a gradient step costs 0.25 s, an IBP box 2 ms).
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (roots[i].dec != Decision::Open || bounders[i].ibp_domains()) continue;
    const auto tp = Clock::now();  // per conjunction: the stage's time is their sum
    Search s{m, *jobs[i].c, *jobs[i].conj, o, st, {}, p32.get(), descent_end};
    s.ibp = prep.get();
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
      if (jobs[i].c == &c && roots[i].dec == Decision::Open && !jobs[i].conj->empty() && !bounders[i].ibp_domains())
        open.push_back(Search{m, c, *jobs[i].conj, o, st, {}, p32.get(), descent_end}), open.back().ibp = prep.get();
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
  std::unique_ptr<CertRecorder> cert = o.certificate ? std::make_unique<CertRecorder>(job_ids, m.graph) : nullptr;
  for (size_t i = 0; i < jobs.size() && !timed_out; ++i) {
    if (roots[i].dec == Decision::Proven) {
      record_proof(cert.get(), static_cast<int>(i), nullptr, roots[i], bounders[i].rhs);
      continue;
    }
    Search s{m, *jobs[i].c, *jobs[i].conj, o, st, {}, p32.get(), deadline, chain ? &*chain : nullptr};
    s.ibp = prep.get();
    s.cert = cert.get(), s.job = static_cast<int>(i);
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
    if (cert) {
      auto c = cert->build();
      const Status covered = certify::covers(m);
      if (!covered.ok()) out.certificate_error = "the certificate checker does not cover this model: " + covered.message();
      else if (c.ok()) out.certificate = std::move(*c);
      else out.certificate_error = c.status().message();
    }
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
  s.ibp = prep.get();
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
