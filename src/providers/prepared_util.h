// Internal: helpers shared by the providers' prepared kernels (denote/plan/prepared.h): fixed chunk
// sizes (chosen from the shapes only, so results never depend on the thread count) and the
// elementwise ranges of a chunk.
#pragma once

#include <algorithm>
#include <cstdint>

#include "denote/plan/prepared.h"

namespace denote::prepared {

// Values per chunk of an elementwise kernel (64 KiB of floats: stays in L2 while the epilogue runs).
inline constexpr int64_t kElementChunk = 16384;

inline int64_t chunks_of(int64_t total, int64_t per_chunk) {
  return total <= 0 ? 1 : (total + per_chunk - 1) / per_chunk;
}

// [begin, end) of chunk c when `total` items are cut into pieces of `per_chunk`.
struct Range {
  int64_t begin, end;
  int64_t size() const { return end - begin; }
};
inline Range chunk_range(int64_t c, int64_t total, int64_t per_chunk) {
  const int64_t b = std::min(total, c * per_chunk);
  return {b, std::min(total, b + per_chunk)};
}

// Leading blocks (images, rows) per chunk: about `target` values of work per chunk, at least one
// block, and a multiple of `align` blocks when there are more than that.
inline int64_t blocks_per_chunk(int64_t blocks, int64_t values_per_block, int64_t target, int64_t align = 1) {
  int64_t per = std::max<int64_t>(1, target / std::max<int64_t>(values_per_block, 1));
  if (per >= blocks) return std::max<int64_t>(blocks, 1);
  if (per > align) per -= per % align;
  return per;
}

}  // namespace denote::prepared
