// vjp and jvp instantiated for BinaryContext (src/autodiff/grad_impl.h).
#include "grad_impl.h"

namespace denote {
DENOTE_INSTANTIATE_GRAD(BinaryContext)
}  // namespace denote
