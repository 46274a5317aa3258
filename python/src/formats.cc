// denote.format_op: exact elementwise add/sub/mul of a software binary format of at most 16 bits on
// numpy uint16 arrays of its words (fast_add_n16 & co., include/denote/scalar/binary_fast.h): the
// storage numpy and PyTorch use for bfloat16 (`t.view(torch.int16)`) and fp8 words.
#include <fmt/format.h>

#include "common.h"
#include "denote/scalar/binary_fast.h"
#include "denote/scalar/binary_format.h"

namespace denote::python {

namespace {

using Words = py::array_t<uint16_t, py::array::c_style>;
using PackedOp = bool (*)(const FastFormat&, FpEnv&, const uint16_t*, const uint16_t*, uint16_t*, size_t);

// The uint16 array itself (C order); anything else raises naming the argument.
Words words_of(const py::handle& obj, const char* what) {
  const py::array arr = py::array::ensure(obj);
  if (!arr || arr.dtype().kind() != 'u' || arr.itemsize() != 2)
    raise_invalid(fmt::format("{}: expected a numpy uint16 array of format words", what), what);
  return Words::ensure(arr);
}

py::tuple format_op(const std::string& op, const py::handle& a_obj, const py::handle& b_obj,
                    const std::string& format, const std::string& rounding) {
  PackedOp fn = nullptr;
  if (op == "add") fn = &fast_add_n16;
  if (op == "sub") fn = &fast_sub_n16;
  if (op == "mul") fn = &fast_mul_n16;
  if (fn == nullptr) raise_invalid(fmt::format("op {}: expected add, sub or mul", op), "op");
  const BinaryFormat f = unwrap(parse_format(format));
  const std::optional<FastFormat> ff = FastFormat::of(f);
  if (!ff || f.storage_bits() > 16)
    raise_invalid(fmt::format("format {}: expected a format of at most 16 bits (bfloat16, binary16, fp8, ...)", format),
                  "format");
  const std::optional<Rounding> mode = parse_rounding(rounding);
  if (!mode)
    raise_invalid(fmt::format("rounding {}: expected nearest-even, toward-zero, upward, downward or nearest-away",
                              rounding), "rounding");
  const Words a = words_of(a_obj, "a"), b = words_of(b_obj, "b");
  if (a.ndim() != b.ndim() || !std::equal(a.shape(), a.shape() + a.ndim(), b.shape()))
    raise_invalid("b: expected the shape of a", "b");
  Words out(std::vector<py::ssize_t>(a.shape(), a.shape() + a.ndim()));
  FpEnv env{*mode, 0, {}};
  {
    py::gil_scoped_release release;
    fn(*ff, env, a.data(), b.data(), out.mutable_data(), static_cast<size_t>(a.size()));
  }
  if (!env.error.empty()) raise_invalid(env.error, "words");
  return py::make_tuple(std::move(out), flags_dict(env.flags));
}

}  // namespace

void register_formats(py::module_& m) {
  m.def("format_op", &format_op, py::arg("op"), py::arg("a"), py::arg("b"), py::arg("format") = "bfloat16",
        py::arg("rounding") = "nearest-even",
        R"doc(Exact elementwise a op b (op: "add", "sub" or "mul") of a software binary format of at most 16
bits (bfloat16, binary16, the fp8/fp6/fp4 encodings, small binary(E,F)) on numpy uint16 arrays of its
words, in any rounding mode. Returns (words, flags): a uint16 array of a's shape and the IEEE flags raised
over the whole array as a dict. Bit for bit the words and flags of the general routines, through the
vectorised kernels of docs/NUMERICS.md ("Packed words"). A word with bits above the format's width
raises InvalidInputError.)doc");
}

}  // namespace denote::python
