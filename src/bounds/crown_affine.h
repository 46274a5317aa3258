// Internal: CROWN's generic rule for the ops ops.def flags affine (y = M x + c): layout ops,
// reductions, avg_pool, conv, batch_norm_eval, matmul with a constant operand. Coefficients go back through the op's own VJP rule
// (src/autodiff/, F64Context), one row at a time; the bias is A . f(0); the error terms use |M| xmax,
// which is the op evaluated on the parents' magnitudes (|weights|, no offsets), since M >= 0 for the
// parameter-free ones. alpha-CROWN's forward rule is the op's JVP plus f(0). conv has its own rule
// (src/bounds/crown_conv.h: all rows as one transposed conv), which falls back to this one.
#pragma once

#include <optional>
#include <vector>

#include "bounds/crown_rules.h"

namespace denote::crown {

bool rule_affine(RuleCtx& c, const Node& n, std::vector<double>&& A);
// rule_affine's bias and slack for a node that is not exact data movement: A . f(0) into the bias,
// |A| . (g_coef mx + e (mx + |f(0)|)) into the slack, where g_coef bounds the relative error of the
// computed coefficients (|A' - A M| <= g_coef |A| |M|). The parents must have boxes.
bool affine_bias_slack(RuleCtx& c, const Node& n, const std::vector<double>& A, double g_coef);
// The same from given scales and f(0) (conv's own: crown_conv.cc).
void add_bias_slack(RuleCtx& c, const std::vector<double>& A, const std::vector<double>& scale,
                    const std::vector<double>& f0);
// Its parts: per output o, scale[o] = g_coef mx_o + e (mx_o + |f(0)_o|) + the underflow terms, and f(0).
bool affine_scale(RuleCtx& c, const Node& n, double g_coef, std::vector<double>& scale, std::vector<double>& f0);
bool fwd_affine(ForwardCtx& f, const Node& n);
// matmul with one constant operand is affine in the other; two variable operands: cut.
bool rule_matmul(RuleCtx& c, const Node& n, std::vector<double>&& A);

// For a-priori error bounds (src/verify/relu_margins.cc): node n's op evaluated in f64 on `values` (one
// flat vector per parent, in parent order) with its parameters' magnitudes (|weights|, no offsets) when
// `magnitude`, else as they are (any op: max_pool of margins too); nullopt when the evaluation fails. affine_fan_in: the largest number of parent elements one output
// element reads, plus 1 (the evaluation's rounding count).
std::optional<std::vector<double>> apply_node(const Graph& g, const Payload<double>& p, const Node& n,
                                                const std::vector<std::vector<double>>& values, bool magnitude);
double affine_fan_in(const Graph& g, const Payload<double>& p, const Node& n);
bool matmul_is_affine(const RuleCtx& c, const Node& n);

}  // namespace denote::crown
