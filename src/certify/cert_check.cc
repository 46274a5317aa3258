// The certificate checker (include/denote/certify/certificate.h): every (case, conjunction) of the
// property has one job; each job's tree is walked in preorder with an explicit stack of the children
// still to visit, so that the leaves cover the case's box (and every relu sign) exactly; each leaf's
// Lagrangian bound (src/certify/cert_bounds.h) must refute the conjunction.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "certify/cert_bounds.h"
#include "denote/certify/certificate.h"
#include "denote/ir/op.h"

namespace denote::certify {

namespace {

using Clock = std::chrono::steady_clock;

using SlopeMap = std::map<int64_t, std::vector<int8_t>>;

// A tree node still to visit: its domain, and its parent's boxes (they hold on it too).
struct State {
  std::vector<double> lo, hi;
  std::vector<Clamp> clamps;
  bool by_relu = false;  // reached by a relu split (the search bounds it with its parent's boxes, clamped)
  std::shared_ptr<const std::vector<Box>> prior;
  bool empty = false;  // an ancestor's domain is empty: so is this one
  std::shared_ptr<const std::vector<Box>> known;  // this state's own boxes, when computed already
  bool narrow_all = false;  // Domain::narrow_all
  std::shared_ptr<const SlopeMap> slopes;  // this tree node's lower-slope hints (Domain::slopes)
};

struct JobCheck {
  const Net& net;
  const Case& cs;
  const std::vector<Atom>& atoms;
  // The case box's boxes, shared by the jobs of one case (computed by the first; empty: not yet).
  std::optional<Result<std::shared_ptr<const std::vector<Box>>>>& root;
  bool f32 = false;  // CheckOptions::f32
};

// The state's boxes (computed as the search computes a subdomain's: CROWN rows on the input box, or its
// parent's boxes clamped by a new relu split, each intersected with the parent's); false when the
// domain is empty. Errors: a NaN box.
Result<bool> state_boxes(const Net& net, State& st, std::shared_ptr<const std::vector<Box>>& out, bool f32) {
  if (st.empty) return false;
  if (st.known) {
    out = st.known;
    return true;
  }
  auto boxes = std::make_shared<std::vector<Box>>();
  const Domain d{st.lo, st.hi, st.clamps, st.prior.get(), !st.by_relu || !st.prior, st.narrow_all, st.slopes.get(), f32};
  const DomainKind k = domain_boxes(net, d, *boxes);
  if (k == DomainKind::Invalid) return error_status(ErrorCode::kEval, "a box of the domain is not a number");
  if (k == DomainKind::Empty) return false;
  out = std::move(boxes);
  return true;
}

// The objective sum_k lambda_k (c_k . y - rhs_k): its coefficients at the output and a lower bound of
// its constant part.
void objective(const std::vector<Atom>& atoms, const std::vector<double>& lambda, int64_t outputs,
               std::vector<double>& mid, std::vector<double>& rad, double& constant) {
  mid.assign(static_cast<size_t>(outputs), 0.0);
  rad.assign(mid.size(), 0.0);
  for (size_t j = 0; j < mid.size(); ++j) {
    Sum s;
    for (size_t k = 0; k < atoms.size(); ++k)
      if (lambda[k] != 0 && atoms[k].coef[j] != 0) s.add_prod(lambda[k], atoms[k].coef[j]);
    mid[j] = s.s;
    rad[j] = next_up(std::max(s.upper() - s.s, s.s - s.lower()));
  }
  Sum c;
  for (size_t k = 0; k < atoms.size(); ++k)
    if (lambda[k] != 0) c.add_prod(-lambda[k], atoms[k].rhs_up);
  constant = c.lower();
}

std::string check_leaf_data(const Net& net, const Leaf& leaf, size_t atoms) {
  if (leaf.lambda.size() != atoms)
    return fmt::format("leaf.lambda: expected {} multipliers (one per atom), got {}", atoms, leaf.lambda.size());
  bool any = false;
  for (size_t k = 0; k < atoms; ++k) {
    if (!(leaf.lambda[k] >= 0) || !std::isfinite(leaf.lambda[k]))
      return fmt::format("leaf.lambda[{}] = {}: expected a finite multiplier >= 0", k, leaf.lambda[k]);
    any = any || leaf.lambda[k] > 0;
  }
  if (!any) return "leaf.lambda: every multiplier is 0";
  for (const auto& [id, v] : leaf.mu) {
    if (id < 0 || static_cast<size_t>(id) >= net.graph().nodes.size() || !net.in_cone(id) ||
        net.node(id).kind != Kind::Relu)
      return fmt::format("leaf.mu: node {} is not a relu the output depends on", id);
    const int64_t len = net.numel(net.node(id).var);
    std::vector<char> seen(static_cast<size_t>(len), 0);
    for (const auto& [e, x] : v) {
      if (e < 0 || e >= len) return fmt::format("leaf.mu[{}]: element {} is out of range (0 to {})", id, e, len - 1);
      if (seen[static_cast<size_t>(e)]++) return fmt::format("leaf.mu[{}]: element {} is given twice", id, e);
      if (!std::isfinite(x)) return fmt::format("leaf.mu[{}]: the multiplier of element {} is not finite", id, e);
    }
  }
  return "";
}

// A tree node's slope hints per relu, one per element of its input (-1: none), or why they are malformed.
std::string dense_slopes(const Net& net, const Slopes& s, std::shared_ptr<const SlopeMap>& out) {
  out = nullptr;
  if (s.one.empty() && s.zero.empty()) return "";
  auto m = std::make_shared<SlopeMap>();
  for (int8_t v : {int8_t{1}, int8_t{0}})
    for (const auto& [id, elems] : v ? s.one : s.zero) {
      if (id < 0 || static_cast<size_t>(id) >= net.graph().nodes.size() || !net.in_cone(id) ||
          net.node(id).kind != Kind::Relu)
        return fmt::format("slopes: node {} is not a relu the output depends on", id);
      std::vector<int8_t>& d = (*m)[id];
      d.resize(static_cast<size_t>(net.numel(net.node(id).var)), -1);
      for (int64_t e : elems) {
        if (e < 0 || static_cast<size_t>(e) >= d.size()) return fmt::format("slopes[{}]: element {} is out of range", id, e);
        d[static_cast<size_t>(e)] = v;
      }
    }
  out = std::move(m);
  return "";
}

// The leaf's multipliers per relu, one per element of its input, NaN where the leaf gives none.
std::map<int64_t, std::vector<double>> dense_mu(const Net& net, const Leaf& leaf) {
  std::map<int64_t, std::vector<double>> out;
  for (const auto& [id, v] : leaf.mu) {
    std::vector<double>& d = out[id];
    d.assign(static_cast<size_t>(net.numel(net.node(id).var)), NAN);
    for (const auto& [e, x] : v) d[static_cast<size_t>(e)] = x;
  }
  return out;
}

// A combination of atoms without given multipliers: sum_k lambda_k mu_k of CROWN's multipliers for
// each atom alone (the bound of the combination of their linear bounds); empty for one atom.
std::map<int64_t, std::vector<double>> combined_mu(const JobCheck& jc, const std::vector<Box>& boxes,
                                                  const std::vector<double>& lambda, const SlopeMap* slopes) {
  std::vector<size_t> used;
  for (size_t k = 0; k < lambda.size(); ++k)
    if (lambda[k] > 0) used.push_back(k);
  if (used.size() < 2) return {};
  const int64_t ny = jc.net.numel(jc.net.output());
  std::vector<double> C;
  for (size_t k : used) C.insert(C.end(), jc.atoms[k].coef.begin(), jc.atoms[k].coef.end());
  std::map<int64_t, std::vector<double>> per_row, out;
  const size_t rows = used.size();
  (void)lower_bounds(jc.net, boxes, jc.net.output(), static_cast<int64_t>(rows), std::move(C),
                     std::vector<double>(rows * static_cast<size_t>(ny), 0.0), nullptr, &per_row, slopes);
  for (const auto& [id, v] : per_row) {
    const size_t len = v.size() / rows;
    std::vector<double>& m = out[id];
    m.assign(len, 0.0);
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < len; ++j) m[j] += lambda[used[r]] * v[r * len + j];
  }
  return out;
}

// The leaf's bound of sum_k lambda_k (c_k . y - rhs_k) on boxes: the larger of the Lagrangian bound
// (its multipliers, else CROWN's) and interval propagation's.
double leaf_bound(const JobCheck& jc, const std::vector<Box>& boxes, const Leaf& leaf, const SlopeMap* slopes) {
  const Net& net = jc.net;
  std::vector<double> mid, rad;
  double constant = 0;
  objective(jc.atoms, leaf.lambda, net.numel(net.output()), mid, rad, constant);
  const Box& ob = boxes[static_cast<size_t>(net.output())];
  Sum ibp;
  add_box_minimum(ob, mid.data(), rad.data(), ibp);
  const std::map<int64_t, std::vector<double>> mu =
      leaf.mu.empty() ? combined_mu(jc, boxes, leaf.lambda, slopes) : dense_mu(net, leaf);
  const double lin = lower_bounds(net, boxes, net.output(), 1, std::move(mid), std::move(rad), &mu, nullptr, slopes)[0];
  return add_dn(std::max(lin, ibp.lower()), constant);
}

// "" when the leaf's bound refutes the conjunction on the state's domain, else why not. The boxes are
// the search's (the parent's intersected); where that bound falls short the leaf's own boxes without
// its ancestors' are tried too (CROWN's bound is not monotone in the intermediate boxes: its adaptive
// lower lines change with them).
std::string check_leaf(JobCheck& jc, State& st, const TreeNode& tn) {
  const Leaf& leaf = tn.leaf;
  if (std::string bad = check_leaf_data(jc.net, leaf, jc.atoms.size()); !bad.empty()) return bad;
  if (std::string bad = dense_slopes(jc.net, tn.slopes, st.slopes); !bad.empty()) return bad;
  bool strict = true;
  for (size_t k = 0; k < jc.atoms.size(); ++k)
    if (leaf.lambda[k] > 0) strict = strict && jc.atoms[k].strict;
  auto refutes = [&](double b) { return b > 0 || (strict && b >= 0); };
  std::shared_ptr<const std::vector<Box>> own;
  auto any = state_boxes(jc.net, st, own, jc.f32);
  if (!any.ok()) return any.message();
  if (!*any) return "";  // no input satisfies the splits
  double bound = leaf_bound(jc, *own, leaf, st.slopes.get());
  // Where that falls short: CROWN rows from every element, then the leaf's boxes without its ancestors'.
  for (int retry = 0; retry < 3 && !refutes(bound) && !st.by_relu; ++retry) {
    State again = st;
    again.known = nullptr;
    again.narrow_all = retry != 1;
    if (retry > 0) again.prior = nullptr;
    auto any2 = state_boxes(jc.net, again, own, jc.f32);
    if (any2.ok() && !*any2) return "";
    if (any2.ok()) bound = std::max(bound, leaf_bound(jc, *own, leaf, st.slopes.get()));
  }
  if (refutes(bound)) return "";
  return fmt::format("the bound {:.17g} of sum_k lambda_k (c_k . y - rhs_k) is not {} 0", bound, strict ? ">=" : ">");
}

// Splits st by s into the first and second child; "" or why the split does not apply.
std::string split(const Net& net, const Property& p, const Split& s, const State& st, State& a, State& b) {
  a = st, b = st;
  a.known = b.known = nullptr;
  a.slopes = b.slopes = nullptr;
  if (s.kind == Split::Kind::Input) {
    if (s.index < 0 || s.index >= p.inputs) return fmt::format("input split: element {} is not an input", s.index);
    const size_t i = static_cast<size_t>(s.index);
    if (!(st.lo[i] <= s.at && s.at <= st.hi[i]))
      return fmt::format("input split of x{} at {:.17g}: outside the box [{:.17g}, {:.17g}]", i, s.at, st.lo[i], st.hi[i]);
    a.hi[i] = s.at, b.lo[i] = s.at;
    a.by_relu = b.by_relu = false;
    return "";
  }
  const auto& nodes = net.graph().nodes;
  if (s.index < 0 || static_cast<size_t>(s.index) >= nodes.size() || !net.in_cone(s.index) ||
      net.node(s.index).kind != Kind::Relu)
    return fmt::format("relu split: node {} is not a relu the output depends on", s.index);
  const int64_t z = net.node(s.index).var;
  if (s.elem < 0 || s.elem >= net.numel(z))
    return fmt::format("relu split of node {}: element {} is out of range", s.index, s.elem);
  a.clamps.push_back(Clamp{z, s.elem, false});
  b.clamps.push_back(Clamp{z, s.elem, true});
  a.by_relu = b.by_relu = true;
  return "";
}

// One job's tree: "" when valid, else the failure (with the tree node's index).
std::string check_job(JobCheck& jc, const Property& p, const Job& job, const CheckOptions& o, CheckReport& rep) {
  std::vector<State> todo;
  State cur{jc.cs.lo, jc.cs.hi, {}, false, nullptr, false, nullptr, false, nullptr};
  if (!job.tree.empty())
    if (std::string bad = dense_slopes(jc.net, job.tree[0].slopes, cur.slopes); !bad.empty()) return "tree node 0: " + bad;
  if (!jc.root) {
    std::shared_ptr<const std::vector<Box>> own;
    auto any = state_boxes(jc.net, cur, own, jc.f32);
    if (!any.ok()) jc.root = any.status();
    else jc.root = *any ? own : nullptr;
  }
  if (!jc.root->ok()) return fmt::format("the case's box: {}", jc.root->message());
  cur.known = **jc.root;
  cur.empty = !cur.known;
  for (size_t i = 0;; ++i) {
    if (i >= job.tree.size()) return fmt::format("tree node {}: the tree ends with {} branches unvisited", i, todo.size() + 1);
    if (Clock::now() > o.deadline) return "deadline";
    const TreeNode& tn = job.tree[i];
    if (!tn.is_leaf) {
      State a, b;
      if (std::string bad = split(jc.net, p, tn.split, cur, a, b); !bad.empty()) return fmt::format("tree node {}: {}", i, bad);
      if (std::string bad = dense_slopes(jc.net, tn.slopes, cur.slopes); !bad.empty()) return fmt::format("tree node {}: {}", i, bad);
      std::shared_ptr<const std::vector<Box>> own;
      auto any = state_boxes(jc.net, cur, own, jc.f32);
      if (!any.ok()) return fmt::format("tree node {}: {}", i, any.message());
      a.prior = b.prior = own;
      a.empty = b.empty = !*any;
      ++rep.splits;
      todo.push_back(std::move(b));
      cur = std::move(a);
      continue;
    }
    ++rep.leaves;
    if (std::string bad = check_leaf(jc, cur, tn); !bad.empty()) return fmt::format("tree node {} (a leaf): {}", i, bad);
    if (todo.empty()) {
      if (i + 1 != job.tree.size()) return fmt::format("tree node {}: nodes after the last leaf", i + 1);
      return "";
    }
    cur = std::move(todo.back());
    todo.pop_back();
  }
}

Status fits(const Net& net, const Property& p) {
  if (net.numel(net.input()) != p.inputs || net.numel(net.output()) != p.outputs)
    return error_status(ErrorCode::kInvalidInput,
                        fmt::format("certificate checker: the model has {} inputs and {} outputs, the property {} and {}",
                                    net.numel(net.input()), net.numel(net.output()), p.inputs, p.outputs));
  for (const Case& c : p.cases) {
    if (c.lo.size() != static_cast<size_t>(p.inputs) || c.hi.size() != c.lo.size())
      return error_status(ErrorCode::kInvalidInput, "certificate checker: a case's box does not have one entry per input");
    for (const auto& conj : c.conjunctions)
      for (const Atom& a : conj)
        if (a.coef.size() != static_cast<size_t>(p.outputs))
          return error_status(ErrorCode::kInvalidInput, "certificate checker: an atom does not have one coefficient per output");
  }
  return ok_status();
}

}  // namespace

Result<CheckReport> check_certificate(const Model& m, const Property& p, const Certificate& c, const CheckOptions& o) {
  const auto t0 = Clock::now();
  auto net = Net::make(m);
  if (!net.ok()) return net.status();
  if (Status s = fits(*net, p); !s.ok()) return s;
  CheckReport rep;
  auto finish = [&](std::string failure) {
    rep.valid = failure.empty();
    rep.failure = std::move(failure);
    rep.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return rep;
  };
  if (c.version != kCertificateVersion)
    return finish(fmt::format("version {}: this checker reads version {}", c.version, kCertificateVersion));
  std::set<std::pair<int64_t, int64_t>> seen;
  std::vector<std::optional<Result<std::shared_ptr<const std::vector<Box>>>>> roots(p.cases.size());
  for (size_t k = 0; k < c.jobs.size(); ++k) {
    const Job& job = c.jobs[k];
    if (job.case_index < 0 || static_cast<size_t>(job.case_index) >= p.cases.size() || job.conjunction < 0 ||
        static_cast<size_t>(job.conjunction) >= p.cases[static_cast<size_t>(job.case_index)].conjunctions.size())
      return finish(fmt::format("jobs[{}]: case {} conjunction {} is not in the property", k, job.case_index, job.conjunction));
    if (!seen.insert({job.case_index, job.conjunction}).second)
      return finish(fmt::format("jobs[{}]: case {} conjunction {} appears twice", k, job.case_index, job.conjunction));
    const Case& cs = p.cases[static_cast<size_t>(job.case_index)];
    JobCheck jc{*net, cs, cs.conjunctions[static_cast<size_t>(job.conjunction)], roots[static_cast<size_t>(job.case_index)], o.f32};
    ++rep.jobs;
    if (std::string bad = check_job(jc, p, job, o, rep); !bad.empty()) {
      if (bad == "deadline") return error_status(ErrorCode::kResource, "certificate checker: the deadline passed");
      return finish(fmt::format("jobs[{}] (case {}, conjunction {}), {}", k, job.case_index, job.conjunction, bad));
    }
  }
  for (size_t ci = 0; ci < p.cases.size(); ++ci) {
    if (p.cases[ci].conjunctions.empty())
      return finish(fmt::format("case {} has no output condition (always true): nothing refutes it", ci));
    for (size_t k = 0; k < p.cases[ci].conjunctions.size(); ++k)
      if (!seen.count({static_cast<int64_t>(ci), static_cast<int64_t>(k)}))
        return finish(fmt::format("case {} conjunction {}: no job covers it", ci, k));
  }
  return finish("");
}

Status covers(const Model& m) {
  auto net = Net::make(m);
  return net.ok() ? ok_status() : net.status();
}

}  // namespace denote::certify
