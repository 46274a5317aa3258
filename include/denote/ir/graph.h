// Node and Graph: a network as plain data. A node's id equals its index and every parent id is
// smaller, so array order is execution order and no pass searches or recurses.
//
//   Graph g;
//   g.nodes.push_back(Node{0, {}, Op::Input, NoAttrs{}, {4}});
//   g.nodes.push_back(Node{1, {0}, Op::Relu, NoAttrs{}, {4}});
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "denote/ir/attrs.h"
#include "denote/ir/op.h"
#include "denote/tensor/shape.h"

namespace denote {

struct Node {
  int64_t id = 0;
  std::vector<int64_t> parents;
  Op op = Op::Input;
  Attrs attrs;
  Shape out_shape;
  bool operator==(const Node&) const = default;
};

struct Graph {
  std::vector<Node> nodes;
  bool operator==(const Graph&) const = default;

  size_t size() const { return nodes.size(); }
  // Ids of the input nodes in id order (the order in which inputs are supplied).
  std::vector<int64_t> input_ids() const;
};

// The listing's kind text: "relu", "softmax(axis=1)", "linear(payload=node_id)", "const(shape=[3])".
std::string describe(const Node& n);

// "Node(id=2, kind=relu, parents=#[1], outShape=[4])", used in every node-level diagnostic.
std::string summary(const Node& n);

}  // namespace denote
