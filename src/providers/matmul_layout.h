// Internal: the batch matrices of a matmul node, for the providers' prepared kernels (reference and
// openblas, denote/plan/prepared.h): 1-D operands promoted and batch dims broadcast exactly as
// rules::matmul_dims does for eval_Matmul (src/ops/contraction_eval.h), computed once at compile time.
//
//   std::optional<MatmulLayout> l = matmul_layout(args);   // a [2, 1, 3, 8] x b [4, 8, 5]
//   // l->m == 3, l->k == 8, l->n == 5, l->batches() == 8; batch matrix t reads
//   // a + l->a_off[t] ([m, k]) and b + l->b_off[t] ([k, n]) and writes out + t * m * n
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "denote/plan/prepared.h"
#include "../ops/contraction_eval.h"

namespace denote::prepared {

struct MatmulLayout {
  int64_t m = 1, k = 1, n = 1;
  std::vector<int64_t> a_off, b_off;  // per batch matrix, in values: the first value of each operand
  int64_t batches() const { return static_cast<int64_t>(a_off.size()); }
};

// nullopt unless the node has two parents of rank >= 1 whose product has the node's element count.
template <class S>
std::optional<MatmulLayout> matmul_layout(const PrepareArgs<S>& a) {
  if (a.parent_shapes.size() != 2 || a.parent_shapes[0].empty() || a.parent_shapes[1].empty()) return std::nullopt;
  const rules::MatmulDims d = rules::matmul_dims(a.parent_shapes[0], a.parent_shapes[1]);
  MatmulLayout l;
  l.m = d.m;
  l.k = d.k;
  l.n = d.n;
  l.a_off = rules::strided_offsets(0, d.batch, d.a_strides);
  l.b_off = rules::strided_offsets(0, d.batch, d.b_strides);
  for (int64_t& o : l.a_off) o *= d.m * d.k;
  for (int64_t& o : l.b_off) o *= d.k * d.n;
  if (l.batches() * d.m * d.n != numel(a.out_shape)) return std::nullopt;
  return l;
}

}  // namespace denote::prepared
