// Storage-only ops' element maps (src/bounds/storage_map.h).
#include "bounds/storage_map.h"

#include <algorithm>

#include "eval/evaluator_impl.h"

namespace denote::bounds {

Result<StorageMap> storage_map(const Node& n, std::span<const Shape> parent_shapes, const Shape& out_shape) {
  std::vector<Tensor<double>> idx;
  std::vector<int64_t> start{0};
  for (const Shape& s : parent_shapes) {
    const int64_t k = numel(s);
    std::vector<double> d(static_cast<size_t>(k));
    for (int64_t i = 0; i < k; ++i) d[static_cast<size_t>(i)] = static_cast<double>(start.back() + i);
    idx.emplace_back(s, std::move(d));
    start.push_back(start.back() + k);
  }
  std::vector<const Tensor<double>*> ptrs;
  for (const Tensor<double>& t : idx) ptrs.push_back(&t);
  F64Context ctx;
  const Payload<double> none;
  const EvalOptions eo;
  DENOTE_ASSIGN_OR_RETURN(Tensor<double> map, detail::apply_table_rule(ctx, rules::EvalArgs<double>{
                                                                                n, ptrs, none, out_shape, nullptr, eo}));
  const auto per = static_cast<size_t>(numel(out_shape));
  if (map.data.size() != per) return error_status("IR bounds: a storage-only op's element map");
  StorageMap out{std::vector<uint32_t>(per), std::vector<int64_t>(per)};
  for (size_t j = 0; j < per; ++j) {
    const double g = map.data[j];
    if (!(g >= 0 && g < static_cast<double>(start.back()))) return error_status("IR bounds: a storage-only op's element map");
    const auto gi = static_cast<int64_t>(g);
    const auto k = static_cast<size_t>(std::upper_bound(start.begin(), start.end(), gi) - start.begin()) - 1;
    out.parent[j] = static_cast<uint32_t>(k);
    out.elem[j] = gi - start[k];
  }
  return out;
}

}  // namespace denote::bounds
