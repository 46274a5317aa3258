// Explicit instantiation of the evaluator for BinaryContext (software binary formats).
#include "evaluator_impl.h"

namespace denote {
DENOTE_INSTANTIATE_EVAL(BinaryContext)
}  // namespace denote
