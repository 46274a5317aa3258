// Internal: a bound method as a strategy of run_crown (include/denote/bounds/crown.h). run_crown does
// what every method shares, the same way for each: the checks, the one IBP entry (a fresh pass, the
// prepared model's, or a subdomain's prior boxes), the engine, the relu splits and the result. A method
// adds two hooks: what it does before the final rows (the intermediate boxes: nothing for IBP; forward
// and CROWN passes node by node for CROWN; alpha-CROWN's optimised rows too) and how it bounds the final
// rows (IBP's one-step rule and the output's box; one backward pass; that pass, then Adam on its slopes).
// Adding a method: a BoundStrategy here, a BoundMethod value and its name (crown.cc), nothing else in
// run_crown (docs/ARCHITECTURE.md "Adding a bound method").
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/crown_engine.h"
#include "denote/bounds/crown.h"

namespace denote::crown {

// The relu splits by node (Subdomain::splits), applied to the engine's boxes.
struct SplitSet {
  std::vector<std::vector<ReluSplit>> by_node;
  bool infeasible = false;

  // Bounds [lo, hi] just computed for elems of node id that contradict a split: the subdomain is empty.
  void check(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
             const std::vector<double>& hi);
  // Clamps node id's box by its splits.
  void apply(Engine& eng, int64_t id);
};
// The splits by node; an error names the first split that is not a node's element with a finite margin >= 0.
Result<SplitSet> split_set(const Graph& g, const std::vector<ReluSplit>& splits);

// The state of one run_crown call that its method's hooks share.
struct Run {
  Engine& eng;
  const CrownOptions& o;
  const Subdomain& where;
  SplitSet& splits;
  int64_t output = -1;
  // The evaluation's error model holds (an f64 or f32 arith, parameters in range): the linear passes
  // can run. Without it every method is IBP's (sound there).
  bool linear = false;
  // Linear error scales per node, kept from the final pass for alpha-CROWN (the boxes are final there).
  std::vector<std::vector<double>> scales;
  // The final rows (run_crown sets it before the intermediate hook), or null.
  const struct FinalRows* rows = nullptr;
  // Per node, the elements the final rows can read through its relaxed consumers (restrict_to_cone;
  // empty: every element), and whether it was computed.
  std::vector<std::vector<char>> cone;
  bool cone_done = false;
};

// The final rows: [C; -C] (C = the spec, or the identity without one), or C alone (a spec with
// CrownOptions::lower_only); nr rows of m columns, row-major.
struct FinalRows {
  std::vector<double> C;
  int64_t k = 0, nr = 0, m = 0;
};

class BoundStrategy {
 public:
  virtual ~BoundStrategy() = default;
  // Tightens run.eng.boxes before the final rows (and notes what it did in res); errors: the deadline,
  // the memory budget, each naming the node. An empty subdomain sets run.splits.infeasible.
  virtual Status intermediate(Run& run, CrownResult& res) const = 0;
  // The pass kind of the final rows (what the memory budget charges per row).
  virtual PassKind final_kind(const CrownOptions& o) const = 0;
  // Per final row, a lower bound (-inf: none).
  virtual std::vector<double> final_rows(Run& run, const FinalRows& rows, CrownResult& res) const = 0;
  // Whether the output's box takes the final rows' bounds (without a spec, the rows bound the output
  // itself): not for IBP, whose rows come from that box.
  virtual bool tightens_output() const { return true; }
};

// Raises lower[r] to row r's bound at the output node's box (C at the box, rounded down), where tighter.
void box_rows(const Run& run, const FinalRows& f, std::vector<double>& lower);

// The method's strategy; IBP's for every method when the linear passes cannot run.
const BoundStrategy& strategy_for(BoundMethod method, bool linear);

}  // namespace denote::crown
