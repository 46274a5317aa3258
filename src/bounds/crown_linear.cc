// CROWN's linear rule (src/bounds/crown_linear.h). docs/NUMERICS.md, "Linear bounds", has its error
// terms; docs/PERF.md, "CROWN's sparse products", what the supports save.
#include "bounds/crown_linear.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>

#include "kernels/fused_concretize.h"
#include "kernels/gemm.h"
#include "kernels/row_sums.h"

namespace denote::crown {

namespace {


// |W| xmax per leading block, and the scale of the error terms, into the entries of `scale` that
// are NaN (not computed yet) among `outs` (null: all).
void linear_scale(const RuleCtx& c, const LinearRecord<double>& rec, const DoubleBox& xb, int64_t lead,
                  const std::vector<int64_t>* outs, std::vector<double>& scale) {
  const int64_t out = rec.out_dim, in = rec.in_dim;
  const double g_coef = gamma(static_cast<double>(out) + 1);
  std::vector<double> xm(static_cast<size_t>(lead * in));
  for (size_t i = 0; i < xm.size(); ++i) xm[i] = std::max(std::fabs(xb.lo[i]), std::fabs(xb.hi[i]));
  // The evaluation rounds each output (live + 3) u_eval 1.01 relative, live the inputs of its block
  // whose box is not the point 0 (live_count).
  std::vector<double> e_eval(static_cast<size_t>(lead));
  for (int64_t l = 0; l < lead; ++l)
    e_eval[static_cast<size_t>(l)] =
        c.err.u * (live_count(xb, static_cast<size_t>(l * in), static_cast<size_t>(in)) + 3) * 1.01;
  const UpSum up_sum_in(static_cast<double>(in));
  auto one = [&](int64_t l, int64_t o) {
    double& dst = scale[static_cast<size_t>(l * out + o)];
    if (!std::isnan(dst)) return;
    const double s = up_sum_in(kernels::abs_dot_nonzero(rec.weight.data() + o * in, xm.data() + l * in, in));
    const double b = rec.bias.empty() ? 0.0 : std::fabs(rec.bias[static_cast<size_t>(o)]);
    dst = g_coef * s + e_eval[static_cast<size_t>(l)] * up(s + b) +
          c.err.tiny * (static_cast<double>(in) + 4);  // an underflow per operation
  };
  for (int64_t l = 0; l < lead; ++l)
    if (outs)
      for (int64_t o : *outs) one(l, o);
    else
      for (int64_t o = 0; o < out; ++o) one(l, o);
}

// The linear node's error scales for the columns `outs` of A (null: all): kept across an
// alpha-CROWN run's passes, else from the engine's cache when the parent box is unchanged,
// computed where missing (NaN marks an entry not computed yet).
const std::vector<double>& linear_scales(RuleCtx& c, const Node& n, const LinearRecord<double>& rec,
                                         const DoubleBox& xb, int64_t lead, const std::vector<int64_t>* outs,
                                         std::vector<double>& local) {
  const size_t len = static_cast<size_t>(lead * rec.out_dim);
  std::vector<double>* kept = c.scales ? &(*c.scales)[static_cast<size_t>(n.id)] : nullptr;
  std::vector<double>& sc = kept ? *kept : local;
  if (sc.size() != len) {
    const std::vector<double>* cached = c.scale_cache ? c.scale_cache->find(n.id, xb) : nullptr;
    if (cached && cached->size() == len)
      sc = *cached;
    else
      sc.assign(len, NAN);
  }
  bool missing = false;
  if (outs) {
    for (int64_t o : *outs) missing = missing || std::isnan(sc[static_cast<size_t>(o)]);
  } else {
    for (double v : sc) missing = missing || std::isnan(v);
  }
  if (missing) {
    linear_scale(c, rec, xb, lead, outs, sc);
    if (c.scale_cache) c.scale_cache->store(n.id, xb, sc);
  }
  return sc;
}

// A W restricted to A's columns S (the others are 0) and W's columns L (null: all): the gathered
// operands, as (rows x ks) times w (ks x nl).
struct SupportProduct {
  int64_t ks = 0, nl = 0;
  const double* a = nullptr;
  const double* b = nullptr;
  std::vector<double> as, w;

  SupportProduct(RuleCtx& c, int64_t rows, int64_t out, int64_t in, const double* A, const double* W,
                 const std::vector<int64_t>* S, const std::vector<int64_t>* L)
      : ks(S ? static_cast<int64_t>(S->size()) : out), nl(L ? static_cast<int64_t>(L->size()) : in), a(A), b(W) {
    if (S) {
      as = c.take(static_cast<size_t>(rows * ks));
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < ks; ++k)
          as[static_cast<size_t>(r * ks + k)] = A[r * out + (*S)[static_cast<size_t>(k)]];
      a = as.data();
    }
    if (!S && !L) return;
    w = c.take(static_cast<size_t>(ks * nl));
    gather_weights(W, out, in, S, L, w.data());
    b = w.data();
  }
  // Rows [r0, r0 + n) of the product into out (n x nl).
  void rows(int64_t r0, int64_t n, double* out) const { kernels::gemm_nn(n, nl, ks, a + r0 * ks, b, out); }
  void give_back(RuleCtx& c) {
    c.give(std::move(as));
    c.give(std::move(w));
  }
};

// pa = A W on the support (rows x in; the columns outside L set to 0). For a few rows, gathering W's
// rows S and columns L costs about what the product on them does (a branch and bound subdomain's one
// row: the copy was 5% of an oval21 search): the whole product then, A being 0 outside S, and the
// columns outside L zeroed (their coefficients multiply a point 0 either way).
void product_on_support(RuleCtx& c, int64_t rows, int64_t out, int64_t in, const double* A, const double* W,
                        const std::vector<int64_t>* S, const std::vector<int64_t>* L, double* pa) {
  const double ks = static_cast<double>(S ? S->size() : static_cast<size_t>(out));
  const double nl = static_cast<double>(L ? L->size() : static_cast<size_t>(in));
  if (static_cast<double>(rows) * static_cast<double>(out) * static_cast<double>(in) <=
      ks * nl * static_cast<double>(rows + 1)) {
    kernels::gemm_nn(rows, in, out, A, W, pa);
    if (!L) return;
    std::vector<char> live(static_cast<size_t>(in), 0);
    for (const int64_t j : *L) live[static_cast<size_t>(j)] = 1;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < in; ++j)
        if (!live[static_cast<size_t>(j)]) pa[r * in + j] = 0;
    return;
  }
  SupportProduct sp(c, rows, out, in, A, W, S, L);
  if (!L) {
    sp.rows(0, rows, pa);
  } else {
    std::vector<double> t = c.take(static_cast<size_t>(rows * sp.nl));
    sp.rows(0, rows, t.data());
    std::fill(pa, pa + rows * in, 0.0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t l = 0; l < sp.nl; ++l)
        pa[r * in + (*L)[static_cast<size_t>(l)]] = t[static_cast<size_t>(r * sp.nl + l)];
    c.give(std::move(t));
  }
  sp.give_back(c);
}

// The input node behind node p through ops that keep the element order (reshape, flatten, detach),
// when p and every node on the way feed only the next one and hold no coefficients yet (so the
// input's coefficients would be exactly A W); -1 otherwise, or when the pass keeps coefficients.
int64_t lone_input_behind(const RuleCtx& c, int64_t p) {
  if (!c.st.fuse_input || !c.st.uses) return -1;
  for (;;) {
    if ((*c.st.uses)[static_cast<size_t>(p)] != 1 || c.st.A[static_cast<size_t>(p)]) return -1;
    const Node& q = c.g.nodes[static_cast<size_t>(p)];
    if (q.op == Op::Input) return p;
    if (!keeps_order(q.op)) return -1;
    p = q.parents[0];
  }
}

// PassRows::vertex_values for a fused first layer: its needed outputs, their weight rows on the
// product's columns (outs x nl), and where the values go (rows x out; bias added at the end).
struct VertexOut {
  std::vector<int64_t> outs;
  std::vector<double> w;
  std::vector<double>* values = nullptr;
};

std::optional<VertexOut> vertex_request(RuleCtx& c, const Node& n, const LinearRecord<double>& rec,
                                        const std::vector<int64_t>* L) {
  if (!c.st.vertex_values || !c.st.vertex_need) return std::nullopt;
  const std::vector<char>& need = (*c.st.vertex_need)[static_cast<size_t>(n.id)];
  if (need.empty()) return std::nullopt;  // no gradient reads this layer's values
  const int64_t in = rec.in_dim, nl = L ? static_cast<int64_t>(L->size()) : in;
  VertexOut v;
  for (int64_t o = 0; o < rec.out_dim; ++o)
    if (need[static_cast<size_t>(o)]) v.outs.push_back(o);
  v.w = c.take(v.outs.size() * static_cast<size_t>(nl));
  gather_weights(rec.weight.data(), rec.out_dim, in, &v.outs, L, v.w.data());
  v.values = &(*c.st.vertex_values)[static_cast<size_t>(n.id)];
  v.values->assign(static_cast<size_t>(c.st.rows * rec.out_dim), 0.0);
  return v;
}

// Rows [r0, r0 + n)'s vertices (n x nl) through the needed weight rows into the values.
void vertex_values(RuleCtx& c, VertexOut& v, const LinearRecord<double>& rec, int64_t r0, int64_t n, int64_t nl,
                   const double* vert) {
  const int64_t k = static_cast<int64_t>(v.outs.size());
  if (k == 0) return;
  std::vector<double> y = c.take(static_cast<size_t>(n * k));
  kernels::gemm_nt(n, k, nl, vert, v.w.data(), y.data());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t t = 0; t < k; ++t) {
      const int64_t o = v.outs[static_cast<size_t>(t)];
      (*v.values)[static_cast<size_t>((r0 + i) * rec.out_dim + o)] =
          (rec.bias.empty() ? 0.0 : rec.bias[static_cast<size_t>(o)]) + y[static_cast<size_t>(i * k + t)];
    }
  c.give(std::move(y));
}

// The input's concretisation of pa = A W, computed a block of rows at a time and never stored whole
// (mnistfc: 186 rows x 784 would be 1.2 MB written and read back): the same sums as the input's
// rule_cut on the stored coefficients. With vertex: also the layer's forward values (VertexOut).
void product_concretize(RuleCtx& c, const LinearRecord<double>& rec, int64_t rows, const double* A,
                        const std::vector<int64_t>* S, const std::vector<int64_t>* L, const DoubleBox& xb,
                        std::optional<VertexOut> vertex) {
  const int64_t out = rec.out_dim, in = rec.in_dim;
  SupportProduct sp(c, rows, out, in, A, rec.weight.data(), S, L);
  std::vector<double> lo, hi;
  const double* plo = xb.lo.data();
  const double* phi = xb.hi.data();
  if (L) {
    for (int64_t j : *L) lo.push_back(xb.lo[static_cast<size_t>(j)]), hi.push_back(xb.hi[static_cast<size_t>(j)]);
    plo = lo.data(), phi = hi.data();
  }
  const int64_t block = 32;
  const bool fused = kernels::fused_fits(sp.ks, sp.nl);
  const size_t block_len = static_cast<size_t>(std::min(rows, block) * sp.nl);
  std::vector<double> buf = fused ? std::vector<double>{} : c.take(block_len);
  std::vector<double> vert = vertex ? c.take(block_len) : std::vector<double>{};
  for (int64_t r0 = 0; r0 < rows; r0 += block) {
    const int64_t n = std::min(block, rows - r0);
    double* vb = vertex ? vert.data() : nullptr;
    if (fused) {
      kernels::product_concretize_rows(sp.a + r0 * sp.ks, n, sp.ks, sp.b, sp.nl, plo, phi, c.st.bias.data() + r0,
                              c.st.mag.data() + r0, c.st.terms.data() + r0, vb);
    } else {
      sp.rows(r0, n, buf.data());
      for (int64_t i = 0; i < n; ++i) {
        const double* a = buf.data() + i * sp.nl;
        kernels::concretize_row(a, plo, phi, sp.nl, c.st.bias[r0 + i], c.st.mag[r0 + i], c.st.terms[r0 + i]);
        if (vb)
          for (int64_t l = 0; l < sp.nl; ++l) vb[i * sp.nl + l] = a[l] >= 0 ? plo[l] : phi[l];
      }
    }
    if (vertex) vertex_values(c, *vertex, rec, r0, n, sp.nl, vb);
  }
  c.give(std::move(buf));
  c.give(std::move(vert));
  if (vertex) c.give(std::move(vertex->w));
  sp.give_back(c);
}

// Rows that are signed unit vectors (PassRows::unit): row r of A W is +-W's row unit->col[r],
// exact, and its bias term +-b there, exact; the slack is that column's error scale.
void unit_rows_linear(RuleCtx& c, const LinearRecord<double>& rec, const std::vector<double>& scale,
                      const std::vector<int64_t>* L, double* pa) {
  const int64_t in = rec.in_dim, rows = c.st.rows;
  const UpSum up_sum_1(1);
  std::fill(pa, pa + rows * in, 0.0);
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t o = c.st.unit->col[static_cast<size_t>(r)];
    const double s = c.st.unit->sign[static_cast<size_t>(r)];
    const double* w = rec.weight.data() + o * in;
    double* dst = pa + r * in;
    if (L)
      for (int64_t j : *L) dst[j] = s * w[j];
    else
      for (int64_t j = 0; j < in; ++j) dst[j] = s * w[j];
    c.st.slack[r] += up_sum_1(scale[static_cast<size_t>(o)] * (1 + 2 * kU));
    if (!rec.bias.empty()) c.add_bias(r, s * rec.bias[static_cast<size_t>(o)]);
  }
}

}  // namespace

void gather_weights(const double* W, int64_t out, int64_t in, const std::vector<int64_t>* rows,
                    const std::vector<int64_t>* cols, double* dst) {
  const int64_t nr = rows ? static_cast<int64_t>(rows->size()) : out;
  const int64_t nc = cols ? static_cast<int64_t>(cols->size()) : in;
  for (int64_t k = 0; k < nr; ++k) {
    const double* row = W + (rows ? (*rows)[static_cast<size_t>(k)] : k) * in;
    double* d = dst + k * nc;
    if (cols)
      for (int64_t l = 0; l < nc; ++l) d[l] = row[(*cols)[static_cast<size_t>(l)]];
    else
      std::copy(row, row + in, d);
  }
}

// ---- linear: A_parent = A W per leading block, bias A b; slack |A| (gamma_out |W| xmax + e (|W| xmax + |b|)).
// With one leading block, only A's nonzero columns (PassRows::support) and the parent's elements
// that are not the point 0 enter the product.
bool rule_linear(RuleCtx& c, const Node& n, std::vector<double>&& A) {
  const auto* rec = find_record(c.payload.linear, n.id);
  const int64_t p = n.parents[0];
  const DoubleBox* xb = box_of(c, p);
  if (!rec || !xb) return c.fail(fmt::format("node {}: linear without payload or parent box", n.id));
  const int64_t out = rec->out_dim, in = rec->in_dim, lead = c.numel_of(p) / std::max<int64_t>(in, 1);
  const int64_t rows = c.st.rows;
  const std::vector<int64_t>* S = lead == 1 ? c.support_of(n.id) : nullptr;
  if (S && 4 * static_cast<int64_t>(S->size()) > 3 * out) S = nullptr;  // dense enough: one plain product
  std::optional<std::vector<int64_t>> L = lead == 1 ? live_elements(*xb) : std::nullopt;
  if (lead == 1 && c.st.unit_node == n.id && c.support_of(n.id)) {
    std::vector<double> local;
    const std::vector<double>& scale = linear_scales(c, n, *rec, *xb, lead, c.support_of(n.id), local);
    std::vector<double> pa = c.take(static_cast<size_t>(rows * in));
    unit_rows_linear(c, *rec, scale, L ? &*L : nullptr, pa.data());
    c.add_to(p, std::move(pa), std::move(L));
    return c.st.failure.empty();
  }
  const int64_t input = lead == 1 ? lone_input_behind(c, p) : -1;
  const DoubleBox* ib = input >= 0 ? box_of(c, input) : nullptr;
  std::vector<double> pa;
  if (ib && static_cast<int64_t>(ib->lo.size()) == in) {
    const std::vector<int64_t>* live = L ? &*L : nullptr;
    product_concretize(c, *rec, rows, A.data(), S, live, *ib, vertex_request(c, n, *rec, live));
  } else {
    pa = c.take(static_cast<size_t>(rows * lead * in));  // every entry is written
    if (S || L)
      product_on_support(c, rows, out, in, A.data(), rec->weight.data(), S, L ? &*L : nullptr, pa.data());
    else
      kernels::gemm_nn(rows * lead, in, out, A.data(), rec->weight.data(), pa.data());
  }
  std::vector<double> local;
  c.slack_abs_dot(A, linear_scales(c, n, *rec, *xb, lead, S, local), 1.0, S);
  if (!rec->bias.empty())
    for (int64_t r = 0; r < rows; ++r) {
      const double* a = A.data() + r * lead * out;
      double sum = 0, mag = 0;
      if (S) {
        for (int64_t o : *S) {
          const double t = a[o] * rec->bias[static_cast<size_t>(o)];
          sum += t, mag += std::fabs(t);
        }
      } else {
        for (int64_t l = 0; l < lead; ++l) kernels::dot_mag(a + l * out, rec->bias.data(), out, sum, mag);
      }
      c.st.bias[r] += sum;
      c.st.mag[r] += mag;
      c.st.terms[r] += static_cast<double>(S ? static_cast<int64_t>(S->size()) : lead * out);
    }
  if (!pa.empty()) c.add_to(p, std::move(pa), std::move(L));
  return c.st.failure.empty();
}

}  // namespace denote::crown
