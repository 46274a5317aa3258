// numpy arrays <-> denote tensors. Float arrays become Tensor<double> (one memcpy for a C-contiguous
// float64 array); integer and bool arrays become typed tensors of the matching dtype; results leave
// as numpy arrays that own the tensor's storage (no copy).
#include <cstring>

#include <fmt/format.h>

#include "common.h"
#include "denote/base/eval_options.h"
#include "denote/typed/dtype.h"
#include "denote/typed/value.h"

namespace denote::python {

namespace {

std::string dtype_text(const py::dtype& dt) { return py::str(static_cast<const py::handle&>(dt)).cast<std::string>(); }

std::string shape_text(const py::array& a) {
  return to_string(Shape(a.shape(), a.shape() + a.ndim()));
}

// The typed dtype name of a numpy dtype ("" when numpy's dtype has no denote counterpart).
std::string typed_name(const py::dtype& dt) {
  const char kind = dt.kind();
  const int64_t bits = 8 * static_cast<int64_t>(dt.itemsize());
  if (kind == 'b' && bits == 8) return "bool";
  if ((kind == 'i' || kind == 'u') && (bits == 8 || bits == 16 || bits == 32 || bits == 64))
    return fmt::format("{}int{}", kind == 'u' ? "u" : "", bits);
  if (kind == 'f' && (bits == 16 || bits == 32 || bits == 64)) return fmt::format("binary{}", bits);
  return "";
}

// The numpy dtype of a typed dtype, if numpy has it.
std::optional<py::dtype> numpy_dtype(const typed::DType& t) {
  if (t.is_bool()) return py::dtype::of<bool>();
  const std::string name = typed::dtype_name(t);
  static const char* kNames[][2] = {{"int8", "int8"},     {"int16", "int16"},     {"int32", "int32"},
                                    {"int64", "int64"},   {"uint8", "uint8"},     {"uint16", "uint16"},
                                    {"uint32", "uint32"}, {"uint64", "uint64"},   {"binary16", "float16"},
                                    {"binary32", "float32"}, {"binary64", "float64"}};
  for (const auto& [ours, theirs] : kNames)
    if (name == ours) return py::dtype(theirs);
  return std::nullopt;
}

// Why numpy could not take `obj`: a MemoryError propagates as itself, a torch tensor that requires
// grad gets its own text; anything else is not an array.
[[noreturn]] void not_an_array(const py::handle& obj, const std::string& what) {
  PyErr_Clear();
  // pybind11's ensure() cleared numpy's own exception: convert once more to see it (failures only).
  try {
    py::module_::import("numpy").attr("asarray")(obj);
  } catch (py::error_already_set& e) {
    if (e.matches(PyExc_MemoryError) || e.matches(PyExc_KeyboardInterrupt)) throw;
  }
  if (py::hasattr(obj, "requires_grad") && py::bool_(obj.attr("requires_grad")))
    raise_invalid(what + ": a torch tensor that requires grad; pass tensor.detach() (Model.grad computes gradients)");
  raise_invalid(what + ": expected a numpy array (or nested lists of numbers)");
}

// A torch tensor (requires_grad, on a device, or not) is read through tensor.detach().cpu().numpy(): only
// its values are read, so an auto_LiRPA user's x passes as it is.
bool torch_like(const py::handle& obj) {
  return py::hasattr(obj, "detach") && py::hasattr(obj, "cpu") && py::hasattr(obj, "numpy");
}

// tensor.detach().cpu().numpy(), through float32 for the float dtypes numpy lacks (bfloat16, the fp8
// types: every value of theirs is a float32).
py::object torch_values(const py::handle& obj) {
  py::object t = obj.attr("detach")().attr("cpu")();
  const std::string dtype = py::str(t.attr("dtype"));
  if (dtype.find("bfloat16") != std::string::npos || dtype.find("float8") != std::string::npos) t = t.attr("float")();
  return t.attr("numpy")();
}

py::array contiguous(const py::handle& obj, const std::string& what) {
  py::array a = py::array::ensure(obj, py::array::c_style);
  if (!a && torch_like(obj)) {
    PyErr_Clear();
    py::object values = torch_values(obj);
    a = py::array::ensure(values, py::array::c_style);
  }
  if (!a) not_an_array(obj, what);
  return a;
}

}  // namespace

std::string Label::str() const { return index < 0 ? std::string(what) : fmt::format("{} {}", what, index); }

EvalOptions eval_options(const std::optional<int64_t>& max_memory) {
  static const int64_t kDefaultBytes = default_max_bytes();
  EvalOptions o;
  o.max_bytes = kDefaultBytes;
  if (max_memory) {
    if (*max_memory < 1) raise_invalid("max_memory: expected a byte count >= 1", "max_memory");
    o.max_bytes = *max_memory;
  }
  return o;
}

bool is_integral_array(const py::handle& obj) {
  if (!py::isinstance<py::array>(obj)) return false;
  const char kind = py::reinterpret_borrow<py::array>(obj).dtype().kind();
  return kind == 'i' || kind == 'u' || kind == 'b';
}

template <class S>
py::array_t<S, py::array::c_style | py::array::forcecast> float_array(const py::handle& given, const Label& label,
                                                                     bool allow_int) {
  py::object values;  // a torch tensor's values as a numpy array (torch_like)
  if (!py::isinstance<py::array>(given) && torch_like(given)) values = torch_values(given);
  const py::handle obj = values ? values : given;
  if (py::isinstance<py::array>(obj)) {
    const py::array a = py::reinterpret_borrow<py::array>(obj);
    const char kind = a.dtype().kind();
    const bool ok = kind == 'f' || (allow_int && (kind == 'i' || kind == 'u' || kind == 'b'));
    if (!ok)
      raise_invalid(fmt::format("{}: expected a float array, got dtype {}", label.str(), dtype_text(a.dtype())), "dtype");
  }
  using Array = py::array_t<S, py::array::c_style | py::array::forcecast>;
  Array a = Array::ensure(obj);
  if (!a) not_an_array(given, label.str());
  return a;
}

template <class S>
Tensor<S> to_tensor_as(const py::handle& obj, const Label& label, bool allow_int) {
  const auto a = float_array<S>(obj, label, allow_int);
  Tensor<S> t;
  t.shape.assign(a.shape(), a.shape() + a.ndim());
  t.data.resize(static_cast<size_t>(a.size()));
  if (a.size() > 0) std::memcpy(t.data.data(), a.data(), t.data.size() * sizeof(S));
  return t;
}

template py::array_t<double, py::array::c_style | py::array::forcecast> float_array<double>(const py::handle&,
                                                                                            const Label&, bool);
template Tensor<double> to_tensor_as<double>(const py::handle&, const Label&, bool);
template Tensor<float> to_tensor_as<float>(const py::handle&, const Label&, bool);

Tensor<double> to_tensor(const py::handle& obj, const Label& label, bool allow_int) {
  return to_tensor_as<double>(obj, label, allow_int);
}

template <class S>
py::array owned(Shape shape, std::vector<S>&& data) {
  auto* v = new std::vector<S>(std::move(data));
  py::capsule owner(v, [](void* p) { delete static_cast<std::vector<S>*>(p); });
  return py::array_t<S>(std::vector<py::ssize_t>(shape.begin(), shape.end()), v->data(), owner);
}

py::array to_numpy(Shape shape, std::vector<double>&& data) { return owned<double>(std::move(shape), std::move(data)); }
py::array to_numpy(Tensor<double>&& t) { return owned<double>(std::move(t.shape), std::move(t.data)); }
py::array to_numpy(Tensor<float>&& t) { return owned<float>(std::move(t.shape), std::move(t.data)); }

typed::TypedTensor to_typed(const py::handle& obj, const std::optional<typed::DType>& declared, const Shape& shape,
                            const std::string& what) {
  const py::array a = contiguous(obj, what);
  const std::string name = typed_name(a.dtype());
  if (name.empty())
    raise_invalid(fmt::format("{}: dtype {} has no denote dtype (expected bool, int8..int64, uint8..uint64, "
                              "float16/32/64)", what, dtype_text(a.dtype())), "dtype");
  typed::DType dt = unwrap(typed::parse_dtype(name));
  if (declared && !(*declared == dt)) {
    const bool words = !numpy_dtype(*declared) && a.dtype().kind() == 'u' &&
                       8 * static_cast<int64_t>(a.dtype().itemsize()) >= typed::bit_width(*declared);
    if (!words)
      raise_invalid(fmt::format("{}: the input has dtype {}, got a numpy array of dtype {}{}", what,
                                typed::dtype_name(*declared), dtype_text(a.dtype()),
                                numpy_dtype(*declared) ? "" : " (give its element words as an unsigned array)"),
                    "dtype");
    dt = *declared;
  }
  const Shape got(a.shape(), a.shape() + a.ndim());
  if (got != shape)
    raise_invalid(fmt::format("{}: expected shape {}, got shape {}", what, to_string(shape), shape_text(a)), "shape");
  const size_t size = static_cast<size_t>(a.itemsize());
  const int64_t width = typed::bit_width(dt);
  const uint64_t mask = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  std::vector<Word> words(static_cast<size_t>(a.size()));
  const auto* bytes = static_cast<const unsigned char*>(a.data());
  for (size_t i = 0; i < words.size(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, bytes + i * size, size);  // little-endian hosts (x86-64, aarch64)
    words[i] = Word::of(v & mask);           // a signed integer as its two's-complement bits
  }
  return unwrap(typed::load(dt, shape, words));
}

py::object typed_to_numpy(const typed::TypedTensor& t) {
  const std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
  const std::optional<py::dtype> dt = numpy_dtype(t.dtype);
  const int64_t n = t.size();
  if (dt || typed::bit_width(t.dtype) <= 64) {
    py::array out(dt ? *dt : py::dtype::of<uint64_t>(), shape);
    const size_t size = static_cast<size_t>(out.itemsize());
    auto* bytes = static_cast<unsigned char*>(out.mutable_data());
    for (int64_t i = 0; i < n; ++i) {
      uint64_t w = typed::word_at(t, i).low();
      // Sign-extend a negative signed integer to the numpy item.
      const int64_t width = typed::bit_width(t.dtype);
      if (dt && t.dtype.is_int() && t.dtype.is_signed && width < 64 && ((w >> (width - 1)) & 1)) w |= ~uint64_t{0} << width;
      std::memcpy(bytes + static_cast<size_t>(i) * size, &w, size);
    }
    return out;
  }
  // Wider integers: exact Python ints.
  py::array out(py::dtype("O"), shape);
  py::list values;
  for (int64_t i = 0; i < n; ++i) values.append(py::int_(py::str(typed::format_element(t.dtype, typed::word_at(t, i)))));
  py::module_::import("numpy").attr("copyto")(out, py::module_::import("numpy").attr("array")(values, "O").attr("reshape")(shape));
  return out;
}

}  // namespace denote::python
