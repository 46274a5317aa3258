// Proof certificates for unsat answers, and their checker (docs/CERTIFICATES.md).
//
// A certificate says why no input of a property's box makes its output condition true, in a form a
// small program can re-check without searching: for every (case, conjunction) of the property a
// search tree whose inner nodes split the input box (x_i <= at | x_i >= at) or a relu's input element
// (z <= 0 | z >= 0), and at each leaf the multipliers of a Lagrangian lower bound: lambda >= 0 per atom
// (sum_k lambda_k (c_k . y - rhs_k) > 0 refutes the conjunction) and, optionally, the multiplier mu of
// each relu's input (any value is valid; where none is given the checker takes CROWN's). The checker
// (src/certify/) derives every intermediate bound itself (interval bound propagation, then CROWN rows
// from each relu's input, their values enclosed with a-priori rounding-error bounds), evaluates each
// leaf's Lagrangian bound with every rounding error bounded, and checks that the leaves cover the box.
// It includes nothing from the bound engine (src/bounds/) or the search (src/verify/): the IR, the
// payload and base/ only. A valid certificate proves the property for the exact real-valued network.
//
//   auto cert = parse_certificate(text, "prop.cert.json");
//   auto report = check_certificate(model, certificate_property(vnn), *cert, {});
//   // report->valid, or report->failure: "job 0 (case 0, conjunction 0), leaf 12: bound -0.003 <= 0"
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"

namespace denote::certify {

inline constexpr int kCertificateVersion = 1;

// One split of a search tree. Input: flat input element `index`, the first child takes x <= at, the
// second x >= at. Relu: the input element `elem` of relu node `index`, the first child takes z <= 0
// (inactive), the second z >= 0 (active).
struct Split {
  enum class Kind : uint8_t { Input, Relu };
  Kind kind = Kind::Input;
  int64_t index = 0, elem = 0;
  double at = 0;
};

// Multipliers of some elements of one relu's input: (element, multiplier) pairs.
using Multipliers = std::vector<std::pair<int64_t, double>>;

// A leaf's proof: lambda per atom of the conjunction (>= 0, not all zero), and optional multipliers
// of relu inputs (relu node id -> the elements given; the others take CROWN's).
struct Leaf {
  std::vector<double> lambda;
  std::map<int64_t, Multipliers> mu;
};

// The lower lines the search's CROWN passes took on this tree node's domain, per relu node id: the
// elements with slope 1 and those with slope 0 (an element in neither takes CROWN's adaptive choice).
// Hints only: any slope in [0, 1] gives a valid bound; they let the checker's intermediate bounds follow
// the search's where its boxes (an f32 evaluation's error terms in them) made other choices.
struct Slopes {
  std::map<int64_t, std::vector<int64_t>> one, zero;
};

// A tree node in preorder: a split is followed by its first child's subtree, then its second's.
struct TreeNode {
  bool is_leaf = true;
  Split split;
  Leaf leaf;
  Slopes slopes;
};

struct Job {
  int64_t case_index = 0, conjunction = 0;
  std::vector<TreeNode> tree;
};

struct Certificate {
  int version = kCertificateVersion;
  std::vector<Job> jobs;
};

// The statement being certified: a property in normal form with outward-rounded boxes. Each atom
// says sum_j coef[j] y_j <= rhs (strict: <); rhs_up >= rhs.
struct Atom {
  std::vector<double> coef;
  double rhs_up = 0;
  bool strict = false;
};
struct Case {
  std::vector<double> lo, hi;  // contain the exact box
  std::vector<std::vector<Atom>> conjunctions;
};
struct Property {
  int64_t inputs = 0, outputs = 0;
  std::vector<Case> cases;
};

// Errors name the JSON path ("jobs[2].tree[14].leaf.lambda") and what was expected. (The writer,
// denote::certificate_json, is verify's: include/denote/verify/verify.h.)
Result<Certificate> parse_certificate(std::string_view text, std::string_view file = "<certificate>");

struct CheckOptions {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Also the network's f32 evaluation (parameters rounded to f32, every operation in binary32, any
  // summation order): each affine node's value may differ from the exact op on its parents' values by an
  // a-priori error bound, which the boxes and the leaves' bounds take in (docs/CERTIFICATES.md).
  bool f32 = false;
};

struct CheckReport {
  bool valid = false;
  std::string failure;  // the first leaf, node or field that fails; empty when valid
  int64_t jobs = 0, leaves = 0, splits = 0;
  double seconds = 0;
};

// Errors (not verdicts): a model the checker does not cover (an op other than input, const, linear,
// conv, relu, the same-order layout ops, add/sub, neg, mul/div by a constant, batch_norm_eval; named by
// node), a model and property that do not fit each other, the deadline. An invalid certificate is a
// report with valid = false.
Result<CheckReport> check_certificate(const Model& m, const Property& p, const Certificate& c,
                                      const CheckOptions& o = {});
// Whether the checker covers the model (as check_certificate's first error, naming the node).
Status covers(const Model& m);

}  // namespace denote::certify
