// Step: what one interpreter call of a program means as a graph node (op, attrs, declared shape,
// parameter record), before it has an id. Every interpreter (program.h) turns its calls into steps
// with the constructors below and checks them with check_step, so an eager run and a lowering see
// the same node and refuse it with the same error; only the context of the message differs
// ("program step 3 (linear): ..." eagerly, "IR graph: node 3: ... (Node(...))" when lowering).
//
//   Step s = linear_step(/*input shape=*/{4}, /*out_dim=*/3, W, b);   // W: 12 values, b: 3
//   Result<Shape> out = check_step(s, std::vector<Shape>{{4}});      // [3]
//   store_record(s.record, /*id=*/7, payload, [](double v) { return v; });
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>
#include <variant>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"

namespace denote {

// The parameter record of a step (none for attribute-only ops), in f64 as the program wrote it.
using StepRecord = std::variant<std::monostate, ConstRecord<double>, LinearRecord<double>, ConvRecord<double>,
                                BatchNormRecord<double>, LayerNormRecord<double>>;

struct Step {
  Node node;              // op, attrs and (when `declared`) out_shape; id and parents are set by the interpreter
  bool declared = false;  // node.out_shape is given (input, linear); otherwise the op's shape rule infers it
  StepRecord record;
  Status refused;         // an error before any check (an op that needs an interpreter method of its own)
};

// A graph input of the given shape.
Step input_step(Shape shape);
// An attribute-only op (anything but input, the payload-backed ops and random sources, which are
// refused with a hint to the interpreter method that takes their parameters).
Step op_step(Op op, Attrs attrs);
// Payload constant (flat row-major values).
Step const_step(Shape shape, std::vector<double> values);
// y = W x + b over the last axis of an input of shape `in`; W is [out_dim, in.back()] row-major.
Step linear_step(const Shape& in, int64_t out_dim, std::vector<double> weight, std::vector<double> bias);
// Convolution of an input of shape `in`; W is [out, in/groups, k1..kd] row-major, b is [out].
Step conv_step(const Shape& in, ConvConfig config, std::vector<double> weight, std::vector<double> bias);
// Inference batch norm over `channel_axis` with gamma.size() channels.
Step batch_norm_step(int64_t channel_axis, std::vector<double> gamma, std::vector<double> beta,
                     std::vector<double> mean, std::vector<double> var, double eps);
// Layer norm over in[axis:] with affine parameters of numel(in[axis:]) values each.
Step layernorm_step(const Shape& in, int64_t axis, std::vector<double> gamma, std::vector<double> beta, double eps);

// Checks the step as `denote check` checks a node whose parents have `parent_shapes`: structure
// (arity, attrs kind), the op's shape rule, then the payload record (counts, in_dim, finite
// parameters, eps ...). Returns the node's shape, or the first error with its code, field and
// detail and no node attached (the interpreter attaches its own context).
Result<Shape> check_step(const Step& step, std::span<const Shape> parent_shapes);

// Stores the step's record (if any) in `p` under node `id`, each value mapped through `convert`
// (e.g. ctx.from_double).
template <class T, class F>
void store_record(const StepRecord& record, int64_t id, Payload<T>& p, F&& convert) {
  auto vec = [&](const std::vector<double>& v) {
    std::vector<T> out;
    out.reserve(v.size());
    for (double x : v) out.push_back(convert(x));
    return out;
  };
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, ConstRecord<double>>) p.consts[id] = {vec(r.values)};
        else if constexpr (std::is_same_v<R, LinearRecord<double>>)
          p.linear[id] = {r.out_dim, r.in_dim, vec(r.weight), vec(r.bias)};
        else if constexpr (std::is_same_v<R, ConvRecord<double>>)
          p.conv[id] = {r.config, r.input_spatial, vec(r.weight), vec(r.bias)};
        else if constexpr (std::is_same_v<R, BatchNormRecord<double>>)
          p.batch_norm[id] = {vec(r.gamma), vec(r.beta), vec(r.mean), vec(r.var), r.eps};
        else if constexpr (std::is_same_v<R, LayerNormRecord<double>>)
          p.layernorm[id] = {r.normalized_shape, vec(r.gamma), vec(r.beta), r.eps};
      },
      record);
}

}  // namespace denote
