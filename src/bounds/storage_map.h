// Internal: where each output element of a storage-only op (permute, transpose, broadcast_to,
// gather, concat, slicing, ...) comes from, found by the op's own evaluation rule on the parents'
// element indices (as the typed interpreter does). IBP's double-array pass moves box endpoints
// along it, the forward linear bounds move their functions along it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/graph.h"

namespace denote::bounds {

// Output element j is element elem[j] of parent parent[j].
struct StorageMap {
  std::vector<uint32_t> parent;
  std::vector<int64_t> elem;
};

// The map of storage-only node n over parents of the given shapes; an error when the op's rule
// fails or does not give one index per output element.
Result<StorageMap> storage_map(const Node& n, std::span<const Shape> parent_shapes, const Shape& out_shape);

}  // namespace denote::bounds
