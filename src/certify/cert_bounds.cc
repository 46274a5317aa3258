// The checker's bounds (src/certify/cert_bounds.h).
//
// A linear functional sum_n <L_n, v_n> is carried backward from `start`: each affine node hands its
// coefficients to its parents (exactly transposed, radii for rounding) and its constant part to the
// row's sum; an input node is minimised over its box. A relu h = relu(z) with coefficient nu (nu_lo
// its lower end) and any multiplier mu satisfies, on the domain,
//   nu h >= nu_lo h >= mu z + min over (z, h) in S of (nu_lo h - mu z)      (h >= 0 on S)
// where S is the relu's graph's hull on the box [l, u] of z: the triangle (l, 0), (0, 0), (u, u), or a
// segment when the box lies on one side of 0; the minimum of a linear function over S is at a vertex.
// So mu moves to z and the vertex minimum to the row's sum: the bound holds for every mu (a Lagrangian
// bound). CROWN's choice of mu (mu = a nu with its adaptive lower line where nu >= 0, the upper line's
// slope where nu < 0) makes the bound CROWN's.
#include "certify/cert_bounds.h"

#include <algorithm>
#include <cmath>

namespace denote::certify {

namespace {

// A lower bound of a h - mu z (terms with a zero factor are exactly 0; they may be infinite).
double vertex_lower(double a, double h, double mu, double z) {
  const double v = lower_of_difference(a, h, mu, z);
  return std::isnan(v) ? -INFINITY : v;
}

// CROWN's multiplier: the lower line's slope (the hint, else 1 where u > -l, else 0) where m >= 0, the
// upper chord's where m < 0.
double crown_mu(double m, double l, double u, int8_t hint) {
  if (l >= 0) return m;
  if (u <= 0) return 0;
  if (m >= 0) return (hint >= 0 ? hint == 1 : u > -l) ? m : 0;
  return m * (u / (u - l));
}

void relax(const Net& net, int64_t id, int64_t rows, const std::vector<Box>& boxes, std::vector<Coef>& coef,
           std::vector<Sum>& sums, const std::map<int64_t, std::vector<double>>* mu,
           std::map<int64_t, std::vector<double>>* used, const std::map<int64_t, std::vector<int8_t>>* slopes) {
  const int64_t parent = net.node(id).var;
  const Box& pb = boxes[static_cast<size_t>(parent)];
  const size_t len = pb.lo.size();
  Coef& in = coef[static_cast<size_t>(id)];
  const std::vector<double>* given = nullptr;
  if (mu) {
    auto it = mu->find(id);
    if (it != mu->end() && it->second.size() == len) given = &it->second;
  }
  const std::vector<int8_t>* hint = nullptr;
  if (slopes) {
    auto it = slopes->find(id);
    if (it != slopes->end() && it->second.size() == len) hint = &it->second;
  }
  std::vector<double> out(static_cast<size_t>(rows) * len, 0.0);
  for (int64_t r = 0; r < rows; ++r)
    for (size_t j = 0; j < len; ++j) {
      const size_t ci = static_cast<size_t>(r) * len + j;
      const double m = in.mid[ci], rr = in.rad[ci], l = pb.lo[j], u = pb.hi[j];
      const double nu = rr == 0 ? m : lo_of(m, rr);
      const double g = given && r == 0 && !std::isnan((*given)[j]) ? (*given)[j] : crown_mu(m, l, u, hint ? (*hint)[j] : -1);
      double v;
      if (l >= 0) {
        v = std::min(vertex_lower(nu, l, g, l), vertex_lower(nu, u, g, u));
      } else if (u <= 0) {
        v = std::min(vertex_lower(0, 0, g, l), vertex_lower(0, 0, g, u));
      } else {
        v = std::min({vertex_lower(0, 0, g, l), 0.0, vertex_lower(nu, u, g, u)});
      }
      sums[static_cast<size_t>(r)].add(std::isnan(v) ? -INFINITY : v);
      out[ci] = g;
    }
  if (used) (*used)[id] = out;
  net.accumulate(parent, std::move(out), std::vector<double>(static_cast<size_t>(rows) * len, 0.0), coef);
  in = Coef{};
}

// The f32 evaluation's error at a node (Box::err): <L, delta> >= -sum (|m| + r) err.
void perturbation(const Box& b, int64_t rows, const Coef& in, std::vector<Sum>& sums) {
  const size_t len = b.err.size();
  for (int64_t r = 0; r < rows && len > 0; ++r)
    for (size_t j = 0; j < len; ++j) {
      const size_t ci = static_cast<size_t>(r) * len + j;
      if (b.err[j] != 0 && (in.mid[ci] != 0 || in.rad[ci] != 0))
        sums[static_cast<size_t>(r)].add_prod(-next_up(std::fabs(in.mid[ci]) + in.rad[ci]), b.err[j]);
    }
}

void concretize(const Box& b, int64_t rows, Coef& in, std::vector<Sum>& sums) {
  const size_t len = b.lo.size();
  for (int64_t r = 0; r < rows; ++r)
    add_box_minimum(b, in.mid.data() + static_cast<size_t>(r) * len, in.rad.data() + static_cast<size_t>(r) * len,
                    sums[static_cast<size_t>(r)]);
  in = Coef{};
}

// Whether node id is a linear or conv layer on the input (up to same-order and elementwise affine
// steps): there interval propagation is already exact up to rounding.
bool first_layer(const Net& net, int64_t id) {
  const Kind k = net.node(id).kind;
  if (k != Kind::Linear && k != Kind::Conv) return false;
  for (int64_t p = net.node(id).var;; p = net.node(p).var) {
    const Kind q = net.node(p).kind;
    if (q == Kind::Input) return true;
    if (q != Kind::Same && q != Kind::Scale) return false;
  }
}

// Narrows node id's box (a relu input) by CROWN rows, in chunks: from the elements on both sides of 0
// (a stable element's relaxation is exact whatever its box), or from all.
void narrow(const Net& net, int64_t id, std::vector<Box>& boxes, bool all,
            const std::map<int64_t, std::vector<int8_t>>* slopes) {
  Box& b = boxes[static_cast<size_t>(id)];
  if (!all && first_layer(net, id)) return;
  std::vector<size_t> open;
  for (size_t j = 0; j < b.lo.size(); ++j)
    if (all || (b.lo[j] < 0 && b.hi[j] > 0)) open.push_back(j);
  const size_t len = b.lo.size(), chunk = 64;
  for (size_t at = 0; at < open.size(); at += chunk) {
    const size_t k = std::min(chunk, open.size() - at);
    std::vector<double> C(2 * k * len, 0.0);
    for (size_t i = 0; i < k; ++i) {
      C[(2 * i) * len + open[at + i]] = 1;
      C[(2 * i + 1) * len + open[at + i]] = -1;
    }
    const int64_t rows = static_cast<int64_t>(2 * k);
    std::vector<double> low =
        lower_bounds(net, boxes, id, rows, std::move(C), std::vector<double>(2 * k * len, 0.0), nullptr, nullptr, slopes);
    for (size_t i = 0; i < k; ++i) {
      const size_t j = open[at + i];
      b.lo[j] = std::max(b.lo[j], low[2 * i]);
      b.hi[j] = std::min(b.hi[j], -low[2 * i + 1]);
    }
  }
}

void clamp(const Domain& d, int64_t id, Box& b) {
  for (const Clamp& c : d.clamps) {
    if (c.node != id) continue;
    const size_t j = static_cast<size_t>(c.elem);
    if (c.active) b.lo[j] = std::max(b.lo[j], 0.0);
    else b.hi[j] = std::min(b.hi[j], 0.0);
  }
}

}  // namespace

void add_box_minimum(const Box& b, const double* mid, const double* rad, Sum& s) {
  for (size_t j = 0; j < b.lo.size(); ++j) {
    if (mid[j] != 0) s.add_prod(mid[j], mid[j] > 0 ? b.lo[j] : b.hi[j]);
    if (rad[j] != 0) s.add_prod(-rad[j], std::max(std::fabs(b.lo[j]), std::fabs(b.hi[j])));
  }
}

std::vector<double> lower_bounds(const Net& net, const std::vector<Box>& boxes, int64_t start, int64_t rows,
                                 std::vector<double> cmid, std::vector<double> crad,
                                 const std::map<int64_t, std::vector<double>>* mu,
                                 std::map<int64_t, std::vector<double>>* used,
                                 const std::map<int64_t, std::vector<int8_t>>* slopes) {
  std::vector<Coef> coef(net.graph().nodes.size());
  std::vector<Sum> sums(static_cast<size_t>(rows));
  coef[static_cast<size_t>(start)] = Coef{std::move(cmid), std::move(crad), true};
  for (int64_t id = start; id >= 0; --id) {
    if (!net.in_cone(id) || !coef[static_cast<size_t>(id)].set) continue;
    perturbation(boxes[static_cast<size_t>(id)], rows, coef[static_cast<size_t>(id)], sums);
    const Kind k = net.node(id).kind;
    if (k == Kind::Input)
      concretize(boxes[static_cast<size_t>(id)], rows, coef[static_cast<size_t>(id)], sums);
    else if (k == Kind::Relu)
      relax(net, id, rows, boxes, coef, sums, mu, used, slopes);
    else
      net.backward(id, rows, coef, sums);
  }
  std::vector<double> out(static_cast<size_t>(rows));
  for (size_t r = 0; r < out.size(); ++r) out[r] = sums[r].lower();
  return out;
}

DomainKind domain_boxes(const Net& net, const Domain& d, std::vector<Box>& boxes) {
  const Graph& g = net.graph();
  boxes.assign(g.nodes.size(), Box{});
  for (const Node& n : g.nodes) {
    const int64_t id = n.id;
    if (!net.in_cone(id)) continue;
    Box& b = boxes[static_cast<size_t>(id)];
    if (id == net.input()) b.lo = d.lo, b.hi = d.hi;
    else net.forward(id, boxes);
    if (d.f32 && !net.add_f32_error(id, boxes)) return DomainKind::Invalid;
    if (d.root) {
      const Box& r = (*d.root)[static_cast<size_t>(id)];
      for (size_t j = 0; j < b.lo.size() && j < r.lo.size(); ++j)
        b.lo[j] = std::max(b.lo[j], r.lo[j]), b.hi[j] = std::min(b.hi[j], r.hi[j]);
    }
    if (net.relus_reading(id).empty()) continue;
    clamp(d, id, b);
    if (d.crown) narrow(net, id, boxes, d.narrow_all, d.slopes);
    clamp(d, id, b);
    for (size_t j = 0; j < b.lo.size(); ++j) {
      if (std::isnan(b.lo[j]) || std::isnan(b.hi[j])) return DomainKind::Invalid;
      if (b.lo[j] > b.hi[j]) return DomainKind::Empty;
    }
  }
  return DomainKind::Boxes;
}

}  // namespace denote::certify
