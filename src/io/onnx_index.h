// Internal: the index-moving helpers of the ONNX importer (src/io/onnx_index.cc), shared by the
// mappers of onnx_map_index.cc and onnx_map_select.cc. A Val is an operand that is either an
// import-time constant (folded on the host: shape arithmetic stays constant) or an IR node; every
// helper does the same thing to both, so a Slice of a constant is a constant and a Slice of a
// computed value is one `gather` node.
//
//   DENOTE_ASSIGN_OR_RETURN(Val x, operand(im, 0));
//   DENOTE_ASSIGN_OR_RETURN(x, gather_axis(im, std::move(x), 1, {0, 2}));   // x[:, [0, 2]]
//   return set_val(im, 0, std::move(x));
#pragma once

#include <optional>
#include <vector>

#include "onnx_import.h"

namespace denote::onnxio {

struct Val {
  std::optional<HostTensor> host;  // set: an import-time constant
  int64_t id = -1;                 // else: the IR node
  Shape shape;
};

// Input i of the current node as a Val.
Result<Val> operand(Importer& im, int i);
// Binds output `out` of the current node to v.
Status set_val(Importer& im, int out, Val v);
// v as an IR node (constants are materialized).
Result<int64_t> node_of(Importer& im, const Val& v);

// Along `axis`, output row j = input row idx[j]; idx[j] = -1 is a row of `fill` (padding). The
// identity is no node at all.
Result<Val> gather_axis(Importer& im, Val v, int64_t axis, std::vector<int64_t> idx, double fill = 0.0);
// Output element j (row-major over `shape`) = input element flat[j] (row-major); -1 = `fill`.
Result<Val> take_flat(Importer& im, Val v, const Shape& shape, std::vector<int64_t> flat, double fill = 0.0);
Result<Val> reshape_val(Importer& im, Val v, const Shape& to);
// Output axis i = input axis perm[i].
Result<Val> permute_val(Importer& im, Val v, const std::vector<int64_t>& perm);
// Numpy broadcast to `to` (a constant stays a constant).
Result<Val> broadcast_val(Importer& im, Val v, const Shape& to);

// Integer list of a constant input (1-D or scalar); nullopt when the input is absent.
Result<std::optional<std::vector<int64_t>>> const_int_list(Importer& im, int i, std::string_view what);
// An integer Add / Sub / Mul / Div ('+', '-', '*', '/': toward zero) of two constant operands,
// folded on the host (exporters' shape arithmetic); false (nothing done) for other operands.
Result<bool> fold_int_binary(Importer& im, char op);

// Row-major strides of a shape.
std::vector<int64_t> strides_of(const Shape& s);

}  // namespace denote::onnxio
