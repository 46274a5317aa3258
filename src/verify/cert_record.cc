// What verify() records for a certificate (src/verify/cert_record.h).
#include "verify/cert_record.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

#include "denote/ir/op.h"
#include "denote/verify/verify.h"

namespace denote::verify_detail {

AtomMultipliers atom_multipliers(const Graph& g, const std::vector<std::vector<double>>& at, const std::vector<char>& rows,
                                 size_t offset, size_t count, const NodeBoxes& boxes) {
  AtomMultipliers out(count);
  std::vector<int> consumers(g.nodes.size(), 0);
  for (const Node& n : g.nodes)
    for (int64_t p : n.parents) ++consumers[static_cast<size_t>(p)];
  for (const Node& n : g.nodes) {
    if (!splits_at_zero(n.op) || n.parents.empty()) continue;
    const size_t p = static_cast<size_t>(n.parents[0]);
    const size_t len = static_cast<size_t>(numel(g.nodes[p].out_shape));
    if (consumers[p] != 1 || p >= at.size() || at[p].size() < (offset + count) * len) continue;
    if (p >= boxes.size() || !boxes[p] || boxes[p]->lo.size() != len) continue;
    std::vector<int64_t> open;
    for (size_t j = 0; j < len; ++j)
      if (boxes[p]->lo[j] < 0 && boxes[p]->hi[j] > 0) open.push_back(static_cast<int64_t>(j));
    for (size_t k = 0; k < count; ++k) {
      if (offset + k >= rows.size() || !rows[offset + k] || open.empty()) continue;
      certify::Multipliers& m = out[k][n.id];
      for (int64_t j : open) m.push_back({j, at[p][(offset + k) * len + static_cast<size_t>(j)]});
    }
  }
  return out;
}

certify::Leaf leaf_from_bounds(const std::vector<double>& lower, const std::vector<double>& rhs,
                               const std::vector<double>& combination, const AtomMultipliers& mu) {
  certify::Leaf leaf;
  if (!combination.empty()) {
    leaf.lambda = combination;
    return leaf;
  }
  leaf.lambda.assign(rhs.size(), 0.0);
  size_t best = 0;
  double margin = -INFINITY;
  for (size_t k = 0; k < rhs.size() && k < lower.size(); ++k)
    if (lower[k] - rhs[k] > margin) margin = lower[k] - rhs[k], best = k;
  if (!leaf.lambda.empty()) leaf.lambda[best] = 1;
  if (best < mu.size()) leaf.mu = mu[best];
  return leaf;
}

std::shared_ptr<const certify::Slopes> slopes_of(const Graph& g, const NodeBoxes& boxes) {
  // Only relus with another relu after them: a slope is read by the CROWN rows of a later relu's input
  // (the final rows carry their own multipliers), so the last relu layer's would never be.
  std::vector<char> later(g.nodes.size(), 0);
  for (size_t i = g.nodes.size(); i-- > 0;)
    for (int64_t p : g.nodes[i].parents)
      later[static_cast<size_t>(p)] = later[static_cast<size_t>(p)] || later[i] || splits_at_zero(g.nodes[i].op);
  auto s = std::make_shared<certify::Slopes>();
  for (const Node& n : g.nodes) {
    if (!splits_at_zero(n.op) || n.parents.empty() || !later[static_cast<size_t>(n.id)]) continue;
    const size_t p = static_cast<size_t>(n.parents[0]);
    if (p >= boxes.size() || !boxes[p]) continue;
    const DoubleBox& b = *boxes[p];
    for (size_t j = 0; j < b.lo.size(); ++j)
      if (b.lo[j] < 0 && b.hi[j] > 0) (b.hi[j] > -b.lo[j] ? s->one : s->zero)[n.id].push_back(static_cast<int64_t>(j));
  }
  return s;
}

void CertRecorder::leaf(int job, const Path& path, certify::Leaf leaf, std::shared_ptr<const certify::Slopes> slopes) {
  Recorded r;
  for (const PathNode* p = path.get(); p; p = p->up.get()) r.steps.push_back(p);
  std::reverse(r.steps.begin(), r.steps.end());
  r.path = path;
  r.leaf = std::move(leaf);
  r.slopes = std::move(slopes);
  std::lock_guard<std::mutex> lock(mu_);
  leaves_[static_cast<size_t>(job)].push_back(std::move(r));
}

void CertRecorder::root_slopes(int job, std::shared_ptr<const certify::Slopes> slopes) {
  std::lock_guard<std::mutex> lock(mu_);
  roots_[static_cast<size_t>(job)] = std::move(slopes);
}

CertRecorder::CertRecorder(std::vector<std::pair<int64_t, int64_t>> jobs, const Graph& g)
    : jobs_(std::move(jobs)), leaves_(jobs_.size()), relu_of_(g.nodes.size(), -1) {
  for (const Node& n : g.nodes) {
    if (!splits_at_zero(n.op) || n.parents.empty()) continue;
    int64_t& r = relu_of_[static_cast<size_t>(n.parents[0])];
    if (r < 0) r = n.id;
  }
}

void CertRecorder::relu_leaf(int job, const std::vector<ReluSplit>& splits, certify::Leaf leaf) {
  Recorded r;
  for (const ReluSplit& s : splits) {
    certify::Split sp;
    sp.kind = certify::Split::Kind::Relu;
    sp.index = s.node >= 0 && static_cast<size_t>(s.node) < relu_of_.size() ? relu_of_[static_cast<size_t>(s.node)] : -1;
    sp.elem = s.elem;
    r.relu_steps.push_back({sp, s.active});
  }
  r.leaf = std::move(leaf);
  std::lock_guard<std::mutex> lock(mu_);
  leaves_[static_cast<size_t>(job)].push_back(std::move(r));
}

namespace {

struct Trie {
  bool split = false, leaf = false;
  certify::Split s;
  int64_t child[2] = {-1, -1};
  const certify::Leaf* proof = nullptr;
  const certify::Slopes* slopes = nullptr;
};

bool same(const certify::Split& a, const certify::Split& b) {
  return a.kind == b.kind && a.index == b.index && a.elem == b.elem && std::memcmp(&a.at, &b.at, sizeof(double)) == 0;
}

}  // namespace

Result<certify::Certificate> CertRecorder::build() const {
  std::lock_guard<std::mutex> lock(mu_);
  certify::Certificate c;
  for (size_t j = 0; j < jobs_.size(); ++j) {
    auto fail = [&](const std::string& why) {
      return error_status(ErrorCode::kInternal, fmt::format("certificate: job {} (case {}, conjunction {}): {}", j,
                                                            jobs_[j].first, jobs_[j].second, why));
    };
    std::vector<Trie> t(1);
    t[0].slopes = roots_[j].get();
    for (const Recorded& r : leaves_[j]) {
      int64_t cur = 0;
      std::vector<std::tuple<certify::Split, bool, const certify::Slopes*>> steps;
      for (const PathNode* p : r.steps) steps.emplace_back(p->split, p->second, p->slopes.get());
      for (const auto& [s, second] : r.relu_steps) steps.emplace_back(s, second, nullptr);
      for (const auto& [s, second, slopes] : steps) {
        Trie& n = t[static_cast<size_t>(cur)];
        if (n.leaf) return fail("a proven subdomain was split further");
        if (!n.split) n.split = true, n.s = s;
        else if (!same(n.s, s)) return fail("one subdomain split two ways");
        if (slopes && !n.slopes) n.slopes = slopes;
        int64_t ch = t[static_cast<size_t>(cur)].child[second ? 1 : 0];
        if (ch < 0) {  // (index first: emplace_back may move the nodes)
          ch = static_cast<int64_t>(t.size());
          t[static_cast<size_t>(cur)].child[second ? 1 : 0] = ch;
          t.emplace_back();
        }
        cur = ch;
      }
      Trie& n = t[static_cast<size_t>(cur)];
      if (n.leaf || n.split) return fail("a subdomain proven twice, or proven and split");
      n.leaf = true, n.proof = &r.leaf;
      if (r.slopes) n.slopes = r.slopes.get();
    }
    certify::Job job{jobs_[j].first, jobs_[j].second, {}};
    std::vector<int64_t> todo{0};
    while (!todo.empty()) {
      const Trie& n = t[static_cast<size_t>(todo.back())];
      todo.pop_back();
      certify::TreeNode tn;
      if (n.slopes) tn.slopes = *n.slopes;
      if (n.leaf) {
        tn.is_leaf = true, tn.leaf = *n.proof;
      } else {
        if (!n.split || n.child[0] < 0 || n.child[1] < 0) return fail("a subdomain without a proof (the tree is incomplete)");
        tn.is_leaf = false, tn.split = n.s;
        todo.push_back(n.child[1]);
        todo.push_back(n.child[0]);
      }
      job.tree.push_back(std::move(tn));
    }
    c.jobs.push_back(std::move(job));
  }
  return c;
}

}  // namespace denote::verify_detail

namespace denote {

certify::Property certificate_property(const VnnProperty& p) {
  certify::Property out;
  out.inputs = p.num_inputs, out.outputs = p.num_outputs;
  for (const VnnCase& c : p.cases) {
    certify::Case cs;
    cs.lo = c.lo_out, cs.hi = c.hi_out;
    for (const auto& conj : c.output) {
      std::vector<certify::Atom> atoms;
      for (const VnnAtom& a : conj) atoms.push_back(certify::Atom{a.coef, a.rhs_up, a.strict});
      cs.conjunctions.push_back(std::move(atoms));
    }
    out.cases.push_back(std::move(cs));
  }
  return out;
}

}  // namespace denote
