// Built-in example graphs: the seed's six-node MLP (x in R^4 -> linear 4->5 -> relu -> linear 5->3
// -> sum -> tanh) with its weights and the point x0, and its three broken variants.
//
//   Model m = six_node_model();   // m.output_ids == {5}
#pragma once

#include <vector>

#include "denote/ir/model.h"

namespace denote {

Model six_node_model();
std::vector<double> six_node_x0();  // (0.3, -0.2, 0.1, 0.4)

// The seed's one-field breakages of the six-node graph.
Graph six_node_bad_shape();      // relu declared [4]
Graph six_node_forward_parent(); // relu's parent is node 3
Graph six_node_bad_id();         // nodes[2].id = 7
// The payload with node 3's linear record also stored at key 1.
Payload<double> six_node_swapped_payload();

}  // namespace denote
