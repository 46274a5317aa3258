// max_pool's linear relaxation (src/bounds/crown_maxpool.h).
#include "bounds/crown_maxpool.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "ops/window_eval.h"

namespace denote::crown {

namespace {

struct PoolLines {
  std::vector<int64_t> arg;    // per output element: the input element of its lower line
  std::vector<char> exact;     // the window's arg dominates: y = x_arg
  std::vector<int32_t> share;  // per input element: how many outputs move coefficients onto it
};

// The lines of every output element; nullopt when a window has no input element or a box is not finite.
std::optional<PoolLines> pool_lines(const Node& n, const Shape& in_shape, const DoubleBox& xb) {
  const rules::Window w = rules::pool_window(std::get<WindowConfig>(n.attrs), in_shape, n.out_shape);
  const int64_t in_vol = numel(w.in), out_vol = numel(w.out);
  const int64_t lead = out_vol == 0 ? 0 : numel(n.out_shape) / out_vol;
  PoolLines L{std::vector<int64_t>(static_cast<size_t>(lead * out_vol), -1),
              std::vector<char>(static_cast<size_t>(lead * out_vol), 0),
              std::vector<int32_t>(xb.lo.size(), 0)};
  bool ok = true;
  rules::for_each_window(w, [&](int64_t p, const std::vector<rules::Tap>& taps) {
    for (int64_t l = 0; l < lead && ok; ++l) {
      const int64_t base = l * in_vol;
      int64_t best = -1;
      for (const rules::Tap& t : taps) {
        const size_t i = static_cast<size_t>(base + t.in);
        if (!std::isfinite(xb.lo[i]) || !std::isfinite(xb.hi[i])) ok = false;
        if (best < 0 || xb.lo[i] > xb.lo[static_cast<size_t>(best)]) best = base + t.in;
      }
      if (best < 0) {
        ok = false;
        break;
      }
      double rival = -INFINITY;  // the largest upper end among the others
      for (const rules::Tap& t : taps)
        if (base + t.in != best) rival = std::max(rival, xb.hi[static_cast<size_t>(base + t.in)]);
      const size_t j = static_cast<size_t>(l * out_vol + p);
      L.arg[j] = best;
      L.exact[j] = xb.lo[static_cast<size_t>(best)] >= rival ? 1 : 0;
      ++L.share[static_cast<size_t>(best)];
    }
  });
  if (!ok) return std::nullopt;
  return L;
}

const DoubleBox* box_at(const RuleCtx& c, int64_t id) { return c.box[static_cast<size_t>(id)]; }

}  // namespace

bool rule_max_pool(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  const int64_t p = n.parents[0];
  const DoubleBox* xb = box_at(c, p);
  const DoubleBox* yb = box_at(c, n.id);
  if (!xb || !yb) return c.concretize(n.id, A);
  const auto L = pool_lines(n, c.g.nodes[static_cast<size_t>(p)].out_shape, *xb);
  if (!L) return c.concretize(n.id, A);
  const int64_t m = c.numel_of(n.id), mi = c.numel_of(p);
  std::vector<double> P = c.take(static_cast<size_t>(c.st.rows * mi));
  std::fill(P.begin(), P.end(), 0.0);
  for (int64_t r = 0; r < c.st.rows; ++r) {
    double sum = 0, mag = 0, cnt = 0, slack = 0;
    const double* a = A.data() + r * m;
    double* q = P.data() + r * mi;
    for (int64_t j = 0; j < m; ++j) {
      const double lam = a[j];
      if (lam == 0) continue;
      const size_t k = static_cast<size_t>(j);
      if (lam >= 0 || L->exact[k]) {
        const int64_t i = L->arg[k];
        q[i] += lam;
        // Several outputs summed onto one input element: gamma(share) of their magnitudes.
        if (const int32_t s = L->share[static_cast<size_t>(i)]; s > 1)
          slack += gamma(static_cast<double>(s)) * std::fabs(lam) * c.absmax(p, i);
      } else {
        const double t = lam * yb->hi[k];
        sum += t, mag += std::fabs(t), cnt += 1;
      }
    }
    c.st.bias[r] += sum, c.st.mag[r] += mag, c.st.terms[r] += cnt;
    if (slack > 0) c.st.slack[r] += up_sum(slack, static_cast<double>(m));
  }
  c.add_to(p, std::move(P));
  return c.st.failure.empty();
}

// The relaxed network's value at the bound's attaining point: x_i* on the lower line, hi(y) on the
// upper one.
bool fwd_max_pool(ForwardCtx& f, const Node& n) {
  const int64_t p = n.parents[0];
  const DoubleBox* xb = box_at(f.rc, p);
  const DoubleBox* yb = box_at(f.rc, n.id);
  const auto& X = f.V[static_cast<size_t>(p)];
  const auto& A = f.A[static_cast<size_t>(n.id)];
  if (!xb || !yb) return false;
  const auto L = pool_lines(n, f.rc.g.nodes[static_cast<size_t>(p)].out_shape, *xb);
  const int64_t m = f.rc.numel_of(n.id), mi = f.rc.numel_of(p), rows = f.rc.st.rows;
  if (!L || A.size() != static_cast<size_t>(rows * m) || X.size() != static_cast<size_t>(rows * mi)) return false;
  auto& V = f.V[static_cast<size_t>(n.id)];
  V.resize(static_cast<size_t>(rows * m));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < m; ++j) {
      const size_t k = static_cast<size_t>(j);
      const bool lower = A[static_cast<size_t>(r * m + j)] >= 0 || L->exact[k];
      V[static_cast<size_t>(r * m + j)] = lower ? X[static_cast<size_t>(r * mi + L->arg[k])] : yb->hi[k];
    }
  return true;
}

}  // namespace denote::crown
