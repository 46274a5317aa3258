// NumPy .npy tensors: float64, float32 or uint8 (MX codes), little-endian, C order (format versions
// 1.0-3.0). Anything else (big-endian, Fortran order, other dtypes, truncated data) is a clear error
// with the byte offset. float32 and uint8 files are widened to double on read; U8 writes each value
// as the byte static_cast<uint8_t>(v) (callers pass codes 0..255).
//
//   Result<NpyArray> a = read_npy_file("x.npy");
//   write_npy_file("y.npy", Tensor<double>{{2}, {1, 2}}, NpyDtype::F32);
#pragma once

#include <string>
#include <string_view>

#include "denote/base/status.h"
#include "denote/tensor/tensor.h"

namespace denote {

enum class NpyDtype { F64, F32, U8 };

struct NpyArray {
  NpyDtype dtype = NpyDtype::F64;
  Tensor<double> tensor;
};

Result<NpyArray> parse_npy(std::string_view bytes);
std::string format_npy(const Tensor<double>& t, NpyDtype dtype = NpyDtype::F64);

Result<NpyArray> read_npy_file(const std::string& path);
Status write_npy_file(const std::string& path, const Tensor<double>& t, NpyDtype dtype = NpyDtype::F64);

}  // namespace denote
