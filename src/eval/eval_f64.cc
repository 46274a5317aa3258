// Explicit instantiation of the evaluator for F64Context.
#include "evaluator_impl.h"

namespace denote {
DENOTE_INSTANTIATE_EVAL(F64Context)
}  // namespace denote
