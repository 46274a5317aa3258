// Explicit instantiation of the evaluator for RealContext (MPFR at a chosen precision).
#include "evaluator_impl.h"

namespace denote {
DENOTE_INSTANTIATE_EVAL(RealContext)
}  // namespace denote
