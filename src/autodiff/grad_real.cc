// vjp and jvp instantiated for RealContext (src/autodiff/grad_impl.h).
#include "grad_impl.h"

namespace denote {
DENOTE_INSTANTIATE_GRAD(RealContext)
}  // namespace denote
