// CROWN's coefficient memory under a budget (src/bounds/crown_budget.h).
#include "bounds/crown_budget.h"

#include <algorithm>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "bounds/crown_rules.h"
#include "eval/walk.h"

namespace denote::crown {

namespace {

int64_t elements(const Graph& g, int64_t id) { return numel(g.nodes[static_cast<size_t>(id)].out_shape); }

// The most doubles alive at once in a full reverse walk from start, one row: a sweep over the
// nodes' live intervals [p, highest child of p in the cone].
int64_t live_peak(const Graph& g, int64_t start, const std::vector<bool>& cone) {
  std::vector<int64_t> last(static_cast<size_t>(start) + 1, -1);
  last[static_cast<size_t>(start)] = start;
  for (int64_t id = start; id >= 0; --id) {
    if (!cone[static_cast<size_t>(id)] || last[static_cast<size_t>(id)] < 0) continue;
    for (int64_t p : g.nodes[static_cast<size_t>(id)].parents)
      last[static_cast<size_t>(p)] = std::max(last[static_cast<size_t>(p)], id);
  }
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

}  // namespace

int64_t doubles_per_row(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) {
  const Node& s = g.nodes[static_cast<size_t>(start)];
  if (kind == PassKind::OneStep) {
    int64_t sum = 2 * elements(g, start);  // C and the rule's temporary
    for (int64_t p : s.parents) sum += elements(g, p);
    return sum;
  }
  const std::vector<bool> cone = walk::ancestors(g, start);
  int64_t largest = 0, all = 0, relus = 0;
  for (int64_t id = 0; id <= start; ++id) {
    if (!cone[static_cast<size_t>(id)]) continue;
    const int64_t m = elements(g, id);
    largest = std::max(largest, m);
    all += m;
    if (!forward_reads_coefficients(g.nodes[static_cast<size_t>(id)].op)) continue;
    relus += m;
  }
  int64_t per_row = live_peak(g, start, cone) + largest;
  if (kind == PassKind::Record || kind == PassKind::Alpha) per_row += all;
  // Slopes and two Adam moments per relaxed element, forward values of every node (alpha-CROWN).
  if (kind == PassKind::Alpha) per_row += 3 * relus + all + 3 * beta_terms;
  return per_row;
}

int64_t Budget::rows_that_fit(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const {
  if (bytes == std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  const int64_t per_row = std::max<int64_t>(1, doubles_per_row(g, start, kind, beta_terms));
  return std::max<int64_t>(0, bytes / static_cast<int64_t>(sizeof(double)) / per_row);
}

int64_t Budget::pairs_per_chunk(const Graph& g, int64_t start, PassKind kind, int64_t beta_terms) const {
  const int64_t fit = rows_that_fit(g, start, kind, beta_terms) / 2;
  const int64_t per_row = std::max<int64_t>(1, doubles_per_row(g, start, kind, beta_terms));
  const int64_t cached = std::max<int64_t>(1, kChunkBytes / static_cast<int64_t>(2 * sizeof(double)) / per_row);
  return std::min(fit, cached);
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
