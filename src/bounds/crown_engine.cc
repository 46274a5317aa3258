// The CROWN engine's passes (src/bounds/crown_engine.h).
#include "bounds/crown_engine.h"

#include <algorithm>
#include <cmath>

#include "bounds/crown_linear.h"
#include "bounds/crown_patches.h"
#include "kernels/interval_matvec.h"
#include "bounds/kernel_ops.h"
#include "denote/base/deadline.h"
#include "eval/walk.h"

namespace denote::crown {

double backward_cost(const Payload<double>& payload, const Node& n) {
  const auto out = static_cast<double>(numel(n.out_shape));
  if (const auto* rec = find_record(payload.conv, n.id); rec && rec->config.out_channels > 0)
    return out * static_cast<double>(rec->weight.size()) / static_cast<double>(rec->config.out_channels);
  if (const auto* rec = find_record(payload.linear, n.id)) return out * static_cast<double>(rec->in_dim);
  return out;
}

Engine::Engine(const Graph& g_, const Payload<double>& p, EngineSetup setup, std::vector<std::optional<DoubleBox>> b)
    : g(g_),
      payload(p),
      setup_(std::move(setup)),
      boxes_(std::move(b)),
      relu_children_(g_.nodes.size()),
      uses_(g_.nodes.size(), 0),
      forward_reads_(g_.nodes.size(), 0),
      step_cost_(g_.nodes.size(), 0.0),
      fwd_(g_.nodes.size()) {
  for (const Node& n : g.nodes) {  // one index of the graph, built once per engine
    if (splits_at_zero(n.op)) relu_children_[static_cast<size_t>(n.parents[0])].push_back(n.id);
    forward_reads_[static_cast<size_t>(n.id)] = forward_reads_coefficients(n.op) ? 1 : 0;
    for (int64_t p : n.parents) ++uses_[static_cast<size_t>(p)];
    step_cost_[static_cast<size_t>(n.id)] = backward_cost(payload, n);
  }
  if (setup_.max_bytes != INT64_MAX) {  // a quarter, at most 64 MiB, for the workspace's spares
    const int64_t spares = std::min<int64_t>(int64_t{64} << 20, setup_.max_bytes / 4);
    ws_.max_kept_bytes = static_cast<size_t>(spares);
    budget_.bytes = setup_.max_bytes - spares;
  }
}

const DoubleBox* Engine::box_ptr(int64_t id) const {
  const auto& b = boxes_[static_cast<size_t>(id)];
  return b ? &*b : nullptr;
}

std::vector<const DoubleBox*> Engine::ptrs() const {
  std::vector<const DoubleBox*> out(boxes_.size());
  for (size_t i = 0; i < boxes_.size(); ++i) out[i] = box_ptr(static_cast<int64_t>(i));
  return out;
}

ConvPlans* Engine::conv_plans() const {
  if (setup_.prepared) return setup_.prepared->conv_plans();
  if (!own_plans_) own_plans_ = std::make_unique<ConvPlans>(g.nodes.size());
  return own_plans_.get();
}

namespace {

// bias - gamma(terms + 2) mag - slack, rounded down; NaN (inf - inf) reads as no bound.
double finish_row(const PassRows& st, int64_t r) {
  const double e = up(up(gamma(st.terms[r] + 2) * st.mag[r]) + st.slack[r] + (st.terms[r] + 2) * kEta);
  const double v = dn(st.bias[r] - e);
  return std::isnan(v) ? -INFINITY : v;
}

}  // namespace

std::optional<UnitRows> find_unit_rows(const std::vector<double>& C, int64_t rows,
                                       const std::vector<int64_t>& support) {
  const int64_t m = rows > 0 ? static_cast<int64_t>(C.size()) / rows : 0;
  UnitRows u{std::vector<int64_t>(static_cast<size_t>(rows), -1), std::vector<double>(static_cast<size_t>(rows), 0.0)};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j : support) {
      const double v = C[static_cast<size_t>(r * m + j)];
      if (v == 0) continue;
      if ((v != 1 && v != -1) || u.col[static_cast<size_t>(r)] >= 0) return std::nullopt;
      u.col[static_cast<size_t>(r)] = j, u.sign[static_cast<size_t>(r)] = v;
    }
  for (int64_t c : u.col)
    if (c < 0) return std::nullopt;
  return u;
}

// Row r's coefficient of v_node[elem] moves by -beta sign (one rounding, |delta| <= u |new|, times
// the element's magnitude into slack) and its bias by -beta margin.
void Engine::add_beta(RuleCtx& ctx, const Node& n, std::vector<double>& A, const std::vector<double>& beta) const {
  const size_t terms = setup_.beta_terms.size();
  const size_t m = static_cast<size_t>(numel(n.out_shape));
  for (size_t t = 0; t < terms; ++t) {
    const BetaTerm& bt = setup_.beta_terms[t];
    if (bt.node != n.id) continue;
    ctx.st.support[static_cast<size_t>(n.id)].reset();  // the terms' elements may be outside it
    const double mag = ctx.absmax(n.id, bt.elem);
    for (size_t r = 0; r < static_cast<size_t>(ctx.st.rows); ++r) {
      const double b = beta[r * terms + t];
      if (!(b > 0)) continue;
      double& a = A[r * m + static_cast<size_t>(bt.elem)];
      a -= b * bt.sign;
      ctx.add_slack(static_cast<int64_t>(r), up(up(kU * std::fabs(a)) * mag) + kEta);
      if (bt.margin == 0) continue;
      ctx.add_bias(static_cast<int64_t>(r), -(b * bt.margin));
      ctx.add_slack(static_cast<int64_t>(r), up(kU * b * bt.margin) + kEta);
    }
  }
}

PassResult Engine::pass(int64_t start, const std::vector<double>& C, int64_t rows, const PassOptions& o) {
  return pass(start, ws_.copy(C), rows, o);
}

PassResult Engine::pass(int64_t start, std::vector<double>&& C, int64_t rows, const PassOptions& o) {
  ++stats_.passes;
  stats_.rows_total += rows;
  PassRows st;
  std::optional<UnitRows> found;  // C's unit rows when the caller did not give them (st.unit points here)
  st.rows = rows;
  st.A.resize(g.nodes.size());
  st.bias.assign(static_cast<size_t>(rows), 0.0);
  st.mag = st.terms = st.slack = st.bias;
  st.A[static_cast<size_t>(start)] = std::move(C);
  st.support.resize(g.nodes.size());
  // The input's coefficients are never stored when fused: not with beta terms, nor when they are
  // recorded (unless the forward values they would serve are made in the pass).
  st.fuse_input = !o.beta && (!o.record || o.vertex_values) && !setup_.ball;
  st.uses = &uses_;
  st.vertex_need = o.vertex_need;
  st.vertex_values = o.vertex_values;
  if (o.start_support) {
    st.support[static_cast<size_t>(start)] = *o.start_support;
    if (!o.unit_rows) found = find_unit_rows(*st.A[static_cast<size_t>(start)], rows, *o.start_support);
    st.unit = o.unit_rows ? o.unit_rows : found ? &*found : nullptr;
    if (st.unit) st.unit_node = start;
  }
  const std::vector<const DoubleBox*> box = ptrs();
  RuleCtx ctx{g, payload, box, setup_.err, st, o.alpha, o.scales, &ws_, &scale_cache_, conv_plans(), &line_cache_};
  ctx.ball = setup_.ball, ctx.ball_input = setup_.ball_input;
  PassResult out;
  if (o.record) out.A.resize(g.nodes.size()), out.reached.assign(g.nodes.size(), 0);
  // A conv's unit rows as windows while they stay small (crown_patches.h); not where the pass keeps
  // coefficients, has slopes or multipliers per row, or makes forward values.
  const bool plain = !o.record && !o.alpha && !o.beta && !o.vertex_values && !setup_.ball;
  if (setup_.patches && plain && st.unit_node == start && patch_prefix(ctx, start, o.one_step)) {
    ws_.give(std::move(*st.A[static_cast<size_t>(start)]));
    st.A[static_cast<size_t>(start)].reset();
    ++stats_.patch_passes;
  } else if (st.A[static_cast<size_t>(start)]->empty() && rows > 0) {
    std::vector<double>& A = *st.A[static_cast<size_t>(start)];  // unit rows given without C
    const int64_t m = numel(g.nodes[static_cast<size_t>(start)].out_shape);
    if (!st.unit) {
      st.failure = "a pass without its rows";
    } else {
      A = ws_.take(static_cast<size_t>(rows * m));
      st.unit->fill(m, A.data());
    }
  }
  // A plain pass stops at forward functions where going on would cost too much (forward_cut_work).
  const bool may_stop = has_forward() && setup_.forward_cut_work > 0 && !o.record && !o.alpha && !o.beta &&
                        !o.vertex_values && !o.one_step && !setup_.ball;
  double spent = 0;
  (void)walk::reverse(g, "IR bounds", [&](const Node& n) {
    auto& slot = st.A[static_cast<size_t>(n.id)];
    if (n.id > start || !slot || !st.failure.empty()) return ok_status();
    std::vector<double> A = std::move(*slot);
    slot.reset();
    if (may_stop && n.id != start) {
      if (stops_at(n.id, rows, spent)) {
        concretize_forward(st, n.id, A);
        ws_.give(std::move(A));
        return ok_status();
      }
      spent += static_cast<double>(rows) * step_cost_[static_cast<size_t>(n.id)];
    }
    if (o.beta) add_beta(ctx, n, A, *o.beta);
    if (o.record) {
      out.reached[static_cast<size_t>(n.id)] = 1;
      if (!o.record_only || (*o.record_only)[static_cast<size_t>(n.id)]) out.A[static_cast<size_t>(n.id)] = ws_.copy(A);
    }
    const Rule rule = o.one_step && n.id != start ? nullptr : crown_rule(n.op);
    if (rule)
      rule(ctx, n, std::move(A));
    else
      ctx.concretize(n.id, A);
    ws_.give(std::move(A));  // what the rule did not move on to a parent
    return ok_status();
  });
  out.lower.assign(static_cast<size_t>(rows), -INFINITY);
  out.failure = st.failure;
  out.cut = st.cut;
  if (st.failure.empty())
    for (int64_t r = 0; r < rows; ++r) out.lower[static_cast<size_t>(r)] = finish_row(st, r);
  return out;
}

bool Engine::stops_at(int64_t id, int64_t rows, double spent) const {
  return fwd_[static_cast<size_t>(id)] &&
         spent + static_cast<double>(rows) * step_cost_[static_cast<size_t>(id)] > setup_.forward_cut_work;
}

bool Engine::stops_before_relaxation(int64_t start, int64_t rows) const {
  if (!has_forward() || setup_.forward_cut_work <= 0) return false;
  double spent = 0;
  for (int64_t id = start;;) {
    const Node& n = g.nodes[static_cast<size_t>(id)];
    if (n.parents.empty()) return false;
    id = n.parents[0];
    if (is_relaxed(g.nodes[static_cast<size_t>(id)].op)) return false;
    if (stops_at(id, rows, spent)) return true;
    spent += static_cast<double>(rows) * step_cost_[static_cast<size_t>(id)];
  }
}

// Row r's coefficients a at node id, on the node's forward functions: sum_j a_j (a_j > 0 ? lo_j : up_j)
// is a linear function f of the input below a . v_id everywhere on the box; its minimum there goes to
// the row's sums (w terms, finish_row's rounding), and the error of f's computed coefficients,
// gamma(m + 1) sum_j |a_j| mag_j plus the products' underflows, to its slack. The row is then cut:
// its bound is no longer linear in the input (PassRows::cut).
void Engine::concretize_forward(PassRows& st, int64_t id, const std::vector<double>& A) const {
  const ForwardFns& f = *fwd_[static_cast<size_t>(id)];
  const std::vector<double>& X = fwd_in_.X;
  const size_t w = X.size(), m = static_cast<size_t>(numel(g.nodes[static_cast<size_t>(id)].out_shape));
  double sum_x = 0;
  for (double x : X) sum_x += x;
  const double g_m = gamma(static_cast<double>(m) + 1), eta = up((static_cast<double>(m) + 2) * kEta * up(sum_x * 1.01));
  const UpSum sum_m(static_cast<double>(m));
  std::vector<double> acc(w);
  for (int64_t r = 0; r < st.rows; ++r) {
    const double* a = A.data() + static_cast<size_t>(r) * m;
    std::fill(acc.begin(), acc.end(), 0.0);
    double emag = 0;
    for (size_t j = 0; j < m; ++j) {
      if (a[j] == 0) continue;
      const double* fj = (a[j] > 0 ? f.lo : f.up).data() + j * w;
      for (size_t k = 0; k < w; ++k) acc[k] += a[j] * fj[k];
      emag += std::fabs(a[j]) * f.mag[j];
    }
    double sum = acc[w - 1], mag = std::fabs(acc[w - 1]);
    for (size_t k = 0; k + 1 < w; ++k) {
      const double t = acc[k] >= 0 ? acc[k] * fwd_in_.lo[k] : acc[k] * fwd_in_.hi[k];
      sum += t, mag += std::fabs(t);
    }
    st.bias[static_cast<size_t>(r)] += sum;
    st.mag[static_cast<size_t>(r)] += mag;
    st.terms[static_cast<size_t>(r)] += static_cast<double>(w);
    st.slack[static_cast<size_t>(r)] += up(up(g_m * sum_m(emag)) + eta);
  }
  st.cut = true;
}

// The one-step box of a linear node by midpoint-radius (Rump): y in W c + b +- |W| r for x in
// c +- r, with the a-priori error of the computed center and radius and of the evaluation.
bool Engine::linear_one_step(int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo,
                             std::vector<double>& hi) {
  const Node& n = g.nodes[static_cast<size_t>(id)];
  const auto* rec = find_record(payload.linear, id);
  const auto& xb = boxes_[static_cast<size_t>(n.parents[0])];
  if (!rec || !xb) return false;
  const int64_t in = rec->in_dim, out = rec->out_dim;
  if (in <= 0 || out <= 0 || static_cast<int64_t>(rec->weight.size()) != in * out ||
      xb->lo.size() % static_cast<size_t>(in) != 0)
    return false;
  std::vector<double> mid(xb->lo.size()), rad(xb->lo.size()), mag(xb->lo.size());
  for (size_t i = 0; i < mid.size(); ++i) {
    if (!std::isfinite(xb->lo[i]) || !std::isfinite(xb->hi[i])) return false;
    mid[i] = xb->lo[i] + (xb->hi[i] - xb->lo[i]) / 2;
    rad[i] = up(std::max(up(xb->hi[i] - mid[i]), up(mid[i] - xb->lo[i])));
    mag[i] = std::max(std::fabs(xb->lo[i]), std::fabs(xb->hi[i]));
  }
  // Per row: c = sum w mid, r = sum |w| rad, m = sum |w| mag (>= sum |w mid|), any order
  // (src/kernels/interval_matvec.h); rows of a lead that most elements use come in one product.
  const int64_t lead = static_cast<int64_t>(mid.size()) / in;
  // The evaluation rounds each output (live + 3) u_eval 1.01 relative, live the inputs of its lead
  // whose box is not the point 0 (live_count).
  std::vector<double> e_eval(static_cast<size_t>(lead));
  for (int64_t l = 0; l < lead; ++l)
    e_eval[static_cast<size_t>(l)] =
        setup_.err.u * (live_count(*xb, static_cast<size_t>(l * in), static_cast<size_t>(in)) + 3) * 1.01;
  // Those inputs add exact zeros to the three sums too: with one lead, the product runs over the
  // others' columns when they are at most 3/4.
  const double* w_all = rec->weight.data();
  int64_t cols = in;
  std::vector<double> w_live;
  const auto live = lead == 1 ? live_elements(*xb) : std::nullopt;
  if (live && !live->empty()) {
    cols = static_cast<int64_t>(live->size());
    w_live.resize(static_cast<size_t>(out * cols));
    gather_weights(w_all, out, in, nullptr, &*live, w_live.data());
    for (int64_t k = 0; k < cols; ++k) {  // in place: the k-th live index is >= k
      const size_t i = static_cast<size_t>((*live)[static_cast<size_t>(k)]);
      mid[static_cast<size_t>(k)] = mid[i], rad[static_cast<size_t>(k)] = rad[i], mag[static_cast<size_t>(k)] = mag[i];
    }
    w_all = w_live.data();
  }
  // The same weights as floats, when the prepared model holds them exactly (half the bytes to read).
  const float* wf = cols == in && setup_.prepared ? setup_.prepared->exact_f32_weights(id) : nullptr;
  auto product = [&](int64_t row0, int64_t nrows, const double* const* x, double* cs, double* rs, double* ms) {
    if (wf)
      kernels::interval_matvec(wf + row0 * cols, nrows, cols, x[0], x[1], x[2], cs, rs, ms);
    else
      kernels::interval_matvec(w_all + row0 * cols, nrows, cols, x[0], x[1], x[2], cs, rs, ms);
  };
  std::vector<double> c(static_cast<size_t>(out)), r(c.size()), m(c.size());
  std::vector<int64_t> per_lead(static_cast<size_t>(lead), 0);
  for (int64_t e : elems) ++per_lead[static_cast<size_t>(e / out)];
  int64_t cached = -1;  // the lead whose rows c, r, m hold
  const double g_in = gamma(static_cast<double>(in) + 2);
  const UpSum up_sum_in(static_cast<double>(in)), up_sum_in1(static_cast<double>(in) + 1);  // up_sum's values
  lo.resize(elems.size());
  hi.resize(elems.size());
  for (size_t k = 0; k < elems.size(); ++k) {
    const int64_t l = elems[k] / out, o = elems[k] % out;
    const double* x[3] = {mid.data() + l * cols, rad.data() + l * cols, mag.data() + l * cols};
    double cs, rs, ms;
    if (2 * per_lead[static_cast<size_t>(l)] >= out) {
      if (cached != l) product(0, out, x, c.data(), r.data(), m.data());
      cached = l;
      cs = c[static_cast<size_t>(o)], rs = r[static_cast<size_t>(o)], ms = m[static_cast<size_t>(o)];
    } else {
      product(o, 1, x, &cs, &rs, &ms);
    }
    const double b = rec->bias.empty() ? 0.0 : rec->bias[static_cast<size_t>(o)];
    const double cv = b + cs, xm = std::fabs(b) + ms;
    const double xs = up_sum_in1(xm);
    const double e = up(up_sum_in(rs) + g_in * xs + e_eval[static_cast<size_t>(l)] * xs +
                        (static_cast<double>(in) + 4) * setup_.err.tiny + 8 * kEta);
    lo[k] = dn(cv - e);
    hi[k] = up(cv + e);
  }
  ++stats_.passes;
  return true;
}

void Engine::bound_elements(int64_t id, const std::vector<int64_t>& elems, bool one_step, std::vector<double>& lo,
                            std::vector<double>& hi) {
  const Op op = g.nodes[static_cast<size_t>(id)].op;
  if (one_step && is_dense(op) && linear_one_step(id, elems, lo, hi)) return;
  if (one_step && !is_dense(op) && is_affine(op) && ibp_one_step(id, elems, lo, hi)) return;
  const int64_t k = static_cast<int64_t>(elems.size());
  lo.assign(elems.size(), -INFINITY);
  hi.assign(elems.size(), INFINITY);
  const PassKind kind = one_step ? PassKind::OneStep : PassKind::Full;
  const int64_t chunk = budget_.pairs_per_chunk(g, id, kind, 0);
  if (k > 0 && chunk < 1) {
    budget_.refuse(g, id, kind, 0, 2, one_step ? "one-step bound" : "intermediate bound");
    return;
  }
  for (int64_t at = 0; at < k; at += chunk) {
    if (at > 0 && past(setup_.deadline)) {  // the rows not bounded keep -inf..inf
      stats_.late = true;
      return;
    }
    const int64_t n = std::min(chunk, k - at);
    bound_chunk(id, elems.data() + at, n, one_step, lo.data() + at, hi.data() + at);
  }
}

void Engine::bound_chunk(int64_t id, const int64_t* elems, int64_t k, bool one_step, double* lo, double* hi) {
  const std::vector<int64_t> chunk(elems, elems + k);
  const UnitRows unit = UnitRows::plus_minus(chunk);
  std::vector<double> C;  // pass() writes the unit rows where it needs them dense
  std::vector<int64_t> cols = chunk;  // the rows' only nonzero columns
  std::sort(cols.begin(), cols.end());
  cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
  PassOptions po;
  po.one_step = one_step;
  po.start_support = &cols;
  po.unit_rows = &unit;
  PassResult pr = pass(id, std::move(C), 2 * k, po);
  for (int64_t r = 0; r < k; ++r) {
    lo[r] = pr.lower[static_cast<size_t>(r)];
    hi[r] = -pr.lower[static_cast<size_t>(k + r)];
  }
}

bool Engine::apply_splits(int64_t id, const std::vector<ReluSplit>& at_node) {
  auto& b = boxes_[static_cast<size_t>(id)];
  if (at_node.empty() || !b) return true;
  bool feasible = true;
  for (const ReluSplit& sp : at_node) {
    double& l = b->lo[static_cast<size_t>(sp.elem)];
    double& h = b->hi[static_cast<size_t>(sp.elem)];
    if (sp.active ? h < -sp.margin : l > sp.margin) feasible = false;
    if (sp.active)
      l = std::max(l, -sp.margin);
    else
      h = std::min(h, sp.margin);
  }
  refresh_children(id);
  return feasible;
}

void Engine::tighten(int64_t id, const std::vector<int64_t>& elems, const std::vector<double>& lo,
                     const std::vector<double>& hi, bool replace) {
  auto& b = boxes_[static_cast<size_t>(id)];
  if (!b) return;
  for (size_t r = 0; r < elems.size(); ++r) {
    const size_t j = static_cast<size_t>(elems[r]);
    // Both enclose the same set, so they overlap; a crossing can only come from a bug upstream.
    double nl = replace ? lo[r] : std::max(b->lo[j], lo[r]), nh = replace ? hi[r] : std::min(b->hi[j], hi[r]);
    if (nl <= nh) b->lo[j] = nl, b->hi[j] = nh;
  }
}

void Engine::refresh_children(int64_t id, bool replace) {
  const DoubleBox* b = box_ptr(id);
  if (!b) return;
  for (int64_t child : relu_children_[static_cast<size_t>(id)]) {
    if (!boxes_[static_cast<size_t>(child)]) continue;
    DoubleBox& y = *boxes_[static_cast<size_t>(child)];
    for (size_t j = 0; j < y.lo.size(); ++j) {
      const double l = std::max(b->lo[j], 0.0), h = std::max(b->hi[j], 0.0);
      y.lo[j] = replace ? l : std::max(y.lo[j], l);
      y.hi[j] = replace ? h : std::min(y.hi[j], h);
    }
  }
}

// One affine op on its parents' boxes: IBP's box is its exact range up to rounding, as the one-step
// pass's is, without the pass's unit rows (rows x numel: quadratic on a wide batch-norm or gather).
bool Engine::ibp_one_step(int64_t id, const std::vector<int64_t>& elems, std::vector<double>& lo,
                          std::vector<double>& hi) const {
  if (!setup_.prepared) return false;
  const Node& n = g.nodes[static_cast<size_t>(id)];
  std::vector<const DoubleBox*> parents;
  for (int64_t p : n.parents) parents.push_back(box_ptr(p));
  const std::optional<DoubleBox> b = ibp_node_box(*setup_.prepared, n, parents);
  if (!b) return false;
  lo.resize(elems.size());
  hi.resize(elems.size());
  for (size_t r = 0; r < elems.size(); ++r) {
    const auto j = static_cast<size_t>(elems[r]);
    if (j >= b->lo.size()) return false;
    lo[r] = b->lo[j], hi[r] = b->hi[j];
  }
  return true;
}

bool Engine::refresh_box(int64_t id) {
  const Node& n = g.nodes[static_cast<size_t>(id)];
  auto& y = boxes_[static_cast<size_t>(id)];
  if (!y || n.parents.empty()) return false;
  std::optional<DoubleBox> fresh;
  const DoubleBox* x = nullptr;
  if (keeps_order(n.op)) {
    x = box_ptr(n.parents[0]);
  } else if (setup_.prepared) {
    std::vector<const DoubleBox*> parents;
    for (int64_t p : n.parents) parents.push_back(box_ptr(p));
    fresh = ibp_node_box(*setup_.prepared, n, parents);
    x = fresh ? &*fresh : nullptr;
  }
  if (!x || x->lo.size() != y->lo.size()) return false;
  bool narrowed = false;
  for (size_t j = 0; j < y->lo.size(); ++j) {  // crossing only from a bug upstream, as in tighten
    const double l = std::max(y->lo[j], x->lo[j]), h = std::min(y->hi[j], x->hi[j]);
    if (l <= h && (l > y->lo[j] || h < y->hi[j])) y->lo[j] = l, y->hi[j] = h, narrowed = true;
  }
  return narrowed;
}

}  // namespace denote::crown
