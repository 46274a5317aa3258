// Internal: one node's op-table rule under a context, without the evaluator's templates. Passes
// that walk a graph themselves (the typed interpreter) call it per node; it runs the rule (or the
// context's override) and reads the context's error channel. Defined in evaluator_impl.h and
// instantiated for every evaluation context by DENOTE_INSTANTIATE_EVAL.
//
//   rules::EvalArgs<double> a{node, parents, payload, out_shape, nullptr, options};
//   Result<Tensor<double>> v = detail::apply_table_rule(ctx, a);
#pragma once

#include "denote/scalar/binary_context.h"
#include "denote/scalar/native.h"
#include "denote/scalar/real_context.h"
#include "../ops/eval_args.h"

namespace denote::detail {

template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> apply_table_rule(Ctx& ctx, const rules::EvalArgs<typename Ctx::Scalar>& a);

extern template Result<Tensor<double>> apply_table_rule<F64Context>(F64Context&, const rules::EvalArgs<double>&);
extern template Result<Tensor<float>> apply_table_rule<F32Context>(F32Context&, const rules::EvalArgs<float>&);
extern template Result<Tensor<FpWord>> apply_table_rule<BinaryContext>(BinaryContext&, const rules::EvalArgs<FpWord>&);

}  // namespace denote::detail
