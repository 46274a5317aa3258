// Internal: how relu branch and bound (src/verify/relu_bab.cc) scores a split candidate: the CROWN
// lower bound of a spec row on each half of the split, minus the parent subdomain's, for many
// candidates at once (src/verify/split_gains.cc). Rankings, never bounds: the evaluation's error terms
// are left out where a cheaper form serves.
//
// A half differs from its parent only in the split element's relu line (the identity, or zero), so with
// c the parent pass's row at the relu's input p (its coefficients at the relu through the relu's lines)
// and B(v) the CROWN lower bound of v . x_p by a pass from p, a half's bound is the parent's minus the
// element's intercept term plus B(c') - B(c), c' = c with element j changed by d. Three forms of it:
// - p affine in the input (a first layer): closed form from the input coefficients of c and of the
//   candidates' unit rows (two passes);
// - p reached from the input through convolutions, relus, same-order ops and residual sums only (a
//   convolutional front: GainCone): c goes down once, densely, and each candidate's change d e_j goes
//   down as a sparse vector (a conv spreads it over one kernel window per step; a relu changes only the
//   elements it touches, with the line its new coefficient picks), so a candidate costs its windows,
//   not a pass;
// - otherwise one CROWN pass from p with rows [c; c with element j = lam_j; c with it 0] per candidate.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include "denote/bounds/crown.h"
#include "denote/ir/model.h"

namespace denote::crown {
struct ConvBackward;
class ConvPlans;
}  // namespace denote::crown

namespace denote::verify_detail {

// A split candidate: sp splits element sp.elem of relu `relu`'s input node sp.node.
struct Candidate {
  ReluSplit sp;
  int64_t relu = -1;
};

// Row w's CROWN lower bound of each half (the element's input >= 0, or <= 0) minus the parent's; -inf
// where it could not be computed.
struct HalfGain {
  double active = -INFINITY, inactive = -INFINITY;
};

// A relu input p's cone: every node p depends on is a conv (with a plan), a relu, a same-order op, a sum
// of two variables of its own shape, or the graph's one input, and at least one is a relu (else p is
// affine in the input). Residual networks' joins included; a linear layer is not (a change through it is
// dense: a pass serves better).
struct GainCone {
  enum class Kind : uint8_t { Conv, Relu, Same, Add, Input };
  struct Step {
    Kind kind = Kind::Same;
    int64_t node = -1;
    size_t numel = 0;
    const crown::ConvBackward* conv = nullptr;  // Conv: the node's plan (owned by the ConvPlans)
  };
  std::vector<Step> steps;    // the cone's nodes by descending id: p first, the input last
  std::vector<int32_t> slot;  // per graph node: its index in steps, -1 outside the cone
};
// Per node, the cone of the node when it is a relu's input and has one (nullopt otherwise). The plans
// must outlive the cones.
using GainCones = std::vector<std::optional<GainCone>>;
GainCones gain_cones(const Model& m, crown::ConvPlans& plans);

// Per node, whether it is an affine function of the graph's inputs (every node it depends on is an
// input, a constant or an affine op: no relaxation between it and the input), in one walk.
std::vector<char> affine_in_input(const Graph& g);

// Per candidate, row w's half gains on the parent subdomain (its node boxes parent.prior, with the
// parent's splits clamped in: prior_only). relu_coef: the parent's CROWN pass's coefficients at each
// relu (CrownResult::relu_coef, row w of them). affine: affine_in_input(m.graph); cones: gain_cones
// (null: none, every non-affine relu by a pass). One scoring per relu with candidates, counted in
// *passes. base: the arithmetic and memory budget of the passes.
std::vector<HalfGain> half_gains(const Model& m, const DoubleBox& input, const CrownOptions& base, const Subdomain& parent,
                                 const std::vector<std::vector<double>>& relu_coef, size_t w,
                                 const std::vector<Candidate>& cands, const std::vector<char>& affine,
                                 const GainCones* cones = nullptr, int64_t* passes = nullptr);

}  // namespace denote::verify_detail
