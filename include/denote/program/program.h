// Programs: a model is one function template written against an interpreter interface (tagless
// final), so the same source runs eagerly on values (Eager<Ctx>, program/eager.h) or builds a
// checked graph (IrBuilder, program/ir_builder.h: the seed's lowerForwardToIR).
//
//   template <class I>
//   typename I::Value mlp(I& in, typename I::Value x) {
//     auto h = nn::relu(in, in.linear(x, 5, W1, b1));        // W1: [5, 4] row-major, b1: [5]
//     return nn::tanh(in, nn::sum(in, in.linear(h, 3, W2, b2)));
//   }
//   auto fn = [](auto& in, auto x) { return mlp(in, x); };
//   Result<Model> m = lower(fn, {4});                              // program/ir_builder.h
//   F64Context ctx;
//   auto y = run_eager(ctx, fn, Tensor<double>{{4}, x0});          // program/eager.h
//
// An interpreter I (concept Interpreter) provides
//   I::Value                                     a value (a tensor eagerly, a node id when lowering)
//   in.input(Shape)                              the next graph input
//   in.apply(Op, std::vector<Value>, Attrs = {}) any attribute-only op of the op table
//   in.constant(shape, values)                   a payload constant
//   in.linear(x, out_dim, W, b)                  parameterised layers, parameters as f64
//   in.conv(x, ConvConfig, W, b)
//   in.batch_norm(x, channel_axis, gamma, beta, mean, var, eps)
//   in.layernorm(x, axis, gamma, beta, eps)
//   in.shape_of(x)                               the value's shape (for reshape, flatten ...)
//   in.status()                                  the first error (sticky: later calls do nothing)
// Each call is one step and one node: step k of an eager run is node k of the lowered graph, so an
// error names the same position both ways. The free functions in denote::nn (relu, add, matmul,
// reshape, softmax ...) are written once over any interpreter; interpreters built on nn::Layers
// find them by argument-dependent lookup.
#pragma once

#include <concepts>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "denote/base/status.h"
#include "denote/program/step.h"

namespace denote {

template <class I>
concept Interpreter = requires(I& in, typename I::Value v, Shape s, std::vector<double> w) {
  { in.input(s) } -> std::same_as<typename I::Value>;
  { in.apply(Op::Relu, std::vector<typename I::Value>{v}) } -> std::same_as<typename I::Value>;
  { in.apply(Op::Softmax, std::vector<typename I::Value>{v}, Attrs{AxisAttrs{0}}) } -> std::same_as<typename I::Value>;
  { in.constant(s, w) } -> std::same_as<typename I::Value>;
  { in.linear(v, int64_t{1}, w, w) } -> std::same_as<typename I::Value>;
  { in.conv(v, ConvConfig{}, w, w) } -> std::same_as<typename I::Value>;
  { in.batch_norm(v, int64_t{0}, w, w, w, w, 1e-5) } -> std::same_as<typename I::Value>;
  { in.layernorm(v, int64_t{0}, w, w, 1e-5) } -> std::same_as<typename I::Value>;
  { in.shape_of(v) } -> std::convertible_to<Shape>;
  { in.status() } -> std::convertible_to<Status>;
};

namespace nn {

// The interface methods of an interpreter built on steps (CRTP): each builds the step of its call
// (program/step.h) and hands it to Self::emit(Step, std::vector<Value> parents).
template <class Self, class V>
class Layers {
 public:
  using Value = V;

  Value input(Shape shape) { return self().emit(input_step(std::move(shape)), {}); }
  Value apply(Op op, std::vector<Value> parents, Attrs attrs = NoAttrs{}) {
    return self().emit(op_step(op, std::move(attrs)), std::move(parents));
  }
  Value constant(Shape shape, std::vector<double> values) {
    return self().emit(const_step(std::move(shape), std::move(values)), {});
  }
  Value linear(Value x, int64_t out_dim, std::vector<double> weight, std::vector<double> bias) {
    Step s = linear_step(self().shape_of(x), out_dim, std::move(weight), std::move(bias));
    return self().emit(std::move(s), one(std::move(x)));
  }
  Value conv(Value x, ConvConfig config, std::vector<double> weight, std::vector<double> bias) {
    Step s = conv_step(self().shape_of(x), std::move(config), std::move(weight), std::move(bias));
    return self().emit(std::move(s), one(std::move(x)));
  }
  Value batch_norm(Value x, int64_t channel_axis, std::vector<double> gamma, std::vector<double> beta,
                   std::vector<double> mean, std::vector<double> var, double eps = 1e-5) {
    Step s = batch_norm_step(channel_axis, std::move(gamma), std::move(beta), std::move(mean), std::move(var), eps);
    return self().emit(std::move(s), one(std::move(x)));
  }
  Value layernorm(Value x, int64_t axis, std::vector<double> gamma, std::vector<double> beta, double eps = 1e-5) {
    Step s = layernorm_step(self().shape_of(x), axis, std::move(gamma), std::move(beta), eps);
    return self().emit(std::move(s), one(std::move(x)));
  }

 private:
  Self& self() { return static_cast<Self&>(*this); }
  static std::vector<Value> one(Value x) {
    std::vector<Value> v;
    v.push_back(std::move(x));
    return v;
  }
};

template <class I>
using ValueOf = typename I::Value;

// One attribute-only op on one or two values.
template <class I>
ValueOf<I> op1(I& in, Op op, ValueOf<I> x, Attrs attrs = NoAttrs{}) {
  std::vector<ValueOf<I>> ps;
  ps.push_back(std::move(x));
  return in.apply(op, std::move(ps), std::move(attrs));
}
template <class I>
ValueOf<I> op2(I& in, Op op, ValueOf<I> x, ValueOf<I> y) {
  std::vector<ValueOf<I>> ps;
  ps.push_back(std::move(x));
  ps.push_back(std::move(y));
  return in.apply(op, std::move(ps));
}

#define DENOTE_NN_UNARY(fn, OpName) \
  template <class I>                \
  ValueOf<I> fn(I& in, ValueOf<I> x) { return op1(in, Op::OpName, std::move(x)); }
DENOTE_NN_UNARY(relu, Relu)
DENOTE_NN_UNARY(tanh, Tanh)
DENOTE_NN_UNARY(sigmoid, Sigmoid)
DENOTE_NN_UNARY(exp, Exp)
DENOTE_NN_UNARY(log, Log)
DENOTE_NN_UNARY(sqrt, Sqrt)
DENOTE_NN_UNARY(rsqrt, Rsqrt)
DENOTE_NN_UNARY(inv, Inv)
DENOTE_NN_UNARY(abs, Abs)
DENOTE_NN_UNARY(neg, Neg)
DENOTE_NN_UNARY(sin, Sin)
DENOTE_NN_UNARY(cos, Cos)
DENOTE_NN_UNARY(erf, Erf)
DENOTE_NN_UNARY(gelu, Gelu)
DENOTE_NN_UNARY(softplus, Softplus)
DENOTE_NN_UNARY(detach, Detach)
DENOTE_NN_UNARY(sum, Sum)
#undef DENOTE_NN_UNARY

#define DENOTE_NN_BINARY(fn, OpName) \
  template <class I>                 \
  ValueOf<I> fn(I& in, ValueOf<I> x, ValueOf<I> y) { return op2(in, Op::OpName, std::move(x), std::move(y)); }
DENOTE_NN_BINARY(add, Add)
DENOTE_NN_BINARY(sub, Sub)
DENOTE_NN_BINARY(mul, MulElem)
DENOTE_NN_BINARY(div, Div)
DENOTE_NN_BINARY(pow, Pow)
DENOTE_NN_BINARY(maximum, MaxElem)
DENOTE_NN_BINARY(minimum, MinElem)
DENOTE_NN_BINARY(matmul, Matmul)
DENOTE_NN_BINARY(mse_loss, MseLoss)
#undef DENOTE_NN_BINARY

#define DENOTE_NN_AXIS(fn, OpName) \
  template <class I>               \
  ValueOf<I> fn(I& in, ValueOf<I> x, int64_t axis) { return op1(in, Op::OpName, std::move(x), AxisAttrs{axis}); }
DENOTE_NN_AXIS(softmax, Softmax)
DENOTE_NN_AXIS(log_softmax, LogSoftmax)
DENOTE_NN_AXIS(reduce_sum, ReduceSum)
DENOTE_NN_AXIS(reduce_mean, ReduceMean)
#undef DENOTE_NN_AXIS

template <class I>
ValueOf<I> clamp_min(I& in, ValueOf<I> x, double bound) {
  return op1(in, Op::ClampMin, std::move(x), ClampAttrs{bound});
}
// Layer norm over x.shape[axis:] without affine parameters.
template <class I>
ValueOf<I> normalize(I& in, ValueOf<I> x, int64_t axis) {
  return op1(in, Op::Layernorm, std::move(x), AxisAttrs{axis});
}
template <class I>
ValueOf<I> reshape(I& in, ValueOf<I> x, Shape to) {
  Shape from = in.shape_of(x);
  return op1(in, Op::Reshape, std::move(x), ReshapeAttrs{std::move(from), std::move(to)});
}
// Row-major flattening of every axis: [numel].
template <class I>
ValueOf<I> flatten(I& in, ValueOf<I> x) {
  Shape from = in.shape_of(x);
  return op1(in, Op::Flatten, std::move(x), ValueShapeAttrs{std::move(from)});
}
template <class I>
ValueOf<I> broadcast_to(I& in, ValueOf<I> x, Shape to) {
  Shape from = in.shape_of(x);
  return op1(in, Op::BroadcastTo, std::move(x), BroadcastAttrs{std::move(from), std::move(to)});
}
template <class I>
ValueOf<I> permute(I& in, ValueOf<I> x, std::vector<int64_t> perm) {
  return op1(in, Op::Permute, std::move(x), PermAttrs{std::move(perm)});
}
template <class I>
ValueOf<I> transpose(I& in, ValueOf<I> x, int64_t axis1, int64_t axis2) {
  return op1(in, Op::Transpose, std::move(x), TransposeAttrs{axis1, axis2});
}
template <class I>
ValueOf<I> concat(I& in, std::vector<ValueOf<I>> xs, int64_t axis) {
  return in.apply(Op::Concat, std::move(xs), AxisAttrs{axis});
}
template <class I>
ValueOf<I> max_pool(I& in, ValueOf<I> x, WindowConfig window) {
  return op1(in, Op::MaxPool, std::move(x), std::move(window));
}
template <class I>
ValueOf<I> avg_pool(I& in, ValueOf<I> x, WindowConfig window) {
  return op1(in, Op::AvgPool, std::move(x), std::move(window));
}

}  // namespace nn

namespace program_detail {

// The outputs of a model function: its Value or std::vector<Value>, or the interpreter's first error.
template <class I, class R>
Result<std::vector<typename I::Value>> outputs(I& in, R out) {
  DENOTE_RETURN_IF_ERROR(Status(in.status()));
  if constexpr (std::is_same_v<R, typename I::Value>) {
    std::vector<typename I::Value> outs;
    outs.push_back(std::move(out));
    return outs;
  } else {
    return out;
  }
}

}  // namespace program_detail

// Runs a one-input model function on interpreter `in`: x = in.input(input), then fn(in, x); fn
// returns a Value or a std::vector<Value> (the outputs). Returns the outputs or the first error.
// (Two names, not overloads: a generic lambda cannot be asked which form it takes.)
template <class I, class F>
Result<std::vector<typename I::Value>> run_program(I& in, F&& fn, const Shape& input) {
  auto x = in.input(input);
  return program_detail::outputs(in, fn(in, std::move(x)));
}

// The same for a model function of several inputs: fn(in, std::vector<Value> xs), one input per shape.
template <class I, class F>
Result<std::vector<typename I::Value>> run_program_multi(I& in, F&& fn, const std::vector<Shape>& inputs) {
  std::vector<typename I::Value> xs;
  for (const Shape& s : inputs) xs.push_back(in.input(s));
  return program_detail::outputs(in, fn(in, std::move(xs)));
}

}  // namespace denote
