// run_ibp over the generic evaluator's node step, and its double-valued entry for the CLI.
#include "denote/bounds/ibp.h"

#include <algorithm>
#include <cmath>

#include "bounds/ibp_rules.h"
#include "denote/scalar/arith.h"

namespace denote {

namespace {

// IBP is evaluation over the interval context, except that a node whose rule fails (no sound box)
// or whose parent has no box gets a note instead of stopping the walk.
template <class E>
struct IbpPass : detail::EvalPass<IntervalContext<E>, detail::TableRule<IntervalContext<E>>> {
  std::vector<std::string>* notes;
  Status on_error(const Node& n, const Status& s) {
    // Running out of the memory budget is no property of the box: the run stops.
    if (s.code() == ErrorCode::kResource) return s;
    // A missing parent box is a short note; the rule errors keep their full text.
    (*notes)[static_cast<size_t>(n.id)] = s.field() == "parents" ? s.detail() : s.message();
    return ok_status();
  }
};

}  // namespace

template <class E>
Result<IbpResult<Interval<typename E::Value>>> run_ibp(const Graph& g, const Payload<Interval<typename E::Value>>& payload,
                                                       std::span<const Tensor<Interval<typename E::Value>>> inputs,
                                                       IntervalContext<E>& ctx, const EvalOptions& options) {
  using S = Interval<typename E::Value>;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  const std::vector<int64_t> input_ids = g.input_ids();
  if (inputs.size() != input_ids.size())
    return error_status(fmt::format("IR bounds: expected {} input boxes, got {}", input_ids.size(), inputs.size()));
  for (size_t k = 0; k < inputs.size(); ++k)
    if (inputs[k].shape != g.nodes[input_ids[k]].out_shape ||
        inputs[k].data.size() != static_cast<size_t>(numel(inputs[k].shape)))
      return error_status(fmt::format("IR bounds: input box {} has shape {}, node {} declares {}", k,
                                      to_string(inputs[k].shape), input_ids[k],
                                      to_string(g.nodes[input_ids[k]].out_shape)))
          .with_field("input");
  IbpResult<S> out;
  out.notes.resize(g.nodes.size());
  IbpPass<E> pass{{ctx, payload, options, {}}, &out.notes};
  walk::Config cfg;
  cfg.options = options;
  cfg.structure_checked = true;
  cfg.value_noun = "box";
  ValueTable<S> table;
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(g, pass, inputs, cfg, table, present));
  out.boxes.resize(g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i)
    if (present[i]) out.boxes[i] = std::move(table[i]);
  return out;
}

#define DENOTE_INSTANTIATE_IBP(E)                                                                               \
  template Result<IbpResult<Interval<E::Value>>> run_ibp<E>(const Graph&, const Payload<Interval<E::Value>>&,   \
                                                            std::span<const Tensor<Interval<E::Value>>>,        \
                                                            IntervalContext<E>&, const EvalOptions&);
DENOTE_INSTANTIATE_IBP(NativeEndpoints<double>)
DENOTE_INSTANTIATE_IBP(NativeEndpoints<float>)
DENOTE_INSTANTIATE_IBP(BinaryEndpoints)

Result<DoubleBox> box_around(const Tensor<double>& center, double eps) {
  if (!(eps >= 0) || !std::isfinite(eps)) return error_status(fmt::format("IR bounds: eps must be a finite number >= 0, got {}", eps));
  DoubleBox b{center.shape, {}, {}};
  for (double c : center.data) {
    if (!std::isfinite(c)) return error_status(fmt::format("IR bounds: the center has a non-finite value {}", c));
    // Outward: the double sums are rounded to nearest, so step once outside.
    b.lo.push_back(std::nextafter(c - eps, -INFINITY));
    b.hi.push_back(std::nextafter(c + eps, INFINITY));
    if (eps == 0) b.lo.back() = b.hi.back() = c;
  }
  return b;
}

namespace {

Status check_box(const DoubleBox& b, size_t k) {
  if (b.lo.size() != b.hi.size() || b.lo.size() != static_cast<size_t>(numel(b.shape)))
    return error_status(fmt::format("IR bounds: input box {}: lo has {} values, hi {}, the shape {} needs {}", k,
                                    b.lo.size(), b.hi.size(), to_string(b.shape), numel(b.shape)));
  for (size_t i = 0; i < b.lo.size(); ++i) {
    if (std::isnan(b.lo[i]) || std::isnan(b.hi[i]))
      return error_status(fmt::format("IR bounds: input box {}: element {} has a nan endpoint", k, i));
    if (b.lo[i] > b.hi[i])
      return error_status(fmt::format("IR bounds: input box {}: element {} has lo {} > hi {}", k, i, b.lo[i], b.hi[i]));
  }
  return ok_status();
}

template <class E>
Result<DoubleIbp> ibp_in(IntervalContext<E>& ctx, const Graph& g, const Payload<double>& payload,
                         std::span<const DoubleBox> inputs, const EvalOptions& options) {
  using S = Interval<typename E::Value>;
  std::vector<Tensor<S>> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    DENOTE_RETURN_IF_ERROR(check_box(inputs[k], k));
    std::vector<S> data;
    for (size_t i = 0; i < inputs[k].lo.size(); ++i) data.push_back(ctx.make(inputs[k].lo[i], inputs[k].hi[i]));
    in.emplace_back(inputs[k].shape, std::move(data));
  }
  const Payload<S> p = convert_payload<S>(payload, [&](double v) { return ctx.from_double(v); });
  // A value the endpoint format cannot bound (NaN after rounding, a saturated overflow) is an error.
  if (std::string err = ctx.take_error(); !err.empty())
    return error_status("IR bounds: an input or parameter has no box: " + err);
  for (size_t k = 0; k < in.size(); ++k)
    for (size_t i = 0; i < in[k].data.size(); ++i)
      if (ctx.is_nan(in[k].data[i]))
        return error_status(fmt::format("IR bounds: input box {}: element {} is not representable in the arith", k, i));
  auto has_nan = [&](const std::vector<S>& v) {
    return std::any_of(v.begin(), v.end(), [&](const S& x) { return ctx.is_nan(x); });
  };
  for (const auto& [id, rec] : p.linear)
    if (has_nan(rec.weight) || has_nan(rec.bias))
      return error_status(fmt::format("IR bounds: node {}: a parameter is not representable in the arith", id));
  DENOTE_ASSIGN_OR_RETURN(auto r, run_ibp(g, p, std::span<const Tensor<S>>(in), ctx, options));
  DoubleIbp out;
  out.notes = std::move(r.notes);
  for (const auto& box : r.boxes) {
    if (!box) {
      out.boxes.emplace_back();
      continue;
    }
    DoubleBox b{box->shape, {}, {}};
    for (const S& v : box->data) {
      b.lo.push_back(ctx.lo_double(v));
      b.hi.push_back(ctx.hi_double(v));
    }
    out.boxes.push_back(std::move(b));
  }
  return out;
}

}  // namespace

// The interval endpoints for a point context: the same arithmetic, rounded outward.
template <class Ctx>
struct EndpointsFor;
template <>
struct EndpointsFor<F64Context> {
  static NativeEndpoints<double> make(const F64Context&) { return {}; }
};
template <>
struct EndpointsFor<F32Context> {
  static NativeEndpoints<float> make(const F32Context&) { return {}; }
};
template <>
struct EndpointsFor<BinaryContext> {
  static BinaryEndpoints make(const BinaryContext& c) { return BinaryEndpoints(c.format()); }
};

Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 std::string_view arith, const EvalOptions& options) {
  auto spec = parse_arith_name(arith, /*allow_real=*/false);
  if (!spec.ok())
    return error_status(ErrorCode::kInvalidInput,
                        "IR bounds: arith " + std::string(arith) + ": expected f64, f32 or a binary format (" +
                            spec.message() + ")")
        .with_field("arith");
  // The one arith dispatch (scalar/arith.h) picks the point context; its endpoints bound it.
  return visit_arith(*spec, [&](auto& point) -> Result<DoubleIbp> {
    using Point = std::decay_t<decltype(point)>;
    if constexpr (std::is_same_v<Point, RealContext>) {
      return error_status(ErrorCode::kInternal, "IR bounds: real arithmetic has no interval endpoints");
    } else {
      IntervalContext ctx{EndpointsFor<Point>::make(point)};
      return ibp_in(ctx, g, payload, inputs, options);
    }
  });
}

}  // namespace denote
