// denote convert IN OUT: converts between torchlean.ir.v1 JSON and ONNX (either direction, by
// file extension). The model must pass the shape check before it is written.
#include <fstream>
#include <iostream>

#include "cli.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/onnx.h"

namespace denote::cli {
namespace {

bool has_ext(const std::string& path, const std::string& ext) {
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

Status write_json_file(const std::string& path, const Model& m) {
  std::ofstream f(path, std::ios::binary);
  const std::string text = write_model_json(m);
  f << text;
  if (!f) return error_status("cannot write file '" + path + "'");
  return ok_status();
}

int convert(const std::string& in, const std::string& out, bool unknown_dims_as_one) {
  if (!has_ext(out, ".json") && !has_ext(out, ".onnx"))
    return fail("'" + out + "': unsupported output format (expected .json or .onnx)");
  OnnxImportOptions options;
  options.unknown_dims_as_one = unknown_dims_as_one;
  auto m = has_ext(in, ".onnx") ? load_model_onnx_file(in, options) : load_model(in);
  if (!m.ok()) return fail(m.message());
  if (Status s = check_shapes(m->graph); !s.ok()) {
    for (const Diagnostic& d : diagnose(m->graph)) std::cerr << "error: " << d.message << "\n";
    return kExitInvalid;
  }
  Status s = has_ext(out, ".onnx") ? write_model_onnx_file(out, *m) : write_json_file(out, *m);
  if (!s.ok()) return fail(s.message());
  std::cout << "wrote " << out << " (" << m->graph.size() << " nodes)\n";
  return kExitOk;
}

}  // namespace

void add_convert(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("convert", "convert a model between torchlean.ir.v1 JSON and ONNX");
  auto in = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto dims_one = std::make_shared<bool>(false);
  sub->add_option("in", *in, "input model (.json or .onnx)")->required();
  sub->add_option("out", *out, "output model (.json or .onnx)")->required();
  sub->add_flag("--onnx-unknown-dims-as-one", *dims_one, "read symbolic or unknown ONNX input dims as 1");
  sub->callback([&cmd, in, out, dims_one] {
    cmd.run = [in, out, dims_one]() -> int { return convert(*in, *out, *dims_one); };
  });
}

}  // namespace denote::cli
