// Linear bounds over an L2 or L1 ball ||x - c||_p <= eps (auto_LiRPA's PerturbationLpNorm(norm=2 or 1)). The
// bound engine takes the ball as Subdomain::ball (include/denote/bounds/crown.h): every CROWN pass, the
// intermediate ones included, minimises its rows' linear functions in the input over the ball itself,
// a . c + bias - eps ||a||_q (q = 2, or inf for p = 1), where that beats the box c +- eps. The helpers here
// are that minimum and the constant of a row's linear bound on the box. Every step rounds outward.
//
//   std::vector<double> lo, hi;  // the box's bounds of C y, tightened in place
//   Status s = tighten_on_ball(g, payload, box, center, 0.02, 2, out, &spec, crown_options, lo, hi);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "denote/base/status.h"
#include "denote/bounds/crown.h"

namespace denote {

// The rows a side of the bounds uses: the spec, or the identity over the output's ny elements without one.
SpecMatrix spec_or_identity(const SpecMatrix* spec, int64_t ny);

// A constant `bias` with a . x + bias <= (C y)_r for every x of the box, from CROWN's lower bound `lower` of
// the row and its input coefficients a: lower minus an upper bound of min over the box of a . x, rounded down.
double box_bias(std::span<const double> a, const DoubleBox& box, double lower);

// min over ||x - c||_p <= eps of a . x + bias (p = 1 or 2), rounded down.
double lp_ball_min(std::span<const double> a, double bias, std::span<const double> c, double eps, double p);

// The bounds lo <= C y <= hi (C = identity over the output's elements without a spec) that hold on the box
// (a ball's bounding box, the graph's only input), tightened to the ball: run_crown with the ball
// (Subdomain::ball); lo and hi never loosen. Only with o.method == Crown (otherwise nothing changes).
// Errors: run_crown's.
Status tighten_on_ball(const Graph& g, const Payload<double>& payload, const DoubleBox& box, std::span<const double> center,
                       double eps, double p, int64_t output, const SpecMatrix* spec, const CrownOptions& o,
                       std::vector<double>& lo, std::vector<double>& hi);

}  // namespace denote
