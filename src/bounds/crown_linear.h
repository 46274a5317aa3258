// Internal: CROWN's backward rule for the linear op (src/bounds/crown_rules.h's table uses it):
// A_parent = A W, bias A b, and the error terms of the product and of the evaluation. Only A's
// columns that may be nonzero (PassRows::support) and the parent's elements whose box is not the
// point 0 (dead relus) enter the product; when the parent is the input (up to reshapes) and feeds
// nothing else, the input's coefficients are concretised as they are made and never stored.
#pragma once

#include <vector>

#include "bounds/crown_state.h"

namespace denote::crown {

bool rule_linear(RuleCtx& c, const Node& n, std::vector<double>&& A);

// W (out x in, row-major) restricted to the rows `rows` (null: all out) and the columns `cols` (null:
// all in), into dst (rows x cols, row-major): the gathered operand of every product on a support.
void gather_weights(const double* W, int64_t out, int64_t in, const std::vector<int64_t>* rows,
                    const std::vector<int64_t>* cols, double* dst);

}  // namespace denote::crown
