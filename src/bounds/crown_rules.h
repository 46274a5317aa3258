// Internal: the CROWN column of the op table. crown_rule(op) is the op's backward rule: given the
// node's coefficients A (rows x numel), it adds coefficients to the parents, terms to the bias and
// error terms to the slack (src/bounds/crown_state.h). nullptr: the op has no linear relaxation
// and is cut at its box (the segment starts there). The table is built from ops.def (one entry per
// op, compile-time sized), so a new op is cut until it gets a rule.
//
// Forward rules (crown_forward(op)) serve alpha-CROWN's gradient: the relaxed network (every
// relaxation replaced by the line the backward pass chose for that row) evaluated at the point
// where the bound is attained, rows at once.
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/crown_state.h"
#include "denote/ir/op.h"

namespace denote::crown {

using Rule = bool (*)(RuleCtx&, const Node&, std::vector<double>&& A);
Rule crown_rule(Op op);
// Whether node n is cut at its box (CrownResult::cut): its op has no rule, or its rule needs what the node
// lacks (a constant operand of mul_elem / matmul or operands of its own shape for the product of two
// variables, a constant divisor, the constant exponent 2 of pow).
bool crown_cuts(const Graph& g, const Payload<double>& payload, const Node& n);

// The relaxed network's forward values at the bound's attaining point, one row per spec row.
struct ForwardCtx {
  const RuleCtx& rc;
  // Per node: the coefficients the backward pass had there (rows x numel; empty: not reached, or
  // not kept where forward_reads_coefficients is false).
  const std::vector<std::vector<double>>& A;
  std::vector<std::vector<double>>& V;  // per node: rows x numel
  // Per node, the elements whose values some gradient needs (empty: all); a linear node computes
  // only those (the others are left 0).
  const std::vector<std::vector<char>>* need = nullptr;
};
using ForwardRule = bool (*)(ForwardCtx&, const Node&);
// nullptr: alpha-CROWN has no gradient through the op (it keeps the CROWN slopes).
ForwardRule crown_forward(Op op);
// Whether the op's forward rule reads the node's coefficients (ForwardCtx::A): the rules of linear,
// add, sub and the affine ops do not, so a pass need not keep them there.
bool forward_reads_coefficients(Op op);

}  // namespace denote::crown
