// Shape rules of the reductions (reduce_sum, reduce_mean, sum, mse_loss) and contractions
// (matmul, linear).
#include <algorithm>

#include <fmt/format.h>

#include "rules.h"

namespace denote::rules {

namespace {

Result<Shape> drop_axis(const Node& node, const Shape& in) {
  const int64_t axis = std::get<AxisAttrs>(node.attrs).axis;
  if (axis < 0 || static_cast<size_t>(axis) >= in.size() || in[axis] == 0)
    return op_error(node, fmt::format("invalid or empty reduction axis {} for shape {}", axis, to_string(in)));
  Shape out = in;
  out.erase(out.begin() + axis);
  return out;
}

}  // namespace

Result<Shape> infer_ReduceSum(const Node& node, std::span<const Shape> parents) { return drop_axis(node, parents[0]); }
Result<Shape> infer_ReduceMean(const Node& node, std::span<const Shape> parents) { return drop_axis(node, parents[0]); }
Result<Shape> infer_Sum(const Node&, std::span<const Shape>) { return Shape{}; }

Result<Shape> infer_MseLoss(const Node& node, std::span<const Shape> parents) {
  DENOTE_RETURN_IF_ERROR(check_same_shape(node, parents[0], parents[1]));
  return Shape{};
}

Result<Shape> infer_Matmul(const Node& node, std::span<const Shape> parents) {
  Shape a = parents[0], b = parents[1];
  if (a.empty() || b.empty()) return op_error(node, "scalar operands are not allowed: " + to_string(a) + " @ " + to_string(b));
  const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
  if (a_vec) a.insert(a.begin(), 1);
  if (b_vec) b.push_back(1);
  const int64_t n = a[a.size() - 1], m = b[b.size() - 2];
  if (n != m) return op_error(node, fmt::format("inner dims mismatch: {} vs {}", n, m));
  const size_t batch_a = a.size() - 2, batch_b = b.size() - 2, batch = std::max(batch_a, batch_b);
  Shape out(batch);
  for (size_t i = 0; i < batch; ++i) {  // right-aligned broadcast
    int64_t da = i < batch_a ? a[batch_a - 1 - i] : 1, db = i < batch_b ? b[batch_b - 1 - i] : 1;
    if (da != db && da != 1 && db != 1)
      return op_error(node, "batch dims do not broadcast: " + to_string(parents[0]) + " @ " + to_string(parents[1]));
    out[batch - 1 - i] = da == 1 ? db : da;
  }
  if (!a_vec) out.push_back(a[a.size() - 2]);
  if (!b_vec) out.push_back(b[b.size() - 1]);
  DENOTE_RETURN_IF_ERROR(check_attr_shape(node, "output", out));
  return out;
}

Result<Shape> infer_Linear(const Node& node, std::span<const Shape> parents) {
  const Shape& in = parents[0];
  if (in.empty()) return op_error(node, "input must have rank >= 1, got []");
  if (node.out_shape.size() != in.size())
    return op_error(node, fmt::format("declared rank {} differs from input rank {}", node.out_shape.size(), in.size()));
  Shape out = in;
  out.back() = node.out_shape.back();  // the payload decides; evaluation checks it
  return out;
}

}  // namespace denote::rules
