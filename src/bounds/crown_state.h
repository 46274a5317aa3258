// Internal: the state of one CROWN backward pass and the a-priori error arithmetic every rule
// uses (include/denote/bounds/crown.h; docs/NUMERICS.md, "Linear bounds").
//
// Invariant, for each row r, in exact real arithmetic, for every value v the network (exact, or
// its evaluation in the chosen arithmetic) takes on the input boxes:
//   (C v_start)_r >= sum_{n pending} A_n[r] . v_n + B_r - slack_r
// where B_r is the exact sum of the terms added to `bias` (the computed `bias` is within
// gamma(terms + 1) * mag of it). Rules only add nonnegative, upward-rounded amounts to slack.
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/base/next_float.h"
#include "denote/bounds/ibp.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"

namespace denote {
struct InputBall;  // include/denote/bounds/crown.h
}  // namespace denote

namespace denote::crown {

inline constexpr double kU = DBL_EPSILON / 2;            // unit roundoff of the coefficient arithmetic (binary64)
inline constexpr double kEta = 4.9406564584124654e-324;  // smallest subnormal: an underflow's absolute error

// One step down / up: a round-to-nearest result moved past the exact value it rounds
// (std::nextafter's values, inline: denote/base/next_float.h).
inline double up(double x) { return next_up(x); }
inline double dn(double x) { return next_down(x); }

// gamma_n = n u / (1 - n u), the classical bound of n roundings, itself rounded up.
inline double gamma(double n, double u = kU) {
  const double nu = n * u;
  if (!(nu < 0.5)) return INFINITY;
  return up(nu / (1 - nu)) * (1 + 4 * kU);
}
// An upper bound of the exact sum of n >= 0 nonnegative terms whose computed sum is `s`.
inline double up_sum(double s, double n) { return up(s * (1 + 2 * gamma(n + 1)) + (n + 1) * kEta); }
// up_sum for many sums of the same n: the factor and the underflow term computed once (same values).
struct UpSum {
  double factor, eta;
  explicit UpSum(double n) : factor(1 + 2 * gamma(n + 1)), eta((n + 1) * kEta) {}
  double operator()(double s) const { return up(s * factor + eta); }
};

// The elements of b in [at, at + n) whose box is not the point 0 (NaN counts). A product with such an
// exact 0 is an exact 0 (weights are finite) and adding it rounds nothing, so a sum over these n
// elements rounds at most live_count times in any order: the evaluation's error terms count these.
inline double live_count(const DoubleBox& b, size_t at, size_t n) {
  double k = 0;
  for (size_t j = at; j < at + n; ++j) k += b.lo[j] == 0 && b.hi[j] == 0 ? 0.0 : 1.0;
  return k;
}

// What the evaluation being enclosed rounds with: the a-priori error of its ops.
struct EvalErr {
  double u = kU;     // unit roundoff (f64: 2^-53, f32: 2^-24)
  double tiny = 0;   // absolute error of an underflow (f64: 2^-1074, f32: 2^-149)
  bool f32 = false;  // parameters are rounded to f32 before use
};

// n doubles of fresh memory (zeroed). From 4 MiB up the range is first advised to be backed by
// transparent huge pages (madvise; advice only, ignored where THP is off): intermediate bounds write
// hundreds of MB of coefficients, and on 4 KiB pages the page faults cost more than the products
// (docs/PERF.md, "CNN CROWN").
inline std::vector<double> fresh_buffer(size_t n) {
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  std::vector<double> v;
  if (n * sizeof(double) < 2 * kHuge) return std::vector<double>(n);
  v.reserve(n);
#ifdef MADV_HUGEPAGE
  const uintptr_t begin = (reinterpret_cast<uintptr_t>(v.data()) + kHuge - 1) & ~(kHuge - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(v.data() + n) & ~(kHuge - 1);
  if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#endif
  v.resize(n);
  return v;
}

// Large coefficient buffers kept for reuse across the passes of one Engine (alpha-CROWN runs the
// same passes 20 times): without it every pass maps and unmaps megabytes of fresh pages, and glibc's
// malloc heuristics decide whether that costs page faults (mnistfc alpha-CROWN 142 against 118 ms,
// depending on what the process freed before). take() returns a vector of size n whose contents
// are unspecified (the caller overwrites all of it): a spare whose size is already n or more is
// preferred, so that no element is zeroed first; copy() returns one equal to v. (A workspace kept
// per thread across engines measured slower on mnistfc and ACAS Xu CROWN, 0.40 -> 0.48 ms: malloc
// hands back the memory a finished engine freed while it is still in cache.)
//
// Where the allocator is tuned (denote/base/allocator.h: the CLI, or denote.tune_allocator()), buffers
// of 4 MiB or more also outlive their engine, in a pool per thread (at most 64 MiB): the next engine on
// the thread (branch and bound bounds each subdomain with a new one; a Python caller each call) finds
// them mapped and written, where fresh ones cost page faults and zeroing (cnn_16_32 CROWN from Python,
// tuned: 44.9 against 37.4 ms per call). Untuned, buffers never freed keep glibc's dynamic mmap
// threshold low and every other block is mapped afresh (57 against 71 ms): no pool there.
// The index of the spare to reuse for n doubles: capacity >= n, one already of size >= n (no zeroing)
// first, then the smallest; spares.size() where none fits.
inline size_t best_spare(const std::vector<std::vector<double>>& spares, size_t n) {
  size_t best = spares.size();
  for (size_t i = 0; i < spares.size(); ++i) {
    if (spares[i].capacity() < n) continue;
    if (best == spares.size()) {
      best = i;
      continue;
    }
    const bool fits = spares[i].size() >= n, best_fits = spares[best].size() >= n;
    if ((fits && !best_fits) || (fits == best_fits && spares[i].capacity() < spares[best].capacity())) best = i;
  }
  return best;
}

struct LargePool {
  static constexpr size_t kMinDoubles = size_t{1} << 19;  // 4 MiB
  static constexpr size_t kMaxBytes = size_t{64} << 20;
  std::vector<std::vector<double>> v;
  size_t bytes = 0;
  // The smallest pooled buffer of capacity >= n (one of size >= n first), or an empty vector.
  std::vector<double> take(size_t n) {
    const size_t best = best_spare(v, n);
    if (best == v.size()) return {};
    std::vector<double> out = std::move(v[best]);
    v.erase(v.begin() + static_cast<std::ptrdiff_t>(best));
    bytes -= out.capacity() * sizeof(double);
    return out;
  }
  void give(std::vector<double>&& b) {
    const size_t nb = b.capacity() * sizeof(double);
    if (b.capacity() >= kMinDoubles && bytes + nb <= kMaxBytes) bytes += nb, v.push_back(std::move(b));
    b = {};
  }
  static LargePool& mine() {
    thread_local LargePool pool;
    return pool;
  }
};

struct Workspace {
  static constexpr size_t kMinKept = 4096;                   // doubles: 32 KiB
  size_t max_kept_bytes = size_t{64} << 20;  // all spares together (Engine::set_budget lowers it)
  std::vector<std::vector<double>> spare;
  size_t kept_bytes = 0;

  Workspace() = default;
  Workspace(const Workspace&) = delete;
  Workspace& operator=(const Workspace&) = delete;
  Workspace(Workspace&&) = default;
  Workspace& operator=(Workspace&&) = default;
  // Only where the budget allows the pool's 64 MiB of spares (Engine::set_budget: a memory budget of
  // 256 MiB or more): the pool outlives the engine, uncounted.
  ~Workspace() {
    if (allocator_tuned() && max_kept_bytes >= LargePool::kMaxBytes)
      for (auto& v : spare) LargePool::mine().give(std::move(v));
  }

  std::vector<double> take(size_t n) {
    const size_t best = best_spare(spare, n);
    if (best == spare.size()) {
      if (n >= LargePool::kMinDoubles && allocator_tuned()) {
        std::vector<double> v = LargePool::mine().take(n);
        if (v.capacity() >= n) {
          v.resize(n);
          return v;
        }
      }
      return fresh_buffer(n);
    }
    std::vector<double> v = pop(best);
    v.resize(n);
    return v;
  }
  // Scratch of at least n doubles, contents unspecified: a spare that long is handed over at its own
  // length, so that neither this take nor a later one zeroes the part beyond n (a vector grown by
  // resize value-initialises it: 7% of resnet_2b's whole-box alpha-CROWN went to that).
  std::vector<double> take_scratch(size_t n) {
    const size_t best = best_spare(spare, n);
    if (best == spare.size() || spare[best].size() < n) return take(n);
    return pop(best);
  }
  // Spare i, out of the pool.
  std::vector<double> pop(size_t i) {
    std::vector<double> v = std::move(spare[i]);
    spare.erase(spare.begin() + static_cast<std::ptrdiff_t>(i));
    kept_bytes -= v.capacity() * sizeof(double);
    return v;
  }
  std::vector<double> copy(const std::vector<double>& v) {
    std::vector<double> out = take(v.size());
    std::copy(v.begin(), v.end(), out.begin());
    return out;
  }
  // Keeps buffers of 32 KiB or more, at most 32 of them and max_kept_bytes in all.
  void give(std::vector<double>&& v) {
    const size_t bytes = v.capacity() * sizeof(double);
    if (v.capacity() >= kMinKept && spare.size() < 32 && kept_bytes + bytes <= max_kept_bytes) {
      kept_bytes += bytes;
      spare.push_back(std::move(v));
    }
    v = {};
  }
};

// Per node, a value computed from one or two boxes (a rule's parent box, or its parent's and its own),
// kept with the boxes it came from: a pass reuses it only while those boxes are equal element for element
// (boxes tighten between an engine's passes), so a stale value is never read.
template <class V>
struct BoxCache {
  struct Entry {
    std::vector<std::vector<double>> key;  // lo, hi of each box
    V value{};
    bool set = false;
  };
  std::vector<Entry> by_node;
  const V* find(int64_t id, const DoubleBox& a) const { return find_key(id, {&a}); }
  const V* find(int64_t id, const DoubleBox& a, const DoubleBox& b) const { return find_key(id, {&a, &b}); }
  void store(int64_t id, const DoubleBox& a, V value) { store_key(id, {&a}, std::move(value)); }
  void store(int64_t id, const DoubleBox& a, const DoubleBox& b, V value) { store_key(id, {&a, &b}, std::move(value)); }

 private:
  const V* find_key(int64_t id, std::initializer_list<const DoubleBox*> boxes) const {
    if (id < 0 || static_cast<size_t>(id) >= by_node.size()) return nullptr;
    const Entry& e = by_node[static_cast<size_t>(id)];
    if (!e.set || e.key.size() != 2 * boxes.size()) return nullptr;
    size_t k = 0;
    for (const DoubleBox* b : boxes)
      if (e.key[k++] != b->lo || e.key[k++] != b->hi) return nullptr;
    return &e.value;
  }
  void store_key(int64_t id, std::initializer_list<const DoubleBox*> boxes, V value) {
    if (id < 0) return;
    if (static_cast<size_t>(id) >= by_node.size()) by_node.resize(static_cast<size_t>(id) + 1);
    Entry& e = by_node[static_cast<size_t>(id)];
    e.key.clear();
    for (const DoubleBox* b : boxes) e.key.push_back(b->lo), e.key.push_back(b->hi);
    e.value = std::move(value);
    e.set = true;
  }
};

// The linear and conv rules' error scales (|W| xmax per output and leading block, src/bounds/
// crown_rules.cc) by parent box.
using ScaleCache = BoxCache<std::vector<double>>;

// The elements of a box that are not the point 0, when they are at most 3/4 of them (else nullopt:
// all). A coefficient on a point-0 element (a dead relu's output: relu of a value <= 0 is +-0, for
// the real network and its evaluation alike) adds exactly nothing, so products may skip it.
inline std::optional<std::vector<int64_t>> live_elements(const DoubleBox& b) {
  std::vector<int64_t> live;
  for (size_t j = 0; j < b.lo.size(); ++j)
    if (b.lo[j] != 0 || b.hi[j] != 0) live.push_back(static_cast<int64_t>(j));
  if (4 * live.size() > 3 * b.lo.size()) return std::nullopt;
  return live;
}

// Rows of C that are signed unit vectors: row r is sign[r] at column col[r] and 0 elsewhere.
struct UnitRows {
  std::vector<int64_t> col;
  std::vector<double> sign;
  // The rows +e_j, then -e_j, of the given elements (intermediate bounds' start rows).
  static UnitRows plus_minus(const std::vector<int64_t>& elems) {
    const size_t k = elems.size();
    UnitRows u{std::vector<int64_t>(2 * k), std::vector<double>(2 * k)};
    for (size_t r = 0; r < k; ++r) {
      u.col[r] = u.col[k + r] = elems[r];
      u.sign[r] = 1, u.sign[k + r] = -1;
    }
    return u;
  }
  // The rows as a dense rows x m matrix into C (every entry written).
  void fill(int64_t m, double* C) const {
    std::fill(C, C + static_cast<std::ptrdiff_t>(col.size()) * m, 0.0);
    for (size_t r = 0; r < col.size(); ++r) C[static_cast<int64_t>(r) * m + col[r]] = sign[r];
  }
};

struct PassRows {
  int64_t rows = 0;
  std::vector<std::optional<std::vector<double>>> A;  // per node: rows x numel, row-major
  // Per node, when known: the columns of A that may be nonzero (ascending); every other column is
  // 0 in every row (stored as 0: a rule may ignore the list). Set by the one add_to that created
  // the node's A; a second add_to or a beta term drops it.
  std::vector<std::optional<std::vector<int64_t>>> support;
  std::vector<double> bias, mag, terms, slack;  // per row
  std::string failure;                          // non-empty: the pass has no bound
  // When every row of the start node's A is a signed unit vector (intermediate bounds' rows
  // +e_j and -e_j): that node, and per row the column and the sign; unit_node -1 otherwise.
  int64_t unit_node = -1;
  const UnitRows* unit = nullptr;
  // The input's coefficients may be concretised as they are made, not stored (no record, no beta).
  bool fuse_input = false;
  const std::vector<int32_t>* uses = nullptr;  // per node: how many times it is a parent
  // alpha-CROWN's forward values (src/bounds/crown_alpha.cc), where a first linear layer's input
  // coefficients are fused: that layer's values at the input vertex each row's bound attains, for
  // the outputs vertex_need[node] marks, into vertex_values[node] (rows x numel, 0 elsewhere).
  const std::vector<std::vector<char>>* vertex_need = nullptr;
  std::vector<std::vector<double>>* vertex_values = nullptr;
  bool cut = false;  // rows concretised at a non-input node of more than one point (not linear in the input)
};

class ConvPlans;  // src/bounds/crown_conv.h
struct Lines;  // src/bounds/crown_lines.h

// Everything a rule reads: the node, its coefficients, the boxes, the payload, the error model.
struct RuleCtx {
  const Graph& g;
  const Payload<double>& payload;
  const std::vector<const DoubleBox*>& box;  // per node; nullptr: no box
  const EvalErr& err;
  PassRows& st;
  // alpha-CROWN: relu lower slopes per (node, row, element), or nullptr for CROWN's adaptive choice.
  const std::vector<std::vector<double>>* alpha = nullptr;
  // Per node: error scales that depend on the boxes only (the linear rule's |W| xmax terms), kept
  // across the passes of one alpha-CROWN run (the boxes do not change there); null: not kept.
  std::vector<std::vector<double>>* scales = nullptr;
  Workspace* ws = nullptr;            // buffers to reuse (null: plain allocation)
  ScaleCache* scale_cache = nullptr;  // linear error scales by parent box (null: none)
  ConvPlans* conv_plans = nullptr;    // conv nodes' plans kept across passes (null: built per rule)
  BoxCache<Lines>* lines = nullptr;   // elementwise lines by their boxes (LineCache; null: made per rule)
  const InputBall* ball = nullptr;    // the input node ball_input is this ball in its box (null: the box)
  int64_t ball_input = -1;

  std::vector<double> take(size_t n) { return ws ? ws->take(n) : fresh_buffer(n); }
  void give(std::vector<double>&& v) {
    if (ws) ws->give(std::move(v));
  }

  int64_t numel_of(int64_t id) const;
  // max(|lo|, |hi|) of node id's box, element j.
  double absmax(int64_t id, int64_t j) const;
  // Adds coefficients (rows x numel(parent)) to the parent's pending A; an existing A is summed,
  // its rounding (u |sum| |v| per element) entering slack. support: the columns of coeffs that may
  // be nonzero (PassRows::support), if known.
  void add_to(int64_t parent, std::vector<double>&& coeffs, std::optional<std::vector<int64_t>> support = std::nullopt);
  // Node id's PassRows::support, or nullptr (any column may be nonzero).
  const std::vector<int64_t>* support_of(int64_t id) const {
    const auto& s = st.support[static_cast<size_t>(id)];
    return s ? &*s : nullptr;
  }
  void add_bias(int64_t r, double term) {
    st.bias[r] += term;
    st.mag[r] += std::fabs(term);
    st.terms[r] += 1;
  }
  void add_slack(int64_t r, double s) { st.slack[r] += s; }
  // The pass ends here for every row: A . v >= min over node id's box (its box starts the segment).
  bool concretize(int64_t id, const std::vector<double>& A);
  bool concretize_on_ball(int64_t id, const std::vector<double>& A);
  // sum_j |A[r, j]| * scale[j] for each row, rounded up, added to slack (scale >= 0). support: the
  // columns of A that may be nonzero (the sum runs over them only; scale is read there only).
  void slack_abs_dot(const std::vector<double>& A, const std::vector<double>& scale, double factor,
                     const std::vector<int64_t>* support = nullptr);
  bool fail(std::string why) {
    if (st.failure.empty()) st.failure = std::move(why);
    return false;
  }
};

// Node id's box in a pass (nullptr: none).
inline const DoubleBox* box_of(const RuleCtx& c, int64_t id) { return c.box[static_cast<size_t>(id)]; }

}  // namespace denote::crown
