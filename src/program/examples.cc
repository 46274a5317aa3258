#include "denote/program/examples.h"

#include "denote/program/builder.h"

namespace denote {

Model six_node_model() {
  GraphBuilder b;
  const int64_t x = b.input({4});
  const int64_t h = b.linear(x, 5,
                             {.15, -.12, .08, .05, .02, .11, -.09, .07, -.04, .06, .10, -.03, .09, .01, .04, .13,
                              -.07, .03, .12, -.02},
                             {.01, -.02, .03, 0, .02});
  const int64_t r = b.unary(Op::Relu, h);
  const int64_t o = b.linear(r, 3, {.05, .08, -.06, .03, .07, -.04, .02, .09, -.01, .06, .10, -.03, .04, .05, -.08},
                             {.02, -.01, 0});
  const int64_t y = b.unary(Op::Tanh, b.sum(o));
  return *b.build({y});
}

std::vector<double> six_node_x0() { return {0.3, -0.2, 0.1, 0.4}; }

Graph six_node_bad_shape() {
  Graph g = six_node_model().graph;
  g.nodes[2].out_shape = {4};
  return g;
}

Graph six_node_forward_parent() {
  Graph g = six_node_model().graph;
  g.nodes[2].parents = {3};
  return g;
}

Graph six_node_bad_id() {
  Graph g = six_node_model().graph;
  g.nodes[2].id = 7;
  return g;
}

Payload<double> six_node_swapped_payload() {
  Payload<double> p = six_node_model().payload;
  p.linear[1] = p.linear[3];
  return p;
}

}  // namespace denote
