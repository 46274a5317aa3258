// Linear bounds: CROWN and alpha-CROWN (backward linear bound propagation) over a graph, for a
// specification matrix C (bounds of C y, y the output), sound in floating point.
//
// A reverse walk from a start node carries, for every row r of C, a linear lower bound
//   (C y)_r >= sum_nodes A_node[r] . v_node + bias[r] - slack[r]
// that holds in exact real arithmetic for every value the network can take on the input boxes, and
// for every value its f64 or f32 evaluation computes. Each op contributes its linear relaxation
// (src/bounds/crown_rules.h, a column next to its IBP rule, built from ops.def): exact for linear,
// add/sub, layout ops, constants; tangent/chord lines for relu, abs, tanh, sigmoid, exp, log,
// softplus, sqrt, inv. An op without one (softmax, layernorm, sin, ...) is cut at its box: its
// IBP (or CROWN) box starts a new linear segment, so no op makes the bound fail. Coefficient
// products may run on OpenBLAS in any order: their rounding error, and the evaluator's own
// rounding, enter `slack` through a-priori bounds (docs/NUMERICS.md, "Linear bounds").
//
// Intermediate bounds (the boxes a relaxation reads) come from IBP, then, with method Crown and
// intermediate = Crown, from a CROWN pass started at each node some relaxation reads (rows: the
// node's elements whose box decides something: for relu only the unstable ones), intersected with
// the IBP box. AlphaCrown then optimises the relu lower slopes per (row, neuron) by projected
// Adam on the bound's exact gradient, keeping the best bound seen per row (never looser than
// CROWN).
//
//   CrownOptions o;  o.method = BoundMethod::Crown;
//   auto r = run_crown(model.graph, model.payload, {DoubleBox{{5}, lo, hi}}, spec, o);
//   // r->spec_lo[k] <= (C y)_k <= r->spec_hi[k]; r->boxes[i]: the box of node i
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/bounds/ibp.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/scalar/arith_spec.h"

namespace denote {

enum class BoundMethod : uint8_t { Ibp, Crown, AlphaCrown };
// "ibp", "crown", "alpha-crown"; nullopt otherwise.
std::optional<BoundMethod> parse_bound_method(std::string_view text);
std::string_view bound_method_name(BoundMethod m);
struct CrownOptions;
// Where intermediate bounds come from, as the CLI's --intermediate and Python's intermediate= name it:
// "crown" (default), "forward", "forward+crown" or "ibp" (any case; auto_LiRPA's "CROWN-IBP" is "ibp":
// IBP's boxes inside, a CROWN pass at the end); sets CrownOptions::intermediate_crown and
// forward_intermediate. False for any other name (o unchanged).
bool set_intermediate(std::string_view name, CrownOptions& o);
// The largest input (elements) forward linear bounds take on (CrownOptions::forward_intermediate).
inline constexpr int64_t kMaxForwardInputs = 64;
// An estimate of the multiply-adds of CROWN's intermediate passes on g: two dense rows per element of
// every node a relaxation reads, each through every node up to it (backward steps of conv / linear
// layers at their products, other ops one per element). To choose intermediate bounds by (verify).
double crown_intermediate_work(const Graph& g, const Payload<double>& payload);
// "forward+crown"'s CrownOptions::forward_cut_work: about a tenth of a second of multiply-adds.
inline constexpr double kForwardCutWork = 1e9;

// The bound method and its parameters: the same for every call of a search (what changes from one
// subdomain to the next is a Subdomain).
struct CrownOptions {
  BoundMethod method = BoundMethod::Crown;
  // A deadline (default: none): intermediate bounds check it between nodes and run_crown returns a
  // kResource error naming the node when it has passed; alpha-CROWN stops its iterations there
  // (keeping the best bounds so far, which hold).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // The arithmetic whose evaluation the bounds must also enclose: f64 or f32 (ArithSpec::is_f64 /
  // is_f32; IBP runs with these endpoints; the a-priori error terms use its unit roundoff). IBP alone
  // (method Ibp) also takes a binary format.
  ArithSpec arith = ArithSpec::f64();
  // Intermediate bounds by CROWN from each node a relaxation reads (auto_LiRPA's method="CROWN"),
  // or IBP boxes only (false).
  bool intermediate_crown = true;
  // Before those (or instead of them, with intermediate_crown = false): forward linear bounds in the
  // input ("symbolic intervals", src/bounds/crown_symbolic.h) tighten every box of the chain of
  // linear, relu, add/sub and layout nodes from a single input of at most 64 elements. Looser than
  // CROWN's intermediate passes, far cheaper on a small input (ACAS Xu: 5 inputs); branch and bound
  // over input boxes uses them. Ignored with relu splits; nothing changes on other graphs.
  bool forward_intermediate = false;
  // With both (set_intermediate's "forward+crown"): a CROWN pass stops at a node's forward functions
  // once going on through that node would take more than this many multiply-adds (rows x the node's
  // backward cost), so the intermediate passes of a deep layer back-substitute through the few layers
  // below it and the rest is the forward functions; a node whose passes would stop before any relu
  // keeps its forward box (no pass). 0: every pass goes down to the input. Affects plain CROWN passes
  // (not alpha-CROWN's optimised ones, nor those recording coefficients or with relu splits);
  // alpha-CROWN then optimises the final rows only (its passes would go down to the input).
  double forward_cut_work = 0;
  // auto_LiRPA's exact choices instead of the tightest: each intermediate box is set (not
  // intersected) from a one-step IBP of its parents' boxes, then CROWN on the elements that box
  // leaves unstable (all of them when more than 90% are; none for a linear node of an input); the
  // final bounds then equal auto_LiRPA's up to outward rounding. Default: every box is the
  // intersection of IBP, the one-step box and CROWN (at least as tight).
  bool lirpa_compatible = false;
  // alpha-CROWN: bound evaluations and Adam's learning rate, decayed by alpha_decay per step
  // (auto_LiRPA's defaults: 20, 0.5, 0.98), and whether the intermediate bounds are optimised too
  // (each of their rows for its own bound, like a specification row).
  int alpha_iters = 20;
  double alpha_lr = 0.5;
  double alpha_decay = 0.98;
  bool alpha_intermediate = true;
  // With alpha_intermediate: no intermediate node starts its optimisation past this time (those nodes keep
  // CROWN's bounds, and one under way stops its steps there), so the final rows keep the time after it
  // (verify gives the whole-box pass a share of the instance's time this way). Default: none.
  std::chrono::steady_clock::time_point alpha_intermediate_until = std::chrono::steady_clock::time_point::max();
  // With alpha_intermediate: an intermediate node's steps stop early once its last two steps raised the
  // sum of its rows' best bounds by at most this fraction of what its steps have raised it since the
  // start (from the fourth step on); 0 (the default): every node takes alpha_iters steps. verify sets
  // 0.02: on resnet_2b the first 6 of 20 steps bring 97% of the narrowing (docs/PERF.md).
  double alpha_intermediate_stall = 0;
  // With a spec: only the rows' lower bounds (spec_hi = +inf), half the final pass's rows.
  bool lower_only = false;
  // beta-CROWN (with splits): Adam's learning rate of the split constraints' multipliers, decayed
  // with alpha's (beta-CROWN's default 0.05).
  double beta_lr = 0.05;
  // CROWN and alpha-CROWN: also return, for each spec row, the coefficients its (CROWN) lower bound has
  // at the graph's first input node (CrownResult::input_coef), e.g. to choose an input split in branch
  // and bound.
  bool input_coefficients = false;
  // CROWN: also return, for each spec row, the coefficients its lower bound has at each relu node
  // (CrownResult::relu_coef), e.g. to choose a relu split.
  bool relu_coefficients = false;
  // CROWN and alpha-CROWN: also return, for each spec row, the coefficients its lower bound's pass had at
  // each relu's input node (CrownResult::relu_mu; alpha-CROWN: the step that gave the row's best bound):
  // the multipliers of a Lagrangian bound that a certificate carries (include/denote/certify/certificate.h).
  bool relu_multipliers = false;
  EvalOptions eval;
};

// One relu split (branch and bound over relu phases, docs/VERIFY.md): it fixes the sign of one element
// of a node that a relu reads, on the subdomain being bounded: active (value >= -margin) or inactive
// (value <= margin). margin >= 0 bounds how far the evaluation's value can be from the exact one, so
// that splitting by the exact sign covers the evaluation too. The node's box is clamped before any
// relaxation reads it, and again after each intermediate bound; a split that a box contradicts makes
// the subdomain empty (CrownResult::infeasible). The bounds then hold on {x in the boxes : splits}.
// alpha-CROWN also optimises a multiplier per (row, split) of the split's constraint (beta-CROWN):
// the constraint enters the bound as a Lagrangian term, so the splits reach the layers before them.
struct ReluSplit {
  int64_t node = -1, elem = -1;
  bool active = true;
  double margin = 0;
};

using NodeBoxes = std::vector<std::optional<DoubleBox>>;

// Where an alpha-CROWN optimisation of a spec's rows left its parameters (CrownResult::slopes): a
// subdomain split from it starts there (Subdomain::warm) instead of at CROWN's slopes and zero
// multipliers, as alpha-beta-CROWN's children reuse their parent's.
struct SlopeState {
  int64_t start = -1, rows = 0;             // the rows' start node (the output) and their count
  std::vector<std::vector<double>> alpha;   // per relu node: rows x numel, the lower slopes in [0, 1]
  std::vector<ReluSplit> splits;            // the splits the multipliers belong to, in order
  std::vector<double> beta;                 // rows x splits.size(), >= 0
};
// Rows [first, first + count) of a state (e.g. one conjunction's rows of a joint alpha-CROWN call).
SlopeState slope_rows(const SlopeState& s, int64_t first, int64_t count);

// Where one run_crown call bounds: what branch and bound changes from one subdomain to the next, apart
// from the input boxes (CrownOptions, the method and its parameters, stay the same). Owned: copies
// share the prior boxes and the prepared model; nothing points into the caller.
// An L2 or L1 ball ||x - center||_p <= eps around the graph's one input (auto_LiRPA's
// PerturbationLpNorm(norm=2 or 1)), which the input box holds (its bounding box center +- eps, or
// less). CROWN's passes then take each row's input term as the smaller of the box's and the ball's
// minimum (a . center - eps ||a||_q, q the dual norm, rounded down: lp_ball_min), so intermediate
// and final bounds hold on the ball and are the ball's; IBP's boxes stay the box's. alpha-CROWN's steps
// optimise the box's bound: with a ball, alpha-CROWN on the box and CROWN on the ball, each bound the
// tighter of the two.
struct InputBall {
  std::vector<double> center;
  double eps = 0;
  double p = 2;  // 2 or 1
};

struct Subdomain {
  // Boxes already known to enclose each node's values (exact and in the arith) on a superset of the
  // input boxes, e.g. a parent subdomain's CrownResult::boxes: every IBP box is intersected with its
  // prior box first (entries without a box, or of another size, are ignored).
  std::shared_ptr<const NodeBoxes> prior;
  // With a prior box for every node: those boxes (the input nodes' intersected with the inputs)
  // instead of a new IBP pass, e.g. a relu split's subdomain, whose input box is its parent's.
  bool prior_only = false;
  std::vector<ReluSplit> splits;
  // alpha-CROWN on the spec: stop optimising once some row's lower bound exceeds stop_above[row]
  // (branch and bound needs one atom of a conjunction proven, not the best bound). Empty: never.
  std::vector<double> stop_above;
  // The model prepared once for IBP (IbpPrepared::prepare on the same graph, payload and arith): the
  // IBP pass then skips the payload conversion and reads the dense linear layers, e.g. once per
  // instance in branch and bound. One prepared for another graph, payload or arith is an error
  // (kInvalidInput), not a silent mix.
  std::optional<IbpPrepared> prepared;
  // alpha-CROWN on the spec's rows: the relu slopes and split multipliers to start from (a parent's
  // CrownResult::slopes; those of another start, row count or split are ignored). Null: CROWN's slopes.
  std::shared_ptr<const SlopeState> warm;
  // With CrownOptions::intermediate_crown: intermediate passes only for the nodes after id refresh_after
  // (-1: from the start), at most refresh_nodes of them (-1: no limit), in id order; every other node
  // keeps its box from `prior` (a relu split's subdomain refreshes what follows its newest split).
  int64_t refresh_after = -1;
  int64_t refresh_nodes = -1;
  // The input is this ball inside the box (null: the box). An error with more than one input, a center of
  // another size, a p other than 1 and 2 or an eps not finite >= 0.
  std::shared_ptr<const InputBall> ball;
};

// Two sets of node boxes that both hold on the same input boxes (e.g. a parent's and a child's, or
// CROWN's and alpha-CROWN's): each box of `boxes` becomes its intersection with `other`'s.
void intersect_node_boxes(std::vector<std::optional<DoubleBox>>& boxes, const std::vector<std::optional<DoubleBox>>& other);

// rows x cols row-major; cols = the output's element count.
struct SpecMatrix {
  int64_t rows = 0, cols = 0;
  std::vector<double> c;
};

struct CrownResult {
  // One box per node (IBP, tightened by CROWN where a pass started there), widened to doubles.
  std::vector<std::optional<DoubleBox>> boxes;
  std::vector<std::string> notes;  // why a node has no box
  int64_t output = -1;
  // Bounds of C y (C = identity when no spec is given): lo[k] <= (C y)_k <= hi[k]; -inf / +inf
  // where a row has no finite bound.
  std::vector<double> spec_lo, spec_hi;
  bool has_spec = false;
  // With CrownOptions::input_coefficients: rows x numel(input), row r the linear function of the
  // input x whose minimum over the box (minus the pass's error terms) is spec_lo[r]: lo(x) = a_r . x
  // + b_r. Empty when the rows' pass did not reach the input as one linear segment.
  std::vector<double> input_coef;
  // With input_coef: whether every row reached the (only) input as one linear function, so that for
  // every x in the input box (C y(x))_r >= a_r . x + beta_r with spec_lo[r] <= min over the box of
  // a_r . x + beta_r (CROWN; alpha-CROWN with lower_only: each row's coefficients those of the pass
  // that gave its best bound; not IBP). False when some rows were cut at another node.
  bool input_linear = false;
  // With CrownOptions::relu_coefficients: per node, rows x numel for the relu nodes the rows' pass
  // reached (empty otherwise).
  std::vector<std::vector<double>> relu_coef;
  // With CrownOptions::relu_multipliers: per node, rows x numel at each relu's input node, and per row
  // whether it has them (relu_mu_rows).
  std::vector<std::vector<double>> relu_mu;
  std::vector<char> relu_mu_rows;
  // The splits contradict the boxes: no input satisfies them (spec_lo = +inf, spec_hi = -inf).
  bool infeasible = false;
  // alpha-CROWN with a spec: the slopes and multipliers of its last step (for Subdomain::warm).
  std::shared_ptr<const SlopeState> slopes;
  // The nodes the output depends on that CROWN and alpha-CROWN take at their IBP box because they have no
  // linear relaxation (an op without a rule, or a product or quotient of two variables): where the linear
  // bounds are only as tight as IBP's. Empty with method ibp or when the passes did not run.
  std::vector<int64_t> cut;
  // Counters: backward passes, rows propagated, alpha iterations run.
  int64_t passes = 0, rows = 0, alpha_steps = 0;
  // Why the linear passes did not run and the bounds are IBP's ("" when they ran): the evaluation's
  // error model that CROWN's slack terms rest on does not hold (crown_model_gap).
  std::string fallback;
};

// The cut nodes of several runs (one per output, as `denote bounds` and Python's bounds make them),
// ascending and once each, and their description "node 5 (gelu), node 7 (softmax)" ("" when none).
std::vector<int64_t> cut_nodes(std::span<const CrownResult> runs);
std::string describe_cut(const Graph& g, const std::vector<int64_t>& cut);

// Where CROWN's evaluation error model (relative error u and an underflow's absolute error per
// operation, parameters rounded relatively) fails for the arithmetic: a parameter outside it
// (parameter_range_gap, include/denote/bounds/ibp.h), or a node box that is not finite (the
// evaluation may overflow to inf there, e.g. 2x on [1e38, 3e38] in f32). "" where it holds.
std::string crown_model_gap(const std::string& parameter_gap, const std::vector<std::optional<DoubleBox>>& boxes);

// Errors: a malformed graph, input boxes as for run_ibp_double, an unknown arith (not f64/f32),
// an output id that is not a node, a spec whose column count is not the output's element count or
// that has non-finite entries.
Result<CrownResult> run_crown(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                              int64_t output_id, const SpecMatrix* spec, const CrownOptions& options,
                              const Subdomain& where = {});

}  // namespace denote
