// run_ibp over the generic evaluator's node step, and its double-valued entry for the CLI.
#include "denote/bounds/ibp.h"

#include <algorithm>
#include <cmath>

#include "bounds/ibp_rules.h"

namespace denote {

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
                                      to_string(g.nodes[input_ids[k]].out_shape)));
  IbpResult<S> out;
  out.boxes.resize(g.nodes.size());
  out.notes.resize(g.nodes.size());
  ValueTable<S> table(g.nodes.size());
  std::vector<Shape> shapes;
  std::vector<const Tensor<S>*> parents;
  size_t next_input = 0;
  for (const Node& n : g.nodes) {
    const Tensor<S>* supplied = n.op == Op::Input ? &inputs[next_input++] : nullptr;
    std::string why;
    for (int64_t p : n.parents)
      if (!out.boxes[p]) {
        why = fmt::format("parent {} has no box", p);
        break;
      }
    if (why.empty()) {
      ctx.take_error();
      const Status s = detail::eval_node(n, table, payload, supplied, ctx, options, shapes, parents);
      if (s.ok()) {
        out.boxes[n.id] = table[n.id];
        continue;
      }
      why = s.message();
    }
    out.notes[n.id] = why;
  }
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

Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 std::string_view arith, const EvalOptions& options) {
  if (arith == "f64") {
    IntervalContext<NativeEndpoints<double>> ctx;
    return ibp_in(ctx, g, payload, inputs, options);
  }
  if (arith == "f32") {
    IntervalContext<NativeEndpoints<float>> ctx;
    return ibp_in(ctx, g, payload, inputs, options);
  }
  auto f = parse_format(arith);
  if (!f.ok()) return error_status("IR bounds: arith " + std::string(arith) + ": expected f64, f32 or a binary format (" + f.message() + ")");
  IntervalContext<BinaryEndpoints> ctx{BinaryEndpoints(*f)};
  return ibp_in(ctx, g, payload, inputs, options);
}

}  // namespace denote
