// Inputs and parameters entering an arithmetic context (run, grad, jvp, bench, sample): each value
// through the context's from_double, rounded in its mode. A value the format cannot hold (NaN or
// inf in e2m1fn, a format without them) is an error naming the input or the payload, not a silent
// 0: the context reports it on its error channel, read here after each tensor (the evaluator
// clears that channel per node, so it must be read before evaluating).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "denote/base/status.h"
#include "denote/ir/payload.h"
#include "denote/tensor/tensor.h"

namespace denote::cli {

template <class Ctx>
Status context_error(Ctx& ctx, std::string_view what, std::string_view field) {
  if constexpr (requires { ctx.take_error(); })
    if (std::string err = ctx.take_error(); !err.empty())
      return error_status(ErrorCode::kInvalidInput, fmt::format("{}: {}", what, err)).with_field(std::string(field));
  return ok_status();
}

// t in ctx; `what` names it in an error ("input 0", "tangent 1", "cotangent").
template <class Ctx>
Result<Tensor<typename Ctx::Scalar>> tensor_in(Ctx& ctx, const Tensor<double>& t, std::string_view what,
                                               std::string_view field) {
  Tensor<typename Ctx::Scalar> r;
  r.shape = t.shape;
  r.data.reserve(t.data.size());
  for (double v : t.data) r.data.push_back(ctx.from_double(v));
  DENOTE_RETURN_IF_ERROR(context_error(ctx, what, field));
  return r;
}

// Each tensor in ctx; errors name "<field> k".
template <class Ctx>
Result<std::vector<Tensor<typename Ctx::Scalar>>> tensors_in(Ctx& ctx, const std::vector<Tensor<double>>& ts,
                                                            std::string_view field) {
  std::vector<Tensor<typename Ctx::Scalar>> r;
  r.reserve(ts.size());
  for (size_t k = 0; k < ts.size(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(auto t, tensor_in(ctx, ts[k], fmt::format("{} {}", field, k), field));
    r.push_back(std::move(t));
  }
  return r;
}

template <class Ctx>
Result<Payload<typename Ctx::Scalar>> payload_in(Ctx& ctx, const Payload<double>& p) {
  Payload<typename Ctx::Scalar> r = convert_payload<typename Ctx::Scalar>(p, [&](double v) { return ctx.from_double(v); });
  DENOTE_RETURN_IF_ERROR(context_error(ctx, "a parameter", "payload"));
  return r;
}

}  // namespace denote::cli
