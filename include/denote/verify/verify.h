// Complete verification of a VNN-LIB property (include/denote/verify/vnnlib.h) on a model: sat with
// a re-checked witness, unsat from float-sound bounds, or unknown / timeout.
//
// Stages, each over every (case, conjunction of its output condition): random points (the box's
// center and samples, each evaluated once per case and tested against every conjunction); CROWN on
// the whole box (a conjunction is impossible where some atom's lower bound exceeds its right-hand
// side); projected signed-gradient descent on max_k (c_k . y - rhs_k) (gradients of
// include/denote/autodiff/grad.h) for the conjunctions CROWN left open; then per open conjunction
// alpha-CROWN on the whole box and branch and bound by input splitting (the dimension with the
// largest width times the output's sensitivity) with CROWN on every subdomain and a falsification
// probe at its center, or, on boxes of many inputs, by relu splitting with beta-CROWN bounds
// (src/verify/relu_bab.h, docs/VERIFY.md).
//
// Soundness: unsat only from run_crown's bounds in the model's arithmetic (f32 or f64: they hold for
// the exact real network and its evaluation). sat only when a witness x inside the exact decimal box
// satisfies every atom of one conjunction, checked exactly (MPFR), both on the network's evaluation in
// its arithmetic and on the exact real network (MPFR, 256 bits). When the two disagree the point is
// not a witness; the disagreement is counted in the stats. Where the box holds no value of the
// arithmetic along an input (a pinned decimal, lo = hi = 0.1), the real network is checked at the
// exact decimal and the arithmetic at the nearest value (Witness::x_exact, Witness::semantics).
//
//   auto p = load_vnnlib_file("prop_2.vnnlib");
//   auto r = verify(model, *p, VerifyOptions{});   // r->result == VerifyResult::Sat, r->witness->x ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/certify/certificate.h"
#include "denote/ir/model.h"
#include "denote/scalar/arith_spec.h"
#include "denote/verify/frontier.h"
#include "denote/verify/vnnlib.h"

namespace denote {

enum class VerifyResult : uint8_t { Sat, Unsat, Unknown, Timeout };
std::string_view verify_result_name(VerifyResult r);  // "sat", "unsat", "unknown", "timeout"

enum class SplitMode : uint8_t { Auto, Input, Relu };
std::optional<SplitMode> parse_split_mode(std::string_view text);  // "auto", "input", "relu"
// Whether VerifyOptions::intermediate accepts the name: "auto", or a name set_intermediate knows
// ("crown", "forward", "forward+crown", "ibp", "CROWN-IBP", any case).
bool valid_intermediate(std::string_view name);

// Relu branch and bound's split score: the better or the worse half's bound (VerifyOptions::bab_score).
enum class SplitScore { Better, Worse };

struct VerifyOptions {
  double timeout_s = 60;
  ArithSpec arith = ArithSpec::f32();  // the network's arithmetic: f32 (ONNX FLOAT) or f64 (is_f32 / is_f64)
  uint64_t seed = 1;
  int64_t samples = 2048;         // random points per case and conjunction
  int pgd_restarts = 8;
  int pgd_steps = 40;
  bool alpha_root = true;         // alpha-CROWN on the whole box before branching
  int64_t max_domains = 2000000;  // subdomains visited in all; then unknown
  // Branch and bound bounds bab_batch subdomains at a time on `threads` threads; the batch, not the
  // thread count, fixes the order of the search, so the answer and the witness do not depend on
  // `threads` (only when a timeout strikes).
  int threads = 1;
  int bab_batch = 4;
  // What branch and bound splits: input dimensions, relu phases (src/verify/relu_bab.h; needs a
  // network of linear, relu, layout and elementwise ops), or Auto: relus when more than 16 inputs
  // are open and the network allows it, inputs otherwise. A frontier hook always splits inputs.
  SplitMode split = SplitMode::Auto;
  // Relu branch and bound: alpha-beta-CROWN steps per subdomain (the relu slopes and the splits'
  // multipliers of the final rows, intermediate bounds by CROWN); 0: CROWN only.
  int beta_iters = 10;
  // Relu branch and bound: split candidates scored per subdomain to pick the split (filtered strong
  // branching, one CROWN pass per relu with candidates); 0: automatic, 48 on networks without a conv,
  // 64 with one (measured: mnistfc prop_1_0.03 a timeout at 60 s with 10, unsat in 12.0 s with 48;
  // oval21 cifar_deep img5168 21 s with 48, 13.4 s with 64; src/verify/relu_bab.cc).
  int bab_candidates = 0;
  // Relu branch and bound: which half's bound a candidate's score is (alpha-beta-CROWN's FSB `reduceop`):
  // the better half's (max, the default) or the worse half's (min). Measured: the better half took
  // oval21 cifar_base img4631 from a timeout at 120 s to unsat in 81 s and cut img6638's subdomains
  // 1,840 -> 760, mnistfc prop_1_0.03's 8,574 -> 6,722; the worse half did better on cifar_deep img5168
  // (482-700 subdomains against 2,294). docs/PERF.md.
  SplitScore bab_score = SplitScore::Better;
  // Relu branch and bound: CROWN's intermediate passes, per subdomain, on the first bab_refresh nodes that
  // a relaxation reads after the newest split (the others keep the parent's boxes); -1: automatic, 2 on
  // networks without a conv, 0 with one; 0: none; ignored with a certificate (its checker derives the
  // boxes it needs itself). Measured (docs/PERF.md): mnistfc 256x4 prop_0_0.03 a timeout at 60 s with 0
  // (47,340 subdomains), unsat in 2.9 s with 2 (1,104); on oval21's and cifar10_resnet's CNNs the same
  // subdomains at twice the cost each.
  int bab_refresh = -1;
  // Input branch and bound: intermediate bounds of each subdomain by CROWN's passes (false), or by
  // forward linear bounds first (CrownOptions::forward_intermediate; inputs of at most 64
  // elements), then CROWN's passes on what they leave unstable (true). Neither is faster on every
  // ACAS Xu instance (docs/PERF.md).
  bool forward_bounds = false;
  // Intermediate bounds of every bound pass (whole box, subdomains, alpha-CROWN): "crown" (CROWN
  // from each node a relaxation reads), "forward", "forward+crown" or "ibp" (IBP's boxes; auto_LiRPA's
  // CROWN-IBP), as `denote bounds --intermediate` (include/denote/bounds/crown.h, set_intermediate);
  // or "auto" (the default): CROWN, except for a conjunction whose whole-box CROWN pass runs past a
  // quarter of the time left or past the memory budget: that conjunction is bounded again, and
  // searched, with "forward" (forward linear bounds on inputs of at most 64 elements, IBP's boxes
  // beyond). On large generator and detector networks CROWN's intermediate passes can cost minutes and
  // gigabytes where the cheaper boxes take seconds (issue 54: cgan, TinyYOLO). stats.intermediate says
  // which ran. forward_bounds above adds forward bounds before CROWN's (inputs of at most 64 elements).
  std::string intermediate = "auto";
  // A conjunction of two or more atoms is also refuted on a box by a nonnegative combination of its
  // atoms' CROWN lower bounds (a small linear program over the input box, then the bound re-evaluated
  // with outward rounding; docs/VERIFY.md, "Combined atoms"), where no single atom's bound does.
  bool combine_atoms = true;
  // Input branch and bound: once a search has bounded bab_alpha_after subdomains, every box CROWN
  // leaves open also gets alpha-CROWN with bab_alpha_iters steps (0: never), its intermediate
  // bounds optimised too when bab_alpha_intermediate. A long search then visits far fewer boxes
  // (ACAS Xu 4_2 property 2: decided in about 10 s where CROWN alone runs past 116 s); short ones
  // never pay for it.
  int bab_alpha_iters = 6;
  int64_t bab_alpha_after = 6144;
  bool bab_alpha_intermediate = true;
  // Memory budget in bytes of the bound passes (CROWN's coefficient rows and IBP's values), shared
  // by the threads; 0: half of the physical memory. Intermediate bounds run their rows in chunks
  // that fit; a bound that cannot fit leaves its box open, and an undecided answer says why.
  int64_t max_bytes = 0;
  // Optional: moves open subdomains to and from other processes (include/denote/verify/frontier.h);
  // null: the search stays in this process (and is deterministic as above).
  FrontierHook* frontier = nullptr;
  // Witnesses outside the exact box: 0 (the default) accepts only points inside it, or, where the
  // box holds no value of the arithmetic along an input, the real network at the exact decimal
  // (Witness::x_exact). A tolerance t > 0 also accepts a point within t of the box (along every input)
  // that satisfies the property in the arithmetic alone, as VNN-COMP's scoring does (it uses 1e-4);
  // the answer's Witness::semantics says so.
  double witness_tolerance = 0;
  // With an unsat answer, also a certificate (VerifyOutcome::certificate; docs/CERTIFICATES.md) that
  // include/denote/certify/certificate.h's checker re-validates without the bound engine. The search
  // then keeps CROWN's intermediate bounds (no optimised intermediate slopes, no forward bounds), which
  // the checker derives itself. Not with a frontier hook.
  bool certificate = false;
};

struct Witness {
  std::vector<double> x;  // the input, flat row-major (X_0, X_1, ...), in the network's arithmetic
  std::vector<double> y;  // the output in the network's arithmetic at x
  // Where the property's box holds no value of the arithmetic along an input (a pinned decimal such as
  // lo = hi = 0.1, or a box narrower than a float's spacing): x there is the arithmetic's value nearest
  // the bound, and the witness holds for the exact real network at the decimal x_exact[i] ("" at the
  // other inputs). Empty when x lies in the box.
  std::vector<std::string> x_exact;
  // In which semantics the witness holds: "f32 and real" (x in the box, both checked exactly);
  // "real at the exact decimal inputs; ..." (x_exact above; the arithmetic at x, outside the box by
  // `outside`); "... within the tolerance ..." (VerifyOptions::witness_tolerance).
  std::string semantics;
  double outside = 0;  // how far x lies outside the exact box, along its farthest input (0 inside)
};

struct VerifyStats {
  // falsify_s: stage 1 (sampling and PGD everywhere); bounds_s: CROWN and alpha-CROWN on each
  // whole box; bab_s: branch and bound after that, of which bab_bounds_s bounding subdomains
  // (wall time of the parallel batches and of bounding split candidates) and bab_probe_s the
  // probes, split choices and batched sampling without the bounding inside them (disjoint parts).
  double falsify_s = 0, bounds_s = 0, bab_s = 0, bab_bounds_s = 0, bab_probe_s = 0, total_s = 0;
  int64_t samples = 0, pgd_steps = 0, domains = 0, crown_calls = 0, alpha_calls = 0;
  int threads = 1;
  int64_t disagreements = 0;  // points that satisfy the property in one semantics only
  int64_t combined = 0;       // boxes refuted by a combination of atoms where no single atom was
  std::string decided_by;     // "sampling", "pgd", "bab-probe", "crown", "alpha-crown", "bab", ""
  std::string intermediate;   // the bound passes' intermediate bounds (VerifyOptions::intermediate, as resolved)
};

struct VerifyOutcome {
  VerifyResult result = VerifyResult::Unknown;
  std::optional<Witness> witness;
  VerifyStats stats;
  std::string note;  // why unknown
  // VerifyOptions::certificate with an unsat answer: the proof's certificate, or why none was made
  // (certificate_error; the answer stands: it rests on the engine's bounds).
  std::optional<certify::Certificate> certificate;
  std::string certificate_error;
};

// The property as the certificate checker states it: the outward-rounded boxes, each atom's right-hand
// side rounded up, the strictness.
certify::Property certificate_property(const VnnProperty& p);
// A certificate as JSON (docs/CERTIFICATES.md; certify::parse_certificate reads it back bit for bit).
std::string certificate_json(const certify::Certificate& c);

// Errors: the model's input/output element counts differ from the property's X/Y counts, the model
// has not exactly one input and one output, an arith other than f32/f64, an unknown intermediate.
Result<VerifyOutcome> verify(const Model& m, const VnnProperty& p, const VerifyOptions& o);
// What verify() checks before it searches: the options (arith, intermediate), one input and one output,
// and the property's input and output counts against the model's; kInvalidInput naming what differs.
Status check_instance(const Model& m, const VnnProperty& p, const VerifyOptions& o);

// Branch and bound of job `job` (include/denote/verify/frontier.h: one (case, conjunction) in
// property order) from `box`, a sub-box of the case's box given by another process's search: CROWN on
// every subdomain, the same probes and splits as verify()'s search, o.frontier (if any) called between
// batches; o.timeout_s from now. Sat carries the witness (re-checked like verify()'s); stats.domains
// counts the subdomains bounded here. Errors: those of verify(), a job or box that does not fit.
Result<VerifyOutcome> verify_subdomain(const Model& m, const VnnProperty& p, int job, const FrontierBox& box,
                                       const VerifyOptions& o);
// The number of jobs of a property (the range of `job` above).
int frontier_jobs(const VnnProperty& p);

// Whether x (flat) is a witness of conjunction `conj` of case c: y receives the arithmetic's output,
// holds_arith whether the conjunction holds there (exactly), in_box whether x lies in the case's exact
// box. Then holds_exact: whether the exact real network satisfies it at x (in the box) or, when x lies
// outside only along inputs whose box holds no value of the arithmetic, each at the value nearest
// the bound, at those exact decimals (x_exact, as in Witness). With a tolerance t > 0, a point within
// t of the box that the rest does not confirm is accepted on the arithmetic alone (within_tolerance).
struct WitnessCheck {
  bool in_box = false, holds_arith = false, holds_exact = false, within_tolerance = false;
  std::vector<double> y;
  std::vector<std::string> x_exact;
  double outside = 0;  // how far x lies outside the box (an upper bound; 0 inside)
  bool confirmed() const;
  std::string semantics(const ArithSpec& arith) const;  // as Witness::semantics
};
WitnessCheck check_witness(const Model& m, const VnnCase& c, const std::vector<VnnAtom>& conj,
                           const std::vector<double>& x, const ArithSpec& arith, double tolerance = 0);

}  // namespace denote
