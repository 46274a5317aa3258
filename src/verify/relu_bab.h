// Internal: branch and bound over relu phases (src/verify/relu_bab.cc), the search verify() runs
// where input splitting cannot work: many input dimensions (mnistfc: 784), few of them decisive.
//
// A subdomain is the case's input box with a set of relu splits (an element of a relu's input
// node is >= 0 or <= 0, by its exact value); alpha-beta-CROWN bounds it with those splits clamped
// into the node boxes and their constraints' multipliers (CrownOptions::splits), from the parent's
// node boxes. The split: of the 48 unstable neurons (64 on a network with a conv) with the largest
// |coefficient of the worst atom at the relu| times the upper line's intercept u(-l)/(u-l) (BaBSR's
// score, from the same pass), the one whose better half (VerifyOptions::bab_score; or worse half) gets
// the best CROWN bound (a filtered strong branching, as beta-CROWN's FSB with its oval21 and mnistfc
// configs' `reduceop: max`), the candidates at one relu scored together (half_gains, src/verify/
// split_gains.h). Each subdomain's probe is the input vertex that minimises the worst atom's linear
// lower bound.
//
// Evaluation soundness: splitting by the exact sign leaves the evaluation's value (f32 or f64) on
// the wrong side by up to its forward error, so each split is clamped with a margin: an a-priori
// bound of |evaluation - exact| at that element (eval_margins), from the whole box's node boxes.
// A leaf (no unstable neuron left) that CROWN cannot decide stays undecided: the answer is then
// unknown, never unsat.
#pragma once

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "denote/bounds/crown.h"
#include "verify/falsify.h"
#include "verify/pool.h"
#include "verify/split_gains.h"

namespace denote::verify_detail {


// Per node and element, an upper bound of |value in the arithmetic - exact value| for every input in
// the boxes (`boxes` enclose both values there, e.g. CROWN's boxes on the whole input box), through
// inputs, constants, layout ops, linear, relu, add/sub and mul/div by a constant; nullopt when some
// node on the way to `output` is another op or has no box.
std::optional<std::vector<std::vector<double>>> eval_margins(const Model& m, const NodeBoxes& boxes, int64_t output,
                                                             const ArithSpec& arith);

// Whether verify() should split relus rather than inputs: more than 16 input dimensions of positive
// width, margins available.
bool prefer_relu_split(const VnnCase& c);

// Branch and bound over relu phases of conjunction s.conj on the case's box, from the root's node
// boxes; `spec` holds the conjunction's rows. Unsat when every subdomain is proven or empty, Sat
// with s.found, Timeout at s.deadline, Unknown when a leaf stays open or max_domains is reached.
// ibp: the model prepared once (its parameter check and conv plans serve every subdomain), or null.
// root_warm: the whole-box alpha-CROWN's final-row slopes for these rows, where the first subdomain's
// steps start (null: CROWN's slopes).
VerifyResult relu_bab(Search& s, const SpecMatrix& spec, WorkerPool& pool, int64_t& domains,
                      std::shared_ptr<const NodeBoxes> root_boxes, const std::vector<std::vector<double>>& margins,
                      const IbpPrepared* ibp = nullptr, std::shared_ptr<const SlopeState> root_warm = nullptr);

}  // namespace denote::verify_detail
