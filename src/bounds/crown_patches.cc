// Windowed rows for a conv node's intermediate bounds (src/bounds/crown_patches.h).
#include "bounds/crown_patches.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "bounds/crown_affine.h"
#include "bounds/crown_conv.h"
#include "bounds/crown_lines.h"
#include "kernels/row_sums.h"
#include "bounds/kernel_ops.h"
#include "ops/window_eval.h"

namespace denote::crown {

namespace {

// A node's layout as one image [C, H, W] (any leading dims of size 1).
struct Image {
  int64_t c = 0, h = 0, w = 0;
  bool operator==(const Image&) const = default;
};
std::optional<Image> image_of(const Shape& s) {
  if (s.size() < 3) return std::nullopt;
  for (size_t i = 0; i + 3 < s.size(); ++i)
    if (s[i] != 1) return std::nullopt;
  const size_t r = s.size();
  return Image{s[r - 3], s[r - 2], s[r - 1]};
}

// The rows at one node: per row a window [c, ph, pw] of the node's image at origin (oy, ox).
struct Patches {
  Image img;
  int64_t ph = 0, pw = 0;
  std::vector<int64_t> oy, ox;  // per row
  std::vector<double> a;        // rows x vol()
  int64_t vol() const { return img.c * ph * pw; }
};

// Row r's window, line by line: entries outside the image are set to 0 (they multiply a conv's zero
// padding); f(entries, flat index of the first in the node, count) for each run inside it.
template <class F>
void for_runs(const Patches& p, int64_t r, double* a, F&& f) {
  const int64_t oy = p.oy[static_cast<size_t>(r)], ox = p.ox[static_cast<size_t>(r)];
  const int64_t x0 = std::clamp<int64_t>(-ox, 0, p.pw), x1 = std::clamp<int64_t>(p.img.w - ox, x0, p.pw);
  for (int64_t ch = 0; ch < p.img.c; ++ch)
    for (int64_t y = 0; y < p.ph; ++y) {
      double* line = a + (ch * p.ph + y) * p.pw;
      const int64_t Y = oy + y;
      if (Y < 0 || Y >= p.img.h || x0 == x1) {
        std::fill(line, line + p.pw, 0.0);
        continue;
      }
      std::fill(line, line + x0, 0.0);
      std::fill(line + x1, line + p.pw, 0.0);
      f(line + x0, (ch * p.img.h + Y) * p.img.w + ox + x0, x1 - x0);
    }
}

// A 2-d conv over one image: its config and record, checked.
struct Conv2d {
  const ConvConfig* cfg = nullptr;
  const ConvRecord<double>* rec = nullptr;
  Image in, out;
};
std::optional<Conv2d> conv2d(const RuleCtx& c, const Node& n) {
  Conv2d v;
  v.cfg = std::get_if<ConvConfig>(&n.attrs);
  if (bound_kernel(n.op) != BoundKernel::Conv || !v.cfg || n.parents.size() != 1 || v.cfg->window.kernel.size() != 2)
    return std::nullopt;
  const Shape& in = c.g.nodes[static_cast<size_t>(n.parents[0])].out_shape;
  v.rec = find_record(c.payload.conv, n.id);
  if (!rules::check_conv_record(n, v.rec, in).ok() || v.cfg->channel_axis + 3 != static_cast<int64_t>(in.size()))
    return std::nullopt;
  const auto i = image_of(in), o = image_of(n.out_shape);
  if (!i || !o || i->c != v.cfg->in_channels || o->c != v.cfg->out_channels) return std::nullopt;
  v.in = *i, v.out = *o;
  return v;
}
int64_t span(int64_t len, const Conv2d& v, size_t d) {  // the input rows a window of `len` outputs reads
  return (len - 1) * v.cfg->window.stride[d] + (v.cfg->window.kernel[d] - 1) * v.cfg->dilation_at(d) + 1;
}
bool small(const Patches& p, const RuleCtx& c, int64_t id) { return 2 * p.vol() <= c.numel_of(id); }

// The start rows +-e_o at conv n: on its input, +-the kernel of o's channel in the window o reads;
// the bias +-f(0)_o and the evaluation's error at o, as the dense unit rows (crown_conv.cc).
bool start_rows(RuleCtx& c, const Node& n, const Conv2d& v, Patches& p) {
  std::vector<double> scale, f0;
  ConvBackward scratch;
  const ConvBackward* plan = conv_plan_for(c, n, scratch);
  if (!plan) return false;
  conv_scale(c, n, *plan, 0.0, scale, f0);
  const int64_t kh = v.cfg->window.kernel[0], kw = v.cfg->window.kernel[1];
  const int64_t dh = v.cfg->dilation_at(0), dw = v.cfg->dilation_at(1);
  const int64_t gin = v.cfg->in_channels / v.cfg->groups, gout = v.cfg->out_channels / v.cfg->groups;
  const int64_t rows = c.st.rows, out_vol = v.out.h * v.out.w;
  p.img = v.in, p.ph = span(1, v, 0), p.pw = span(1, v, 1);
  p.oy.resize(static_cast<size_t>(rows)), p.ox.resize(static_cast<size_t>(rows));
  p.a = c.take(static_cast<size_t>(rows * p.vol()));
  std::fill(p.a.begin(), p.a.end(), 0.0);
  const UpSum up_sum_1(1);
  for (int64_t r = 0; r < rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const int64_t o = c.st.unit->col[ri], co = o / out_vol, q = o % out_vol;
    const double s = c.st.unit->sign[ri];
    c.st.slack[ri] += up_sum_1(scale[static_cast<size_t>(o)] * (1 + 2 * kU));
    c.add_bias(r, s * f0[static_cast<size_t>(o)]);
    p.oy[ri] = (q / v.out.w) * v.cfg->window.stride[0] - v.cfg->window.padding[0];
    p.ox[ri] = (q % v.out.w) * v.cfg->window.stride[1] - v.cfg->window.padding[1];
    double* a = p.a.data() + r * p.vol();
    const double* w = v.rec->weight.data() + co * gin * kh * kw;
    const int64_t ch0 = (co / gout) * gin;
    for (int64_t ic = 0; ic < gin; ++ic)
      for (int64_t ky = 0; ky < kh; ++ky)
        for (int64_t kx = 0; kx < kw; ++kx)
          a[((ch0 + ic) * p.ph + ky * dh) * p.pw + kx * dw] = s * w[(ic * kh + ky) * kw + kx];
  }
  return true;
}

// Through an elementwise relaxation: each entry by its element's lines (relax_one), the four sums per
// row into the pass as the dense rule adds them.
bool relax(RuleCtx& c, const Node& n, Patches& p) {
  const DoubleBox* xb = c.box[static_cast<size_t>(n.parents[0])];
  const DoubleBox* yb = c.box[static_cast<size_t>(n.id)];
  Lines L;
  if (!xb || !yb || !element_lines_of(n.op, *xb, *yb, c.err.u, c.err.tiny, L)) return false;
  const UpSum up_sum_2v(static_cast<double>(2 * p.vol()));
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double s[4] = {0, 0, 0, 0};
    for_runs(p, r, p.a.data() + r * p.vol(), [&](double* a, int64_t j0, int64_t len) {
      for (int64_t t = 0; t < len; ++t) {
        if (a[t] == 0) continue;
        const size_t j = static_cast<size_t>(j0 + t);
        a[t] = relax_one(L, j, a[t], L.la[j], s);
      }
    });
    c.st.bias[static_cast<size_t>(r)] += s[0];
    c.st.mag[static_cast<size_t>(r)] += s[1];
    c.st.terms[static_cast<size_t>(r)] += s[2];
    c.st.slack[static_cast<size_t>(r)] += up_sum_2v(s[3]);
  }
  return true;
}

// An affine step's terms over each row's window (entries outside the image are zeroed): A . f(0) into the
// bias, |A| . scale (rounded up) and `under` into the slack, as the dense rules' add_bias_slack.
void window_terms(RuleCtx& c, Patches& p, const std::vector<double>& f0, const std::vector<double>& scale,
                  double under) {
  const UpSum up_sum_v(static_cast<double>(p.vol()));
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sum = 0, mag = 0, sl = 0;
    for_runs(p, r, p.a.data() + r * p.vol(), [&](double* a, int64_t j0, int64_t len) {
      for (int64_t t = 0; t < len; ++t) {
        if (a[t] == 0) continue;  // also against an infinite scale
        const size_t o = static_cast<size_t>(j0 + t);
        const double term = a[t] * f0[o];
        sum += term, mag += std::fabs(term), sl += std::fabs(a[t]) * scale[o];
      }
    });
    const size_t ri = static_cast<size_t>(r);
    c.st.bias[ri] += sum, c.st.mag[ri] += mag, c.st.terms[ri] += static_cast<double>(p.vol());
    c.st.slack[ri] += up_sum_v(sl * (1 + 2 * kU));
    c.add_slack(r, under);
  }
}

// Through conv n: its bias and error terms over the window (rule_conv's bias_slack, with its
// coefficient bound and underflow term), then the window's transposed conv: the conv itself over a
// window-sized image without padding, so every window entry of the input gets all its taps.
bool conv_back(RuleCtx& c, const Node& n, const Conv2d& v, Patches& p) {
  if (!(v.out == p.img) || !c.box[static_cast<size_t>(n.parents[0])]) return false;
  Patches q;
  q.img = v.in, q.ph = span(p.ph, v, 0), q.pw = span(p.pw, v, 1);
  if (!small(q, c, n.parents[0])) return false;
  ConvConfig cfg = *v.cfg;
  cfg.window.padding = {0, 0};
  cfg.padding_after = {0, 0};
  cfg.channel_axis = 1;
  ConvBackward cb;
  if (!conv_plan(cfg, {1, v.in.c, q.ph, q.pw}, {1, v.out.c, p.ph, p.pw}, v.rec->weight, v.rec->bias, cb)) return false;
  const int64_t rows = c.st.rows;
  std::vector<double> scale, f0;
  ConvBackward scratch;
  const ConvBackward* plan = conv_plan_for(c, n, scratch);
  if (!plan) return false;
  conv_scale(c, n, *plan, gamma(static_cast<double>(cb.group_out + cb.k_vol) + 2), scale, f0);
  window_terms(c, p, f0, scale, conv_underflow(c, n, *plan));
  q.a = c.take(static_cast<size_t>(rows * q.vol()));
  conv_backward(cb, p.a.data(), rows, q.a.data(), c.ws);
  q.oy.resize(p.oy.size()), q.ox.resize(p.ox.size());
  for (size_t r = 0; r < p.oy.size(); ++r) {
    q.oy[r] = p.oy[r] * v.cfg->window.stride[0] - v.cfg->window.padding[0];
    q.ox[r] = p.ox[r] * v.cfg->window.stride[1] - v.cfg->window.padding[1];
  }
  c.give(std::move(p.a));
  p = std::move(q);
  return true;
}

// Through avg_pool n (2-d, no padding, windows that do not overlap, a power-of-two volume K): its
// evaluation's error and f(0) over the window (affine_scale, rule_affine's terms; the coefficients are
// exact, so no coefficient term), then each entry a spread as a / K over its window's inputs: exact (a
// power of two, each input in one window at most).
bool pool_back(RuleCtx& c, const Node& n, Patches& p) {
  const auto* w = std::get_if<WindowConfig>(&n.attrs);
  const auto in = image_of(c.g.nodes[static_cast<size_t>(n.parents[0])].out_shape), out = image_of(n.out_shape);
  if (!w || w->kernel.size() != 2 || w->stride.size() != 2 || !in || !out || !(*out == p.img) || in->c != out->c ||
      !c.box[static_cast<size_t>(n.parents[0])])
    return false;
  for (size_t d = 0; d < 2; ++d)
    if (w->stride[d] < w->kernel[d] || (d < w->padding.size() && w->padding[d] != 0)) return false;
  const int64_t kh = w->kernel[0], kw = w->kernel[1], sh = w->stride[0], sw = w->stride[1], k = kh * kw;
  if (k <= 0 || (k & (k - 1)) != 0) return false;
  Patches q;
  q.img = *in, q.ph = (p.ph - 1) * sh + kh, q.pw = (p.pw - 1) * sw + kw;
  if (!small(q, c, n.parents[0])) return false;
  std::vector<double> scale, f0;
  if (!affine_scale(c, n, 0.0, scale, f0)) return false;
  const int64_t rows = c.st.rows;
  window_terms(c, p, f0, scale, 0.0);
  q.a = c.take(static_cast<size_t>(rows * q.vol()));
  std::fill(q.a.begin(), q.a.end(), 0.0);
  const double inv = 1.0 / static_cast<double>(k);
  for (int64_t r = 0; r < rows; ++r) {
    const double* src = p.a.data() + r * p.vol();  // entries outside the image are 0 (for_runs above)
    double* dst = q.a.data() + r * q.vol();
    for (int64_t ch = 0; ch < p.img.c; ++ch)
      for (int64_t y = 0; y < p.ph; ++y)
        for (int64_t x = 0; x < p.pw; ++x) {
          const double v = src[(ch * p.ph + y) * p.pw + x] * inv;
          if (v == 0) continue;
          for (int64_t dy = 0; dy < kh; ++dy)
            for (int64_t dx = 0; dx < kw; ++dx) dst[(ch * q.ph + y * sh + dy) * q.pw + x * sw + dx] = v;
        }
  }
  q.oy.resize(p.oy.size()), q.ox.resize(p.ox.size());
  for (size_t r = 0; r < p.oy.size(); ++r) q.oy[r] = p.oy[r] * sh, q.ox[r] = p.ox[r] * sw;
  c.give(std::move(p.a));
  p = std::move(q);
  return true;
}

// Whether node id is an input moved one to one (a permute of the input, say), each node below it
// used once (uses: null, any count; node id's rows are all its children's): its box is the input's box moved the same way, so concretising
// there is concretising at the input.
bool moved_input(const Graph& g, int64_t id, const std::vector<int32_t>* uses = nullptr) {
  for (bool first = true;; first = false) {
    const Node& n = g.nodes[static_cast<size_t>(id)];
    if (!first && uses && (*uses)[static_cast<size_t>(id)] != 1) return false;
    if (n.op == Op::Input) return true;
    if (!moves_one_to_one(n.op) || n.parents.size() != 1) return false;
    id = n.parents[0];
  }
}

// The rows end at node id: each the minimum of its window over the node's box (RuleCtx::concretize).
bool concretize(RuleCtx& c, int64_t id, Patches& p) {
  const DoubleBox* b = c.box[static_cast<size_t>(id)];
  if (!b) return c.fail("node " + std::to_string(id) + " has no box");
  if (!c.st.cut && !moved_input(c.g, id)) c.st.cut = b->lo != b->hi;
  for (int64_t r = 0; r < c.st.rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    for_runs(p, r, p.a.data() + r * p.vol(), [&](double* a, int64_t j0, int64_t len) {
      kernels::concretize_row(a, b->lo.data() + j0, b->hi.data() + j0, len, c.st.bias[ri], c.st.mag[ri], c.st.terms[ri]);
    });
  }
  c.give(std::move(p.a));
  return c.st.failure.empty();
}

// The rows as dense coefficients of node id, for the generic rules from there on.
void expand(RuleCtx& c, int64_t id, Patches& p) {
  const int64_t m = c.numel_of(id);
  std::vector<double> A = c.take(static_cast<size_t>(c.st.rows * m));
  std::fill(A.begin(), A.end(), 0.0);
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double* dst = A.data() + r * m;
    for_runs(p, r, p.a.data() + r * p.vol(),
             [&](double* a, int64_t j0, int64_t len) { std::copy(a, a + len, dst + j0); });
  }
  c.give(std::move(p.a));
  c.add_to(id, std::move(A));
}

// The rows pending at each node, the largest id first (every child before its parents, as the walk).
using Pending = std::map<int64_t, Patches, std::greater<>>;

// Adds rows q to those pending at node id. Two windows become their union where each row's two
// origins differ by the same offset (two branches of a residual block) and the union stays small; the
// sums round as RuleCtx::add_to's. false: they cannot be merged (nothing changed).
bool merge(RuleCtx& c, Pending& pending, int64_t id, Patches& q) {
  auto it = pending.find(id);
  if (it == pending.end()) {
    pending.emplace(id, std::move(q));
    return true;
  }
  Patches& p = it->second;
  if (!(p.img == q.img) || p.oy.empty() || !c.box[static_cast<size_t>(id)]) return false;
  const int64_t dy = q.oy[0] - p.oy[0], dx = q.ox[0] - p.ox[0];
  for (size_t r = 0; r < p.oy.size(); ++r)
    if (q.oy[r] - p.oy[r] != dy || q.ox[r] - p.ox[r] != dx) return false;
  Patches u;
  u.img = p.img;
  const int64_t y0 = std::min<int64_t>(0, dy), x0 = std::min<int64_t>(0, dx);
  u.ph = std::max(p.ph, dy + q.ph) - y0, u.pw = std::max(p.pw, dx + q.pw) - x0;
  if (!small(u, c, id)) return false;
  u.oy = p.oy, u.ox = p.ox;
  for (size_t r = 0; r < u.oy.size(); ++r) u.oy[r] += y0, u.ox[r] += x0;
  const int64_t rows = c.st.rows;
  u.a = c.take(static_cast<size_t>(rows * u.vol()));
  std::fill(u.a.begin(), u.a.end(), 0.0);
  auto place = [&](const Patches& w, int64_t oy, int64_t ox) {
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t ch = 0; ch < w.img.c; ++ch)
        for (int64_t y = 0; y < w.ph; ++y) {
          const double* src = w.a.data() + r * w.vol() + (ch * w.ph + y) * w.pw;
          double* dst = u.a.data() + r * u.vol() + (ch * u.ph + oy + y) * u.pw + ox;
          for (int64_t x = 0; x < w.pw; ++x) dst[x] += src[x];
        }
  };
  place(p, -y0, -x0);
  place(q, dy - y0, dx - x0);
  const UpSum up_sum_v(static_cast<double>(u.vol()));
  for (int64_t r = 0; r < rows; ++r) {
    double s = 0;
    for_runs(u, r, u.a.data() + r * u.vol(), [&](double* a, int64_t j0, int64_t len) {
      for (int64_t t = 0; t < len; ++t)
        if (a[t] != 0) s += std::fabs(a[t]) * c.absmax(id, j0 + t);
    });
    c.add_slack(r, up_sum_v(s * kU * (1 + 2 * kU)) + static_cast<double>(u.vol()) * kEta);
  }
  c.give(std::move(p.a));
  c.give(std::move(q.a));
  p = std::move(u);
  return true;
}

// Node n joins two different nodes of its own size and has a box: what the windows' add / sub step takes.
bool joins_two(const RuleCtx& c, const Node& n) {
  const int64_t m = c.numel_of(n.id);
  return n.parents.size() == 2 && n.parents[0] != n.parents[1] && c.box[static_cast<size_t>(n.id)] &&
         c.numel_of(n.parents[0]) == m && c.numel_of(n.parents[1]) == m;
}

// The windowed part of a pass: rows pending per node, walked from the largest id down.
struct Walk {
  RuleCtx& c;
  Pending pending;
  bool spilled = false;  // some rows went dense: the others follow (the rest of the pass is dense)

  // Rows q (times sign) onto node id's pending rows, or dense at id where they cannot be merged.
  void push(int64_t id, Patches&& q, double sign) {
    if (sign < 0)
      for (double& v : q.a) v = -v;
    if (merge(c, pending, id, q)) return;
    expand(c, id, q);
    spilled = true;
  }

  // add / sub of two variable nodes: the rows go to both (negated to sub's second), exact; the
  // evaluation's rounding, 1.01 u |y| per element, into the slack (crown_rules.cc's rule_add).
  bool add_sub(const Node& n, Patches& p) {
    if (!joins_two(c, n)) return false;
    const UpSum up_sum_v(static_cast<double>(p.vol()));
    for (int64_t r = 0; r < c.st.rows; ++r) {
      double s = 0;
      for_runs(p, r, p.a.data() + r * p.vol(), [&](double* a, int64_t j0, int64_t len) {
        for (int64_t t = 0; t < len; ++t)
          if (a[t] != 0) s += std::fabs(a[t]) * (c.absmax(n.id, j0 + t) * 1.01 * c.err.u + c.err.tiny);
      });
      c.add_slack(r, up_sum_v(s * (1 + 2 * kU)));
    }
    Patches second = p;
    push(n.parents[0], std::move(p), 1.0);
    push(n.parents[1], std::move(second), bound_kernel(n.op) == BoundKernel::Difference ? -1.0 : 1.0);
    return true;
  }

  // One step back from node n with its rows p, onto its parents' pending rows: false, with p
  // unchanged, where the windowed rows stop at n.
  bool step(const Node& n, Patches& p) {
    const BoundKernel k = bound_kernel(n.op);
    if (k == BoundKernel::Sum || k == BoundKernel::Difference) return add_sub(n, p);
    bool ok = false;
    if (keeps_order(n.op) && n.parents.size() == 1) {
      ok = true;  // the same flat layout
    } else if (k == BoundKernel::Conv) {
      const auto v = conv2d(c, n);
      ok = v && conv_back(c, n, *v, p);
    } else if (k == BoundKernel::Mean) {
      ok = n.parents.size() == 1 && pool_back(c, n, p);
    } else {
      ok = n.parents.size() == 1 && relax(c, n, p);
    }
    if (ok) push(n.parents[0], std::move(p), 1.0);
    return ok;
  }
};

}  // namespace

namespace {

// The start rows +-e_o at a residual join (add / sub of two images, the input of a resnet block's relu):
// a one-pixel window of every channel at o's pixel, +-1 at o's channel; the join's own step (the walk's
// add_sub) then hands them to both branches, its rounding into the slack.
bool join_start_rows(RuleCtx& c, const Node& n, Patches& p) {
  const BoundKernel k = bound_kernel(n.op);
  const auto img = image_of(n.out_shape);
  if ((k != BoundKernel::Sum && k != BoundKernel::Difference) || !img || !joins_two(c, n)) return false;
  for (int64_t q : n.parents)  // their boxes: a one-step pass concretises there
    if (!c.box[static_cast<size_t>(q)]) return false;
  p.img = *img, p.ph = 1, p.pw = 1;
  if (!small(p, c, n.id)) return false;
  const int64_t rows = c.st.rows, plane = img->h * img->w;
  p.oy.resize(static_cast<size_t>(rows)), p.ox.resize(static_cast<size_t>(rows));
  p.a = c.take(static_cast<size_t>(rows * p.vol()));
  std::fill(p.a.begin(), p.a.end(), 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const size_t ri = static_cast<size_t>(r);
    const int64_t o = c.st.unit->col[ri], q = o % plane;
    p.oy[ri] = q / img->w, p.ox[ri] = q % img->w;
    p.a[static_cast<size_t>(r * p.vol() + o / plane)] = c.st.unit->sign[ri];
  }
  return true;
}

// The windowed rows p pending at node `first`, walked back until they end or go dense.
bool walk_rows(RuleCtx& c, int64_t first, Patches&& p) {
  Walk w{c, {}};
  w.pending.emplace(first, std::move(p));
  while (!w.pending.empty() && c.st.failure.empty()) {
    const int64_t at = w.pending.begin()->first;
    Patches q = std::move(w.pending.begin()->second);
    w.pending.erase(w.pending.begin());
    const Node& x = c.g.nodes[static_cast<size_t>(at)];
    if (x.op == Op::Const || (c.st.fuse_input && moved_input(c.g, at, c.st.uses))) {
      concretize(c, at, q);
      continue;
    }
    const bool stepped = x.op != Op::Input && w.step(x, q);
    if (!stepped) expand(c, at, q);
    if (stepped && !w.spilled) continue;
    for (auto& [id, rest] : w.pending) expand(c, id, rest);  // the rest of the pass is dense
    return true;
  }
  return true;
}

}  // namespace

bool patch_prefix(RuleCtx& c, int64_t start, bool one_step) {
  const Node& n = c.g.nodes[static_cast<size_t>(start)];
  if (!c.st.unit || c.st.unit_node != start || !c.st.uses || c.st.rows == 0) return false;
  Patches p;
  const auto v = conv2d(c, n);
  if (!v) {  // a join's rows start at the join
    if (!join_start_rows(c, n, p)) return false;
    if (!one_step) return walk_rows(c, start, std::move(p));
    Walk w{c, {}};  // one step: through the join to its two parents, concretised at their boxes
    w.add_sub(n, p);
    for (auto& [id, q] : w.pending) concretize(c, id, q);
    return true;
  }
  if (!c.box[static_cast<size_t>(n.parents[0])]) return false;
  p.img = v->in, p.ph = span(1, *v, 0), p.pw = span(1, *v, 1);
  if (!small(p, c, n.parents[0])) return false;
  if (!start_rows(c, n, *v, p)) return true;  // the failure is in the pass's state
  if (one_step) return concretize(c, n.parents[0], p);
  return walk_rows(c, n.parents[0], std::move(p));
}

}  // namespace denote::crown
