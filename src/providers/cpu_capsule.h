// What every checked cpu provider (reference, openblas, avx2) states the same way: the capsule's
// identity, the shape contract the evaluator driver guards, the GEMM tolerance, the device list.
// Each provider adds its own layout and value contracts and its numerical policy.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "denote/plan/capsule.h"

namespace denote::cpu_capsule {

// The error bound of a contraction summed in an implementation-defined order (BLAS, FMA chains).
inline constexpr const char* kContractionTolerance =
    "|y - ref| <= 2 gamma(k+1) (sum |w x| + |b|), gamma(n) = n u / (1 - n u), "
    "u = unit roundoff of the value type, k = terms per output";

// A checked capsule "provider.op" on the cpu whose output shape the evaluator driver checks;
// `payload_checked`: the provider's kernels also run the reference rule's payload checks.
inline KernelCapsule checked(std::string_view provider, BackendOp op, bool payload_checked) {
  KernelCapsule c;
  c.op = op;
  c.name = fmt::format("{}.{}", provider, backend_op_name(op));
  c.provider = std::string(provider);
  c.device = "cpu";
  c.trust = Trust::Checked;
  c.shape = {std::string("output shape = the op's shape rule on the actual parent shapes = the declared shape") +
                 (payload_checked ? "; payload checked by the reference rule's checks" : ""),
             {EvidenceKind::RuntimeGuard, "evaluator driver: infer_shape and produced-vs-declared check"}};
  return c;
}

// The devices of a cpu provider.
inline std::vector<std::string> cpu_only() { return {"cpu"}; }

}  // namespace denote::cpu_capsule
