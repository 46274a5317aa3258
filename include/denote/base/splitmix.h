// splitmix64: the fully specified 64-bit mixer behind rand_uniform / bernoulli_mask streams, the
// sampled-containment points of `denote sample`, and the project's seeded test generators.
//
//   uint64_t key = splitmix64(seed + node_id);   // mix(x + golden gamma)
#pragma once

#include <cstdint>

namespace denote {

// The standard splitmix64 step applied to state x: mix(x + 0x9E3779B97F4A7C15).
inline uint64_t splitmix64(uint64_t x) {
  uint64_t z = x + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A sequential generator: the n-th draw is splitmix64(seed + n * gamma) (the classic SplitMix64).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    const uint64_t out = splitmix64(state_);
    state_ += 0x9E3779B97F4A7C15ULL;
    return out;
  }

 private:
  uint64_t state_;
};

}  // namespace denote
