// denote mx quantize|dequantize: the OCP MX block formats (include/denote/tensor/mx.h) on .npy files,
// the element and E8M0 scale codes as uint8 arrays (docs/CLI.md).
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "denote/io/npy.h"
#include "denote/tensor/mx.h"

namespace denote::cli {

namespace {

struct MxOptions {
  std::string input, elements, scales, output, format;
  int64_t block = 32, axis = -1;
};

Tensor<double> codes_tensor(const Shape& shape, const std::vector<uint8_t>& codes) {
  return Tensor<double>(shape, std::vector<double>(codes.begin(), codes.end()));
}

// A uint8 .npy file's codes (a float file of integers 0..255 is accepted too).
Result<std::pair<Shape, std::vector<uint8_t>>> read_codes(const std::string& path, const char* option) {
  DENOTE_ASSIGN_OR_RETURN(NpyArray a, read_npy_file(path));
  std::vector<uint8_t> codes;
  for (size_t i = 0; i < a.tensor.data.size(); ++i) {
    const double v = a.tensor.data[i];
    if (!(v >= 0 && v <= 255 && v == static_cast<int>(v)))
      return error_status(fmt::format("{} {}: element {} is {}, expected a code 0..255", option, path, i, v));
    codes.push_back(static_cast<uint8_t>(v));
  }
  return std::pair{a.tensor.shape, std::move(codes)};
}

int quantize(const MxOptions& o) {
  Result<MxFormat> f = parse_mx_format(o.format);
  if (!f.ok()) return usage_error("--format: " + f.status().message());
  Result<NpyArray> x = read_npy_file(o.input);
  if (!x.ok()) return fail(x.status().message());
  Result<MxQuantized> q = mx_quantize(*f, x->tensor, o.axis, o.block);
  if (!q.ok()) return fail(q.status().message());
  const Shape ss = mx_scale_shape(q->q.shape, q->q.axis, q->q.block);
  if (Status s = write_npy_file(o.elements, codes_tensor(q->q.shape, q->q.elements), NpyDtype::U8); !s.ok())
    return fail(s.message());
  if (Status s = write_npy_file(o.scales, codes_tensor(ss, q->q.scales), NpyDtype::U8); !s.ok())
    return fail(s.message());
  std::cout << fmt::format("{} elements {} scales {} (blocks of {} along axis {}) flags {}\n", f->name,
                           to_string(q->q.shape), to_string(ss), o.block, q->q.axis, flags_to_string(q->flags));
  return kExitOk;
}

int dequantize(const MxOptions& o) {
  Result<MxFormat> f = parse_mx_format(o.format);
  if (!f.ok()) return usage_error("--format: " + f.status().message());
  auto e = read_codes(o.elements, "--elements");
  if (!e.ok()) return fail(e.status().message());
  auto s = read_codes(o.scales, "--scales");
  if (!s.ok()) return fail(s.status().message());
  Result<int64_t> axis = mx_normalise_axis(e->first, o.axis);
  if (!axis.ok()) return fail(axis.status().message());
  MxTensor q{*f, o.block, *axis, e->first, std::move(e->second), std::move(s->second)};
  if (o.block >= 1 && s->first != mx_scale_shape(q.shape, q.axis, q.block))
    return fail(fmt::format("--scales {}: shape {}, expected {} for elements {} in blocks of {} along axis {}",
                            o.scales, to_string(s->first), to_string(mx_scale_shape(q.shape, q.axis, q.block)),
                            to_string(q.shape), q.block, q.axis));
  Result<Tensor<double>> y = mx_dequantize(q);
  if (!y.ok()) return fail(y.status().message());
  if (Status st = write_npy_file(o.output, *y); !st.ok()) return fail(st.message());
  return kExitOk;
}

void add_common(CLI::App* sub, MxOptions& o) {
  sub->add_option("--format", o.format, "mxfp8_e4m3, mxfp8_e5m2, mxfp6_e3m2, mxfp6_e2m3, mxfp4_e2m1 or mxint8")
      ->required();
  sub->add_option("--block", o.block, "elements per shared scale (default 32)");
  sub->add_option("--axis", o.axis, "the axis the blocks run along (default -1, the last)");
  sub->add_option("--elements", o.elements, "element codes, uint8 .npy")->required();
  sub->add_option("--scales", o.scales, "E8M0 scale codes, uint8 .npy")->required();
}

}  // namespace

void add_mx(CLI::App& app, Command& cmd) {
  auto o = std::make_shared<MxOptions>();
  CLI::App* mx = app.add_subcommand("mx", "OCP MX block formats: quantize a float .npy, dequantize codes");
  mx->require_subcommand(1);
  CLI::App* q = mx->add_subcommand("quantize", "IN.npy -> element and scale codes (OCP MX v1.0 §6.3)");
  q->add_option("input", o->input, "float32 or float64 .npy")->required();
  add_common(q, *o);
  q->callback([&cmd, o] { cmd.run = [o] { return quantize(*o); }; });
  CLI::App* d = mx->add_subcommand("dequantize", "element and scale codes -> float64 .npy of X * P_i");
  add_common(d, *o);
  d->add_option("--output", o->output, "float64 .npy")->required();
  d->callback([&cmd, o] { cmd.run = [o] { return dequantize(*o); }; });
}

}  // namespace denote::cli
