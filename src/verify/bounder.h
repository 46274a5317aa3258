// Internal: the bounds of verify's subdomains (src/verify/verify.cc): a conjunction's Bounder (one run_crown
// call per subdomain, with alpha-CROWN where CROWN leaves a box open), the whole-box bounds of every
// conjunction (stage 2, bound_roots, with its choice of IBP-bounded subdomains over few inputs) and the
// joint alpha-CROWN of a case's open conjunctions (stage 4).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/verify/verify.h"
#include "verify/cert_record.h"
#include "verify/falsify.h"
#include "verify/pool.h"

namespace denote::verify_detail {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The conjunction's atoms as spec rows.
SpecMatrix spec_of(const std::vector<VnnAtom>& conj, int64_t outputs);

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
  std::vector<double> lambda;           // combined: the atoms' multipliers (for a certificate)
  AtomMultipliers atom_mu;              // for a certificate: each atom's relu multipliers
  std::shared_ptr<const certify::Slopes> slopes;  // for a certificate: the passes' lower slopes here
  // alpha-CROWN on this domain: the final rows' slopes it ended at (this conjunction's rows), where relu
  // splitting's first subdomain starts (Subdomain::warm)
  std::shared_ptr<const SlopeState> warm;
};

struct Domain {
  std::vector<double> lo, hi;
  std::shared_ptr<const Boxes> prior;  // the parent's node boxes (they hold on this sub-box too)
  std::shared_ptr<const Bounded> pre;  // its bounds, when they were computed to choose the split
  Path path;                           // its splits from the job's box (for a certificate; null at the root)
  Domain(std::vector<double> l, std::vector<double> h, std::shared_ptr<const Boxes> p,
         std::shared_ptr<const Bounded> b = nullptr)
      : lo(std::move(l)), hi(std::move(h)), prior(std::move(p)), pre(std::move(b)) {}
};

// The model prepared once per instance for the IBP pass of every bound; nullptr when preparing
// fails (run_crown then reports the same error per call, and the bound stays open).
std::unique_ptr<const IbpPrepared> prepared_ibp(const Model& m, const VerifyOptions& o);

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
  // The whole-box alpha-CROWN's intermediate slopes get 1 / kAlphaIntermediateShare of the time left.
  static constexpr double kAlphaIntermediateShare = 3;
  // ... and a node's steps stop once they stall (CrownOptions::alpha_intermediate_stall).
  static constexpr double kAlphaIntermediateStall = 0.02;
  // An IBP pass's seconds on the whole box (bound_roots measures it on inputs of at most kFewInputs
  // elements; 0: not measured).
  double ibp_s = 0;
  // Branch and bound over few inputs bounds its subdomains by IBP alone where a CROWN pass costs more
  // than kIbpFirstRatio IBP passes: splitting one or two inputs narrows IBP's boxes as fast as CROWN's
  // relaxation would, at a fraction of the cost. nn4sys's learned indexes (one input, 41 million
  // weights, 3 million of them nonzero): CROWN 1.5 s a box, IBP about 2 ms.
  static constexpr size_t kFewInputs = 2;
  static constexpr double kIbpFirstRatio = 32;
  // bound_roots: past this estimate of CROWN's intermediate multiply-adds (crown_intermediate_work)
  // over a small input, forward+crown from the start (about 10 s of products on one core).
  static constexpr double kCrownWorkLimit = 1e11;
  bool ibp_domains() const { return ibp_s > 0 && crown_s > kIbpFirstRatio * ibp_s; }

  CrownOptions options(const Domain& d, BoundMethod method) const;
  // The domain's context: its parent's boxes, the atoms' right-hand sides to stop at, the prepared model.
  Subdomain where(const Domain& d) const;
  // Proven: some atom is false on the whole box (its lower bound exceeds the right-hand side), or a
  // combination of the atoms' CROWN bounds is. alpha_open > 0: a box CROWN leaves open also gets
  // alpha-CROWN with that many steps (tighten_alpha).
  Bounded bound(const Domain& d, BoundMethod method, int alpha_open = 0) const;
  // The conjunction's verdict from its rows' lower bounds on d (and, with input_linear, their input
  // coefficients, rows x nx): Proven by an atom or a combination; else Open with the node boxes.
  Bounded judge(const Domain& d, std::vector<double> lower, std::vector<double> coef, bool input_linear,
                std::shared_ptr<const Boxes> boxes) const;
  // A box CROWN left open: alpha-CROWN with `iters` steps too; the rows' lower bounds become the
  // larger of the two and the node boxes their intersection (both hold on the box). CROWN's input
  // coefficients stay (they serve the split choice).
  void tighten_alpha(const Domain& d, int iters, Bounded& out) const;
};

// A certificate's multipliers of each atom from the pass that gave its bound: alpha-CROWN's rows (offset ..
// offset + mu.size() of `alpha`) flagged in by_alpha replace the CROWN pass's in mu.
void take_alpha_rows(const Graph& g, const CrownResult& alpha, const std::vector<char>& by_alpha, size_t offset,
                     const NodeBoxes& boxes, AtomMultipliers& mu);

// A proven domain's proof into the certificate (`c` null: none is made).
inline void record_proof(CertRecorder* c, int job, const Path& path, const Bounded& b, const std::vector<double>& rhs) {
  if (c) c->leaf(job, path, leaf_from_bounds(b.spec_lo, rhs, b.lambda, b.atom_mu), b.slopes);
}

// A quarter of the time left before `deadline`: the share of sampling, of gradient descent and, under
// intermediate "auto", of the whole-box CROWN pass.
Clock::time_point quarter_left(Clock::time_point deadline);

// Stage 2: CROWN on every conjunction's whole box (cases[i]: job i's case, null for no output
// condition), in parallel; the conjunctions of one case over more than kFewInputs inputs in one pass
// on their stacked rows (they share the box and its intermediate bounds). With intermediate "auto" the pass gets a quarter of the time left; a
// conjunction whose pass runs past it (or past the memory budget) is bounded again with forward
// intermediate bounds (forward linear bounds on inputs of at most 64 elements, IBP's boxes beyond),
// which its branch and bound keeps: CROWN's intermediate passes can cost minutes and gigabytes on
// generator and detector networks where the cheaper boxes take seconds (issue 54).
std::vector<Bounded> bound_roots(const std::vector<const VnnCase*>& cases, std::vector<Bounder>& bounders,
                                 WorkerPool& pool, Clock::time_point deadline, const VerifyOptions& o, VerifyStats& st);

// One alpha-CROWN call on the rows of several open conjunctions of one case (they share its input box,
// and the optimised intermediate bounds do not depend on the rows: a robustness property's nine
// conjunctions paid nine optimisations of the same intermediate bounds): a conjunction one of whose
// atoms is impossible by its row's bound is proven; the others keep these bounds and node boxes as their
// root (what their own alpha-CROWN would give: the rows are optimised independently), so decide() does
// not run it again. `open`: indices into bounders and roots. Returns whether it proved any; a failed
// pass changes nothing (each conjunction's own alpha-CROWN runs later).
bool joint_alpha(const Model& m, const VnnCase& c, const std::vector<size_t>& open, const std::vector<Bounder>& bounders,
                 std::vector<Bounded>& roots, BoundErrors& errors);

}  // namespace denote::verify_detail
