// vjp and jvp instantiated for F64Context (src/autodiff/grad_impl.h).
#include "grad_impl.h"

namespace denote {
DENOTE_INSTANTIATE_GRAD(F64Context)
}  // namespace denote
