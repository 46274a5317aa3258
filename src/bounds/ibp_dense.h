// Internal: IBP's linear rule on a prepared dense matrix (IbpPrepared, include/denote/bounds/ibp.h).
// The weights are points in the endpoint format (f32 or f64), kept as one row-major matrix of that
// type; the box enters as midpoint, radius and magnitude, the three sums of every output come from
// the four-rows-at-a-time product (src/kernels/interval_matvec.h), and each output's box from the same
// bound as ibp_linear's (ibp::linear_out, src/bounds/ibp_affine.h), which holds for any order of the
// sums. Anything unusual (a shape the rule would reject, a non-finite sum) returns nullopt: the
// interval rule then runs instead.
// A large matrix with at most one weight in eight nonzero (src/bounds/sparse_rows.h; nn4sys's learned
// indexes: 3 million of 41 million) is kept as its nonzeros by row (CSR) instead: the same three sums over the nonzero
// terms only, and the a-priori error of a row of n terms with n its nonzero count, the largest of
// the matrix: a zero weight times a finite value is an exact zero and adding it is exact, so the
// evaluation over every term rounds exactly as one over the nonzero ones. A non-finite input value
// (where the evaluation's 0 * inf is NaN) returns nullopt.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "bounds/ibp_affine.h"
#include "kernels/interval_matvec.h"
#include "bounds/sparse_rows.h"

namespace denote::ibp {

// V: the endpoint format's value type (float or double), the type the weights are points of.
template <class V>
struct DenseLinear {
  int64_t out = 0, in = 0;
  std::vector<V> w;  // out x in, row-major; empty when the matrix is kept sparse
  std::vector<MidRad> bias;
  bounds::SparseRows<V> rows;  // the matrix by its rows' nonzeros, when kept sparse
  bool sparse() const { return !rows.empty(); }
};

// The three sums of interval_matvec over the nonzeros of a sparse matrix.
template <class V>
void sparse_interval_matvec(const DenseLinear<V>& d, const double* mid, const double* rad, const double* mag,
                            double* c, double* r, double* m) {
  const bounds::SparseRows<V>& s = d.rows;
  for (int64_t o = 0; o < d.out; ++o) {
    double sc = 0, sr = 0, sm = 0;
    for (int64_t k = s.row_start[o]; k < s.row_start[o + 1]; ++k) {
      const double w = s.val[k], aw = std::fabs(w);
      const int32_t i = s.col[k];
      sc += w * mid[i], sr += aw * rad[i], sm += aw * mag[i];
    }
    c[o] = sc, r[o] = sr, m[o] = sm;
  }
}

template <class E>
std::optional<DenseLinear<typename E::Value>> make_dense(const IntervalContext<E>& ctx,
                                                         const LinearRecord<Interval<typename E::Value>>& rec) {
  using V = typename E::Value;
  static_assert(std::is_same_v<V, float> || std::is_same_v<V, double>);
  if (rec.out_dim <= 0 || rec.in_dim <= 0 || static_cast<int64_t>(rec.weight.size()) != rec.out_dim * rec.in_dim ||
      static_cast<int64_t>(rec.bias.size()) != rec.out_dim)
    return std::nullopt;
  DenseLinear<V> d;
  d.out = rec.out_dim, d.in = rec.in_dim;
  std::vector<V>& w = d.w;
  // One branch-free pass (it vectorises): every weight a finite point, else no dense copy.
  w.resize(rec.weight.size());
  bool points = true;
  for (size_t i = 0; i < rec.weight.size(); ++i) {
    const V lo = rec.weight[i].lo, hi = rec.weight[i].hi;
    points &= (lo == hi) & (std::fabs(lo) <= std::numeric_limits<V>::max());
    w[i] = lo;
  }
  if (!points) return std::nullopt;
  for (const auto& b : rec.bias) d.bias.push_back(mid_rad(to_d(ctx, b)));
  d.rows = bounds::sparse_rows_of(w, d.out, d.in);
  if (d.sparse()) std::vector<V>().swap(w);
  return d;
}

// The product for `lead` leading blocks: element i of block l has endpoints lo[l * in + i],
// hi[l * in + i]; output o of block l goes to put(l * out + o, box); false (nothing more put) when a box is not
// finite. Shared by the interval tensors' rule below and the double-array pass (ibp_boxes.h). Up to
// 64 blocks go through one interval_matmat (each load of the matrix serves two blocks; every block's
// sums are interval_matvec's on that block alone, so the boxes do not depend on how many blocks).
template <class V, class Put>
bool dense_linear_blocks(const DenseLinear<V>& d, const FormatModel& fm, size_t lead, const double* lo, const double* hi,
                         Put put) {
  const size_t in = static_cast<size_t>(d.in), out = static_cast<size_t>(d.out);
  const size_t chunk = std::min<size_t>(lead, 64);
  std::vector<double> mid(chunk * in), rad(chunk * in), mag(chunk * in), c(chunk * out), r(chunk * out),
      m(chunk * out);
  const LinearOutTerms terms = linear_out_terms(static_cast<double>(d.sparse() ? d.rows.most : d.in), fm);
  for (size_t l0 = 0; l0 < lead; l0 += chunk) {
    const size_t nb = std::min(chunk, lead - l0);
    mid_rad_arrays(lo + l0 * in, hi + l0 * in, nb * in, mid.data(), rad.data(), mag.data());
    if (!d.sparse()) {
      kernels::interval_matmat(d.w.data(), d.out, d.in, static_cast<int64_t>(nb), mid.data(), rad.data(), mag.data(),
                               c.data(), r.data(), m.data());
    } else {
      bool finite = true;
      for (size_t i = 0; i < nb * in; ++i) finite &= std::isfinite(mag[i]);
      if (!finite) return false;
      for (size_t b = 0; b < nb; ++b)
        sparse_interval_matvec(d, mid.data() + b * in, rad.data() + b * in, mag.data() + b * in, c.data() + b * out,
                               r.data() + b * out, m.data() + b * out);
    }
    // The boxes overwrite the centre and radius sums (each read once, before its own output is written).
    if (!linear_out_arrays(c.data(), m.data(), r.data(), d.bias.data(), out, 1, terms, nb * out, c.data(), r.data()))
      return false;
    for (size_t k = 0; k < nb * out; ++k) put(l0 * out + k, DInterval{c[k], r[k]});
  }
  return true;
}

template <class E>
std::optional<Tensor<Interval<typename E::Value>>> dense_linear(const IntervalContext<E>& ctx,
                                                                const DenseLinear<typename E::Value>& d,
                                                                const Tensor<Interval<typename E::Value>>& x,
                                                                const Shape& out_shape) {
  using S = Interval<typename E::Value>;
  if (x.shape.empty() || x.shape.back() != d.in || x.data.size() != static_cast<size_t>(numel(x.shape)))
    return std::nullopt;
  Shape expected = x.shape;
  expected.back() = d.out;
  if (expected != out_shape) return std::nullopt;
  const size_t lead = x.data.size() / static_cast<size_t>(d.in);
  Tensor<S> y;
  y.shape = std::move(expected);
  y.data.resize(lead * static_cast<size_t>(d.out));
  std::vector<double> lo(x.data.size()), hi(x.data.size());
  for (size_t i = 0; i < lo.size(); ++i) {
    const DInterval v = to_d(ctx, x.data[i]);
    lo[i] = v.lo, hi[i] = v.hi;
  }
  const bool ok = dense_linear_blocks(d, format_model(ctx.endpoints()), lead, lo.data(), hi.data(),
                                      [&](size_t k, DInterval b) { y.data[k] = ctx.make(b.lo, b.hi); });
  if (!ok) return std::nullopt;
  return y;
}

}  // namespace denote::ibp
