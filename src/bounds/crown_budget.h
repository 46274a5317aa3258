// Internal: CROWN's coefficient memory under a budget (CrownOptions::eval.max_bytes, --max-memory).
// A backward pass from a start node carries, for each of its rows, one coefficient per element of
// every node it has reached and not yet passed on; alpha-CROWN also keeps slopes, Adam moments,
// recorded coefficients and forward values per row. rows_that_fit() bounds that from the graph
// alone, before anything is allocated, so an intermediate bound runs its rows in chunks that fit
// and a pass that cannot fit even its smallest chunk is an error naming the node and the bytes,
// never an allocation failure.
#pragma once

#include <cstdint>
#include <string>

#include "denote/ir/graph.h"

namespace denote::crown {

// What a pass keeps per row besides its live coefficients (Engine::pass, Engine::optimise).
enum class PassKind : uint8_t {
  OneStep,  // the start's rule only: its parents are cut at their boxes
  Full,     // the reverse walk down to the inputs
  Record,   // Full, keeping a copy of every reached node's coefficients (PassOptions::record)
  Alpha,    // alpha-CROWN's loop: Record plus slopes, Adam moments and forward values
};

// An upper bound of the doubles a pass from `start` keeps alive at once, per row. The coefficients
// of node p live from the visit of its highest child in start's cone until p's own rule has run
// (parents have smaller ids, the walk goes down), plus one rule's temporary of the largest node;
// beta_terms: the split multipliers and their Adam moments per row.
int64_t doubles_per_row(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms);

struct Budget {
  int64_t bytes = INT64_MAX;  // for coefficient rows (the workspace's spares are kept apart)
  // The first pass that did not fit (empty: none) and its node.
  std::string failure;
  int64_t node = -1;

  // The most rows a pass from start may carry within `bytes` (0: not even one).
  int64_t rows_that_fit(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const;
  // Pairs of rows (+e_j, -e_j) per chunk of an intermediate bound: what fits `bytes`, and at most
  // kChunkBytes of coefficients (chunks that stay in the cache run faster: the verivital conv node
  // 10.9 s in chunks of 48 MB against 46 s in chunks of 2048 rows, docs/PERF.md); 0: not one pair.
  static constexpr int64_t kChunkBytes = int64_t{32} << 20;
  int64_t pairs_per_chunk(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const;
  // Records that a pass from `start` needs `rows` rows (at least) that do not fit.
  void refuse(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms, int64_t rows, std::string_view what);
};

}  // namespace denote::crown
