// denote.Error and its subclasses: a Status becomes the exception class of its code, carrying the
// code name, the node (None when the error names none), the field (None when empty) and the detail
// (the failing rule's own text). See docs/PYTHON.md, "Errors".
#include <string_view>

#include "common.h"

namespace denote::python {

namespace {

struct ErrorClasses {
  py::object base, invalid_input, parse, check, structure, shape, eval, unsupported, resource, internal;
};

// Created once when the module initializes; never destroyed (the interpreter owns the classes).
ErrorClasses* g_classes = nullptr;

py::object make_class(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  py::dict ns;
  ns["__doc__"] = doc;
  ns["__module__"] = "denote";
  py::object cls = py::module_::import("builtins").attr("type")(name, bases, ns);
  m.attr(name) = cls;
  return cls;
}

const py::object& class_for(ErrorCode code, bool parsing) {
  const ErrorClasses& c = *g_classes;
  switch (code) {
    case ErrorCode::kInvalidInput: return parsing ? c.parse : c.invalid_input;
    case ErrorCode::kStructure: return c.structure;
    case ErrorCode::kShape: return c.shape;
    case ErrorCode::kEval: return c.eval;
    case ErrorCode::kUnsupported: return c.unsupported;
    case ErrorCode::kResource: return c.resource;
    case ErrorCode::kInternal:
    case ErrorCode::kOk: break;
  }
  return c.internal;
}

[[noreturn]] void raise(const py::object& cls, const std::string& message, std::string_view code, int64_t node,
                        const std::string& field, const std::string& detail) {
  py::object e = cls(message);
  e.attr("code") = std::string(code);
  e.attr("node") = node >= 0 ? py::object(py::int_(node)) : py::object(py::none());
  e.attr("field") = field.empty() ? py::object(py::none()) : py::object(py::str(field));
  e.attr("detail") = detail;
  e.attr("message") = message;
  PyErr_SetObject(cls.ptr(), e.ptr());
  throw py::error_already_set();
}

}  // namespace

void raise_status(const Status& s, bool parsing) {
  raise(class_for(s.code(), parsing), s.message(), error_code_name(s.code()), s.node(), s.field(), s.detail());
}

void raise_invalid(const std::string& message, const std::string& field) {
  raise(g_classes->invalid_input, message, error_code_name(ErrorCode::kInvalidInput), -1, field, message);
}

void register_errors(py::module_& m) {
  auto* c = new ErrorClasses;
  py::object exc = py::reinterpret_borrow<py::object>(PyExc_Exception);
  py::object value = py::reinterpret_borrow<py::object>(PyExc_ValueError);
  c->base = make_class(m, "Error", py::make_tuple(exc),
                       "Base of every denote error. Attributes: code (str: 'invalid_input', 'structure', 'shape', "
                       "'eval', 'unsupported', 'resource', 'internal'), node (int or None), field (str or None), "
                       "detail (the failing rule's own text), message (the full text).");
  c->invalid_input = make_class(m, "InvalidInputError", py::make_tuple(c->base, value),
                                "Malformed data, array or option (wrong dtype or shape, unknown arith ...).");
  c->parse = make_class(m, "ParseError", py::make_tuple(c->invalid_input),
                        "A file or text that does not parse (JSON, ONNX, VNN-LIB).");
  c->check = make_class(m, "CheckError", py::make_tuple(c->base, value), "The graph is not well formed.");
  c->structure = make_class(m, "StructureError", py::make_tuple(c->check),
                            "Graph structure: ids, arity, parent order, attrs kind, declared shapes.");
  c->shape = make_class(m, "ShapeError", py::make_tuple(c->check), "Shape inference or a shape that disagrees.");
  c->eval = make_class(m, "EvalError", py::make_tuple(c->base),
                       "A rule failed on the values (domain, payload records, bad parameters).");
  c->unsupported = make_class(m, "UnsupportedError", py::make_tuple(c->base),
                              "An op, dtype or feature this pass or context does not provide.");
  c->resource = make_class(m, "ResourceError", py::make_tuple(c->base), "A limit: element count, memory, precision.");
  c->internal = make_class(m, "InternalError", py::make_tuple(c->base), "A broken invariant of denote itself.");
  g_classes = c;
}

}  // namespace denote::python
