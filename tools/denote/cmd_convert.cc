// denote convert IN OUT: converts between torchlean.ir.v1 JSON and ONNX (either direction, by
// file extension). The model must pass the shape check before it is written. A typed JSON model
// (dtype / words fields) is written back as typed JSON; to ONNX it is refused (the ONNX writer
// knows only the float model, and dropping the dtypes would change what the model computes).
#include <fstream>
#include <iostream>

#include "cli.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_typed.h"
#include "denote/io/onnx.h"
#include "denote/typed/check.h"
#include "denote/typed/interp.h"

namespace denote::cli {
namespace {

bool has_ext(const std::string& path, const std::string& ext) {
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

Status write_text_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f) return error_status("cannot write file '" + path + "'");
  return ok_status();
}

int report(const std::vector<Diagnostic>& diags) {
  for (const Diagnostic& d : diags) std::cerr << "error: " << d.message << "\n";
  return kExitInvalid;
}

// A typed JSON model: checked like `denote check`, written back with its dtypes and words.
int convert_typed(const std::string& in, const std::string& text, const std::string& out) {
  if (has_ext(out, ".onnx"))
    return fail("'" + in + "': a typed model (dtype / words fields) cannot be converted to ONNX: the ONNX writer "
                "writes float models only, and dropping the dtypes would change what the model computes");
  auto tm = parse_typed_model_json(text);
  if (!tm.ok()) return fail(tm.status().with_prefix(in + ": ").message());
  if (auto diags = diagnose_typed_model(*tm); !diags.empty()) return report(diags);
  if (Status s = write_text_file(out, write_typed_model_json(*tm)); !s.ok()) return fail(s.message());
  std::cout << "wrote " << out << " (" << tm->model.graph.size() << " nodes, typed)\n";
  return kExitOk;
}

int convert(const std::string& in, const std::string& out, bool unknown_dims_as_one) {
  if (!has_ext(out, ".json") && !has_ext(out, ".onnx"))
    return fail("'" + out + "': unsupported output format (expected .json or .onnx)");
  if (has_ext(in, ".json")) {
    auto text = read_text_file(in);
    if (text.ok() && has_typed_nodes(*text)) return convert_typed(in, *text, out);
  }
  OnnxImportOptions options = onnx_options();
  options.unknown_dims_as_one = unknown_dims_as_one;
  auto m = has_ext(in, ".onnx") ? load_model_onnx_file(in, options) : load_model(in);
  print_onnx_notes();
  if (!m.ok()) return fail(m.message());
  if (Status s = check_shapes(m->graph); !s.ok()) {
    for (const Diagnostic& d : diagnose(m->graph)) std::cerr << "error: " << d.message << "\n";
    return kExitInvalid;
  }
  Status s = has_ext(out, ".onnx") ? write_model_onnx_file(out, *m) : write_text_file(out, write_model_json(*m));
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
