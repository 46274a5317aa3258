// Lowering of TorchLean reductions with several axes or keepdim=true into single-axis reductions
// (largest axis first) plus a reshape for keepdim. Ids are renumbered; the payload, inputs and
// outputs follow the renumbering.
#include <algorithm>

#include <fmt/format.h>

#include "denote/check/check.h"
#include "denote/ir/model.h"
#include "json_fields.h"

namespace denote {

using jsonio::json;

namespace {

template <class V>
void remap_keys(std::map<int64_t, V>& m, const std::vector<int64_t>& to) {
  std::map<int64_t, V> out;
  for (auto& [k, v] : m) out[to[k]] = std::move(v);
  m = std::move(out);
}

}  // namespace

Result<Model> lower_reductions(const json& nodes, Model model, const std::vector<size_t>& lower_at) {
  DENOTE_RETURN_IF_ERROR(check_well_formed(model.graph).with_prefix("torchlean.ir.v1: cannot lower reductions: "));
  std::vector<int64_t> new_id(model.graph.nodes.size());
  std::vector<Node> out;
  size_t next_lower = 0;
  for (size_t i = 0; i < model.graph.nodes.size(); ++i) {
    Node n = model.graph.nodes[i];
    for (int64_t& p : n.parents) p = new_id[p];
    if (next_lower < lower_at.size() && lower_at[next_lower] == i) {
      ++next_lower;
      jsonio::Where w{fmt::format("nodes[{}] (id {}, kind {})", i, i, op_tag(n.op))};
      DENOTE_ASSIGN_OR_RETURN(auto axes, jsonio::get_ints(nodes[i], "axes", w));
      DENOTE_ASSIGN_OR_RETURN(bool keepdim, jsonio::get_bool_or(nodes[i], "keepdim", false, w));
      Shape shape = out[n.parents[0]].out_shape;
      const Shape original = shape;
      std::sort(axes.begin(), axes.end(), std::greater<>());
      for (size_t k = 0; k < axes.size(); ++k) {
        if (axes[k] < 0 || static_cast<size_t>(axes[k]) >= original.size() || (k && axes[k] == axes[k - 1]))
          return w.error("axes", fmt::format("axes must be distinct and within rank {} of {}", original.size(),
                                             to_string(original)));
        shape.erase(shape.begin() + axes[k]);
        const int64_t id = static_cast<int64_t>(out.size());
        out.push_back(Node{id, {k == 0 ? n.parents[0] : id - 1}, n.op, AxisAttrs{axes[k]}, shape});
      }
      if (keepdim) {
        Shape kept = original;
        for (int64_t a : axes) kept[a] = 1;
        const int64_t id = static_cast<int64_t>(out.size());
        out.push_back(Node{id, {id - 1}, Op::Reshape, ReshapeAttrs{shape, kept}, kept});
      }
      out.back().out_shape = n.out_shape;  // the document's declared shape stays checkable
      new_id[i] = static_cast<int64_t>(out.size()) - 1;
      continue;
    }
    n.id = static_cast<int64_t>(out.size());
    new_id[i] = n.id;
    out.push_back(std::move(n));
  }
  model.graph.nodes = std::move(out);
  for (int64_t& id : model.output_ids) id = new_id[id];
  remap_keys(model.payload.consts, new_id);
  remap_keys(model.payload.linear, new_id);
  remap_keys(model.payload.conv, new_id);
  remap_keys(model.payload.batch_norm, new_id);
  remap_keys(model.payload.layernorm, new_id);
  return model;
}

}  // namespace denote
