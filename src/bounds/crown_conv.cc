// CROWN's conv rule as one transposed convolution over all rows (src/bounds/crown_conv.h).
#include "bounds/crown_conv.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <fmt/format.h>

#include "bounds/crown_affine.h"
#include "kernels/gemm.h"
#include "kernels/row_sums.h"
#include "ops/window_eval.h"

namespace denote::crown {

namespace {

// The column buffer of one block of rows: at most this many doubles (8 MiB), at least one row.
constexpr int64_t kColsMax = int64_t{1} << 20;

int64_t rows_per_block(const ConvBackward& cb, int64_t batch) {
  const int64_t per_row = std::max<int64_t>(cb.group_in * cb.k_vol * cb.out_vol, 1);
  return std::clamp<int64_t>(kColsMax / per_row, 1, std::max<int64_t>(batch, 1));
}

// The taps of every output position, grouped by kernel position (for a fixed k, distinct output
// positions read distinct input offsets).
void plan_taps(const rules::Window& w, ConvBackward& cb) {
  std::vector<std::vector<std::pair<int64_t, int64_t>>> by_k(static_cast<size_t>(cb.k_vol));
  cb.pos_start.assign(1, 0);
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (const rules::Tap& t : taps) {
      by_k[static_cast<size_t>(t.k)].emplace_back(p, t.in);
      cb.pos_k.push_back(t.k), cb.pos_in.push_back(t.in);
    }
    cb.pos_start.push_back(static_cast<int64_t>(cb.pos_k.size()));
  });
  cb.run_start.assign(1, 0);
  for (const auto& list : by_k) {  // consecutive output positions whose offsets step evenly: one run
    for (size_t t = 0; t < list.size();) {
      ConvBackward::Run run{list[t].first, list[t].second, 0, 1};
      if (t + 1 < list.size() && list[t + 1].first == run.p + 1) run.step = list[t + 1].second - run.in;
      while (t + static_cast<size_t>(run.len) < list.size() &&
             list[t + static_cast<size_t>(run.len)].first == run.p + run.len &&
             list[t + static_cast<size_t>(run.len)].second == run.in + run.len * run.step)
        ++run.len;
      cb.runs.push_back(run);
      t += static_cast<size_t>(run.len);
    }
    cb.run_start.push_back(static_cast<int64_t>(cb.runs.size()));
  }
  cb.gap_start.assign(1, 0);  // per k, the output positions no run covers
  for (int64_t k = 0; k < cb.k_vol; ++k) {
    std::vector<char> covered(static_cast<size_t>(cb.out_vol), 0);
    for (int64_t i = cb.run_start[static_cast<size_t>(k)]; i < cb.run_start[static_cast<size_t>(k) + 1]; ++i)
      for (int64_t t = 0; t < cb.runs[static_cast<size_t>(i)].len; ++t)
        covered[static_cast<size_t>(cb.runs[static_cast<size_t>(i)].p + t)] = 1;
    for (int64_t p = 0; p < cb.out_vol;) {
      if (covered[static_cast<size_t>(p)]) {
        ++p;
        continue;
      }
      ConvBackward::Gap gap{p, 0};
      while (p < cb.out_vol && !covered[static_cast<size_t>(p)]) ++p, ++gap.len;
      cb.gaps.push_back(gap);
    }
    cb.gap_start.push_back(static_cast<int64_t>(cb.gaps.size()));
  }
  std::vector<std::vector<std::pair<int64_t, int64_t>>> by_in(static_cast<size_t>(cb.in_vol));
  for (int64_t q = 0; q + 1 < static_cast<int64_t>(cb.pos_start.size()); ++q)
    for (int64_t t = cb.pos_start[static_cast<size_t>(q)]; t < cb.pos_start[static_cast<size_t>(q) + 1]; ++t)
      by_in[static_cast<size_t>(cb.pos_in[static_cast<size_t>(t)])].emplace_back(q, cb.pos_k[static_cast<size_t>(t)]);
  cb.in_start.assign(1, 0);
  for (const auto& list : by_in) {
    for (const auto& [q, k] : list) cb.in_q.push_back(q), cb.in_k.push_back(k);
    cb.in_start.push_back(static_cast<int64_t>(cb.in_q.size()));
  }
}

// A scratch buffer of at least n doubles from the pass's workspace (or plain), given back when done;
// only v.data()[0, n) is used.
struct Buffer {
  Workspace* ws;
  std::vector<double> v;
  Buffer(Workspace* w, size_t n) : ws(w), v(w ? w->take_scratch(n) : std::vector<double>(n)) {}
  ~Buffer() {
    if (ws) ws->give(std::move(v));
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
};

// The conv reads the input directly, and the pass may concretise the input's coefficients as they
// are made: nothing else feeds the input coefficients (one use, none pending).
bool fuses_input(const RuleCtx& c, int64_t p) {
  return c.st.fuse_input && c.st.uses && (*c.st.uses)[static_cast<size_t>(p)] == 1 &&
         !c.st.A[static_cast<size_t>(p)] && c.g.nodes[static_cast<size_t>(p)].op == Op::Input;
}

// The input's concretisation of the coefficients A' = conv^T(A), a block of rows at a time: the same
// sums as the input's rule on the stored coefficients. Where alpha-CROWN asks for the conv's forward
// values, also those at the vertex each row attains (a' >= 0 ? lo : hi), plus the bias.
void concretize_input(RuleCtx& c, const Node& n, const ConvBackward& cb, const std::vector<double>& A,
                      const DoubleBox& xb) {
  const int64_t rows = c.st.rows, pm = numel(xb.shape), m = c.numel_of(n.id);
  const int64_t block =
      std::clamp<int64_t>((int64_t{1} << 18) / std::max<int64_t>(pm, 1), 1, std::max<int64_t>(rows, 1));  // 2 MiB
  std::vector<double>* values = nullptr;
  if (c.st.vertex_values && c.st.vertex_need && !(*c.st.vertex_need)[static_cast<size_t>(n.id)].empty()) {
    values = &(*c.st.vertex_values)[static_cast<size_t>(n.id)];
    values->assign(static_cast<size_t>(rows * m), 0.0);
  }
  Buffer buf(c.ws, static_cast<size_t>(block * pm));
  Buffer vert(c.ws, values ? static_cast<size_t>(block * pm) : 0);
  Buffer y(c.ws, values ? static_cast<size_t>(block * m) : 0);
  const double* lo = xb.lo.data();
  const double* hi = xb.hi.data();
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t nr = std::min(block, rows - r0);
    conv_backward(cb, A.data() + r0 * m, nr * cb.lead, buf.v.data(), c.ws);
    for (int64_t i = 0; i < nr; ++i) {
      const double* a = buf.v.data() + i * pm;
      const size_t r = static_cast<size_t>(r0 + i);
      kernels::concretize_row(a, lo, hi, pm, c.st.bias[r], c.st.mag[r], c.st.terms[r]);
      if (values)
        for (int64_t l = 0; l < pm; ++l) vert.v[static_cast<size_t>(i * pm + l)] = a[l] >= 0 ? lo[l] : hi[l];
    }
    if (!values) continue;
    conv_forward(cb, vert.v.data(), nr * cb.lead, y.v.data(), c.ws);
    for (int64_t b = 0; b < nr * cb.lead; ++b)
      for (int64_t co = 0; co < cb.cout; ++co) {
        const int64_t at = (b * cb.cout + co) * cb.out_vol;
        const double bias = cb.bias[static_cast<size_t>(co)];
        double* v = values->data() + r0 * m + at;
        for (int64_t q = 0; q < cb.out_vol; ++q) v[q] = y.v[static_cast<size_t>(at + q)] + bias;
      }
  }
}

// alpha-CROWN's values of the conv at the vertex each unit row attains: the vertex is lo except at
// the row's taps with a negative coefficient (hi there), so the values are conv(lo) + b plus, per such
// tap j, (hi_j - lo_j) times conv's column j (the outputs whose windows read j).
void unit_values(RuleCtx& c, const Node& n, const ConvBackward& cb, const DoubleBox& xb, std::vector<double>& values) {
  const int64_t rows = c.st.rows, m = c.numel_of(n.id), k1 = cb.group_in * cb.k_vol;
  std::vector<double> y0(static_cast<size_t>(m));
  conv_forward(cb, xb.lo.data(), cb.lead, y0.data(), c.ws);
  for (int64_t i = 0; i < m; ++i)
    y0[static_cast<size_t>(i)] += cb.bias[static_cast<size_t>((i / cb.out_vol) % cb.cout)];
  values.resize(static_cast<size_t>(rows * m));
  for (int64_t r = 0; r < rows; ++r) {
    double* v = values.data() + r * m;
    std::copy(y0.begin(), y0.end(), v);
    const int64_t o = c.st.unit->col[static_cast<size_t>(r)];
    const double s = c.st.unit->sign[static_cast<size_t>(r)];
    const int64_t l = o / (cb.cout * cb.out_vol), co = (o / cb.out_vol) % cb.cout, q = o % cb.out_vol;
    const int64_t g = co / cb.group_out;
    for (int64_t ic = 0; ic < cb.group_in; ++ic) {
      const int64_t x0 = (l * cb.cin + g * cb.group_in + ic) * cb.in_vol;
      for (int64_t t = cb.pos_start[static_cast<size_t>(q)]; t < cb.pos_start[static_cast<size_t>(q) + 1]; ++t) {
        if (!(s * cb.weight[static_cast<size_t>(co * k1 + ic * cb.k_vol + cb.pos_k[static_cast<size_t>(t)])] < 0))
          continue;
        const int64_t i = cb.pos_in[static_cast<size_t>(t)];
        const double d = xb.hi[static_cast<size_t>(x0 + i)] - xb.lo[static_cast<size_t>(x0 + i)];
        if (d == 0) continue;
        for (int64_t u = cb.in_start[static_cast<size_t>(i)]; u < cb.in_start[static_cast<size_t>(i) + 1]; ++u) {
          const int64_t q2 = cb.in_q[static_cast<size_t>(u)], k = cb.in_k[static_cast<size_t>(u)];
          for (int64_t c2 = g * cb.group_out; c2 < (g + 1) * cb.group_out; ++c2)
            v[(l * cb.cout + c2) * cb.out_vol + q2] += d * cb.weight[static_cast<size_t>(c2 * k1 + ic * cb.k_vol + k)];
        }
      }
    }
  }
}

// Rows that are signed unit vectors at this node: row r is sign * e_o, so its coefficients on the
// parent are sign * W[co, ic, k] at the taps of o's position, exact. Its bias term is sign * b[co]
// (f(0)_o), exact, and its slack the evaluation's error scale at o. With a fused input the rows are
// concretised over their nonzeros only (the same terms concretize_row would sum); else written.
bool unit_rows(RuleCtx& c, const Node& n, const ConvBackward& cb, int64_t p, const DoubleBox& xb, bool fused,
               std::vector<double>* values) {
  std::vector<double> scale, f0;
  conv_scale(c, n, cb, 0.0, scale, f0);
  const int64_t rows = c.st.rows, pm = c.numel_of(p), k1 = cb.group_in * cb.k_vol;
  const UpSum up_sum_1(1);
  std::vector<double> out = fused ? std::vector<double>{} : c.take(static_cast<size_t>(rows * pm));
  std::fill(out.begin(), out.end(), 0.0);
  if (values) unit_values(c, n, cb, xb, *values);
  for (int64_t r = 0; r < rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const int64_t o = c.st.unit->col[ri];
    const double s = c.st.unit->sign[ri];
    const int64_t l = o / (cb.cout * cb.out_vol), co = (o / cb.out_vol) % cb.cout, q = o % cb.out_vol;
    const int64_t base = (l * cb.cin + (co / cb.group_out) * cb.group_in) * cb.in_vol;
    c.st.slack[ri] += up_sum_1(scale[static_cast<size_t>(o)] * (1 + 2 * kU));
    c.add_bias(r, s * f0[static_cast<size_t>(o)]);
    double sum = 0, mag = 0, terms = 0;
    for (int64_t ic = 0; ic < cb.group_in; ++ic) {
      const double* w = cb.weight.data() + co * k1 + ic * cb.k_vol;
      for (int64_t t = cb.pos_start[static_cast<size_t>(q)]; t < cb.pos_start[static_cast<size_t>(q) + 1]; ++t) {
        const double a = s * w[cb.pos_k[static_cast<size_t>(t)]];
        const int64_t j = base + ic * cb.in_vol + cb.pos_in[static_cast<size_t>(t)];
        if (!fused) {
          out[static_cast<size_t>(r * pm + j)] = a;
        } else if (a != 0) {
          const double v = a * (a > 0 ? xb.lo[static_cast<size_t>(j)] : xb.hi[static_cast<size_t>(j)]);
          sum += v, mag += std::fabs(v), terms += 1;
        }
      }
    }
    c.st.bias[ri] += sum, c.st.mag[ri] += mag, c.st.terms[ri] += terms;
  }
  if (!fused) c.add_to(p, std::move(out));
  return c.st.failure.empty();
}

// affine_bias_slack (crown_affine.h) on the conv's own scales (conv_scale): A . f(0) into the bias,
// |A| . scale into the slack.
void bias_slack(RuleCtx& c, const Node& n, const ConvBackward& cb, const std::vector<double>& A, double g_coef) {
  std::vector<double> scale, f0;
  conv_scale(c, n, cb, g_coef, scale, f0);
  add_bias_slack(c, A, scale, f0);
}

}  // namespace

bool conv_backward_plan(const Graph& g, const Payload<double>& payload, const Node& n, ConvBackward& cb) {
  const auto* cfg = std::get_if<ConvConfig>(&n.attrs);
  if (!cfg || n.parents.size() != 1) return false;
  const Shape& in = g.nodes[static_cast<size_t>(n.parents[0])].out_shape;
  const auto* rec = find_record(payload.conv, n.id);
  if (!rules::check_conv_record(n, rec, in).ok()) return false;
  return conv_plan(*cfg, in, n.out_shape, rec->weight, rec->bias, cb);
}

bool conv_plan(const ConvConfig& cfg, const Shape& in, const Shape& out, std::vector<double> weight,
               std::vector<double> bias, ConvBackward& cb) {
  if (cfg.groups < 1 || cfg.in_channels % cfg.groups != 0 || cfg.out_channels % cfg.groups != 0) return false;
  if (cfg.channel_axis < 0 || static_cast<size_t>(cfg.channel_axis) + cfg.window.kernel.size() + 1 != in.size() ||
      in.size() != out.size())
    return false;
  const rules::Window w = rules::conv_window(cfg, in, out);
  cb.cin = cfg.in_channels, cb.cout = cfg.out_channels, cb.groups = cfg.groups;
  cb.group_in = cb.cin / cb.groups, cb.group_out = cb.cout / cb.groups;
  cb.in_vol = numel(w.in), cb.out_vol = numel(w.out), cb.k_vol = numel(w.kernel);
  cb.lead = numel(in.begin(), in.begin() + cfg.channel_axis);
  if (numel(in) != cb.lead * cb.cin * cb.in_vol || numel(out) != cb.lead * cb.cout * cb.out_vol) return false;
  const int64_t k1 = cb.group_in * cb.k_vol;
  if (static_cast<int64_t>(weight.size()) != cb.cout * k1 || static_cast<int64_t>(bias.size()) != cb.cout)
    return false;
  cb.weight = std::move(weight);
  cb.bias = std::move(bias);
  cb.weight_abs.resize(cb.weight.size());
  for (size_t i = 0; i < cb.weight.size(); ++i) cb.weight_abs[i] = std::fabs(cb.weight[i]);
  cb.wt.assign(static_cast<size_t>(cb.cout * k1), 0.0);
  for (int64_t gi = 0; gi < cb.groups; ++gi)
    for (int64_t co = 0; co < cb.group_out; ++co)
      for (int64_t j = 0; j < k1; ++j)
        cb.wt[static_cast<size_t>(gi * k1 * cb.group_out + j * cb.group_out + co)] =
            cb.weight[static_cast<size_t>((gi * cb.group_out + co) * k1 + j)];
  plan_taps(w, cb);
  return true;
}

const ConvBackward* ConvPlans::get(const Graph& g, const Payload<double>& payload, const Node& n) {
  const size_t id = static_cast<size_t>(n.id);
  std::lock_guard<std::mutex> lock(mu_);
  if (id >= plans_.size()) return nullptr;
  if (!tried_[id]) {
    tried_[id] = 1;
    auto cb = std::make_unique<ConvBackward>();
    if (conv_backward_plan(g, payload, n, *cb)) plans_[id] = std::move(cb);
  }
  return plans_[id].get();
}

const ConvBackward* conv_plan_for(const RuleCtx& c, const Node& n, ConvBackward& scratch) {
  if (c.conv_plans) return c.conv_plans->get(c.g, c.payload, n);
  return conv_backward_plan(c.g, c.payload, n, scratch) ? &scratch : nullptr;
}

namespace {

// conv_underflow's term from the parent's magnitudes xm.
double underflow_term(const ConvBackward& cb, const std::vector<double>& xm) {
  double xs = 0;
  for (const double v : xm) xs += v;
  const double ops = 2.0 * static_cast<double>(cb.group_out * cb.k_vol) + 2;
  return up(up_sum(xs, static_cast<double>(xm.size())) * (ops * kEta));
}

}  // namespace

std::vector<double> conv_live_fan(const ConvBackward& cb, const std::vector<double>& xm) {
  std::vector<double> fan(static_cast<size_t>(cb.lead * cb.cout * cb.out_vol));
  std::vector<double> live(static_cast<size_t>(cb.groups * cb.in_vol));
  for (int64_t l = 0; l < cb.lead; ++l) {
    std::fill(live.begin(), live.end(), 0.0);
    for (int64_t ch = 0; ch < cb.cin; ++ch) {
      const double* x = xm.data() + (l * cb.cin + ch) * cb.in_vol;
      double* dst = live.data() + (ch / cb.group_in) * cb.in_vol;
      for (int64_t i = 0; i < cb.in_vol; ++i) dst[i] += x[i] == 0 ? 0.0 : 1.0;  // NaN counts as live
    }
    for (int64_t co = 0; co < cb.cout; ++co) {
      const double* per = live.data() + (co / cb.group_out) * cb.in_vol;
      double* out = fan.data() + (l * cb.cout + co) * cb.out_vol;
      for (int64_t q = 0; q < cb.out_vol; ++q) {
        double k = 1;
        for (int64_t t = cb.pos_start[static_cast<size_t>(q)]; t < cb.pos_start[static_cast<size_t>(q) + 1]; ++t)
          k += per[cb.pos_in[static_cast<size_t>(t)]];
        out[q] = k;
      }
    }
  }
  return fan;
}

void conv_scale(const RuleCtx& c, const Node& n, const ConvBackward& cb, double g_coef, std::vector<double>& scale,
                std::vector<double>& f0) {
  const int64_t p = n.parents[0], pm = c.numel_of(p), m = c.numel_of(n.id);
  const DoubleBox* pb = c.box[static_cast<size_t>(p)];
  // |W| * xmax and the live counts depend on the parent's box only: kept, as [mx | live], while that
  // box is unchanged (alpha-CROWN's passes, the rows' chunks of one node).
  const std::vector<double>* kept = c.scale_cache && pb ? c.scale_cache->find(n.id, *pb) : nullptr;
  if (kept && kept->size() != static_cast<size_t>(2 * m + 1)) kept = nullptr;
  std::vector<double> fresh;
  if (!kept) {  // [mx | live | conv_underflow's term]
    std::vector<double> xm(static_cast<size_t>(pm));
    for (int64_t j = 0; j < pm; ++j) xm[static_cast<size_t>(j)] = c.absmax(p, j);
    fresh.resize(static_cast<size_t>(m));
    conv_forward(cb, xm.data(), cb.lead, fresh.data(), c.ws, /*magnitudes=*/true);
    const std::vector<double> live = conv_live_fan(cb, xm);
    fresh.insert(fresh.end(), live.begin(), live.end());
    fresh.push_back(underflow_term(cb, xm));
    if (c.scale_cache && pb) c.scale_cache->store(n.id, *pb, fresh);
  }
  const std::vector<double>& both = kept ? *kept : fresh;
  const double* mx = both.data();
  const double* live = both.data() + m;
  // As affine_scale: mx is a sum of at most fan - 1 products in any order, so (1 + gamma(fan)) mx
  // bounds the exact one; the evaluation rounds each output (live + 4) u_eval 1.01 relative, live
  // its nonzero products and the bias (conv_live_fan; at most fan).
  const double fan = static_cast<double>(cb.group_in * cb.k_vol) + 1, g_fan = 1 + gamma(fan);
  f0.resize(static_cast<size_t>(m));
  scale.resize(static_cast<size_t>(m));
  for (int64_t o = 0; o < m; ++o) {
    f0[static_cast<size_t>(o)] = cb.bias[static_cast<size_t>((o / cb.out_vol) % cb.cout)];  // conv(0) + b, exact
    const double mo = up(mx[o] * g_fan);
    const double e_eval = c.err.u * (std::min(live[o], fan) + 4) * 1.01;
    scale[static_cast<size_t>(o)] =
        g_coef * mo + e_eval * up(mo + std::fabs(f0[static_cast<size_t>(o)])) + (fan + 4) * c.err.tiny;
  }
}

double conv_underflow(const RuleCtx& c, const Node& n, const ConvBackward& cb) {
  const int64_t p = n.parents[0], pm = c.numel_of(p), m = c.numel_of(n.id);
  const DoubleBox* pb = c.box[static_cast<size_t>(p)];
  const std::vector<double>* kept = c.scale_cache && pb ? c.scale_cache->find(n.id, *pb) : nullptr;
  if (kept && kept->size() == static_cast<size_t>(2 * m + 1)) return kept->back();  // conv_scale's
  std::vector<double> xm(static_cast<size_t>(pm));
  for (int64_t j = 0; j < pm; ++j) xm[static_cast<size_t>(j)] = c.absmax(p, j);
  return underflow_term(cb, xm);
}

void conv_backward(const ConvBackward& cb, const double* a, int64_t batch, double* out, Workspace* ws) {
  const int64_t k1 = cb.group_in * cb.k_vol, chunk = rows_per_block(cb, batch);
  std::fill(out, out + batch * cb.cin * cb.in_vol, 0.0);
  Buffer packed(ws, static_cast<size_t>(cb.group_out * chunk * cb.out_vol));
  Buffer cols(ws, static_cast<size_t>(k1 * chunk * cb.out_vol));
  for (int64_t b0 = 0; b0 < batch; b0 += chunk) {
    const int64_t bc = std::min(chunk, batch - b0), cols_n = bc * cb.out_vol;
    for (int64_t gi = 0; gi < cb.groups; ++gi) {
      for (int64_t co = 0; co < cb.group_out; ++co)  // [group_out, bc * out_vol]: the rows side by side
        for (int64_t bi = 0; bi < bc; ++bi)
          std::memcpy(packed.v.data() + co * cols_n + bi * cb.out_vol,
                      a + ((b0 + bi) * cb.cout + gi * cb.group_out + co) * cb.out_vol,
                      static_cast<size_t>(cb.out_vol) * sizeof(double));
      kernels::gemm_nn(k1, cols_n, cb.group_out, cb.wt.data() + gi * k1 * cb.group_out, packed.v.data(), cols.v.data());
      for (int64_t bi = 0; bi < bc; ++bi)  // col2im
        for (int64_t ic = 0; ic < cb.group_in; ++ic) {
          double* dst = out + ((b0 + bi) * cb.cin + gi * cb.group_in + ic) * cb.in_vol;
          for (int64_t k = 0; k < cb.k_vol; ++k) {
            const double* src = cols.v.data() + (ic * cb.k_vol + k) * cols_n + bi * cb.out_vol;
            for (int64_t i = cb.run_start[static_cast<size_t>(k)]; i < cb.run_start[static_cast<size_t>(k) + 1]; ++i) {
              const ConvBackward::Run& u = cb.runs[static_cast<size_t>(i)];
              for (int64_t t = 0; t < u.len; ++t) dst[u.in + t * u.step] += src[u.p + t];
            }
          }
        }
    }
  }
}

void conv_forward(const ConvBackward& cb, const double* x, int64_t batch, double* out, Workspace* ws, bool magnitudes) {
  const double* weight = magnitudes ? cb.weight_abs.data() : cb.weight.data();
  const int64_t k1 = cb.group_in * cb.k_vol, chunk = rows_per_block(cb, batch);
  Buffer cols(ws, static_cast<size_t>(k1 * chunk * cb.out_vol));
  Buffer res(ws, static_cast<size_t>(cb.group_out * chunk * cb.out_vol));
  for (int64_t b0 = 0; b0 < batch; b0 += chunk) {
    const int64_t bc = std::min(chunk, batch - b0), cols_n = bc * cb.out_vol;
    for (int64_t gi = 0; gi < cb.groups; ++gi) {
      for (int64_t bi = 0; bi < bc; ++bi)  // im2col: every column entry written once, padded taps 0
        for (int64_t ic = 0; ic < cb.group_in; ++ic) {
          const double* src = x + ((b0 + bi) * cb.cin + gi * cb.group_in + ic) * cb.in_vol;
          for (int64_t k = 0; k < cb.k_vol; ++k) {
            double* dst = cols.v.data() + (ic * cb.k_vol + k) * cols_n + bi * cb.out_vol;
            for (int64_t i = cb.gap_start[static_cast<size_t>(k)]; i < cb.gap_start[static_cast<size_t>(k) + 1]; ++i)
              std::fill_n(dst + cb.gaps[static_cast<size_t>(i)].p, cb.gaps[static_cast<size_t>(i)].len, 0.0);
            for (int64_t i = cb.run_start[static_cast<size_t>(k)]; i < cb.run_start[static_cast<size_t>(k) + 1]; ++i) {
              const ConvBackward::Run& u = cb.runs[static_cast<size_t>(i)];
              for (int64_t t = 0; t < u.len; ++t) dst[u.p + t] = src[u.in + t * u.step];
            }
          }
        }
      kernels::gemm_nn(cb.group_out, cols_n, k1, weight + gi * cb.group_out * k1, cols.v.data(), res.v.data());
      for (int64_t co = 0; co < cb.group_out; ++co)
        for (int64_t bi = 0; bi < bc; ++bi)
          std::memcpy(out + ((b0 + bi) * cb.cout + gi * cb.group_out + co) * cb.out_vol,
                      res.v.data() + co * cols_n + bi * cb.out_vol, static_cast<size_t>(cb.out_vol) * sizeof(double));
    }
  }
}

bool rule_conv(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  ConvBackward scratch;
  const ConvBackward* plan = conv_plan_for(c, n, scratch);
  if (!plan) return rule_affine(c, n, std::move(A));
  const ConvBackward& cb = *plan;
  const int64_t p = n.parents[0], pm = c.numel_of(p);
  const DoubleBox* xb = c.box[static_cast<size_t>(p)];
  if (!xb) return c.fail(fmt::format("node {} has no box", p));
  const bool fused = fuses_input(c, p);
  const bool wants_values = c.st.vertex_values && c.st.vertex_need &&
                            !(*c.st.vertex_need)[static_cast<size_t>(n.id)].empty();
  if (c.st.unit && c.st.unit_node == n.id) {
    std::vector<double>* values = fused && wants_values ? &(*c.st.vertex_values)[static_cast<size_t>(n.id)] : nullptr;
    if (!unit_rows(c, n, cb, p, *xb, fused, values)) return false;
    c.give(std::move(A));
    return c.st.failure.empty();
  }
  // Each coefficient sums at most group_out * k_vol products: group_out in the dgemm's dot products,
  // then at most k_vol - 1 additions in col2im, so every product is rounded at most
  // group_out + k_vol - 1 times (any order, with or without fma).
  bias_slack(c, n, cb, A, gamma(static_cast<double>(cb.group_out + cb.k_vol) + 2));
  const double under = conv_underflow(c, n, cb);
  for (int64_t r = 0; r < c.st.rows; ++r) c.add_slack(r, under);
  if (fused) {
    concretize_input(c, n, cb, A, *xb);
    c.give(std::move(A));
    return c.st.failure.empty();
  }
  std::vector<double> out = c.take(static_cast<size_t>(c.st.rows * pm));
  conv_backward(cb, A.data(), c.st.rows * cb.lead, out.data(), c.ws);
  c.give(std::move(A));
  c.add_to(p, std::move(out));
  return c.st.failure.empty();
}

bool fwd_conv(ForwardCtx& f, const Node& n) {
  ConvBackward scratch;
  const auto& X = f.V[static_cast<size_t>(n.parents[0])];
  const int64_t rows = f.rc.st.rows, pm = f.rc.numel_of(n.parents[0]), m = f.rc.numel_of(n.id);
  const ConvBackward* plan = X.size() == static_cast<size_t>(rows * pm) ? conv_plan_for(f.rc, n, scratch) : nullptr;
  if (!plan) return fwd_affine(f, n);
  const ConvBackward& cb = *plan;
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.assign(static_cast<size_t>(rows * m), 0.0);
  conv_forward(cb, X.data(), rows * cb.lead, V.data(), f.rc.ws);
  for (int64_t b = 0; b < rows * cb.lead; ++b)
    for (int64_t co = 0; co < cb.cout; ++co) {
      double* v = V.data() + (b * cb.cout + co) * cb.out_vol;
      for (int64_t q = 0; q < cb.out_vol; ++q) v[q] += cb.bias[static_cast<size_t>(co)];
    }
  return true;
}

}  // namespace denote::crown
