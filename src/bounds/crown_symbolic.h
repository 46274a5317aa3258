// Internal: forward linear bounds in the input ("symbolic intervals"), the cheap intermediate
// bounds of CrownOptions::forward_intermediate (include/denote/bounds/crown.h).
//
// For a graph with one input x of n elements (a box [lo, hi]), every element j of a node that the
// symbolic column of the op table reaches gets two affine functions of x,
//   lo_j(x) = a_j . x + a_j0  <=  v_j  <=  b_j . x + b_j0      for every x in the box,
// for the exact value and for the value the f64/f32 evaluation computes (the same invariant as a
// CROWN row, src/bounds/crown_state.h). Coefficients are computed in binary64 with round to
// nearest; their rounding error (a-priori, gamma_m sum |w| |coef| |x|) and the evaluation's error
// are moved into the constant term outward, so the functions themselves are sound.
// Each function pair is concretised on the box and intersected with the node's box (IBP, a
// parent subdomain's prior), and the relu children are refreshed, so the relaxation of the next
// relu reads the tightened box. Cost per linear node: out x in x (n + 1) x 4 flops, against CROWN's
// out x in x out x depth for intermediate bounds (ACAS Xu: n = 5, 50 neurons a layer).
//
// Rules: input, const, linear, conv (point weights, midpoint-radius on the conv plan), batch_norm_eval,
// relu, add/sub of equal shapes, mul/div by exact constants, and every storage-only op (the functions
// move with the elements). Any other op leaves its node (and what depends on it) without functions:
// those boxes stay as they were. With EngineSetup::forward_cut_work the functions are also kept in the
// engine for its passes to stop at (Engine::keep_forward), within a quarter of the memory budget.
#pragma once

#include <cstdint>

#include "bounds/crown_engine.h"

namespace denote::crown {

// The largest input (elements) the forward bounds take on (denote/bounds/crown.h): the cost grows with it.
inline constexpr int64_t kMaxSymbolicInputs = kMaxForwardInputs;

// Tightens eng.boxes by forward linear bounds from the graph's single input node over its box in
// eng.boxes (the box CROWN's passes concretise on). Returns false (nothing changed) when the graph
// has not exactly one input, or the input has no box, more than kMaxSymbolicInputs elements or a
// non-finite bound.
bool symbolic_bounds(Engine& eng);

}  // namespace denote::crown
