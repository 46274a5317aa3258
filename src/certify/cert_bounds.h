// Internal: the checker's bounds (src/certify/cert_bounds.cc): every node's box on a leaf's domain
// (interval propagation, relu inputs clamped by the leaf's splits and, where asked, narrowed by CROWN
// rows whose values are enclosed rigorously), and the Lagrangian lower bound of a linear functional.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "certify/cert_net.h"

namespace denote::certify {

// A relu split on a leaf's path: element elem of node `node` (a relu's input) is <= 0 or >= 0.
struct Clamp {
  int64_t node = 0, elem = 0;
  bool active = false;
};

struct Domain {
  std::vector<double> lo, hi;  // the input box
  std::vector<Clamp> clamps;
  const std::vector<Box>* root = nullptr;  // boxes that hold on a superset (every box intersected with them), or null
  bool crown = true;                       // narrow relu inputs by CROWN rows
  // CROWN rows from every element of a relu input, not only those the boxes leave on both sides of 0
  // (as the search does: a stable element's box is its interval one), and on the first layer too.
  bool narrow_all = false;
  // Lower slopes to take (relu node id -> per element of its input: 1, 0, or -1 for CROWN's adaptive
  // choice; Slopes of the certificate's tree node), or null.
  const std::map<int64_t, std::vector<int8_t>>* slopes = nullptr;
  bool f32 = false;  // the boxes enclose the f32 evaluation too (Net::add_f32_error)
};

// Every cone node's box on the domain. Empty: a clamp contradicts a box (no input satisfies the
// splits); Invalid: a box is NaN.
enum class DomainKind : uint8_t { Boxes, Empty, Invalid };
DomainKind domain_boxes(const Net& net, const Domain& d, std::vector<Box>& boxes);

// Adds to s the terms of a lower bound of sum_j L_j x_j over the box, L_j in mid_j +- rad_j.
void add_box_minimum(const Box& b, const double* mid, const double* rad, Sum& s);

// Lower bounds of `rows` linear functionals of node `start` (coefficients cmid +- crad, rows x numel)
// over the domain whose boxes are given: the relu relaxations' multipliers from mu (relu node id ->
// per element of its input, NaN where not given; row 0 only) where given, else CROWN's. -inf where not finite. used (or
// null): receives the multipliers each relu took, rows x elements.
std::vector<double> lower_bounds(const Net& net, const std::vector<Box>& boxes, int64_t start, int64_t rows,
                                 std::vector<double> cmid, std::vector<double> crad,
                                 const std::map<int64_t, std::vector<double>>* mu = nullptr,
                                 std::map<int64_t, std::vector<double>>* used = nullptr,
                                 const std::map<int64_t, std::vector<int8_t>>* slopes = nullptr);

}  // namespace denote::certify
