// libFuzzer target: the .npy reader (src/io/npy.cc), used by `--input @file.npy`. Every input must
// give a tensor or an error, never a crash (ASan + UBSan watch). A parsed tensor must have as many
// elements as its shape says, and writing it back in the same dtype must read back to the same
// shape and the same bits (a float32 file widens exactly to double, so it narrows back exactly).
//
//   TARGET=npy_load scripts/fuzz.sh 60
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "denote/tensor/shape.h"
#include "denote/io/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  auto a = denote::parse_npy(bytes);
  if (!a.ok()) return 0;
  auto n = denote::checked_numel(a->tensor.shape);
  if (!n.ok() || static_cast<size_t>(*n) != a->tensor.data.size()) __builtin_trap();
  const std::string once = denote::format_npy(a->tensor, a->dtype);
  auto back = denote::parse_npy(once);
  if (!back.ok() || back->dtype != a->dtype || back->tensor.shape != a->tensor.shape) __builtin_trap();
  if (back->tensor.data.size() != a->tensor.data.size() ||
      (!a->tensor.data.empty() &&
       std::memcmp(back->tensor.data.data(), a->tensor.data.data(), a->tensor.data.size() * sizeof(double)) != 0))
    __builtin_trap();
  return 0;
}
