#include "denote/ir/graph.h"

namespace denote {

std::vector<int64_t> Graph::input_ids() const {
  std::vector<int64_t> ids;
  for (const Node& n : nodes)
    if (n.op == Op::Input) ids.push_back(n.id);
  return ids;
}

std::string describe(const Node& n) {
  std::string text(op_tag(n.op));
  std::string inner = describe_attrs(n.attrs);
  if (has_flag(n.op, kFlagParams)) inner += std::string(inner.empty() ? "" : ", ") + "payload=node_id";
  if (!inner.empty()) text += "(" + inner + ")";
  return text;
}

std::string summary(const Node& n) {
  return "Node(id=" + std::to_string(n.id) + ", kind=" + describe(n) + ", parents=#[" + join_ints(n.parents) +
         "], outShape=" + to_string(n.out_shape) + ")";
}

}  // namespace denote
