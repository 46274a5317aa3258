// denote.mx_quantize / mx_dequantize / mx_matmul: the OCP MX block formats of
// include/denote/tensor/mx.h on numpy arrays (element and E8M0 scale codes as uint8). The MxArray class
// that carries the codes with their format, block and axis is python/denote/_mx.py.
#include <fmt/format.h>

#include "common.h"
#include "denote/scalar/binary_format.h"
#include "denote/tensor/mx.h"

namespace denote::python {

namespace {

using Codes = py::array_t<uint8_t, py::array::c_style>;

Codes codes_array(const Shape& shape, const std::vector<uint8_t>& v) {
  Codes out(std::vector<py::ssize_t>(shape.begin(), shape.end()));
  std::copy(v.begin(), v.end(), out.mutable_data());
  return out;
}

// The uint8 array itself (C order); anything else raises naming the argument.
std::pair<Shape, std::vector<uint8_t>> codes_of(const py::handle& obj, const char* what) {
  const py::array arr = py::array::ensure(obj);
  if (!arr || arr.dtype().kind() != 'u' || arr.itemsize() != 1)
    raise_invalid(fmt::format("{}: expected a numpy uint8 array of MX codes", what), what);
  const Codes c = Codes::ensure(arr);
  Shape shape(c.shape(), c.shape() + c.ndim());
  return {shape, std::vector<uint8_t>(c.data(), c.data() + c.size())};
}

MxFormat mx_format_of(const std::string& name) {
  Result<MxFormat> f = parse_mx_format(name);
  if (!f.ok()) raise_invalid(f.status().message(), "format");
  return *f;
}

py::tuple quantize(const py::handle& x, const std::string& format, int64_t block, int64_t axis) {
  const MxFormat f = mx_format_of(format);
  const Tensor<double> t = to_tensor(x, Label{"x"});
  Result<MxQuantized> r = Status::error(ErrorCode::kInternal, "internal: mx_quantize did not run");
  {
    py::gil_scoped_release release;
    r = mx_quantize(f, t, axis, block);
  }
  MxQuantized q = unwrap(std::move(r));
  return py::make_tuple(codes_array(q.q.shape, q.q.elements),
                        codes_array(mx_scale_shape(q.q.shape, q.q.axis, q.q.block), q.q.scales), q.q.axis,
                        flags_dict(q.flags));
}

MxTensor mx_tensor_of(const py::handle& elements, const py::handle& scales, const std::string& format, int64_t block,
                      int64_t axis) {
  MxTensor q;
  q.format = mx_format_of(format);
  q.block = block;
  auto [shape, codes] = codes_of(elements, "elements");
  q.shape = std::move(shape);
  q.elements = std::move(codes);
  q.axis = unwrap(mx_normalise_axis(q.shape, axis));
  auto [sshape, scodes] = codes_of(scales, "scales");
  if (q.block >= 1 && sshape != mx_scale_shape(q.shape, q.axis, q.block))
    raise_invalid(fmt::format("scales: expected shape {} for elements of shape {} in blocks of {} along axis {}, got {}",
                              to_string(mx_scale_shape(q.shape, q.axis, q.block)), to_string(q.shape), q.block,
                              q.axis, to_string(sshape)),
                  "scales");
  q.scales = std::move(scodes);
  check(check_mx(q));
  return q;
}

py::array dequantize(const py::handle& elements, const py::handle& scales, const std::string& format, int64_t block,
                     int64_t axis) {
  return to_numpy(unwrap(mx_dequantize(mx_tensor_of(elements, scales, format, block, axis))));
}

py::tuple matmul(const py::tuple& a, const py::tuple& b, const std::string& accumulate) {
  const MxTensor ta = mx_tensor_of(a[0], a[1], a[2].cast<std::string>(), a[3].cast<int64_t>(), a[4].cast<int64_t>());
  const MxTensor tb = mx_tensor_of(b[0], b[1], b[2].cast<std::string>(), b[3].cast<int64_t>(), b[4].cast<int64_t>());
  Result<BinaryFormat> acc = parse_format(accumulate);
  if (!acc.ok()) raise_invalid(acc.status().message(), "accumulate");
  Result<MxMatmulResult> r = Status::error(ErrorCode::kInternal, "internal: mx_matmul did not run");
  {
    py::gil_scoped_release release;
    r = mx_matmul(ta, tb, *acc);
  }
  MxMatmulResult m = unwrap(std::move(r));
  return py::make_tuple(to_numpy(std::move(m.y)), flags_dict(m.flags));
}

}  // namespace

void register_mx(py::module_& m) {
  m.def("_mx_quantize", &quantize, py::arg("x"), py::arg("format"), py::arg("block"), py::arg("axis"),
        "(elements, scales, axis, flags): the OCP MX conversion (denote.mx_quantize wraps it).");
  m.def("_mx_dequantize", &dequantize, py::arg("elements"), py::arg("scales"), py::arg("format"), py::arg("block"),
        py::arg("axis"), "X * P_i exactly, float64 (denote.mx_dequantize wraps it).");
  m.def("_mx_matmul", &matmul, py::arg("a"), py::arg("b"), py::arg("accumulate"),
        "(values, flags) of an MX matrix product (denote.mx_matmul wraps it).");
}

}  // namespace denote::python
