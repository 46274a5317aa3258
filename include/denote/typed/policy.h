// Mixed precision as hardware and PyTorch run it: a precision policy lowers a model to a typed graph
// (include/denote/typed/interp.h) in which every op computes in the accumulation format on operands
// held in the storage format, and its result is rounded once back to storage. For bfloat16 or
// binary16 storage with binary32 accumulation this is what torch's CPU kernels (and autocast's
// "opmath") do: a Linear's products are exact in binary32, its sums round in binary32 and the output
// rounds once to bfloat16 (docs/NUMERICS.md, "Precision policies").
//
//   PrecisionPolicy p = *make_policy("bfloat16", "binary32");
//   Result<LoweredPolicy> l = lower_policy(model, p);
//   Result<PolicyValues> y = run_policy(*l, inputs, model.output_ids);
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/scalar/binary_format.h"
#include "denote/base/eval_options.h"
#include "denote/typed/interp.h"
#include "denote/tensor/mx.h"

namespace denote {

struct PrecisionPolicy {
  BinaryFormat storage;     // inputs, parameters and every op's result
  BinaryFormat accumulate;  // every op computes in it; holds every storage value exactly
  Rounding rounding = Rounding::NearestEven;
  // Per node of the model, optional (empty: `storage` everywhere, every computing node's value
  // rounded). node_storage[k]: node k's own storage format (torch.autocast: bfloat16 for a Linear,
  // binary32 elsewhere); an operand held in a wider format is rounded to it first, as autocast casts
  // a Linear's float32 input. materialized[k] false: node k is an interior piece of one source op (a
  // torch call captured as several IR ops), whose value stays in the accumulation format.
  std::vector<BinaryFormat> node_storage;
  std::vector<bool> materialized;
  // A policy file's overrides of `storage` per op kind ("softmax", "layernorm": binary32, as autocast's
  // float32 ops) and per node id; node_storage, where set, decides alone. Precedence: node, op, storage.
  std::map<Op, BinaryFormat> op_storage;
  std::map<int64_t, BinaryFormat> node_formats;
};

// The accumulation format must hold every storage value (at least its precision and exponent
// range, and its specials); errors name the field (storage, accumulate). set_node_storage checks
// each node's format the same way (field node_storage).
Result<PrecisionPolicy> make_policy(std::string_view storage, std::string_view accumulate,
                                    Rounding rounding = Rounding::NearestEven);
Status set_node_storage(PrecisionPolicy& p, std::span<const std::string> formats);
// A policy file (docs/NUMERICS.md "Precision policies"): {"storage": F, "accumulate": F, "rounding": R,
// "ops": {TAG: F, ...}, "nodes": {"ID": F, ...}}, storage and accumulate required; errors name the
// key (field "ops.softmax", "nodes.7", ...). Node ids are checked against the model by lower_policy.
Result<PrecisionPolicy> parse_policy_json(std::string_view text);

// The typed model of `m` under `p`: each input node takes storage words and is cast to the
// accumulation format; parameters are rounded to their node's storage format and constants to the
// accumulation format (a Python scalar in torch's opmath); each computing node keeps its op, its
// operands held in a wider format are rounded to its format first, and its value is followed by casts
// to storage and back (unless it is not materialized); layout ops move values unchanged; every
// output is a storage value. The output ids keep the order of m.output_ids. Errors name the node:
// casts, integer, random and custom nodes have no policy meaning. node_of[k] is the id in the
// lowered model of a node holding node k's value (a storage value, or the same value in the
// accumulation format for constants and layout ops).
struct LoweredPolicy {
  PrecisionPolicy policy;
  TypedModel tm;
  std::vector<int64_t> node_of;
};
Result<LoweredPolicy> lower_policy(const Model& m, const PrecisionPolicy& p);

// Runs a lowered model: float inputs rounded to storage (flags kept; a value storage cannot hold is
// an error naming the input), the typed interpreter, and the exact values of the nodes `ids` of the
// original model (values[k] for ids[k]).
struct PolicyValues {
  std::vector<Tensor<double>> values;
  uint32_t flags = 0;
};
Result<PolicyValues> run_policy(const LoweredPolicy& l, std::span<const Tensor<double>> inputs,
                                std::span<const int64_t> ids, const typed::TypedOptions& o = {});

// An MX policy (OCP MX v1.0): every linear node's weights are quantized once along their input axis
// and its input along its last axis at run time, in blocks of `block`; its product is mx_matmul's
// (exact block sums, binary32 block-order sums) plus the bias in binary32. Every other op, and a
// matmul of two activations, computes in binary32 (IEEE flags; the conversions' flags join them).
struct MxPolicy {
  MxFormat activations, weights;
  int64_t block = 32;
  Rounding rounding = Rounding::NearestEven;  // of the binary32 operations (conversions round to nearest even)
  // Per-tensor scaled FP8 instead of MX blocks (",scale=tensor", FP8 formats only): torch's float8
  // recipe, one binary32 scale max_fp8 / amax per tensor (src/typed/fp8_scaled.h).
  bool per_tensor = false;
};
// Names as mx_quantize's; `weights` empty: the activations' format.
Result<MxPolicy> make_mx_policy(std::string_view activations, std::string_view weights = {}, int64_t block = 32);
// "mxfp8_e4m3", "mxfp8_e4m3,weights=mxfp4_e2m1,block=16", "mxfp8_e4m3,scale=tensor" (per-tensor
// scaled FP8; run's --arith / arith=); is_mx_spec: the
// text names an MX format (starts with "mx").
Result<MxPolicy> parse_mx_policy(std::string_view spec);
bool is_mx_spec(std::string_view spec);
// Quantizes the weights once (errors name the node); then run() evaluates at float inputs.
class MxRunner {
 public:
  static Result<MxRunner> prepare(const Model& m, const MxPolicy& p);
  Result<PolicyValues> run(std::span<const Tensor<double>> inputs, std::span<const int64_t> ids,
                           const EvalOptions& o = {}) const;

 private:
  struct Prepared;  // the quantized weights and the binary32 parameters (src/typed/mx_run.cc)
  const Model* model_ = nullptr;
  MxPolicy policy_;
  std::shared_ptr<const Prepared> prepared_;
};

// What a run asks for, as `denote run`/`bench` and Python's Model.run take it: a storage format and an
// accumulation format, an MX arithmetic (arith "mx..."), a policy file's text, or (arith empty, no
// file) a capture's own node formats. One parse for the CLI and Python (tools/denote/policy_cli.cc,
// python/src/run_policy.cc).
struct PolicyRequest {
  std::string arith, accumulate;
  bool policy_given = false;  // a policy file is (or will be) given: arith and accumulate stay empty
  std::string policy_json;    // its text (prepare_policy_runner only)
  Rounding rounding = Rounding::NearestEven;
  std::vector<std::string> node_formats;  // a capture's formats, one per node (arith empty)
  std::vector<bool> materialized;         // a capture's torch values, one per node (any policy; may be empty)
};

// The options' own errors, before any file or model (field arith, accumulate or policy).
Status check_policy_request(const PolicyRequest& r);

// A prepared policy (the lowered typed graph or the MX runner; the model must outlive it).
class PolicyRunner {
 public:
  // check_policy_request, then the file's text (errors field policy) and the model (errors name the node).
  static Result<PolicyRunner> prepare(const Model& m, const PolicyRequest& r);
  Result<PolicyValues> run(std::span<const Tensor<double>> inputs, std::span<const int64_t> ids,
                           int64_t max_bytes = 0) const;

 private:
  std::shared_ptr<const LoweredPolicy> lowered_;
  std::shared_ptr<const MxRunner> mx_;
};

}  // namespace denote
