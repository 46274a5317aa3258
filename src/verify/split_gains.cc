// Split candidates' half gains (src/verify/split_gains.h): a pass per relu, the closed form of a first
// layer, and the sparse changes down a convolutional cone.
#include "verify/split_gains.h"

#include <algorithm>
#include <cmath>

#include "bounds/crown_conv.h"
#include "bounds/crown_relax.h"
#include "bounds/kernel_ops.h"
#include "eval/walk.h"

namespace denote::verify_detail {

namespace {

// The parent's row at a relu's input p, as half_gains' passes start from it.
struct GainRows {
  const std::vector<double>& c;  // the parent's row at p (its coefficients at the relu through the lines)
  const double* lam;             // its coefficients at the relu
  std::vector<double> t;         // the relu lines' intercept terms
};

CrownOptions gain_options(const CrownOptions& base) {
  CrownOptions co = base;
  co.method = BoundMethod::Crown;
  co.intermediate_crown = false;
  co.lower_only = true;
  co.input_coefficients = co.relu_coefficients = co.relu_multipliers = false;
  return co;
}

// half_gains' pass from p: rows [c; per candidate c with its element lam_j (active), then 0].
std::vector<HalfGain> pass_gains(const Model& m, const DoubleBox& input, const CrownOptions& base, const Subdomain& parent,
                               int64_t p, const GainRows& gr, const std::vector<Candidate>& cands,
                               const std::vector<size_t>& at) {
  const size_t len = gr.c.size();
  SpecMatrix rows{static_cast<int64_t>(1 + 2 * at.size()), static_cast<int64_t>(len), {}};
  rows.c.reserve(static_cast<size_t>(rows.rows) * len);
  rows.c.insert(rows.c.end(), gr.c.begin(), gr.c.end());
  for (const size_t q : at) {
    const size_t j = static_cast<size_t>(cands[q].sp.elem);
    for (const double v : {gr.lam[j], 0.0}) {
      rows.c.insert(rows.c.end(), gr.c.begin(), gr.c.end());
      rows.c[rows.c.size() - len + j] = v;
    }
  }
  auto r = run_crown(m.graph, m.payload, std::span<const DoubleBox>(&input, 1), p, &rows, gain_options(base), parent);
  if (!r.ok()) return {};
  const std::vector<double>& lo = r->spec_lo;
  std::vector<HalfGain> gain(at.size());
  for (size_t i = 0; i < at.size(); ++i) {
    const double t = gr.t[static_cast<size_t>(cands[at[i]].sp.elem)];
    gain[i] = {lo[1 + 2 * i] - lo[0] - t, lo[2 + 2 * i] - lo[0] - t};
  }
  return gain;
}

// half_gains where p is an affine function of the input x (affine_in_input): B(v) = v . b + sum_i
// conc((W^T v)_i) with conc(a) = min(a lo_i, a hi_i), so B(c + d e_j) - B(c) = d b_j + sum over the
// inputs output j reads of conc(g_i + d W_ji) - conc(g_i), g = W^T c: one pass for c and one for the
// candidates' unit rows (their input coefficients W_j, and b_j from their bounds) instead of 2k + 1
// dense rows. The evaluation's error terms (1e-7 of the terms in f32) are left out: a ranking.
std::vector<HalfGain> affine_gains(const Model& m, const DoubleBox& input, const CrownOptions& base,
                                 const Subdomain& parent, int64_t p, const GainRows& gr,
                                 const std::vector<Candidate>& cands, const std::vector<size_t>& at) {
  const size_t len = gr.c.size(), k = at.size();
  CrownOptions co = gain_options(base);
  co.input_coefficients = true;
  const std::span<const DoubleBox> in(&input, 1);
  const SpecMatrix row{1, static_cast<int64_t>(len), gr.c};
  SpecMatrix units{static_cast<int64_t>(k), static_cast<int64_t>(len), std::vector<double>(k * len, 0.0)};
  for (size_t i = 0; i < k; ++i) units.c[i * len + static_cast<size_t>(cands[at[i]].sp.elem)] = 1;
  auto rc = run_crown(m.graph, m.payload, in, p, &row, co, parent);
  auto ru = run_crown(m.graph, m.payload, in, p, &units, co, parent);
  const size_t nx = input.lo.size();
  if (!rc.ok() || !ru.ok() || rc->input_coef.size() != nx || ru->input_coef.size() != k * nx) return {};
  const double* lo = input.lo.data();
  const double* hi = input.hi.data();
  auto conc = [&](double a, size_t i) { return a >= 0 ? a * lo[i] : a * hi[i]; };
  const std::vector<double>& g = rc->input_coef;
  std::vector<HalfGain> gain(k);
  for (size_t q = 0; q < k; ++q) {
    const size_t j = static_cast<size_t>(cands[at[q]].sp.elem);
    const double* wj = ru->input_coef.data() + q * nx;
    const double d_on = gr.lam[j] - gr.c[j], d_off = -gr.c[j];
    double bj = ru->spec_lo[q], on = 0, off = 0;  // b_j: W_j's bound minus its concretisation
    for (size_t i = 0; i < nx; ++i) {
      if (wj[i] == 0) continue;
      const double base_i = conc(g[i], i);
      bj -= conc(wj[i], i);
      on += conc(g[i] + d_on * wj[i], i) - base_i;
      off += conc(g[i] + d_off * wj[i], i) - base_i;
    }
    gain[q] = {on + d_on * bj - gr.t[j], off + d_off * bj - gr.t[j]};
  }
  return gain;
}

// ---- The cone form: c down densely once, each candidate's change down as a sparse vector.

// A sparse vector over n elements: the values on a dense array, the nonzero positions listed once.
struct Sparse {
  std::vector<double> val;
  std::vector<int64_t> idx;
  std::vector<char> on;
  explicit Sparse(size_t n) : val(n, 0.0), on(n, 0) {}
  void add(int64_t i, double x) {
    if (!on[static_cast<size_t>(i)]) on[static_cast<size_t>(i)] = 1, idx.push_back(i);
    val[static_cast<size_t>(i)] += x;
  }
  void clear() {
    for (const int64_t i : idx) val[static_cast<size_t>(i)] = 0, on[static_cast<size_t>(i)] = 0;
    idx.clear();
  }
};

// A relu node's lines on its parent's box (CROWN's adaptive lower line, as the passes take them).
struct ReluLines {
  std::vector<crown::Relax> r;
  // Coefficient lam through element i's lines: the coefficient at the relu's input, and the intercept term.
  void through(size_t i, double lam, double& a, double& b) const {
    const crown::Line& ln = lam >= 0 ? r[i].lo : r[i].up;
    a = lam * ln.a, b = lam * ln.b;
  }
};

// The conv's transposed product on one coefficient: delta at output o scattered onto the taps it reads.
void conv_scatter(const crown::ConvBackward& cb, int64_t o, double delta, Sparse& to) {
  const int64_t k1 = cb.group_in * cb.k_vol;
  const int64_t l = o / (cb.cout * cb.out_vol), co = (o / cb.out_vol) % cb.cout, q = o % cb.out_vol;
  const int64_t g = co / cb.group_out;
  for (int64_t ic = 0; ic < cb.group_in; ++ic) {
    const int64_t base = (l * cb.cin + g * cb.group_in + ic) * cb.in_vol;
    const double* w = cb.weight.data() + co * k1 + ic * cb.k_vol;
    for (int64_t t = cb.pos_start[static_cast<size_t>(q)]; t < cb.pos_start[static_cast<size_t>(q) + 1]; ++t)
      to.add(base + cb.pos_in[static_cast<size_t>(t)], delta * w[cb.pos_k[static_cast<size_t>(t)]]);
  }
}

double conc(double a, double lo, double hi) { return a >= 0 ? a * lo : a * hi; }

using Kind = GainCone::Kind;

// The parent's row c pushed down the cone, as CROWN's pass from p does (each node's coefficients the
// sum of its consumers'): the coefficients at each relu (lam), the lines there, the input coefficients g
// and the bound B(c) (intercepts plus g's minimum over the input box).
struct ConeBase {
  std::vector<std::vector<double>> lam;  // per step (relu steps only)
  std::vector<ReluLines> lines;          // per step (relu steps only)
  std::vector<double> g;
  double bound = 0;
};

void add_into(std::vector<double>& to, const std::vector<double>& v) {
  if (to.empty()) to.assign(v.size(), 0.0);
  for (size_t i = 0; i < v.size() && i < to.size(); ++i) to[i] += v[i];
}

bool cone_base(const Model& m, const GainCone& cone, const NodeBoxes& boxes, const DoubleBox& input,
               const std::vector<double>& c, ConeBase& out) {
  std::vector<std::vector<double>> acc(cone.steps.size());
  acc[0] = c;
  double icpt = 0;
  out.lam.assign(cone.steps.size(), {});
  out.lines.assign(cone.steps.size(), {});
  auto slot = [&](int64_t id) -> std::vector<double>& { return acc[static_cast<size_t>(cone.slot[static_cast<size_t>(id)])]; };
  for (size_t s = 0; s < cone.steps.size(); ++s) {
    const GainCone::Step& st = cone.steps[s];
    const Node& n = m.graph.nodes[static_cast<size_t>(st.node)];
    std::vector<double>& v = acc[s];
    if (v.empty()) return false;  // every node of a cone feeds p: its consumers gave it coefficients
    if (st.kind == Kind::Input) {
      out.g = std::move(v);
    } else if (st.kind == Kind::Conv) {
      const crown::ConvBackward& cb = *st.conv;
      for (size_t o = 0; o < v.size(); ++o) icpt += v[o] * cb.bias[(o / static_cast<size_t>(cb.out_vol)) % static_cast<size_t>(cb.cout)];
      std::vector<double> next(static_cast<size_t>(cb.lead * cb.cin * cb.in_vol));
      crown::conv_backward(cb, v.data(), cb.lead, next.data());
      add_into(slot(n.parents[0]), next);
    } else if (st.kind == Kind::Relu) {
      const auto& pb = boxes[static_cast<size_t>(n.parents[0])];
      if (!pb || pb->lo.size() != v.size()) return false;
      ReluLines& L = out.lines[s];
      L.r.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) L.r[i] = crown::relax_relu(pb->lo[i], pb->hi[i]);
      out.lam[s] = v;
      for (size_t i = 0; i < v.size(); ++i) {
        double a = 0, b = 0;
        if (v[i] != 0) L.through(i, v[i], a, b);
        v[i] = a, icpt += b;
      }
      add_into(slot(n.parents[0]), v);
    } else {  // same order, or a sum: the coefficients go to each parent as they are
      for (const int64_t p : n.parents) add_into(slot(p), v);
    }
    if (st.kind != Kind::Input) v = {};
  }
  if (out.g.size() != input.lo.size()) return false;
  out.bound = icpt;
  for (size_t k = 0; k < out.g.size(); ++k) out.bound += conc(out.g[k], input.lo[k], input.hi[k]);
  return std::isfinite(out.bound);
}

// One sparse change down the cone, from what level[0] holds (every level cleared once processed): each
// touched element of each step goes to the step's parents, a conv's scattered over its window, a relu's
// as at(s, step, i, delta) returns it (at sees every element first: bias terms, the input's share).
template <class At>
void push_change(const Model& m, const GainCone& cone, std::vector<Sparse>& level, At&& at) {
  auto slot = [&](int64_t id) -> Sparse& { return level[static_cast<size_t>(cone.slot[static_cast<size_t>(id)])]; };
  for (size_t s = 0; s < cone.steps.size(); ++s) {
    const GainCone::Step& st = cone.steps[s];
    const Node& n = m.graph.nodes[static_cast<size_t>(st.node)];
    Sparse& from = level[s];
    for (const int64_t i : from.idx) {
      const double delta = from.val[static_cast<size_t>(i)];
      if (delta == 0) continue;
      const double on = at(s, st, i, delta);
      if (st.kind == Kind::Conv)
        conv_scatter(*st.conv, i, delta, slot(n.parents[0]));
      else if (st.kind != Kind::Input)
        for (const int64_t p : n.parents) slot(p).add(i, on);
    }
    from.clear();
  }
}

// B(c + d e_j) - B(c) by the sparse change down the cone; `level` holds one scratch vector per step.
double cone_delta(const Model& m, const GainCone& cone, const ConeBase& base, const DoubleBox& input, int64_t j,
                  double d, std::vector<Sparse>& level) {
  double icpt = 0, db = 0;
  level[0].add(j, d);
  push_change(m, cone, level, [&](size_t s, const GainCone::Step& st, int64_t i, double delta) {
    const size_t u = static_cast<size_t>(i);
    if (st.kind == Kind::Input) {
      db += conc(base.g[u] + delta, input.lo[u], input.hi[u]) - conc(base.g[u], input.lo[u], input.hi[u]);
    } else if (st.kind == Kind::Conv) {
      icpt += delta * st.conv->bias[static_cast<size_t>((i / st.conv->out_vol) % st.conv->cout)];
    } else if (st.kind == Kind::Relu) {  // the line the new total coefficient picks
      const double l0 = base.lam[s][u];
      double a0 = 0, b0 = 0, a1 = 0, b1 = 0;
      if (l0 != 0) base.lines[s].through(u, l0, a0, b0);
      base.lines[s].through(u, l0 + delta, a1, b1);
      icpt += b1 - b0;
      return a1 - a0;
    }
    return delta;
  });
  return icpt + db;
}

std::vector<HalfGain> cone_gains(const Model& m, const GainCone& cone, const NodeBoxes& boxes, const DoubleBox& input,
                                 const GainRows& gr, const std::vector<Candidate>& cands, const std::vector<size_t>& at) {
  ConeBase base;
  if (!cone_base(m, cone, boxes, input, gr.c, base)) return {};
  std::vector<Sparse> level;
  level.reserve(cone.steps.size());
  for (const GainCone::Step& st : cone.steps) level.emplace_back(st.numel);
  std::vector<HalfGain> gain(at.size());
  for (size_t q = 0; q < at.size(); ++q) {
    const int64_t j = cands[at[q]].sp.elem;
    const double on = gr.lam[j] - gr.c[static_cast<size_t>(j)], off = -gr.c[static_cast<size_t>(j)];
    gain[q] = {cone_delta(m, cone, base, input, j, on, level) - gr.t[static_cast<size_t>(j)],
               cone_delta(m, cone, base, input, j, off, level) - gr.t[static_cast<size_t>(j)]};
  }
  return gain;
}

// A node of p's cone as a step (the op's facts from the table), or nullopt where the op is none of them:
// a conv with a plan, a relu, a same-order op, a sum of two variables of its own shape, the input.
std::optional<GainCone::Step> cone_step(const Model& m, const Node& n, crown::ConvPlans& plans) {
  const Graph& g = m.graph;
  GainCone::Step st{Kind::Same, n.id, static_cast<size_t>(numel(n.out_shape)), nullptr};
  if (n.parents.empty()) {
    const std::vector<int64_t> inputs = g.input_ids();
    if (inputs.size() != 1 || inputs[0] != n.id) return std::nullopt;  // a constant, or one of several inputs
    st.kind = Kind::Input;
  } else if (n.parents.size() == 2 && bound_kernel(n.op) == BoundKernel::Sum) {
    for (const int64_t p : n.parents)
      if (g.nodes[static_cast<size_t>(p)].out_shape != n.out_shape || const_behind(g, m.payload, p)) return std::nullopt;
    st.kind = Kind::Add;
  } else if (n.parents.size() != 1) {
    return std::nullopt;
  } else if (splits_at_zero(n.op)) {
    st.kind = Kind::Relu;
  } else if (bound_kernel(n.op) == BoundKernel::Conv) {
    st.kind = Kind::Conv, st.conv = plans.get(g, m.payload, n);
    if (!st.conv) return std::nullopt;
  } else if (!keeps_order(n.op)) {
    return std::nullopt;
  }
  return st;
}

// Whether the sparse changes cost less than the pass's two dense rows per candidate: the scatters of one
// change from p's middle element (every relu passing it on) against a dense row's multiply-adds, a
// scatter counted kScalar of them (measured on cifar10_resnet's resnet_2b, per subdomain: its last relu
// 27 candidates, 9.1 ms by the cone at a ratio of 10.9, 5.5 ms by the pass; 19.1: 1.6 ms either way;
// 44.5: 0.31 against 0.63 ms). oval21's convs have ratios of 22-190; resnet_4b's deeper relus (3x3
// windows on an 8x8 image reach most of it in three convs) 1.3-12, and there the pass is faster.
constexpr double kScalar = 18;
bool cone_pays(const Model& m, const GainCone& cone) {
  std::vector<Sparse> level;
  for (const GainCone::Step& st : cone.steps) level.emplace_back(st.numel);
  double work = 0, dense = 0;
  for (const GainCone::Step& st : cone.steps)
    dense += static_cast<double>(st.numel) * (st.conv ? static_cast<double>(st.conv->group_in * st.conv->k_vol) : 1.0);
  level[0].add(static_cast<int64_t>(cone.steps[0].numel / 2), 1.0);
  push_change(m, cone, level, [&](size_t, const GainCone::Step& st, int64_t i, double delta) {
    const crown::ConvBackward* cb = st.conv;
    const size_t q = cb ? static_cast<size_t>(i % cb->out_vol) : 0;
    work += cb ? static_cast<double>(cb->group_in * (cb->pos_start[q + 1] - cb->pos_start[q])) : 1.0;
    return delta;  // every relu passes the change on
  });
  return kScalar * work < dense;
}

// p's cone (GainCone), or nullopt where some node of it is not a step or no relu is in it.
std::optional<GainCone> cone_of(const Model& m, int64_t p, crown::ConvPlans& plans) {
  const std::vector<bool> anc = walk::ancestors(m.graph, p);
  GainCone cone;
  cone.slot.assign(m.graph.nodes.size(), -1);
  bool relu = false, ok = true;
  (void)walk::reverse(m.graph, "relu branch and bound", [&](const Node& n) {
    if (!ok || !anc[static_cast<size_t>(n.id)]) return ok_status();
    const std::optional<GainCone::Step> st = cone_step(m, n, plans);
    if (!st) {
      ok = false;
      return ok_status();
    }
    relu = relu || st->kind == Kind::Relu;
    cone.slot[static_cast<size_t>(n.id)] = static_cast<int32_t>(cone.steps.size());
    cone.steps.push_back(*st);
    return ok_status();
  });
  if (!ok || !relu || cone.steps.empty() || cone.steps[0].node != p || cone.steps.back().kind != Kind::Input ||
      !cone_pays(m, cone))
    return std::nullopt;
  return cone;
}

// half_gains at one relu: c is the parent pass's row w at the relu's input p (its coefficients at the
// relu through the relu's lines at p's box), t the lines' intercept terms; the halves' rows bounded by
// one CROWN pass from p on the parent's boxes (pass_gains), or in closed form where p is affine in
// the input (affine_gains), or by sparse changes down p's cone (cone_gains). Empty where a pass fails
// or the inputs do not fit.
std::vector<HalfGain> gains_at(const Model& m, const DoubleBox& input, const CrownOptions& base, const Subdomain& parent,
                             const std::vector<std::vector<double>>& relu_coef, size_t w, int64_t relu,
                             const std::vector<Candidate>& cands, const std::vector<size_t>& at, bool affine,
                             const GainCone* cone) {
  const Node& rn = m.graph.nodes[static_cast<size_t>(relu)];
  const int64_t p = rn.parents[0];
  if (!parent.prior || !(*parent.prior)[static_cast<size_t>(p)]) return {};
  const DoubleBox& pb = *(*parent.prior)[static_cast<size_t>(p)];
  const size_t len = pb.lo.size();
  if (relu_coef.size() <= static_cast<size_t>(relu) || relu_coef[static_cast<size_t>(relu)].size() < (w + 1) * len) return {};
  for (const size_t q : at)
    if (static_cast<size_t>(cands[q].sp.elem) >= len) return {};
  std::vector<double> c(len);
  GainRows gr{c, relu_coef[static_cast<size_t>(relu)].data() + w * len, std::vector<double>(len)};
  for (size_t i = 0; i < len; ++i) {
    const crown::Relax r = crown::relax_relu(pb.lo[i], pb.hi[i]);
    const crown::Line& line = gr.lam[i] >= 0 ? r.lo : r.up;
    c[i] = gr.lam[i] * line.a, gr.t[i] = gr.lam[i] * line.b;
  }
  std::vector<HalfGain> gain = affine  ? affine_gains(m, input, base, parent, p, gr, cands, at)
                               : cone  ? cone_gains(m, *cone, *parent.prior, input, gr, cands, at)
                                       : pass_gains(m, input, base, parent, p, gr, cands, at);
  for (HalfGain& h : gain)
    for (double* v : {&h.active, &h.inactive})
      if (std::isnan(*v)) *v = -INFINITY;
  return gain;
}

}  // namespace

std::vector<char> affine_in_input(const Graph& g) {
  std::vector<char> out(g.nodes.size(), 0);
  (void)walk::in_order(g, "relu branch and bound", [&](const Node& n) {
    bool all = n.parents.empty() || is_affine(n.op);  // the input and constants, or an affine op
    for (const int64_t p : n.parents) all = all && out[static_cast<size_t>(p)];
    out[static_cast<size_t>(n.id)] = all;
    return ok_status();
  });
  return out;
}

std::vector<HalfGain> half_gains(const Model& m, const DoubleBox& input, const CrownOptions& base, const Subdomain& parent,
                                 const std::vector<std::vector<double>>& relu_coef, size_t w,
                                 const std::vector<Candidate>& cands, const std::vector<char>& affine,
                                 const GainCones* cones, int64_t* passes) {
  std::vector<HalfGain> gain(cands.size());
  std::vector<int64_t> relus;
  for (const Candidate& c : cands)
    if (std::find(relus.begin(), relus.end(), c.relu) == relus.end()) relus.push_back(c.relu);
  for (const int64_t relu : relus) {
    std::vector<size_t> at;
    for (size_t q = 0; q < cands.size(); ++q)
      if (cands[q].relu == relu) at.push_back(q);
    const size_t p = static_cast<size_t>(m.graph.nodes[static_cast<size_t>(relu)].parents[0]);
    const GainCone* cone = cones && p < cones->size() && (*cones)[p] ? &*(*cones)[p] : nullptr;
    const std::vector<HalfGain> g =
        gains_at(m, input, base, parent, relu_coef, w, relu, cands, at, p < affine.size() && affine[p], cone);
    for (size_t i = 0; i < at.size() && i < g.size(); ++i) gain[at[i]] = g[i];
    if (passes) ++*passes;
  }
  return gain;
}

GainCones gain_cones(const Model& m, crown::ConvPlans& plans) {
  GainCones out(m.graph.nodes.size());
  (void)walk::in_order(m.graph, "relu branch and bound", [&](const Node& n) {
    if (splits_at_zero(n.op) && n.parents.size() == 1 && !out[static_cast<size_t>(n.parents[0])])
      out[static_cast<size_t>(n.parents[0])] = cone_of(m, n.parents[0], plans);
    return ok_status();
  });
  return out;
}

}  // namespace denote::verify_detail
