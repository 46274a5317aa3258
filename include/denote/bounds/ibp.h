// Interval bound propagation (IBP): every node of a graph gets a box (an interval per element)
// that contains all its values when the inputs range over the input boxes, both as exact reals
// and as computed in the endpoint arithmetic (see interval.h). The generic evaluator's rules run
// over IntervalContext; a node whose rule has no sound box (an error of the rule or of the
// context), or whose parent has none, gets std::nullopt and a note saying why: never an error.
//
//   IntervalContext<NativeEndpoints<double>> ctx;
//   auto r = run_ibp(graph, payload, input_boxes, ctx);    // r->boxes[i]: optional box of node i
//   // type-erased, doubles in and out, for the CLI:
//   auto boxes = run_ibp_double(model.graph, model.payload, {DoubleBox{{4}, lo, hi}}, "binary32");
//   // the same, prepared once for many boxes:
//   auto prep = IbpPrepared::prepare(model.graph, model.payload, "f32");
//   auto boxes2 = run_ibp_double(*prep, {DoubleBox{{4}, lo, hi}});
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "denote/base/status.h"
#include "denote/bounds/interval.h"
#include "denote/eval/eval.h"
#include "denote/ir/graph.h"
#include "denote/ir/payload.h"
#include "denote/scalar/arith_spec.h"
#include "denote/tensor/tensor.h"

namespace denote {

template <class S>
struct IbpResult {
  std::vector<std::optional<Tensor<S>>> boxes;  // one per node, in id order
  std::vector<std::string> notes;               // why a node has no box ("" where it has one)
};

// Errors only for a graph that is not well formed or the wrong number of input boxes; input boxes
// must have the input nodes' shapes (checked: an error otherwise).
template <class E>
Result<IbpResult<Interval<typename E::Value>>> run_ibp(const Graph& g, const Payload<Interval<typename E::Value>>& payload,
                                                       std::span<const Tensor<Interval<typename E::Value>>> inputs,
                                                       IntervalContext<E>& ctx, const EvalOptions& options = {});

#define DENOTE_DECLARE_IBP(E)                                                                                  \
  extern template Result<IbpResult<Interval<E::Value>>> run_ibp<E>(                                           \
      const Graph&, const Payload<Interval<E::Value>>&, std::span<const Tensor<Interval<E::Value>>>,           \
      IntervalContext<E>&, const EvalOptions&);
DENOTE_DECLARE_IBP(NativeEndpoints<double>)
DENOTE_DECLARE_IBP(NativeEndpoints<float>)
DENOTE_DECLARE_IBP(BinaryEndpoints)

// A box of doubles: lo[i] <= hi[i], same length as the shape's element count.
struct DoubleBox {
  Shape shape;
  std::vector<double> lo, hi;
  bool operator==(const DoubleBox&) const = default;
};

struct DoubleIbp {
  std::vector<std::optional<DoubleBox>> boxes;
  std::vector<std::string> notes;
};

// The box [center - eps, center + eps] (eps >= 0, finite values); an error otherwise.
Result<DoubleBox> box_around(const Tensor<double>& center, double eps);

// IBP in the endpoint arithmetic `arith` (f64, f32, or a binary format name / binary(E,F)):
// inputs and parameters enter rounded outward, boxes leave widened outward to doubles (exact for
// formats inside binary64). Errors: unknown arith, box count or shape mismatch, NaN endpoints,
// lo > hi.
Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 std::string_view arith, const EvalOptions& options = {});
// The same with the arithmetic parsed once (scalar/arith.h): f64, f32 or a binary format (real: an error).
Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 const ArithSpec& arith, const EvalOptions& options = {});

// A model prepared once for many IBP calls on the same weights (branch and bound, input splitting,
// benchmarks): the payload rounded outward into the arith's intervals, and each linear node whose
// weights are points there (an f32 model under f32, any model under f64) as one dense matrix that
// the midpoint-radius product reads four rows at a time (AVX-512 / AVX2 / baseline). The graph and
// payload are referenced, not copied: they must outlive the object, unchanged. Copies share the
// prepared data. prepare() reports what run_ibp_double would about the arith and the parameters.
namespace crown {
class ConvPlans;  // src/bounds/crown_conv.h
}

class IbpPrepared {
 public:
  static Result<IbpPrepared> prepare(const Graph& g, const Payload<double>& payload, std::string_view arith);
  static Result<IbpPrepared> prepare(const Graph& g, const Payload<double>& payload, const ArithSpec& arith);
  const Graph& graph() const;
  const Payload<double>& payload() const;
  const ArithSpec& arith() const;
  // Linear nodes that run on the dense product (the others use the interval rule).
  int64_t dense_linear_nodes() const;
  // Whether run_ibp_double runs on plain double arrays (every node an input, constant, same-order
  // view, relu, elementwise add / sub / mul / div, dense linear node or conv with point weights; f32
  // or f64): the same boxes bit for bit, faster.
  bool array_pass() const;
  // A linear node's weights as floats (out x in, row-major), when the model was prepared for f32 and
  // every weight is a float exactly (so the floats equal the payload's doubles); else nullptr.
  const float* exact_f32_weights(int64_t node) const;
  // parameter_range_gap(payload, arith), computed once by prepare().
  const std::string& parameter_gap() const;
  // The conv nodes' CROWN plans, built on first use and shared by every copy (internal).
  crown::ConvPlans* conv_plans() const;
  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<const Impl> impl_;
};

// Where rounding the parameters into the arithmetic leaves the relative error model that linear
// bounds (CROWN) rest on: a parameter that is not exactly a value of the format and rounds outside
// its normal range (f32: 1e-46 -> 0, 1e-45 -> 2^-149, 3.5e38 -> inf), or a non-finite parameter.
// "" where the model holds (always for f64 parameters that are finite); else what and where. IBP
// is sound either way (its endpoints round each parameter outward).
std::string parameter_range_gap(const Payload<double>& payload, const ArithSpec& arith);

// One node's IBP box from the given boxes of its parents (in order), by the node's rule in the
// prepared model's arithmetic as run_ibp_double's walk applies it: a box for the exact value and the
// evaluation's wherever the parents' values lie in theirs. nullopt where the rule gives none (a missing
// parent box, a value the endpoints cannot bound, an input node).
std::optional<DoubleBox> ibp_node_box(const IbpPrepared& model, const Node& n, std::span<const DoubleBox* const> parents);

// run_ibp_double on a prepared model: the same boxes up to the order of the linear sums (both sound).
Result<DoubleIbp> run_ibp_double(const IbpPrepared& model, std::span<const DoubleBox> inputs,
                                 const EvalOptions& options = {});

// A batch of samples of a one-input model (auto_LiRPA's leading batch axis): node `node`'s box for
// each input box (each of the input node's shape; nullopt where the node gets none). Where
// array_pass() holds the batch is one double-array pass: the dense products sample by sample (the
// same boxes as run_ibp_double's, bit for bit), each conv one batched product over all samples (the
// same up to the order of its sums, both sound); otherwise sample by sample. The memory limit of
// `options` counts the whole batch's values.
Result<std::vector<std::optional<DoubleBox>>> run_ibp_batch(const IbpPrepared& model, std::span<const DoubleBox> samples,
                                                            int64_t node, const EvalOptions& options = {});

}  // namespace denote
