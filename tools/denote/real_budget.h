// The inputs and parameters that `--arith real` converts to MPFR numbers before evaluating, checked
// against --max-memory first: each takes its limbs (precision rounded up to 64 bits) plus the
// number's header, as the evaluator's own accounting of values (src/eval/evaluator_impl.h) counts
// them. `run --arith real --precision 1000000` under `--max-memory 200M` aborted inside GMP at 5.7 GB;
// now it is a resource error naming the option and the bytes (exit 1).
#pragma once

#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/scalar/arith.h"
#include "denote/scalar/real_context.h"
#include "denote/tensor/tensor.h"

namespace denote::cli {

inline int64_t payload_values(const Payload<double>& p) {
  int64_t n = 0;
  for (const auto& [id, r] : p.consts) n += static_cast<int64_t>(r.values.size());
  for (const auto& [id, r] : p.linear) n += static_cast<int64_t>(r.weight.size() + r.bias.size());
  for (const auto& [id, r] : p.conv) n += static_cast<int64_t>(r.weight.size() + r.bias.size());
  for (const auto& [id, r] : p.batch_norm)
    n += static_cast<int64_t>(r.gamma.size() + r.beta.size() + r.mean.size() + r.var.size());
  for (const auto& [id, r] : p.layernorm) n += static_cast<int64_t>(r.gamma.size() + r.beta.size());
  return n;
}

inline Status check_real_budget(const Model& m, const std::vector<Tensor<double>>& inputs, const ArithSpec& spec,
                                int64_t budget) {
  if (spec.kind != ArithKind::Real) return ok_status();
  int64_t values = payload_values(m.payload);
  for (const auto& t : inputs) values += static_cast<int64_t>(t.data.size());
  const int64_t each = static_cast<int64_t>(sizeof(RealScalar)) + (spec.precision + 63) / 64 * 8;
  if (values <= budget / each) return ok_status();
  return error_status(ErrorCode::kResource,
                      fmt::format("--arith real --precision {}: the {} inputs and parameters take {} bytes as MPFR "
                                  "numbers ({} each), above the --max-memory budget of {} bytes",
                                  spec.precision, values, static_cast<double>(values) * static_cast<double>(each), each,
                                  budget))
      .with_field("precision");
}

}  // namespace denote::cli
