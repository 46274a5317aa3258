// Internal: CROWN's backward and forward (alpha-CROWN) rules for elementwise ops of two variables, read by
// the op table's CROWN column (src/bounds/crown_rules.cc): max_elem / min_elem through relu's lines on their
// difference, and the product of two variables through McCormick's planes. One row loop serves both
// (each element's lower and upper plane in x and y); docs/NUMERICS.md has the error terms.
#pragma once

#include <optional>
#include <vector>

#include "bounds/crown_rules.h"

namespace denote::crown {

bool rule_max_elem(RuleCtx& c, const Node& n, std::vector<double>&& A);
bool rule_min_elem(RuleCtx& c, const Node& n, std::vector<double>&& A);
bool fwd_max_elem(ForwardCtx& f, const Node& n);
bool fwd_min_elem(ForwardCtx& f, const Node& n);
// mul_elem of two variables of the node's shape: the rows through the planes (the pass's result, as a
// rule's); nullopt, A untouched, where a parent has no finite box or another shape (the caller cuts).
std::optional<bool> rule_bilinear(RuleCtx& c, const Node& n, std::vector<double>& A);
// The forward rule of the same planes; nullopt where rule_bilinear's is.
std::optional<bool> fwd_bilinear(ForwardCtx& f, const Node& n);

}  // namespace denote::crown
