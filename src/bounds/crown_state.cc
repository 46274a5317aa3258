// The CROWN pass state's helpers (src/bounds/crown_state.h).
#include "bounds/crown_state.h"

#include <algorithm>

#include <fmt/format.h>

#include "denote/bounds/lp_ball.h"
#include "kernels/row_sums.h"

namespace denote::crown {

int64_t RuleCtx::numel_of(int64_t id) const { return numel(g.nodes[static_cast<size_t>(id)].out_shape); }

double RuleCtx::absmax(int64_t id, int64_t j) const {
  const DoubleBox* b = box[static_cast<size_t>(id)];
  return std::max(std::fabs(b->lo[static_cast<size_t>(j)]), std::fabs(b->hi[static_cast<size_t>(j)]));
}

void RuleCtx::add_to(int64_t parent, std::vector<double>&& coeffs, std::optional<std::vector<int64_t>> support) {
  auto& slot = st.A[static_cast<size_t>(parent)];
  if (!slot) {
    slot = std::move(coeffs);
    st.support[static_cast<size_t>(parent)] = std::move(support);
    return;
  }
  st.support[static_cast<size_t>(parent)].reset();
  const DoubleBox* b = box[static_cast<size_t>(parent)];
  if (!b) {
    fail(fmt::format("node {} has no box", parent));
    return;
  }
  const int64_t m = numel_of(parent);
  std::vector<double>& acc = *slot;
  std::vector<double> xm(static_cast<size_t>(m));
  for (size_t j = 0; j < xm.size(); ++j) xm[j] = std::max(std::fabs(b->lo[j]), std::fabs(b->hi[j]));
  for (int64_t r = 0; r < st.rows; ++r) {
    double s = 0;
    double* a = acc.data() + r * m;
    const double* c = coeffs.data() + r * m;
    for (int64_t j = 0; j < m; ++j) {
      a[j] += c[j];
      if (a[j] != 0) s += std::fabs(a[j]) * xm[static_cast<size_t>(j)];
    }
    // One rounding per sum: |exact - computed| <= u |computed| (plus an underflow quantum).
    st.slack[r] += up_sum(s * kU * (1 + 2 * kU), static_cast<double>(m)) + static_cast<double>(m) * kEta;
  }
  give(std::move(coeffs));
}

bool RuleCtx::concretize(int64_t id, const std::vector<double>& A) {
  const DoubleBox* b = box[static_cast<size_t>(id)];
  if (!b) return fail(fmt::format("node {} has no box", id));
  const int64_t m = numel_of(id);
  // A cut: rows concretised at a node that is not an input and whose box is not one point (a
  // constant's part is a constant of the rows' linear function in the input).
  if (!st.cut && g.nodes[static_cast<size_t>(id)].op != Op::Input) st.cut = b->lo != b->hi;
  if (ball && id == ball_input) return concretize_on_ball(id, A);
  for (int64_t r = 0; r < st.rows; ++r)
    kernels::concretize_row(A.data() + r * m, b->lo.data(), b->hi.data(), m, st.bias[r], st.mag[r], st.terms[r]);
  return true;
}

// The input is a ball inside its box: per row the larger of the box's minimum of a . x (its sum and
// terms, as above, summed apart and added once more) and the ball's (lp_ball_min: a lower bound with its
// own rounding counted, added as one term). Either is a lower bound on the ball, so the choice is free.
bool RuleCtx::concretize_on_ball(int64_t id, const std::vector<double>& A) {
  const DoubleBox* b = box[static_cast<size_t>(id)];
  const int64_t m = numel_of(id);
  if (static_cast<int64_t>(ball->center.size()) != m) return fail("the ball's center does not fit the input");
  for (int64_t r = 0; r < st.rows; ++r) {
    const double* a = A.data() + r * m;
    double sum = 0, mag = 0, terms = 0;
    kernels::concretize_row(a, b->lo.data(), b->hi.data(), m, sum, mag, terms);
    const double on_ball = lp_ball_min(std::span<const double>(a, static_cast<size_t>(m)), 0.0, ball->center,
                                       ball->eps, ball->p);
    const double box_low = dn(sum - gamma(terms + 1) * mag);  // about the box's bound, for the choice only
    if (std::isfinite(on_ball) && on_ball > box_low) {
      st.bias[r] += on_ball, st.mag[r] += std::fabs(on_ball), st.terms[r] += 1;
    } else {
      st.bias[r] += sum, st.mag[r] += mag, st.terms[r] += terms + 1;
    }
  }
  return true;
}

void RuleCtx::slack_abs_dot(const std::vector<double>& A, const std::vector<double>& scale, double factor,
                            const std::vector<int64_t>* support) {
  const int64_t m = static_cast<int64_t>(scale.size());
  if (support) {  // zero coefficients elsewhere add nothing, also against an infinite scale
    const UpSum up_sum_s(static_cast<double>(support->size()));
    for (int64_t r = 0; r < st.rows; ++r) {
      const double* a = A.data() + r * m;
      double s = 0;
      for (int64_t j : *support)
        if (a[j] != 0) s += std::fabs(a[j]) * scale[static_cast<size_t>(j)];
      st.slack[r] += up_sum_s(s * factor * (1 + 2 * kU));
    }
    return;
  }
  const UpSum up_sum_m(static_cast<double>(scale.size()));
  for (int64_t r = 0; r < st.rows; ++r) {
    const double* a = A.data() + r * m;
    const double* sc = scale.data();
    double s = kernels::abs_dot(a, sc, m);
    if (std::isnan(s)) {  // 0 * inf: an infinite scale under a zero coefficient contributes nothing
      s = 0;
      for (int64_t j = 0; j < m; ++j)
        if (a[j] != 0) s += std::fabs(a[j]) * sc[j];
    }
    st.slack[r] += up_sum_m(s * factor * (1 + 2 * kU));
  }
}

}  // namespace denote::crown
