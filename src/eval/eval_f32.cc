// Explicit instantiation of the evaluator for F32Context.
#include "evaluator_impl.h"

namespace denote {
DENOTE_INSTANTIATE_EVAL(F32Context)
}  // namespace denote
