// libFuzzer target: the mixed-precision parsers and the MX codes (issue 53): precision policy files
// (parse_policy_json), MX arithmetic specs (parse_mx_policy), and MX conversion of arbitrary doubles.
// Every input gives a value or an error, never a crash (ASan + UBSan watch), and MX conversion is a
// projection: quantizing the dequantized values of a quantization gives the same codes and scales.
//
//   TARGET=precision_parse scripts/fuzz.sh 60
//   input: byte 0 picks the parser (0: policy JSON, 1: MX spec, else MX codes), the rest is its text or,
//   for MX codes, byte 1 the format, byte 2 the block (1..64), byte 3 the rank (1 or 2), then doubles.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "denote/typed/mx.h"
#include "denote/typed/policy.h"

namespace {

void mx_codes(const uint8_t* data, size_t size) {
  static const char* const kNames[] = {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e3m2", "mxfp6_e2m3", "mxfp4_e2m1", "mxint8"};
  if (size < 3) return;
  const denote::MxFormat f = *denote::parse_mx_format(kNames[data[0] % 6]);
  const int64_t block = 1 + data[1] % 64;
  const bool two = data[2] % 2 == 1;
  std::vector<double> v((size - 3) / 8);
  if (!v.empty()) std::memcpy(v.data(), data + 3, v.size() * 8);
  const auto n = static_cast<int64_t>(v.size());
  if (n == 0 || (two && n % 2 != 0)) return;
  const denote::Shape shape = two ? denote::Shape{2, n / 2} : denote::Shape{n};
  auto q = denote::mx_quantize(f, denote::Tensor<double>(shape, v), two ? 0 : -1, block);
  if (!q.ok()) __builtin_trap();  // any doubles convert
  if (!denote::check_mx(q->q).ok()) __builtin_trap();
  auto y = denote::mx_dequantize(q->q);
  if (!y.ok()) __builtin_trap();
  auto again = denote::mx_quantize(f, *y, q->q.axis, block);
  if (!again.ok() || again->q.elements != q->q.elements || again->q.scales != q->q.scales) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data + 1), size - 1);
  switch (data[0] % 3) {
    case 0: (void)denote::parse_policy_json(text); break;
    case 1: (void)denote::parse_mx_policy(text); break;
    default: mx_codes(data + 1, size - 1); break;
  }
  return 0;
}
