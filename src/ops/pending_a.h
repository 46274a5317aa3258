// Internal, temporary: ops whose evaluation rule is not written yet report an error (never a
// value). Each line disappears when its op's rule lands in its family's *_eval.h (pointwise, reductions, normalization).
#pragma once

#include <fmt/format.h>

#include "../eval/eval_args.h"
#include "pending_macro.h"

namespace denote::rules {

DENOTE_PENDING(MaxElem)
DENOTE_PENDING(MinElem)
DENOTE_PENDING(Div)
DENOTE_PENDING(DivTrunc)
DENOTE_PENDING(DivFloor)
DENOTE_PENDING(Remainder)
DENOTE_PENDING(Pow)
DENOTE_PENDING(MseLoss)
DENOTE_PENDING(SafeLog)
DENOTE_PENDING(Abs)
DENOTE_PENDING(Sqrt)
DENOTE_PENDING(Inv)
DENOTE_PENDING(Sigmoid)
DENOTE_PENDING(Exp)
DENOTE_PENDING(Log)
DENOTE_PENDING(Sin)
DENOTE_PENDING(Cos)
DENOTE_PENDING(Softplus)
DENOTE_PENDING(Neg)
DENOTE_PENDING(Rsqrt)
DENOTE_PENDING(Erf)
DENOTE_PENDING(Gelu)
DENOTE_PENDING(ClampMin)
DENOTE_PENDING(Cast)
DENOTE_PENDING(ReduceSum)
DENOTE_PENDING(ReduceMean)
DENOTE_PENDING(BatchNormEval)
DENOTE_PENDING(Softmax)
DENOTE_PENDING(LogSoftmax)
DENOTE_PENDING(HardMaskedSoftmax)
DENOTE_PENDING(Layernorm)

}  // namespace denote::rules
