// denote.GraphBuilder: make a model in Python over the C++ GraphBuilder (include/denote/program/
// builder.h). Every method returns the new node's id; the first error (an unknown parent, a shape
// rule that fails) is raised by build(), which also runs the model check.
#include <fmt/format.h>

#include "common.h"
#include "denote/check/check.h"
#include "denote/program/builder.h"

namespace denote::python {

namespace {

Op op_named(const std::string& tag) {
  const std::optional<Op> op = op_from_tag(tag);
  if (!op) raise_invalid(fmt::format("op '{}': unknown op (denote ops lists them)", tag), "op");
  return *op;
}

std::vector<int64_t> ids_of(const py::object& ids) {
  if (py::isinstance<py::int_>(ids)) return {ids.cast<int64_t>()};
  try {
    return ids.cast<std::vector<int64_t>>();
  } catch (const py::cast_error&) {
    raise_invalid("expected a node id or a list of node ids", "outputs");
  }
}

std::vector<double> flat(const py::object& a, const char* what, Shape* shape = nullptr) {
  Tensor<double> t = to_tensor(a, {what}, true);
  if (shape) *shape = t.shape;
  return std::move(t.data);
}

int64_t linear(GraphBuilder& b, int64_t x, const py::object& weight, const py::object& bias) {
  Shape ws;
  std::vector<double> w = flat(weight, "weight", &ws);
  if (ws.size() != 2) raise_invalid(fmt::format("weight: expected a matrix [out, in], got shape {}", to_string(ws)), "weight");
  std::vector<double> bv = bias.is_none() ? std::vector<double>(static_cast<size_t>(ws[0]), 0.0) : flat(bias, "bias");
  return b.linear(x, ws[0], std::move(w), std::move(bv));
}

int64_t conv(GraphBuilder& b, int64_t x, const py::object& weight, const py::object& bias, const py::kwargs& config) {
  Shape ws;
  std::vector<double> w = flat(weight, "weight", &ws);
  if (ws.empty()) raise_invalid("weight: expected [out, in/groups, k1..kd]", "weight");
  std::vector<double> bv = bias.is_none() ? std::vector<double>(static_cast<size_t>(ws[0]), 0.0) : flat(bias, "bias");
  const Attrs a = attrs_from_dict(Op::Conv, py::dict(config));
  return b.conv(x, std::get<ConvConfig>(a), std::move(w), std::move(bv));
}

ModelPtr build(GraphBuilder& b, const py::object& outputs) {
  Model m = unwrap(b.build(ids_of(outputs)));
  check(check_model(m));
  return make_model(std::move(m));
}

}  // namespace

void register_builder(py::module_& m) {
  py::class_<GraphBuilder>(m, "GraphBuilder", R"doc(
Builds a model node by node; each method returns the new node's id (shapes are inferred).

    b = denote.GraphBuilder()
    x = b.input([4])
    h = b.op("relu", b.linear(x, W, bias))      # W: [out, in] (PyTorch layout)
    y = b.op("softmax", h, axis=0)
    model = b.build([y])                         # raises the first error; runs Model.check())doc")
      .def(py::init<>())
      .def("input", [](GraphBuilder& b, const Shape& shape) { return b.input(shape); }, py::arg("shape"),
           "An input node of the given shape.")
      .def("constant", [](GraphBuilder& b, const py::object& value) {
        Shape shape;
        std::vector<double> v = flat(value, "value", &shape);
        return b.constant(shape, std::move(v));
      }, py::arg("value"), "A constant node holding the array `value` (its shape is the node's).")
      .def("linear", &linear, py::arg("x"), py::arg("weight"), py::arg("bias") = py::none(),
           "y = x W^T + bias over the last axis of x; weight is [out, in], bias [out] (default zeros).")
      .def("conv", &conv, py::arg("x"), py::arg("weight"), py::arg("bias") = py::none(),
           "A convolution; the keyword arguments are the conv attributes of torchlean.ir.v1 (spatial_rank, kernel, "
           "stride, padding, channel_axis, in_channels, out_channels, optional dilation, padding_after, groups).")
      .def("op", [](GraphBuilder& b, const std::string& op, const py::args& parents, const std::optional<Shape>& shape,
                    const py::kwargs& attrs) {
        const Op o = op_named(op);
        std::vector<int64_t> ps;
        for (const auto& p : parents) ps.push_back(p.cast<int64_t>());
        return b.add(o, std::move(ps), attrs_from_dict(o, py::dict(attrs)), shape);
      }, py::arg("op"), py::kw_only(), py::arg("shape") = py::none(),
           "A node of op `op` (its tag: 'relu', 'add', 'softmax' ...) on the parent ids, with the op's attributes as "
           "keyword arguments (keys as in torchlean.ir.v1: axis, perm, value_shape ...); shape: declared instead of "
           "inferred.")
      .def("build", &build, py::arg("outputs"),
           "The model with these output ids (one id or a list); raises the first error of building or checking.")
      .def("__len__", [](const GraphBuilder& b) { return b.model().graph.nodes.size(); });
}

}  // namespace denote::python
