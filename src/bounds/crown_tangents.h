// Internal: alpha-CROWN's parameters of the S-shaped ops (tanh, sigmoid, erf: increasing, convex on
// x <= 0, concave on x >= 0), the counterpart of relu's optimised lower slopes. Each (row, element)
// has a tangent point for its lower line and one for its upper line, on the parent's box [l, u]:
//   lower: u <= 0 (convex): the tangent at d, d in [l, u];
//          l < 0 < u: the tangent at d in [l, d*], d* the point whose tangent passes through (u, f(u)),
//          also kept under f at u (crown_relax.h's s_lower_at: sound for every d in [l, 0]);
//          l >= 0, or mixed with no such d* in [l, 0]: none (the chord, CROWN's line);
//   upper: the mirror image (l >= 0: the tangent at d in [l, u]; mixed: d in [d*, u], d* the point whose
//          tangent passes through (l, f(l)), kept above f at l; u <= 0: none).
// Any parameter in its range gives a sound line (crown_relax.h's outward intercepts); NaN marks "none"
// (the element keeps CROWN's line). The parameters of a node: rows x m lower points, then rows x m upper.
#pragma once

#include <cstdint>
#include <vector>

#include "bounds/crown_relax.h"
#include "denote/ir/op.h"

namespace denote::crown {

// The op's function if alpha-CROWN optimises its tangent points (tanh, sigmoid, erf), else nullptr.
const Smooth* tangent_smooth(Op op);

// Per element, once per node: [l, u], f's lower enclosure at u and upper enclosure at l (the mixed
// case's second constraint), and in the mixed case CROWN's tangent points (crown_relax.h's s_lower_point,
// s_upper_point; NaN: none, CROWN's line is the chord and the element has no parameter on that side).
struct TangentBox {
  double l = 0, u = 0, f_u = 0, f_l = 0, lower_max = NAN, upper_min = NAN;
};
TangentBox tangent_box(const Smooth& s, double l, double u);
// The parameter ranges: lower [l, u] where u <= 0, [l, lower_max] where mixed (the tangents that pass
// under f(u): auto_LiRPA's range too, so no kink inside it); upper mirrored; false: no parameter.
bool lower_range(const TangentBox& e, double& lo, double& hi);
bool upper_range(const TangentBox& e, double& lo, double& hi);
// The lines for parameters d (the header above; clamped to the range); false when d is NaN, the element
// has no such parameter, or the line is not finite. pivot: where the line touches its constraint (d for
// the tangent, u or l for the second one, which only rounding makes active):
// d (a x + b) / d d = f''(d) (x - pivot).
bool tangent_lower(const Smooth& s, const TangentBox& e, double d, Line& out, double* pivot = nullptr);
bool tangent_upper(const Smooth& s, const TangentBox& e, double d, Line& out, double* pivot = nullptr);

// Initial parameters for rows x m elements of box xb: CROWN's lines (crown_relax.h: the midpoint where
// convex or concave, the tangent through the other end where mixed, else that end); NaN where none.
void init_tangents(const Smooth& s, const DoubleBox& xb, int64_t rows, std::vector<double>& t);

// One projected Adam step on the parameters t of a node: d bound_r / d t = A * d(line at X) / d t, the
// lower line's where A >= 0 and the upper line's where A < 0 (a central difference of the line's value
// at the forward value X of the parent), then clamped to the ranges. m, v: Adam's moments (t's size).
void tangent_step(const Smooth& s, const DoubleBox& xb, const std::vector<double>& A, const std::vector<double>& X,
                  int64_t rows, double lr, double c1, double c2, std::vector<double>& t, std::vector<double>& m,
                  std::vector<double>& v);

}  // namespace denote::crown
