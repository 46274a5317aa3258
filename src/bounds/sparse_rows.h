// Internal: a weight matrix kept by its rows' nonzeros (CSR) when it has at least kSparseMinWeights
// weights and at most one in kSparseShare is nonzero (nn4sys's learned indexes: 3 of 41 million). IBP's
// prepared linear layers (src/bounds/ibp_dense.h) and verify's sampling chain (src/verify/dense_chain.h)
// read it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace denote::bounds {

inline constexpr int64_t kSparseShare = 8;
inline constexpr int64_t kSparseMinWeights = int64_t{1} << 16;

template <class V>
struct SparseRows {
  // Row o's nonzeros are val[row_start[o] .. row_start[o + 1]) at columns col[...].
  std::vector<int64_t> row_start;
  std::vector<int32_t> col;
  std::vector<V> val;
  int64_t most = 0;  // the most nonzeros of a row
  bool empty() const { return row_start.empty(); }
};

// w (out x in, row-major) by its rows' nonzeros, or empty where the matrix is small or not sparse enough.
template <class V>
SparseRows<V> sparse_rows_of(const std::vector<V>& w, int64_t out, int64_t in) {
  SparseRows<V> s;
  const int64_t total = static_cast<int64_t>(w.size());
  const int64_t nonzeros = static_cast<int64_t>(std::count_if(w.begin(), w.end(), [](V v) { return v != 0; }));
  if (total != out * in || total < kSparseMinWeights || nonzeros * kSparseShare > total) return s;
  s.row_start.assign(1, 0);
  s.col.reserve(static_cast<size_t>(nonzeros)), s.val.reserve(static_cast<size_t>(nonzeros));
  for (int64_t o = 0; o < out; ++o) {
    const V* row = w.data() + o * in;
    for (int64_t i = 0; i < in; ++i)
      if (row[i] != 0) s.col.push_back(static_cast<int32_t>(i)), s.val.push_back(row[i]);
    s.row_start.push_back(static_cast<int64_t>(s.col.size()));
    s.most = std::max(s.most, s.row_start[static_cast<size_t>(o + 1)] - s.row_start[static_cast<size_t>(o)]);
  }
  return s;
}

}  // namespace denote::bounds
