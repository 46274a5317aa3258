// Internal: the lines of an elementwise relaxation, per element of a node (src/bounds/crown_rules.cc
// builds them from ops.def's relaxed ops), and one element's step of the backward pass through them.
// Shared by the dense rows (crown_rules.cc) and the windowed rows (crown_patches.cc).
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "bounds/crown_state.h"
#include "denote/ir/op.h"

namespace denote::crown {

// The lines of every element, as arrays (the row loops read them in order).
struct Lines {
  std::vector<double> la, lb, ua, ub, xm, ye;
  std::vector<char> ok, open;  // ok: has a relaxation; open: relu element with an alpha slope
};

// Per node: its elementwise lines by the parent's box and its own (an engine's passes: alpha-CROWN runs the
// same pass 10-20 times on fixed boxes; making the lines was 5% of an oval21 search).
using LineCache = BoxCache<Lines>;

// Node op's lines on its parent's box xb and its own box yb (u_eval, tiny_eval: the evaluation's unit
// roundoff and underflow error); false when the op has no elementwise relaxation.
bool element_lines_of(Op op, const DoubleBox& xb, const DoubleBox& yb, double u_eval, double tiny_eval, Lines& L);

// One nonzero coefficient lam of element j through its lines (lo_a: the lower slope used, L.la[j] or
// an alpha): the lower line for lam >= 0, else the upper one. Adds the bias term, its magnitude, its
// count and the slack term to s[0..3]; returns the coefficient on the parent.
inline double relax_one(const Lines& L, size_t j, double lam, double lo_a, double s[4]) {
  const bool below = lam >= 0;
  const double la = below ? lo_a : L.ua[j];
  const double lb = below ? L.lb[j] : L.ub[j];
  const double t = lam * lb, na = lam * la;
  s[0] += t;
  s[1] += std::fabs(t);
  s[2] += lb != 0.0 ? 1.0 : 0.0;
  s[3] += std::fabs(na) * L.xm[j] + std::fabs(lam) * L.ye[j];
  return na;
}

}  // namespace denote::crown
