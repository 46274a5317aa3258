// The native scalar context that runs a value type S on the cpu: F64Context for double,
// F32Context for float. The executor runs storage nodes, and the reference provider every node,
// in this context.
//
//   NativeContextFor<float> ctx;   // F32Context
#pragma once

#include <type_traits>

#include "denote/scalar/native.h"

namespace denote {

template <class S>
using NativeContextFor = std::conditional_t<std::is_same_v<S, double>, F64Context, F32Context>;

}  // namespace denote
