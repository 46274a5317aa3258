// Internal: evaluation rules of the normalization family.
#pragma once

#include "../eval/eval_args.h"

namespace denote::rules {}  // namespace denote::rules
