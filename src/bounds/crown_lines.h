// Internal: the lines of an elementwise relaxation, per element of a node (src/bounds/crown_rules.cc
// builds them from ops.def's relaxed ops), and one element's step of the backward pass through them.
// Shared by the dense rows (crown_rules.cc) and the windowed rows (crown_patches.cc).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "bounds/crown_state.h"
#include "denote/ir/op.h"

namespace denote::crown {

// The lines of every element, as arrays (the row loops read them in order).
struct Lines {
  std::vector<double> la, lb, ua, ub, xm, ye;
  std::vector<char> ok, open;  // ok: has a relaxation; open: relu element with an alpha slope
};

// Per node: its elementwise lines and the boxes they came from, kept while those boxes are unchanged
// (an engine's passes: alpha-CROWN runs the same pass 10-20 times on fixed boxes; the lines were 5% of
// an oval21 search). A hit compares the boxes, which costs a fraction of making the lines.
struct LineCache {
  struct Entry {
    std::vector<double> xlo, xhi, ylo, yhi;
    Lines lines;
  };
  std::vector<Entry> by_node;
  const Lines* find(int64_t id, const DoubleBox& xb, const DoubleBox& yb) const {
    if (id < 0 || static_cast<size_t>(id) >= by_node.size()) return nullptr;
    const Entry& e = by_node[static_cast<size_t>(id)];
    if (e.lines.la.empty() || e.xlo != xb.lo || e.xhi != xb.hi || e.ylo != yb.lo || e.yhi != yb.hi) return nullptr;
    return &e.lines;
  }
  void store(int64_t id, const DoubleBox& xb, const DoubleBox& yb, const Lines& L) {
    if (id < 0) return;
    if (static_cast<size_t>(id) >= by_node.size()) by_node.resize(static_cast<size_t>(id) + 1);
    by_node[static_cast<size_t>(id)] = Entry{xb.lo, xb.hi, yb.lo, yb.hi, L};
  }
};

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
