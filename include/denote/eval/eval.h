// Denotation: evaluates a graph node by node into a value table, generic over a scalar context
// (F64Context, F32Context, BinaryContext for software binary formats, RealContext for MPFR, and
// later intervals). Runs the structural check first; each node's shape rule is applied to its
// parents' actual values before its evaluation rule runs, and the result must have the node's
// declared shape.
//
//   F64Context ctx;
//   std::vector<Tensor<double>> inputs = {Tensor<double>{{4}, {0.3, -0.2, 0.1, 0.4}}};
//   Result<ValueTable<double>> table = denote_all(graph, payload, inputs, ctx);
//   Result<Tensor<double>> y = denote(graph, payload, inputs, /*output_id=*/5, ctx);
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "denote/base/eval_options.h"
#include "denote/base/status.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/scalar/binary_context.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"
#include "denote/tensor/tensor.h"

namespace denote {

// `inputs` are given in the order of the graph's input nodes (Graph::input_ids()).
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_all(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                    std::span<const Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                                    const EvalOptions& options = {});

// Evaluates only the nodes `output_id` depends on and returns its value.
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> denote(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                            std::span<const Tensor<typename Ctx::Scalar>> inputs, int64_t output_id,
                                            Ctx& ctx, const EvalOptions& options = {});

// Evaluates what `output_ids` depend on and frees every other value after its last reader, so
// peak memory is the live set, not the whole table. The result has one entry per node; only the
// outputs hold values (the others are empty).
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_outputs(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                        std::span<const Tensor<typename Ctx::Scalar>> inputs,
                                                        std::span<const int64_t> output_ids, Ctx& ctx,
                                                        const EvalOptions& options = {});

// denote_all and denote_outputs that take the input tensors by value and move each into the value
// table instead of copying it (the table's input entries are the caller's buffers). For callers that
// build the inputs for one run, such as the Python module.
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_all_owned(const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                                                          std::vector<Tensor<typename Ctx::Scalar>> inputs, Ctx& ctx,
                                                          const EvalOptions& options = {});
template <class Ctx>
Result<ValueTable<typename Ctx::Scalar>> denote_outputs_owned(const Graph& g,
                                                              const Payload<typename Ctx::Scalar>& payload,
                                                              std::vector<Tensor<typename Ctx::Scalar>> inputs,
                                                              std::span<const int64_t> output_ids, Ctx& ctx,
                                                              const EvalOptions& options = {});

#define DENOTE_DECLARE_EVAL(Ctx)                                                                               \
  extern template Result<ValueTable<Ctx::Scalar>> denote_all<Ctx>(                                             \
      const Graph&, const Payload<Ctx::Scalar>&, std::span<const Tensor<Ctx::Scalar>>, Ctx&, const EvalOptions&); \
  extern template Result<Tensor<Ctx::Scalar>> denote<Ctx>(const Graph&, const Payload<Ctx::Scalar>&,           \
                                                          std::span<const Tensor<Ctx::Scalar>>, int64_t, Ctx&,   \
                                                          const EvalOptions&);                           \
  extern template Result<ValueTable<Ctx::Scalar>> denote_outputs<Ctx>(                                         \
      const Graph&, const Payload<Ctx::Scalar>&, std::span<const Tensor<Ctx::Scalar>>, std::span<const int64_t>, \
      Ctx&, const EvalOptions&);                                                                                 \
  extern template Result<ValueTable<Ctx::Scalar>> denote_all_owned<Ctx>(                                       \
      const Graph&, const Payload<Ctx::Scalar>&, std::vector<Tensor<Ctx::Scalar>>, Ctx&, const EvalOptions&);    \
  extern template Result<ValueTable<Ctx::Scalar>> denote_outputs_owned<Ctx>(                                   \
      const Graph&, const Payload<Ctx::Scalar>&, std::vector<Tensor<Ctx::Scalar>>, std::span<const int64_t>,     \
      Ctx&, const EvalOptions&);
DENOTE_DECLARE_EVAL(F64Context)
DENOTE_DECLARE_EVAL(F32Context)
DENOTE_DECLARE_EVAL(BinaryContext)
DENOTE_DECLARE_EVAL(RealContext)

}  // namespace denote
