// Internal: what verify() records for a certificate (VerifyOptions::certificate, docs/CERTIFICATES.md):
// each proven subdomain's path from its job's root (input or relu splits) and the multipliers of its
// proof; build() assembles each job's leaves into the preorder tree the checker reads, and fails when
// the leaves do not make a complete tree (a search that ended without proving some subdomain).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "denote/base/status.h"
#include "denote/bounds/crown.h"
#include "denote/certify/certificate.h"
#include "denote/verify/vnnlib.h"

namespace denote::verify_detail {

// One step of a path: the split and which child (second: x >= at, or the relu active).
// One step of a path: the split, which child (second: x >= at, or the relu active), and the lower
// slopes the search's passes took on the domain being split (certify::Slopes).
struct PathNode {
  std::shared_ptr<const PathNode> up;
  certify::Split split;
  bool second = false;
  std::shared_ptr<const certify::Slopes> slopes;
};
using Path = std::shared_ptr<const PathNode>;

inline Path extend(const Path& up, const certify::Split& s, bool second, std::shared_ptr<const certify::Slopes> slopes) {
  return std::make_shared<const PathNode>(PathNode{up, s, second, std::move(slopes)});
}

// The lower slopes CROWN's passes take on boxes: per relu with another relu after it, the elements of its
// input on both sides of 0 with slope 1 (u > -l) and with slope 0.
std::shared_ptr<const certify::Slopes> slopes_of(const Graph& g, const NodeBoxes& boxes);

// Per atom: relu node id -> the multipliers of its input (rows offset .. offset + count of
// CrownResult::relu_mu where relu_mu_rows says so), at the elements `boxes` leaves unstable (lo < 0 <
// hi; a stable element's multiplier is CROWN's, which the checker derives). Only relus whose input node
// feeds nothing else (there the recorded coefficients are the relu's multipliers).
using AtomMultipliers = std::vector<std::map<int64_t, certify::Multipliers>>;
AtomMultipliers atom_multipliers(const Graph& g, const std::vector<std::vector<double>>& at, const std::vector<char>& rows,
                                 size_t offset, size_t count, const NodeBoxes& boxes);

// The proof of a subdomain from its rows' lower bounds (one per atom): lambda = the atom whose bound
// exceeds its right-hand side by the most (with that atom's multipliers, when given), or `combination`
// when given (combined atoms).
certify::Leaf leaf_from_bounds(const std::vector<double>& lower, const std::vector<double>& rhs,
                               const std::vector<double>& combination = {}, const AtomMultipliers& mu = {});

class CertRecorder {
 public:
  // jobs[i]: (case index, conjunction index) of verify's job i; g: the model's graph (the relu reading each node).
  CertRecorder(std::vector<std::pair<int64_t, int64_t>> jobs, const Graph& g);
  // Thread-safe. slopes: the leaf's own (or null).
  void leaf(int job, const Path& path, certify::Leaf leaf, std::shared_ptr<const certify::Slopes> slopes = nullptr);
  // The slopes of the job's whole box (a relu branch and bound's root, whose paths carry none).
  void root_slopes(int job, std::shared_ptr<const certify::Slopes> slopes);
  // A relu branch and bound leaf: the splits in the order they were made (ReluSplit::node is the relu's
  // input; the relu reading it names the split).
  void relu_leaf(int job, const std::vector<ReluSplit>& splits, certify::Leaf leaf);
  Result<certify::Certificate> build() const;

 private:
  struct Recorded {
    std::vector<const PathNode*> steps;
    Path path;  // keeps the steps alive
    std::vector<std::pair<certify::Split, bool>> relu_steps;
    certify::Leaf leaf;
    std::shared_ptr<const certify::Slopes> slopes;
  };
  std::vector<std::pair<int64_t, int64_t>> jobs_;
  mutable std::mutex mu_;
  std::vector<std::vector<Recorded>> leaves_;
  std::vector<std::shared_ptr<const certify::Slopes>> roots_ = std::vector<std::shared_ptr<const certify::Slopes>>(jobs_.size());
  std::vector<int64_t> relu_of_;  // per node, the (first) relu reading it, or -1: what names a relu split
};

}  // namespace denote::verify_detail
