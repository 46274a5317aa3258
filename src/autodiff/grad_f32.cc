// vjp and jvp instantiated for F32Context (src/autodiff/grad_impl.h).
#include "grad_impl.h"

namespace denote {
DENOTE_INSTANTIATE_GRAD(F32Context)
}  // namespace denote
