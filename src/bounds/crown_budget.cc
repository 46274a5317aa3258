// CROWN's coefficient memory under a budget (src/bounds/crown_budget.h).
#include "bounds/crown_budget.h"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "bounds/crown_rules.h"
#include "bounds/crown_tangents.h"
#include "eval/walk.h"

namespace denote::crown {

namespace {

int64_t elements(const Graph& g, int64_t id) { return numel(g.nodes[static_cast<size_t>(id)].out_shape); }

// What a full reverse walk from start touches, from one reverse sweep: per node the highest child in
// start's cone (-1: not in the cone), and the cone's element counts.
struct Cone {
  std::vector<int64_t> last;
  int64_t largest = 0, all = 0, relaxed = 0;
};

Cone cone_of(const Graph& g, int64_t start) {
  Cone c{std::vector<int64_t>(g.nodes.size(), -1)};
  c.last[static_cast<size_t>(start)] = start;
  (void)walk::reverse(g, "IR bounds", [&](const Node& n) {
    if (c.last[static_cast<size_t>(n.id)] < 0) return ok_status();  // after start, or not in its cone
    for (int64_t p : n.parents) c.last[static_cast<size_t>(p)] = std::max(c.last[static_cast<size_t>(p)], n.id);
    const int64_t m = elements(g, n.id);
    c.largest = std::max(c.largest, m);
    c.all += m;
    if (forward_reads_coefficients(n.op)) c.relaxed += tangent_smooth(n.op) ? 2 * m : m;  // two tangent points
    return ok_status();
  });
  return c;
}

// The most doubles alive at once in the walk, one row: node p's coefficients live over [p, last[p]].
int64_t live_peak(const Graph& g, int64_t start, const std::vector<int64_t>& last) {
  std::vector<int64_t> delta(static_cast<size_t>(start) + 2, 0);
  for (int64_t p = 0; p <= start; ++p) {
    if (last[static_cast<size_t>(p)] < 0) continue;
    delta[static_cast<size_t>(p)] += elements(g, p);
    delta[static_cast<size_t>(last[static_cast<size_t>(p)]) + 1] -= elements(g, p);
  }
  int64_t live = 0, peak = 0;
  for (int64_t n = 0; n <= start; ++n) peak = std::max(peak, live += delta[static_cast<size_t>(n)]);
  return peak;
}

// Rows of per_row doubles within `bytes` (>= 0).
int64_t rows_within(int64_t bytes, int64_t per_row) {
  return std::max<int64_t>(0, bytes / static_cast<int64_t>(sizeof(double)) / std::max<int64_t>(1, per_row));
}

constexpr int64_t fit_all = std::numeric_limits<int64_t>::max();

}  // namespace

int64_t doubles_per_row(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) {
  const Node& s = g.nodes[static_cast<size_t>(start)];
  if (kind == PassKind::OneStep) {
    int64_t sum = 2 * elements(g, start);  // C and the rule's temporary
    for (int64_t p : s.parents) sum += elements(g, p);
    return sum;
  }
  const Cone c = cone_of(g, start);
  int64_t per_row = live_peak(g, start, c.last) + c.largest;
  if (kind == PassKind::Record || kind == PassKind::Alpha) per_row += c.all;
  // Slopes and two Adam moments per relaxed element, forward values of every node (alpha-CROWN).
  if (kind == PassKind::Alpha) per_row += 3 * c.relaxed + c.all + 3 * beta_terms;
  return per_row;
}

int64_t Budget::rows_that_fit(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const {
  if (bytes == std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  return rows_within(bytes, doubles_per_row(g, start, kind, beta_terms));
}

int64_t Budget::pairs_per_chunk(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const {
  const int64_t per_row = doubles_per_row(g, start, kind, beta_terms);  // one sweep for both limits
  const int64_t fit = bytes == std::numeric_limits<int64_t>::max() ? fit_all : rows_within(bytes, per_row);
  return std::min(fit / 2, std::max<int64_t>(1, rows_within(kChunkBytes, per_row) / 2));
}

void Budget::refuse(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms, int64_t rows,
                    std::string_view what) {
  if (!failure.empty()) return;
  const int64_t per_row = doubles_per_row(g, start, kind, beta_terms);
  const double need = static_cast<double>(rows) * static_cast<double>(per_row) * sizeof(double);
  failure = fmt::format(
      "IR bounds: the {} from node {} needs about {:.0f} bytes of coefficients for {} row{} ({} numbers per row), "
      "above the --max-memory budget of {} bytes for them",
      what, start, need, rows, rows == 1 ? "" : "s", per_row, bytes);
  node = start;
}

}  // namespace denote::crown
