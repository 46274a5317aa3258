// Human-readable renderings of a graph: the listing ("1: linear(payload=node_id) parents=[0]
// out=[5]") and GraphViz DOT. Neither is a serialization format; use torchlean.ir.v1 JSON for that.
//
//   std::cout << format_listing(g);
//   std::ofstream("g.dot") << format_dot(g);
#pragma once

#include <string>

#include "denote/ir/graph.h"
#include "denote/tensor/tensor.h"

namespace denote {

std::string format_listing(const Graph& g);
std::string format_dot(const Graph& g);

// A value for display with fixed decimals: "0.027720" for a scalar, "[0.1, 0.2]" for a tensor of
// rank >= 1 (flat row-major list).
std::string format_values(const Tensor<double>& t, int decimals = 6);

}  // namespace denote
