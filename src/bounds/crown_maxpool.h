// Internal: max_pool's linear relaxation for CROWN and its forward rule for alpha-CROWN
// (src/bounds/crown_rules.cc's table points here). Per output y_j = max over its window W_j:
//   lower line  y_j >= x_i*            i* = the window element with the largest lower end (max >= any element)
//   upper line  y_j <= hi(y_j)         the node's own box (IBP: the window's largest upper end, or tighter)
// and both are y_j = x_i* when i* dominates (lo(x_i*) >= hi(x_i) for every other i in W_j). A row's
// coefficient a >= 0 takes the lower line (a moves to x_i*), a < 0 the upper one (a hi(y_j) joins
// the bias). max is exact in floating point, so the lines hold for the evaluation as for the real
// network; the only rounding is where several outputs move coefficients onto one input element
// (overlapping windows), bounded by gamma(k) of their magnitudes. auto_LiRPA's BoundMaxPool relaxes
// the same way (lower: the argmax of the lower ends; upper: a constant where no element dominates).
#pragma once

#include <vector>

#include "bounds/crown_rules.h"

namespace denote::crown {

bool rule_max_pool(RuleCtx& c, const Node& n, std::vector<double>&& A);
bool fwd_max_pool(ForwardCtx& f, const Node& n);

}  // namespace denote::crown
