// Internal: conv nodes under an MX policy (src/typed/mx_run.cc). Blocks run along the input channels:
// the activations are quantized once per call along their channel axis, the weights once per kernel
// position along their input channels. For each kernel position in row-major order, one MX product
// over every output position (the input at that tap, zero where it falls in the padding) gives the
// channel blocks' exact sums rounded to binary32 and summed in block order; the kernel positions'
// results are summed in binary32 in kernel order, then the bias. groups > 1 stays binary32.
#pragma once

#include <cstdint>
#include <vector>

#include "denote/ir/attrs.h"
#include "denote/ir/payload.h"
#include "denote/tensor/mx.h"
#include "typed/mx_dot.h"

namespace denote::mx_detail {

struct MxConvWeights {
  int64_t id = 0;
  ConvConfig config;
  std::vector<MxTensor> taps;      // per kernel position: [cout, cin] blocked along axis 1
  std::vector<Operand> operands;
};

// The weights of a groups == 1 conv record; nullopt for grouped convs.
Result<std::optional<MxConvWeights>> prepare_conv(int64_t id, const ConvRecord<double>& rec, const MxFormat& f,
                                                  int64_t block);

// x [lead, cin, spatial...] as binary32 values (doubles), out_shape the node's; y as binary32 values in
// out_shape's layout; bias in binary32 (may be empty).
Result<std::vector<float>> mx_conv(const MxConvWeights& w, const MxFormat& act, int64_t block, const Tensor<double>& x,
                                   const Shape& out_shape, const std::vector<float>& bias, uint32_t& flags);

}  // namespace denote::mx_detail
