// Internal: evaluation rules of the window family (conv, max_pool, avg_pool).
#pragma once

#include "../eval/eval_args.h"

namespace denote::rules {}  // namespace denote::rules
