// Seeded random chains for tests (program/chain.h). Shapes are followed with an IrBuilder as the
// chain grows, so every drawn layer fits its input.
#include <cmath>

#include "denote/base/splitmix.h"
#include "denote/program/chain.h"
#include "denote/program/ir_builder.h"

namespace denote {

namespace {

constexpr Op kActivations[] = {Op::Relu, Op::Relu, Op::Tanh, Op::Sigmoid, Op::Softplus, Op::Gelu, Op::Erf, Op::Abs};

class Draw {
 public:
  explicit Draw(uint64_t seed) : rng_(seed) {}
  // Uniform in [0, n).
  int64_t below(int64_t n) { return static_cast<int64_t>(rng_.next() % static_cast<uint64_t>(n)); }
  bool coin(int64_t one_in) { return below(one_in) == 0; }
  // Uniform in [-scale, scale).
  double uniform(double scale) {
    const double u = static_cast<double>(rng_.next() >> 11) * 0x1.0p-53;
    return (2 * u - 1) * scale;
  }
  std::vector<double> values(int64_t n, double scale) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = uniform(scale);
    return v;
  }
  std::vector<double> positive(int64_t n) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = 1.0 + uniform(0.5);
    return v;
  }
  Op activation() { return kActivations[below(std::size(kActivations))]; }

 private:
  SplitMix64 rng_;
};

// A chain under construction with its current output shape.
class Grow {
 public:
  explicit Grow(Shape input) : x_(in_.input(input)) { chain_.input = std::move(input); }
  void push(Layer l) {
    x_ = apply_layer(in_, l, x_);
    chain_.layers.push_back(std::move(l));
  }
  Shape shape() const { return in_.shape_of(x_); }
  Chain take() { return std::move(chain_); }

 private:
  IrBuilder in_;
  Chain chain_;
  int64_t x_;
};

layer::Linear draw_linear(Draw& d, int64_t in, int64_t out) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(in));
  return {out, d.values(out * in, scale), d.values(out, scale)};
}

layer::LayerNorm draw_layernorm(Draw& d, const Shape& s) {
  const auto axis = d.below(static_cast<int64_t>(s.size()));
  const int64_t width = numel(s.begin() + axis, s.end());
  return {axis, d.positive(width), d.values(width, 0.5), 1e-5};
}

ConvConfig draw_conv_config(Draw& d, const Shape& s, int64_t channel_axis) {
  ConvConfig c;
  c.channel_axis = channel_axis;
  c.in_channels = s[static_cast<size_t>(channel_axis)];
  c.groups = c.in_channels % 2 == 0 && d.coin(2) ? 2 : 1;
  c.out_channels = c.groups * (1 + d.below(3));
  c.window.spatial_rank = 2;
  const bool asymmetric = d.coin(3);
  for (size_t i = 0; i < 2; ++i) {
    const int64_t dim = s[static_cast<size_t>(channel_axis) + 1 + i];
    const int64_t k = 1 + d.below(std::min<int64_t>(3, dim));
    const int64_t dil = k > 1 && 2 * (k - 1) + 1 <= dim && d.coin(3) ? 2 : 1;
    c.window.kernel.push_back(k);
    c.window.stride.push_back(1 + d.below(2));
    c.window.padding.push_back(d.below(2));
    c.dilation.push_back(dil);
    if (asymmetric) c.padding_after.push_back(d.below(3));
  }
  return c;
}

layer::Conv draw_conv(Draw& d, const Shape& s, int64_t channel_axis) {
  ConvConfig c = draw_conv_config(d, s, channel_axis);
  const int64_t fan_in = c.in_channels / c.groups * c.window.kernel[0] * c.window.kernel[1];
  const double scale = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return {c, d.values(c.out_channels * fan_in, scale), d.values(c.out_channels, scale)};
}

// A 2-D pooling window that fits the last two axes of s (which are at least 2).
WindowConfig draw_window(Draw& d) {
  const int64_t stride = 1 + d.below(2);
  return WindowConfig{2, {2, 2}, {stride, stride}, {0, 0}};
}

void conv_block(Draw& d, Grow& g, int64_t channel_axis) {
  g.push(draw_conv(d, g.shape(), channel_axis));
  g.push(layer::Activation{d.activation()});
  if (d.coin(2)) {
    const int64_t ch = g.shape()[static_cast<size_t>(channel_axis)];
    g.push(layer::BatchNorm{channel_axis, d.positive(ch), d.values(ch, 0.5), d.values(ch, 0.5), d.positive(ch), 1e-5});
  }
  const Shape s = g.shape();
  if (s[s.size() - 1] >= 2 && s[s.size() - 2] >= 2 && d.coin(2)) {
    if (d.coin(2)) g.push(layer::MaxPool{draw_window(d)});
    else g.push(layer::AvgPool{draw_window(d)});
  }
}

}  // namespace

Chain random_mlp_chain(uint64_t seed) {
  Draw d(seed);
  int64_t width = 1 + d.below(6);
  Grow g(d.coin(2) ? Shape{1 + d.below(3), width} : Shape{width});
  const int64_t depth = 1 + d.below(4);
  for (int64_t k = 0; k < depth; ++k) {
    const int64_t out = 1 + d.below(8);
    g.push(draw_linear(d, width, out));
    width = out;
    if (k + 1 < depth || d.coin(2)) g.push(layer::Activation{d.activation()});
    if (d.coin(4)) g.push(draw_layernorm(d, g.shape()));
  }
  const auto last = static_cast<int64_t>(g.shape().size()) - 1;
  if (d.coin(3)) g.push(layer::Softmax{last});
  else if (d.coin(3)) g.push(layer::LogSoftmax{last});
  return g.take();
}

Chain random_conv_chain(uint64_t seed) {
  Draw d(seed);
  const bool batched = d.coin(2);
  const int64_t channel_axis = batched ? 1 : 0;
  const int64_t c = 1 + d.below(3), h = 3 + d.below(5), w = 3 + d.below(5);
  Grow g(batched ? Shape{1 + d.below(2), c, h, w} : Shape{c, h, w});
  const int64_t blocks = 1 + d.below(2);
  for (int64_t k = 0; k < blocks; ++k) conv_block(d, g, channel_axis);
  const Shape s = g.shape();
  if (batched) g.push(layer::Reshape{{s[0], numel(s) / s[0]}});
  else g.push(layer::Flatten{});
  g.push(draw_linear(d, g.shape().back(), 1 + d.below(5)));
  if (d.coin(2)) g.push(layer::Activation{d.activation()});
  return g.take();
}

}  // namespace denote
