// Chain: a sequential model spec (layers applied one after another, like torch.nn.Sequential),
// the seed's GraphSpec.Chain. apply_chain is written once over any interpreter (program.h): on an
// Eager<Ctx> it evaluates the chain directly, on an IrBuilder it lowers it (lower_chain). Each
// layer is one interpreter call, so layer k is node k + 1 of the lowered graph (node 0: the input).
//
//   Chain c{{4}, {layer::Linear{5, W1, b1}, layer::Activation{Op::Relu}, layer::Linear{3, W2, b2},
//                 layer::Softmax{0}}};
//   Result<Model> m = lower_chain(c);                       // input, linear, relu, linear, softmax
//   F64Context ctx;
//   Result<Tensor<double>> y = eval_chain(ctx, c, Tensor<double>{{4}, x0});
//   Chain r = random_conv_chain(/*seed=*/7);               // for tests: seeded random conv nets
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "denote/ir/model.h"
#include "denote/program/eager.h"
#include "denote/program/program.h"

namespace denote {

namespace layer {

// y = W x + b over the last axis; W is [out, in] row-major (PyTorch layout).
struct Linear {
  int64_t out = 0;
  std::vector<double> weight, bias;
};
// Any one-parent op without attributes: relu, tanh, sigmoid, gelu, softplus, erf, abs ...
struct Activation {
  Op op = Op::Relu;
};
// W is [out, in/groups, k1..kd] row-major, b is [out].
struct Conv {
  ConvConfig config;
  std::vector<double> weight, bias;
};
// Every axis flattened to one: [numel].
struct Flatten {};
struct Reshape {
  Shape shape;
};
struct MaxPool {
  WindowConfig window;
};
struct AvgPool {
  WindowConfig window;
};
// Inference batch norm over channel_axis; gamma.size() channels.
struct BatchNorm {
  int64_t channel_axis = 0;
  std::vector<double> gamma, beta, mean, var;
  double eps = 1e-5;
};
// Normalizes over x.shape[axis:]; gamma and beta have that many values each.
struct LayerNorm {
  int64_t axis = 0;
  std::vector<double> gamma, beta;
  double eps = 1e-5;
};
struct Softmax {
  int64_t axis = 0;
};
struct LogSoftmax {
  int64_t axis = 0;
};

}  // namespace layer

using Layer = std::variant<layer::Linear, layer::Activation, layer::Conv, layer::Flatten, layer::Reshape,
                           layer::MaxPool, layer::AvgPool, layer::BatchNorm, layer::LayerNorm, layer::Softmax,
                           layer::LogSoftmax>;

struct Chain {
  Shape input;
  std::vector<Layer> layers;
};

// One layer as one interpreter call.
template <class I>
typename I::Value apply_layer(I& in, const Layer& l, typename I::Value x) {
  using V = typename I::Value;
  struct Visit {
    I& in;
    V x;
    V operator()(const layer::Linear& a) { return in.linear(std::move(x), a.out, a.weight, a.bias); }
    V operator()(const layer::Activation& a) { return nn::op1(in, a.op, std::move(x)); }
    V operator()(const layer::Conv& a) { return in.conv(std::move(x), a.config, a.weight, a.bias); }
    V operator()(const layer::Flatten&) { return nn::flatten(in, std::move(x)); }
    V operator()(const layer::Reshape& a) { return nn::reshape(in, std::move(x), a.shape); }
    V operator()(const layer::MaxPool& a) { return nn::max_pool(in, std::move(x), a.window); }
    V operator()(const layer::AvgPool& a) { return nn::avg_pool(in, std::move(x), a.window); }
    V operator()(const layer::BatchNorm& a) {
      return in.batch_norm(std::move(x), a.channel_axis, a.gamma, a.beta, a.mean, a.var, a.eps);
    }
    V operator()(const layer::LayerNorm& a) { return in.layernorm(std::move(x), a.axis, a.gamma, a.beta, a.eps); }
    V operator()(const layer::Softmax& a) { return nn::softmax(in, std::move(x), a.axis); }
    V operator()(const layer::LogSoftmax& a) { return nn::log_softmax(in, std::move(x), a.axis); }
  };
  return std::visit(Visit{in, std::move(x)}, l);
}

// The chain's layers applied in order to x (a loop, no recursion).
template <class I>
typename I::Value apply_chain(I& in, const Chain& c, typename I::Value x) {
  for (const Layer& l : c.layers) x = apply_layer(in, l, std::move(x));
  return x;
}

// The chain lowered through IrBuilder: input node 0, then one node per layer; checked like
// `denote check` (the first error names its node).
Result<Model> lower_chain(const Chain& c);

// The chain evaluated directly (Eager<Ctx>) on x, which must have shape c.input.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> eval_chain(Ctx& ctx, const Chain& c, Tensor<typename Ctx::Scalar> x,
                                                EvalOptions options = {}) {
  DENOTE_ASSIGN_OR_RETURN(auto outs, run_eager(ctx, [&](auto& in, auto v) { return apply_chain(in, c, std::move(v)); },
                                               std::move(x), options));
  return std::move(outs.front());
}

// "[2, 4] -> linear(3) -> relu -> layernorm(axis=1) -> softmax(axis=1)", for test messages.
std::string describe(const Chain& c);

// Seeded random chains for tests (splitmix64 streams; the same seed gives the same chain).
// MLPs: input [d] or [batch, d], 1-4 linear layers of width 1-8 with activations (relu, tanh,
// sigmoid, softplus, gelu, erf, abs), sometimes a layernorm, sometimes a final softmax or
// log_softmax. Conv nets: input [C, H, W] or [N, C, H, W], 1-2 blocks of conv (kernel, stride,
// padding, dilation, asymmetric padding and groups drawn) + activation, sometimes batch norm and
// max or avg pooling, then flatten (or reshape to [N, rest]) and a linear head. Weights are
// uniform in +-1/sqrt(fan_in).
Chain random_mlp_chain(uint64_t seed);
Chain random_conv_chain(uint64_t seed);

}  // namespace denote
