// Model: a graph, its f64 parameter payload and the ids of its outputs, as read from or written to
// a file. (The graph's inputs are its input nodes, in id order.)
#pragma once

#include <cstdint>
#include <vector>

#include "denote/ir/graph.h"
#include "denote/ir/payload.h"

namespace denote {

struct Model {
  Graph graph;
  Payload<double> payload;
  std::vector<int64_t> output_ids;
  bool operator==(const Model&) const = default;
};

}  // namespace denote
