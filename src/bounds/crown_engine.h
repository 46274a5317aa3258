// Internal: the CROWN engine: the boxes of every node, backward passes from a start node (the
// reverse graph walk with the crown column's rules), and alpha-CROWN's optimiser over them.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bounds/crown_budget.h"
#include "bounds/crown_conv.h"
#include "bounds/crown_lines.h"
#include "bounds/crown_rules.h"
#include "denote/bounds/crown.h"

namespace denote::crown {

// Engine::optimise's multipliers: at[node] rows x numel for each relu's input node, rows[r] whether row
// r's were kept (its best bound came from an optimised step).
struct KeptMultipliers {
  std::vector<std::vector<double>> at;
  std::vector<char> rows, relu_input;
};

// Sets mask[p] for every node p that a split op (relu) reads: where a pass's coefficients are the relus'
// multipliers (CrownOptions::relu_multipliers). mask has one entry per node.
inline void mark_relu_inputs(const Graph& g, std::vector<char>& mask) {
  for (const Node& n : g.nodes)
    if (splits_at_zero(n.op) && !n.parents.empty()) mask[static_cast<size_t>(n.parents[0])] = 1;
}

struct PassResult {
  std::vector<double> lower;  // per row: a lower bound of (C v_start)_r (-inf: none)
  std::string failure;        // why every row is -inf
  // With record: the coefficients each recorded node had (rows x numel; empty: not reached or
  // not recorded), and per node whether the pass reached it.
  std::vector<std::vector<double>> A;
  std::vector<char> reached;
  bool cut = false;  // some rows were concretised at a node that is not an input
};

// C's rows (rows x m) as unit rows, when each has exactly one nonzero among the support's columns
// (the others are 0) and it is +-1; nullopt otherwise.
std::optional<UnitRows> find_unit_rows(const std::vector<double>& C, int64_t rows, const std::vector<int64_t>& support);

// What a backward pass does besides bounding the rows of C (Engine::pass).
struct PassOptions {
  // Every parent of the start is cut at its box (the start's box from its parents' boxes, IBP-like
  // but for any affine op).
  bool one_step = false;
  const std::vector<std::vector<double>>* alpha = nullptr;  // relu lower slopes per (node, row, element)
  bool record = false;                                      // keep the coefficients each reached node had
  const std::vector<char>* record_only = nullptr;           // with record: per node, whether to keep them (null: all)
  const std::vector<double>* beta = nullptr;                // rows x beta_terms.size() multipliers >= 0 (null: none)
  std::vector<std::vector<double>>* scales = nullptr;       // linear error scales kept across passes
  const std::vector<int64_t>* start_support = nullptr;      // the columns of C that may be nonzero, ascending
  // With start_support: C's rows as unit rows, known by the caller (null: found by a scan of C).
  const UnitRows* unit_rows = nullptr;
  // alpha-CROWN's forward values made in the pass (PassRows::vertex_values), or null.
  const std::vector<std::vector<char>>* vertex_need = nullptr;
  std::vector<std::vector<double>>* vertex_values = nullptr;
};

struct Adam {
  std::vector<double> m, v;
};

// beta-CROWN: a subdomain's split constraint sign * v_node[elem] + margin >= 0. A pass with
// multipliers beta subtracts beta_{r,t} (sign v + margin) from row r's bound at the node, which
// lowers it nowhere on the subdomain; Engine::optimise then also ascends on the multipliers.
struct BetaTerm {
  int64_t node = -1, elem = -1;
  double sign = 1, margin = 0;
};

// How an engine runs, fixed when it is made (run_crown's make_engine, or a test).
struct EngineSetup {
  EvalErr err{};  // the evaluation's a-priori error model (f32 or f64)
  // The model prepared for IBP (Subdomain::prepared), whose float copies of f32-exact weights halve the
  // one-step boxes' memory traffic, and whose conv plans the engine borrows; null: none.
  const IbpPrepared* prepared = nullptr;
  // The coefficients' memory (bytes >= 1): a quarter of it, at most 64 MiB, for the workspace's
  // spares, the rest for the rows of each pass. INT64_MAX: no budget.
  int64_t max_bytes = INT64_MAX;
  // bound_elements checks it between chunks of rows (Budget::pairs_per_chunk): past it, the
  // remaining rows keep no bound and stats().late is set.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::vector<BetaTerm> beta_terms{};  // the subdomain's relu splits (beta-CROWN)
  // alpha-CROWN's starting slopes and multipliers (Subdomain::warm), or null.
  const SlopeState* warm = nullptr;
  // alpha-CROWN: a first linear layer fused with the input's concretisation makes its forward values
  // in the pass (PassRows::vertex_values); false: the input's coefficients are stored and the
  // forward rules run (the tests compare the two).
  bool fuse_forward = true;
  // Intermediate bounds of conv nodes on windowed rows (src/bounds/crown_patches.h); false: the dense
  // rules only (the tests compare the two).
  bool patches = true;
  // The input node `ball_input` is this ball inside its box (Subdomain::ball), or null: every pass then
  // stores the input's coefficients (no fused first layer, no windowed rows) and concretises them on both.
  const InputBall* ball = nullptr;
  int64_t ball_input = -1;
  // With forward functions kept (Engine::keep_forward): a plain pass (no record, slopes, multipliers,
  // forward values or ball) stops at a node that has them once going on through the node would make
  // its multiply-adds (rows x the node's backward cost, dense rows) exceed this; 0: passes never stop.
  double forward_cut_work = 0;
};

// Multiply-adds of one dense row's backward step through node n: a conv's or linear layer's products,
// else one per element (EngineSetup::forward_cut_work, crown_intermediate_work).
double backward_cost(const Payload<double>& payload, const Node& n);

// Forward linear functions of a node's elements in the graph's one input (src/bounds/crown_symbolic.h):
// element j's lower and upper functions, w coefficients each (the input's, then the constant), and
// mag[j] >= sum_k |coef_k| X_k of either (X: ForwardInput's).
struct ForwardFns {
  std::vector<double> lo, up, mag;
};
// The input box the functions hold on, and X_k = max |x_k| on it, then 1 (the constant's).
struct ForwardInput {
  std::vector<double> lo, hi, X;
};

// What an engine did.
struct EngineStats {
  int64_t passes = 0, rows_total = 0, alpha_steps = 0;
  int64_t patch_passes = 0;  // passes that ran on windowed rows
  bool late = false;         // bound_elements stopped at the deadline
};

class Engine {
 public:
  Engine(const Graph& g, const Payload<double>& p, EngineSetup setup, std::vector<std::optional<DoubleBox>> boxes);

  // A backward pass from `start` with C (rows x numel(start)); PassOptions says what else it does.
  // C may be empty where PassOptions::unit_rows gives the rows (they are written out where needed).
  PassResult pass(int64_t start, const std::vector<double>& C, int64_t rows, const PassOptions& o = {});
  // The same with C handed over (no copy; its buffer goes back to the workspace).
  PassResult pass(int64_t start, std::vector<double>&& C, int64_t rows, const PassOptions& o = {});
  // lo/hi of the selected elements of node id by passes with rows +e_j and -e_j, as many rows at a
  // time as the budget allows; when not even one pair fits, lo = -inf, hi = +inf and
  // budget.failure says why.
  void bound_elements(int64_t id, const std::vector<int64_t>& elems, bool one_step, std::vector<double>& lo,
                      std::vector<double>& hi);
  // Intersects node id's box with [lo, hi] on the given elements (replace: sets it, as auto_LiRPA).
  void tighten(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
               const std::vector<double>& hi, bool replace = false);
  // relu children of id: their boxes from id's box (exact), intersected (or replaced).
  void refresh_children(int64_t id, bool replace = false);
  // A node no relaxation reads (so no pass of its own): its box intersected with its rule's box on
  // the parents' current ones: the parent's own for a node that keeps the element order (reshape,
  // flatten, detach: the same values), else IBP's step (ibp_node_box; needs `prepared`). Its first
  // box is IBP's from the parents' IBP boxes; after their CROWN passes the a-priori error terms of the
  // rules after it, and a cut's concretisation, read the tighter one. Whether it narrowed any element.
  bool refresh_box(int64_t id);

  // alpha-CROWN: projected Adam on the relu lower slopes (per row and neuron) for the rows of C from
  // `start`; returns per row the best lower bound seen, starting from `crown_lower`.
  // input_coef (rows x numel of the graph's one input, or null): row r's input coefficients of the
  // pass that gave its best bound, kept with it (on entry: those of crown_lower's pass); the passes then
  // store the input's coefficients (no fused first layer) and a pass cut at another node improves nothing.
  // mu (or null): per row whose best bound came from an optimised step, that step's coefficients at
  // every relu's input node (CrownOptions::relu_multipliers). last (or null): the last step's relu slopes
  // and split multipliers (CrownResult::slopes; the starting ones when there is nothing to optimise).
  // stall > 0: the steps stop once the last two raised the rows' summed best bound by at most stall
  // times what the steps have raised it since the start (CrownOptions::alpha_intermediate_stall).
  std::vector<double> optimise(int64_t start, const std::vector<double>& C, int64_t rows,
                               std::vector<double> crown_lower, const CrownOptions& o,
                               const std::vector<double>* stop_above = nullptr,
                               std::vector<std::vector<double>>* scales = nullptr,
                               std::vector<double>* input_coef = nullptr, KeptMultipliers* mu = nullptr,
                               SlopeState* last = nullptr, double stall = 0);

  // Node id's relu splits (all of node id) clamp its box (active: lo >= -margin; inactive: hi <= margin),
  // which then goes to its relu children; false when a split contradicts the box (the subdomain is empty).
  bool apply_splits(int64_t id, const std::vector<ReluSplit>& at_node);

  // The model (read-only) and the setup.
  const Graph& g;
  const Payload<double>& payload;
  const EngineSetup& setup() const { return setup_; }
  const EvalErr& err() const { return setup_.err; }
  // Every node's box (nullopt: none); the passes read them, tighten / refresh_* / apply_splits narrow them.
  const std::optional<DoubleBox>& box(int64_t id) const { return boxes_[static_cast<size_t>(id)]; }
  const std::vector<std::optional<DoubleBox>>& boxes() const { return boxes_; }
  std::vector<std::optional<DoubleBox>> take_boxes() { return std::move(boxes_); }
  const EngineStats& stats() const { return stats_; }
  // The coefficient rows' memory: what fits, and the first refusal (its failure and node).
  Budget& budget() { return budget_; }
  // The conv nodes' plans: the prepared model's, else this engine's own.
  ConvPlans* conv_plans() const;
  // Forward functions for the passes to stop at (EngineSetup::forward_cut_work): the input box they
  // hold on, then node by node.
  void set_forward_input(ForwardInput in) { fwd_in_ = std::move(in); }
  void keep_forward(int64_t id, ForwardFns f) { fwd_[static_cast<size_t>(id)] = std::move(f); }
  bool has_forward() const { return !fwd_in_.X.empty(); }
  // Whether a pass of `rows` rows from `start` would stop at forward functions before it reaches a
  // relaxed op (following the start's first parents): its bound is then the functions' own, already in
  // the boxes, and intermediate_bounds skips it.
  bool stops_before_relaxation(int64_t start, int64_t rows) const;
  // Hands a pass's recorded coefficients back to the workspace.
  void recycle(std::vector<std::vector<double>>& vs) {
    for (auto& v : vs) ws_.give(std::move(v));
  }

 private:
  EngineSetup setup_;
  std::vector<std::optional<DoubleBox>> boxes_;
  EngineStats stats_;
  Workspace ws_;            // coefficient buffers reused by every pass of this engine
  Budget budget_;           // the coefficient rows' memory (setup_.max_bytes)
  ScaleCache scale_cache_;  // linear error scales, reused while their parent box is unchanged
  mutable LineCache line_cache_;  // elementwise lines, reused while their boxes are unchanged (forward_values too)

  const DoubleBox* box_ptr(int64_t id) const;  // node id's box, or null
  std::vector<const DoubleBox*> ptrs() const;
  mutable std::unique_ptr<ConvPlans> own_plans_;
  std::vector<std::vector<int64_t>> relu_children_;  // per node: the relu nodes it feeds
  std::vector<int32_t> uses_;                        // per node: how many times it is a parent
  std::vector<char> forward_reads_;  // per node: whether its forward rule reads its coefficients (alpha-CROWN)
  std::vector<double> step_cost_;     // per node: multiply-adds per dense row of its backward step
  std::vector<std::optional<ForwardFns>> fwd_;
  ForwardInput fwd_in_;
  bool stops_at(int64_t id, int64_t rows, double spent) const;
  void concretize_forward(PassRows& st, int64_t id, const std::vector<double>& A) const;
  bool forward_values(int64_t start, int64_t rows, const std::vector<std::vector<double>>& alpha, const PassResult& pr,
                      const std::vector<std::vector<char>>& need, std::vector<std::vector<double>>& V) const;
  void beta_step(const std::vector<std::vector<double>>& V, Adam& ad, std::vector<double>& beta, int64_t rows,
                 double lr, double c1, double c2) const;
  void warm_start(int64_t start, int64_t rows, std::vector<std::vector<double>>& alpha, std::vector<double>& beta) const;
  void keep_slopes(int64_t start, int64_t rows, std::vector<std::vector<double>>& alpha, std::vector<double>& beta,
                   SlopeState& last) const;
  void add_beta(RuleCtx& ctx, const Node& n, std::vector<double>& A, const std::vector<double>& beta) const;
  bool linear_one_step(int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo, std::vector<double>& hi);
  bool ibp_one_step(int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo, std::vector<double>& hi) const;
  void bound_chunk(int64_t id, const int64_t* elems, int64_t k, bool one_step, double* lo, double* hi);
};

}  // namespace denote::crown
