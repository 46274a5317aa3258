#include "denote/autodiff/grad.h"

#include "blas_linear.h"

namespace denote {

std::optional<GradWrt> parse_grad_wrt(std::string_view text) {
  if (text == "inputs") return GradWrt::Inputs;
  if (text == "params") return GradWrt::Params;
  if (text == "all") return GradWrt::All;
  return std::nullopt;
}

std::optional<GradKernels> parse_grad_kernels(std::string_view text) {
  if (text == "exact") return GradKernels::Exact;
  if (text == "openblas") return GradKernels::Blas;
  return std::nullopt;
}

bool grad_blas_available() { return ad::blas_linear_available(); }

}  // namespace denote
