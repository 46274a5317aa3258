// denote.load / denote.loads and the Model class: reading (torchlean.ir.v1 JSON, ONNX), checking,
// the node list, writing (JSON, ONNX), the listing and GraphViz text.
#include <fmt/format.h>


#include <set>

#include "common.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/json_arrays.h"
#include "denote/io/json_typed.h"
#include "denote/io/onnx.h"
#include "denote/io/text.h"
#include "denote/typed/check.h"

namespace denote::python {

namespace {

py::class_<PyModel, ModelPtr>* g_model_class = nullptr;

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::vector<Diagnostic> diagnostics(const PyModel& m) {
  return m.typed() ? diagnose_typed_model(m.tm) : diagnose_model(m.model());
}

// The first error of the model check (shapes, then payload records), raised as CheckError & co.
void check_or_raise(const PyModel& m) {
  check(check_shapes(m.model().graph));
  const std::vector<Diagnostic> d = diagnostics(m);
  if (!d.empty()) raise_status(d.front().status);
}

// The arrays a document's {"array": k} fields name (denote/io/json_arrays.h), as doubles.
std::vector<std::vector<double>> arrays_of(const py::sequence& arrays) {
  std::vector<std::vector<double>> out;
  out.reserve(arrays.size());
  for (const py::handle& a : arrays) {
    const auto arr = py::array_t<double, py::array::c_style | py::array::forcecast>::ensure(a);
    if (!arr) raise_invalid(fmt::format("arrays[{}]: expected an array of numbers", out.size()), "arrays");
    out.emplace_back(arr.data(), arr.data() + arr.size());
  }
  return out;
}

ModelPtr loads(const std::string& text, bool checked, const py::object& arrays) {
  ModelPtr m = arrays.is_none()
                   ? make_model(unwrap(parse_typed_model_json(text), /*parsing=*/true))
                   : make_model(unwrap(parse_model_json_with_arrays(text, arrays_of(arrays.cast<py::sequence>())), true));
  if (checked) check_or_raise(*m);
  return m;
}

ModelPtr load(const std::string& path, bool checked, bool unknown_dims_as_one) {
  ModelPtr m;
  if (ends_with(path, ".onnx")) {
    OnnxImportOptions o;
    o.unknown_dims_as_one = unknown_dims_as_one;
    std::vector<int32_t> elem_types;
    o.input_elem_types = &elem_types;
    const std::string bytes = unwrap(read_text_file(path), true);
    // The float import is the model; the typed import (integer and bool tensors, docs/ONNX.md) serves
    // run() with integer arrays, and is the model when only it reads the file.
    Result<Model> plain = read_model_onnx(bytes, o);
    o.input_elem_types = nullptr;
    Result<TypedModel> typed = read_typed_model_onnx(bytes, o);
    if (!plain.ok() && !typed.ok()) raise_status(plain.status(), true);
    m = plain.ok() ? make_model(std::move(*plain)) : make_model(std::move(*typed));
    if (plain.ok() && typed.ok()) m->typed_onnx = std::make_shared<const TypedModel>(std::move(*typed));
    const std::optional<ArithSpec> own = plain.ok() ? arith_of_onnx_inputs(elem_types) : std::nullopt;
    m->native_arith = own ? own->name : "";
  } else if (ends_with(path, ".json")) {
    m = make_model(unwrap(parse_typed_model_json(unwrap(read_text_file(path), true)), true));
  } else {
    m = make_model(unwrap(load_model_file(path), true));  // the library's own error for other extensions
  }
  if (checked) check_or_raise(*m);
  return m;
}

py::list node_list(const PyModel& m) {
  py::list out;
  for (const Node& n : m.model().graph.nodes) {
    py::dict d;
    d["id"] = n.id;
    d["op"] = std::string(op_tag(n.op));
    d["parents"] = n.parents;
    d["shape"] = n.out_shape;
    d["attrs"] = attrs_to_dict(n.attrs);
    if (auto t = m.tm.input_dtypes.find(n.id); t != m.tm.input_dtypes.end()) d["dtype"] = typed::dtype_name(t->second);
    if (auto c = m.tm.consts.find(n.id); c != m.tm.consts.end()) d["dtype"] = typed::dtype_name(c->second.dtype);
    out.append(std::move(d));
  }
  return out;
}

py::list diagnostic_list(const PyModel& m) {
  py::list out;
  for (const Diagnostic& d : diagnostics(m)) {
    py::dict e;
    e["node"] = d.node >= 0 ? py::object(py::int_(d.node)) : py::object(py::none());
    e["message"] = d.message;
    e["code"] = std::string(error_code_name(d.status.code()));
    e["field"] = d.status.field().empty() ? py::object(py::none()) : py::object(py::str(d.status.field()));
    out.append(std::move(e));
  }
  return out;
}

std::string json_text(const PyModel& m) { return m.typed() ? write_typed_model_json(m.tm) : write_model_json(m.model()); }

py::object to_json(const PyModel& m, const std::optional<std::string>& path) {
  const std::string text = json_text(m);
  if (!path) return py::str(text);
  FILE* f = std::fopen(path->c_str(), "wb");
  const bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f) std::fclose(f);
  if (!ok) raise_invalid(fmt::format("to_json: cannot write {}", *path), "path");
  return py::none();
}

py::object to_onnx(const PyModel& m, const std::optional<std::string>& path) {
  if (path) {
    check(write_model_onnx_file(*path, m.model()));
    return py::none();
  }
  return py::bytes(unwrap(write_model_onnx(m.model())));
}

std::vector<Shape> shapes_of(const PyModel& m, const std::vector<int64_t>& ids) {
  std::vector<Shape> out;
  for (int64_t id : ids) out.push_back(m.model().graph.nodes[static_cast<size_t>(id)].out_shape);
  return out;
}

}  // namespace

ModelPtr make_model(TypedModel tm) {
  auto m = std::make_shared<PyModel>();
  m->tm = std::move(tm);
  return m;
}

ModelPtr make_model(Model model) {
  TypedModel tm;
  tm.model = std::move(model);
  return make_model(std::move(tm));
}

py::class_<PyModel, ModelPtr>& model_class() { return *g_model_class; }

void register_model(py::module_& m) {
  g_model_class = new py::class_<PyModel, ModelPtr>(m, "Model", R"doc(
A denote model: the graph (nodes in execution order), its f64 parameters and its output ids.
Make one with denote.load(path), denote.loads(text) or denote.GraphBuilder; it is immutable.)doc");
  auto& cls = *g_model_class;
  m.def("load", &load, py::arg("path"), py::arg("check") = true, py::arg("unknown_dims_as_one") = false,
        R"doc(Reads a model file: .json (torchlean.ir.v1) or .onnx. With check=True (default) the model check
runs too (structure, shapes, payload records) and its first error raises CheckError; check=False
loads a broken graph for Model.diagnose(). Raises ParseError for a file that does not read.)doc");
  m.def("loads", &loads, py::arg("text"), py::arg("check") = true, py::arg("arrays") = py::none(),
        "Reads a model from a torchlean.ir.v1 JSON string (see load for check). arrays: a list of arrays that "
        "tensor fields name as {\"array\": k} instead of listing their values (from_torch's parameters).");
  cls.def("check", [](const PyModel& self) { check_or_raise(self); },
          "Runs the model check (structure, shapes, payload records); raises the first error (CheckError, ...).");
  cls.def("diagnose", &diagnostic_list,
          "Every diagnostic of the model check: a list of {'node', 'message', 'code', 'field'} (empty: ok).");
  cls.def_property_readonly("nodes", &node_list,
                            "The nodes in id order: dicts {'id', 'op', 'parents', 'shape', 'attrs'} ('dtype' on typed "
                            "inputs and constants).");
  cls.def_property_readonly("inputs", [](const PyModel& self) { return self.model().graph.input_ids(); },
                            "Ids of the input nodes, in the order run() takes them.");
  cls.def_property_readonly("outputs", [](const PyModel& self) { return self.model().output_ids; },
                            "Ids of the output nodes.");
  cls.def_property_readonly("input_shapes", [](const PyModel& self) {
    return shapes_of(self, self.model().graph.input_ids());
  }, "Shapes of the inputs.");
  cls.def_property_readonly("output_shapes", [](const PyModel& self) { return shapes_of(self, self.model().output_ids); },
                            "Shapes of the outputs.");
  cls.def_property_readonly("typed", &PyModel::typed, "Whether inputs or constants carry dtypes (typed execution).");
  cls.def("_set_precision",
          [](PyModel& self, std::vector<std::string> formats, std::vector<bool> materialized, std::string accumulate) {
            if (formats.size() != self.model().graph.size() || materialized.size() != formats.size())
              raise_invalid("_set_precision: one format and one flag per node", "formats");
            PrecisionPolicy p = unwrap(make_policy(accumulate, accumulate));
            check(set_node_storage(p, formats));
            std::lock_guard<std::mutex> lock(self.cache_mutex);
            self.capture_formats = std::move(formats);
            self.capture_materialized = std::move(materialized);
            self.capture_accumulate = std::move(accumulate);
            self.policies.clear();
          },
          py::arg("formats"), py::arg("materialized"), py::arg("accumulate"),
          "Records a capture's precision policy (from_torch does; docs/PYTHON.md).");
  cls.def_property_readonly(
      "precision",
      [](const PyModel& self) -> py::object {
        if (self.capture_formats.empty()) return py::none();
        std::set<std::string> fs(self.capture_formats.begin(), self.capture_formats.end());
        py::dict d;
        d["formats"] = std::vector<std::string>(fs.begin(), fs.end());
        d["accumulate"] = self.capture_accumulate;
        return d;
      },
      R"doc(The precision policy a from_torch capture of a bfloat16/float16 module, or of one under
torch.autocast("cpu"), recorded: {"formats": the formats its values are held in, "accumulate": the format
every op computes in ("binary32", torch's opmath)}; None otherwise. run(x, arith="auto") follows it.)doc");
  cls.def_property(
      "arith",
      [](const PyModel& self) -> py::object {
        return self.native_arith.empty() ? py::none() : py::object(py::str(self.native_arith));
      },
      [](PyModel& self, const py::object& v) {
        const std::string a = v.is_none() ? "" : v.cast<std::string>();
        if (!a.empty() && a != "f32" && a != "f64") raise_invalid("Model.arith: expected \"f32\", \"f64\" or None", "arith");
        self.native_arith = a;
      },
      R"doc(The arithmetic of the model's own float inputs: "f32" (an ONNX file of FLOAT inputs, a float32
torch capture), "f64" (DOUBLE, float64), or None where no file says (JSON, GraphBuilder). bounds() and
verify() use it when no arith is given (else f64 and f32), so a float32 model's bounds also hold for its
float32 evaluation. Settable.)doc");
  cls.def("to_json", &to_json, py::arg("path") = py::none(),
          "Writes torchlean.ir.v1 JSON to path, or returns it as a string when no path is given.");
  cls.def("to_onnx", &to_onnx, py::arg("path") = py::none(),
          "Writes an ONNX ModelProto (opset 17, DOUBLE tensors) to path, or returns its bytes.");
  cls.def("print", [](const PyModel& self) { return format_listing(self.model().graph); },
          "The listing text: one line per node, as `denote print`.");
  cls.def("dot", [](const PyModel& self) { return format_dot(self.model().graph); }, "GraphViz DOT text of the graph.");
  cls.def("__len__", [](const PyModel& self) { return self.model().graph.nodes.size(); });
  cls.def("__repr__", [](const PyModel& self) {
    return fmt::format("<denote.Model: {} nodes, inputs {}, outputs {}>", self.model().graph.nodes.size(),
                       to_string(self.model().graph.input_ids()), to_string(self.model().output_ids));
  });
}

}  // namespace denote::python
