// The typed reference interpreter: evaluates a graph whose inputs and constants carry dtypes
// (binary formats, bool, ints of any width), node by node in id order (no recursion). Every node's
// shape rule (infer_shape) applies to its actual parents. Per node:
//   input, const          the supplied / payload tensor (its dtype and shape are checked)
//   storage-only ops      (reshape, flatten, permute, transpose, concat, broadcast_to, detach) move
//                         element words of any dtype unchanged
//   cast                  typed::cast_tensor to CastAttrs::dtype in CastAttrs::rounding (flags kept)
//   ints / bool           the pointwise ops of int_ops.h; clamp_min's bound must be an integer of
//                         the dtype; a pow node's work on int(W > 64) is bounded by max_pow_work
//   binary formats        the op's own eval rule over BinaryContext(format, rounding); parameters
//                         of linear/conv/... come from the f64 payload rounded to the format
// Parents of different dtypes without a cast are an error naming the node; random ops
// (rand_uniform, bernoulli_mask) and custom nodes are not available here.
//
//   TypedModel tm = *read_typed_model_json(text);         // io/json_typed.h
//   Result<TypedRun> r = typed::eval_typed(tm, inputs);  // inputs in Graph::input_ids() order
//   typed::words(r->table[tm.model.output_ids[0]]);
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/scalar/binary_format.h"
#include "denote/typed/dtype.h"
#include "denote/typed/int_ops.h"
#include "denote/typed/value.h"

namespace denote {

// A model plus the dtypes of its inputs and its typed constants.
struct TypedModel {
  Model model;
  std::map<int64_t, typed::DType> input_dtypes;    // one per input node
  std::map<int64_t, typed::TypedTensor> consts;    // one per const node
};

namespace typed {

struct TypedOptions {
  Rounding rounding = Rounding::NearestEven;  // of binary-format arithmetic (casts name their own)
  int64_t max_elements = int64_t{1} << 31;    // per value
  int64_t max_bytes = 0;                      // memory budget of the live values (0: half the machine)
  int64_t max_pow_work = kDefaultMaxPowWork;  // per pow node on int(W > 64), bit-squarings (int_ops.h: pow_work)
};

struct TypedRun {
  std::vector<TypedTensor> table;  // one value per node
  uint32_t flags = 0;              // FpFlag bits raised by binary arithmetic and casts
};

Result<TypedRun> eval_typed(const TypedModel& m, std::span<const TypedTensor> inputs, const TypedOptions& o = {});

}  // namespace typed
}  // namespace denote
