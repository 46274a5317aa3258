// Internal, temporary: ops whose evaluation rule is not written yet report an error (never a
// value). Each line disappears when its op's rule lands in its family's *_eval.h (sources, layout, matmul, window).
#pragma once

#include <fmt/format.h>

#include "../eval/eval_args.h"
#include "pending_macro.h"

namespace denote::rules {

DENOTE_PENDING(RandUniform)
DENOTE_PENDING(BernoulliMask)
DENOTE_PENDING(Custom)
DENOTE_PENDING(Permute)
DENOTE_PENDING(Transpose)
DENOTE_PENDING(Detach)
DENOTE_PENDING(BroadcastTo)
DENOTE_PENDING(Concat)
DENOTE_PENDING(Matmul)
DENOTE_PENDING(Conv)
DENOTE_PENDING(MaxPool)
DENOTE_PENDING(AvgPool)

}  // namespace denote::rules
