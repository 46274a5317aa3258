// Internal: a network that is a chain of dense layers, evaluated for many points at once (the
// batched sampling of branch and bound, src/verify/verify.cc).
//
// Recognised: input [-> add/sub/mul/div by constants of the input's size or of one element (the
// input's normalisation, folded into the first layer)] [-> layout ops that keep the element order]
// -> ((linear | matmul with a constant [-> add/sub of a constant]) [-> relu])+ ending at the output
// (ACAS Xu's ONNX networks, the mnistfc MLPs, eran's (x - mean) / std MLPs, nn4sys's learned indices
// and marabou-cifar10's MatMul layers). Evaluated in binary32 on the kernels layer's gemm
// (src/kernels/gemm.h: OpenBLAS's sgemm, or loops at level 0 or without it): fast, not the network's
// exact f32 evaluation (another summation order), so a point it flags is only a
// candidate, re-checked by the evaluator and MPFR (falsify.h's try_point).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "bounds/sparse_rows.h"
#include "denote/verify/verify.h"

namespace denote::verify_detail {

class DenseChain {
 public:
  // nullopt when the model is not such a chain.
  static std::optional<DenseChain> of(const Model& m);
  int64_t inputs() const { return inputs_; }
  int64_t outputs() const { return layers_.empty() ? 0 : layers_.back().out; }
  // Y (rows x outputs()) from X (rows x inputs()), row-major; scratch is reused across calls.
  void eval(const std::vector<float>& X, int64_t rows, std::vector<float>& Y, std::vector<float>& scratch) const;

  struct Layer {
    int64_t in = 0, out = 0;
    std::vector<float> w, b;  // w: out x in (row-major), b: out; w empty when the layer is kept sparse
    bool relu = false;
    bounds::SparseRows<float> rows;  // a large sparse layer by its rows' nonzeros (src/bounds/sparse_rows.h)
  };

 private:
  int64_t inputs_ = 0;  // the input's normalisation is folded into the first layer
  std::vector<Layer> layers_;
  friend struct ChainPass;
};

}  // namespace denote::verify_detail
