// The maintained kernel providers (src/providers/), for code that asks about one by name: tests,
// benchmarks, tools. The planner and executor never include this header: they see providers only
// through the registered list (denote/plan/registry.h: compiled_providers()).
//
//   if (openblas_built()) handlers = openblas_handlers();
#pragma once

#include <vector>

#include "denote/plan/executor.h"
#include "denote/plan/registry.h"

namespace denote {

// reference: one capsule per backend op on the cpu, computed by the generic evaluator's rules.
CapsuleModule reference_module();
std::vector<KernelHandler> reference_handlers();
void register_reference_provider(ProviderList& out);

// openblas: BLAS-backed linear, matmul, conv, add and sub (built when OpenBLAS is found).
bool openblas_built();
CapsuleModule openblas_module();                  // empty capsule list when OpenBLAS is not built
std::vector<KernelHandler> openblas_handlers();   // empty when OpenBLAS is not built
void register_openblas_provider(ProviderList& out);

// avx2: linear and conv on a register-blocked FMA GEMM (registered only on CPUs with AVX2 and FMA).
CapsuleModule avx2_module();                  // empty capsule list on other CPUs
std::vector<KernelHandler> avx2_handlers();   // empty on other CPUs
void register_avx2_provider(ProviderList& out);

}  // namespace denote
