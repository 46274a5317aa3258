// run_ibp over the generic evaluator's node step, and its double-valued entry for the CLI.
#include "denote/bounds/ibp.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <map>
#include <variant>

#include "bounds/crown_conv.h"
#include "bounds/ibp_boxes.h"
#include "bounds/ibp_dense.h"
#include "bounds/ibp_pass.h"
#include "denote/scalar/arith.h"

namespace denote {

DENOTE_INSTANTIATE_IBP(NativeEndpoints<double>)
DENOTE_INSTANTIATE_IBP(NativeEndpoints<float>)
DENOTE_INSTANTIATE_IBP(BinaryEndpoints)

Result<DoubleBox> box_around(const Tensor<double>& center, double eps) {
  if (!(eps >= 0) || !std::isfinite(eps))
    return error_status(fmt::format("IR bounds: eps must be a finite number >= 0, got {}", eps));
  DoubleBox b{center.shape, {}, {}};
  for (double c : center.data) {
    if (!std::isfinite(c)) return error_status(fmt::format("IR bounds: the center has a non-finite value {}", c));
    // Outward: the double sums are rounded to nearest, so step once outside.
    b.lo.push_back(next_down(c - eps));
    b.hi.push_back(next_up(c + eps));
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

// The payload in E's intervals and the dense linear nodes, built once (IbpPrepared).
template <class E>
struct Prepared {
  using S = Interval<typename E::Value>;
  E endpoints;
  Payload<S> payload;
  ibp::DenseMap<E> dense;
  ibp::ConvMap conv;        // conv nodes with point weights: their plans (the model's ConvPlans)
  bool boxes_fit = false;  // the double-array pass runs the graph (src/bounds/ibp_boxes.h)
};

template <class E>
Result<Prepared<E>> prepare_in(E endpoints, const Graph& g, const Payload<double>& payload, crown::ConvPlans& plans) {
  using S = Interval<typename E::Value>;
  IntervalContext<E> ctx{endpoints};
  Prepared<E> p{std::move(endpoints), convert_payload<S>(payload, [&](double v) { return ctx.from_double(v); }), {}, {}};
  // A value the endpoint format cannot bound (NaN after rounding, a saturated overflow) is an error.
  if (std::string err = ctx.take_error(); !err.empty())
    return error_status("IR bounds: an input or parameter has no box: " + err);
  auto has_nan = [&](const std::vector<S>& v) {
    return std::any_of(v.begin(), v.end(), [&](const S& x) { return ctx.is_nan(x); });
  };
  for (const auto& [id, rec] : p.payload.linear) {
    if (has_nan(rec.weight) || has_nan(rec.bias))
      return error_status(fmt::format("IR bounds: node {}: a parameter is not representable in the arith", id));
    if constexpr (ibp::kHardwareEndpoints<E>)
      if (auto d = ibp::make_dense(ctx, rec)) p.dense.emplace(id, std::move(*d));
  }
  if constexpr (ibp::kHardwareEndpoints<E>) {
    for (const auto& [id, rec] : p.payload.conv) {  // the conv records, as the linear ones above
      if (id < 0 || id >= static_cast<int64_t>(g.nodes.size())) continue;
      const Node& n = g.nodes[static_cast<size_t>(id)];
      if (bound_kernel(n.op) != BoundKernel::Conv) continue;
      if (auto c = ibp::prepare_conv(ctx, g, payload, p.payload, n, plans)) p.conv.emplace(id, std::move(*c));
    }
    p.boxes_fit = ibp::boxes_pass_fits(g, p.dense, p.conv);
  }
  return p;
}

template <class E>
Result<DoubleIbp> run_prepared(const Graph& g, const Prepared<E>& p, std::span<const DoubleBox> inputs,
                               const EvalOptions& options) {
  using S = Interval<typename E::Value>;
  for (size_t k = 0; k < inputs.size(); ++k) DENOTE_RETURN_IF_ERROR(check_box(inputs[k], k));
  if constexpr (ibp::kHardwareEndpoints<E>)
    if (p.boxes_fit)
      if (auto fast = ibp::boxes_pass(g, p.endpoints, p.payload, p.dense, p.conv, inputs, options)) return std::move(*fast);
  IntervalContext<E> ctx{p.endpoints};
  std::vector<Tensor<S>> in;
  for (size_t k = 0; k < inputs.size(); ++k) {
    std::vector<S> data;
    data.reserve(inputs[k].lo.size());
    for (size_t i = 0; i < inputs[k].lo.size(); ++i) data.push_back(ctx.make(inputs[k].lo[i], inputs[k].hi[i]));
    in.emplace_back(inputs[k].shape, std::move(data));
  }
  if (std::string err = ctx.take_error(); !err.empty())
    return error_status("IR bounds: an input or parameter has no box: " + err);
  for (size_t k = 0; k < in.size(); ++k)
    for (size_t i = 0; i < in[k].data.size(); ++i)
      if (ctx.is_nan(in[k].data[i]))
        return error_status(fmt::format("IR bounds: input box {}: element {} is not representable in the arith", k, i));
  DENOTE_ASSIGN_OR_RETURN(auto r, ibp::run_ibp_with(g, p.payload, std::span<const Tensor<S>>(in), ctx, options, &p.dense, &p.conv));
  DoubleIbp out;
  out.notes = std::move(r.notes);
  out.boxes.reserve(r.boxes.size());
  for (const auto& box : r.boxes) {
    if (!box) {
      out.boxes.emplace_back();
      continue;
    }
    const size_t n = box->data.size();
    DoubleBox b{box->shape, std::vector<double>(n), std::vector<double>(n)};
    for (size_t i = 0; i < n; ++i) {  // indexed stores: push_back here was 16% of a prepared mnistfc pass
      b.lo[i] = ctx.lo_double(box->data[i]);
      b.hi[i] = ctx.hi_double(box->data[i]);
    }
    out.boxes.push_back(std::move(b));
  }
  return out;
}

// The batch as one double-array pass (run_ibp_batch): node `node`'s box per sample, or nullopt (the
// pass does not run the graph, or gave up: the samples then go one by one).
template <class E>
std::optional<std::vector<std::optional<DoubleBox>>> batch_prepared(const Graph& g, const Prepared<E>& p,
                                                                    std::span<const DoubleBox> samples, int64_t node,
                                                                    const EvalOptions& options) {
  if constexpr (!ibp::kHardwareEndpoints<E>) {
    return std::nullopt;
  } else {
    if (!p.boxes_fit) return std::nullopt;
    const Shape& in = samples[0].shape;
    const size_t per = samples[0].lo.size(), n = samples.size();
    DoubleBox joined{in, std::vector<double>(per * n), std::vector<double>(per * n)};
    for (size_t k = 0; k < n; ++k) {
      std::copy(samples[k].lo.begin(), samples[k].lo.end(), joined.lo.begin() + static_cast<std::ptrdiff_t>(k * per));
      std::copy(samples[k].hi.begin(), samples[k].hi.end(), joined.hi.begin() + static_cast<std::ptrdiff_t>(k * per));
    }
    auto r = ibp::boxes_pass(g, p.endpoints, p.payload, p.dense, p.conv, std::span<const DoubleBox>(&joined, 1), options,
                             static_cast<int64_t>(n), node);
    if (!r || !r->boxes[static_cast<size_t>(node)]) return std::nullopt;
    const DoubleBox& b = *r->boxes[static_cast<size_t>(node)];
    const size_t k = static_cast<size_t>(numel(b.shape));
    if (b.lo.size() != k && b.lo.size() != k * n) return std::nullopt;
    std::vector<std::optional<DoubleBox>> out(n);
    for (size_t s = 0; s < n; ++s) {  // a value that holds one box (the node reads no input) is every sample's
      const auto at = static_cast<std::ptrdiff_t>(b.lo.size() == k ? 0 : s * k);
      out[s] = DoubleBox{b.shape, std::vector<double>(b.lo.begin() + at, b.lo.begin() + at + static_cast<std::ptrdiff_t>(k)),
                         std::vector<double>(b.hi.begin() + at, b.hi.begin() + at + static_cast<std::ptrdiff_t>(k))};
    }
    return out;
  }
}

// One node's rule on the given parent boxes (ibp_node_box).
template <class E>
std::optional<DoubleBox> node_box(const Prepared<E>& p, const Node& n, std::span<const DoubleBox* const> parents) {
  using S = Interval<typename E::Value>;
  IntervalContext<E> ctx{p.endpoints};
  std::vector<Tensor<S>> in;
  in.reserve(parents.size());
  for (const DoubleBox* b : parents) {
    if (!b || b->lo.size() != b->hi.size()) return std::nullopt;
    std::vector<S> data(b->lo.size());
    for (size_t i = 0; i < data.size(); ++i) data[i] = ctx.make(b->lo[i], b->hi[i]);
    in.emplace_back(b->shape, std::move(data));
  }
  std::vector<const Tensor<S>*> ptrs;
  for (const Tensor<S>& t : in) ptrs.push_back(&t);
  if (!ctx.take_error().empty()) return std::nullopt;
  const EvalOptions options;
  ibp::IbpPass<E> pass{{ctx, p.payload, options, {}}, nullptr, &p.dense, &p.conv};  // notes: the walk's, unused here
  auto y = pass.visit(n, std::span<const Tensor<S>* const>(ptrs), n.out_shape, nullptr);
  if (!y.ok() || !ctx.take_error().empty() || y->data.size() != static_cast<size_t>(numel(n.out_shape)))
    return std::nullopt;
  const size_t k = y->data.size();
  DoubleBox b{y->shape, std::vector<double>(k), std::vector<double>(k)};
  for (size_t i = 0; i < k; ++i) {
    if (ctx.is_nan(y->data[i])) return std::nullopt;
    b.lo[i] = ctx.lo_double(y->data[i]);
    b.hi[i] = ctx.hi_double(y->data[i]);
  }
  return b;
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

struct IbpPrepared::Impl {
  const Graph* graph = nullptr;
  const Payload<double>* payload = nullptr;
  ArithSpec arith;
  std::variant<Prepared<NativeEndpoints<double>>, Prepared<NativeEndpoints<float>>, Prepared<BinaryEndpoints>> p;
  std::string parameter_gap;
  std::shared_ptr<crown::ConvPlans> conv_plans;
};

namespace {

// The first parameter of `values` outside the model, as "node N field[i] = v", or "".
std::string first_gap(const std::vector<double>& values, int64_t node, const char* field, bool f32) {
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    if (!std::isfinite(v))
      return fmt::format("node {} {}[{}] = {} is not finite", node, field, i, v);
    if (!f32) continue;
    const float f = static_cast<float>(v);
    const double a = std::fabs(v);
    if (static_cast<double>(f) != v && (a < static_cast<double>(FLT_MIN) || a > static_cast<double>(FLT_MAX)))
      return fmt::format("node {} {}[{}] = {:.17g} rounds to {:.9g} in binary32, outside its normal range", node, field,
                         i, v, f);
  }
  return "";
}

}  // namespace

std::string parameter_range_gap(const Payload<double>& p, const ArithSpec& arith) {
  const bool f32 = arith.is_f32();
  std::string g;
  auto scan = [&](const std::vector<double>& v, int64_t id, const char* field) {
    if (g.empty()) g = first_gap(v, id, field, f32);
  };
  for (const auto& [id, r] : p.consts) scan(r.values, id, "value");
  for (const auto& [id, r] : p.linear) scan(r.weight, id, "weight"), scan(r.bias, id, "bias");
  for (const auto& [id, r] : p.conv) scan(r.weight, id, "weight"), scan(r.bias, id, "bias");
  for (const auto& [id, r] : p.batch_norm)
    scan(r.gamma, id, "gamma"), scan(r.beta, id, "beta"), scan(r.mean, id, "mean"), scan(r.var, id, "var");
  for (const auto& [id, r] : p.layernorm) scan(r.gamma, id, "gamma"), scan(r.beta, id, "beta");
  return g;
}

Result<IbpPrepared> IbpPrepared::prepare(const Graph& g, const Payload<double>& payload, std::string_view arith) {
  auto spec = parse_arith_name(arith, /*allow_real=*/false);
  if (!spec.ok())
    return error_status(ErrorCode::kInvalidInput, "IR bounds: arith " + std::string(arith) +
                                                      ": expected f64, f32 or a binary format (" + spec.message() + ")")
        .with_field("arith");
  return prepare(g, payload, *spec);
}

Result<IbpPrepared> IbpPrepared::prepare(const Graph& g, const Payload<double>& payload, const ArithSpec& arith) {
  // The one arith dispatch (scalar/arith.h) picks the point context; its endpoints bound it.
  return visit_arith(arith, [&](auto& point) -> Result<IbpPrepared> {
    using Point = std::decay_t<decltype(point)>;
    if constexpr (std::is_same_v<Point, RealContext>) {
      return error_status(ErrorCode::kInvalidInput, "IR bounds: arith real: expected f64, f32 or a binary format "
                                                    "(real arithmetic has no interval endpoints)")
          .with_field("arith");
    } else {
      auto plans = std::make_shared<crown::ConvPlans>(g.nodes.size());
      DENOTE_ASSIGN_OR_RETURN(auto p, prepare_in(EndpointsFor<Point>::make(point), g, payload, *plans));
      IbpPrepared out;
      out.impl_ = std::make_shared<const Impl>(
          Impl{&g, &payload, arith, std::move(p), parameter_range_gap(payload, arith), std::move(plans)});
      return out;
    }
  });
}

const Graph& IbpPrepared::graph() const { return *impl_->graph; }
const Payload<double>& IbpPrepared::payload() const { return *impl_->payload; }
const ArithSpec& IbpPrepared::arith() const { return impl_->arith; }
const float* IbpPrepared::exact_f32_weights(int64_t node) const {
  const auto* p = std::get_if<Prepared<NativeEndpoints<float>>>(&impl_->p);
  if (!p) return nullptr;
  const auto it = p->dense.find(node);  // dense copies exist only for point (exactly float) weights
  return it == p->dense.end() || it->second.w.empty() ? nullptr : it->second.w.data();  // none when kept sparse
}
const std::string& IbpPrepared::parameter_gap() const { return impl_->parameter_gap; }
crown::ConvPlans* IbpPrepared::conv_plans() const { return impl_->conv_plans.get(); }
bool IbpPrepared::array_pass() const {
  return std::visit([](const auto& p) { return p.boxes_fit; }, impl_->p);
}
int64_t IbpPrepared::dense_linear_nodes() const {
  return std::visit([](const auto& p) { return static_cast<int64_t>(p.dense.size()); }, impl_->p);
}

Result<DoubleIbp> run_ibp_double(const IbpPrepared& model, std::span<const DoubleBox> inputs,
                                 const EvalOptions& options) {
  const IbpPrepared::Impl& m = model.impl();
  return std::visit([&](const auto& p) { return run_prepared(*m.graph, p, inputs, options); }, m.p);
}

Result<std::vector<std::optional<DoubleBox>>> run_ibp_batch(const IbpPrepared& model, std::span<const DoubleBox> samples,
                                                            int64_t node, const EvalOptions& options) {
  const Graph& g = model.graph();
  if (node < 0 || node >= static_cast<int64_t>(g.nodes.size()))
    return error_status(fmt::format("IR bounds: node {} is not in the graph ({} nodes)", node, g.nodes.size()))
        .with_field("node");
  const std::vector<int64_t> ids = g.input_ids();
  if (ids.size() != 1)
    return error_status(fmt::format("IR bounds: a batch of samples needs a model with one input, not {}", ids.size()))
        .with_field("input");
  const Shape& in = g.nodes[static_cast<size_t>(ids[0])].out_shape;
  for (size_t k = 0; k < samples.size(); ++k) {
    if (samples[k].shape != in)
      return error_status(fmt::format("IR bounds: sample {} has shape {}, the input node {} declares {}", k,
                                      to_string(samples[k].shape), ids[0], to_string(in)))
          .with_field("input");
    DENOTE_RETURN_IF_ERROR(check_box(samples[k], k));
  }
  if (samples.size() > 1) {
    auto joined = std::visit([&](const auto& p) { return batch_prepared(g, p, samples, node, options); }, model.impl().p);
    if (joined) return std::move(*joined);
  }
  std::vector<std::optional<DoubleBox>> out(samples.size());
  for (size_t k = 0; k < samples.size(); ++k) {
    DENOTE_ASSIGN_OR_RETURN(DoubleIbp r, run_ibp_double(model, samples.subspan(k, 1), options));
    out[k] = std::move(r.boxes[static_cast<size_t>(node)]);
  }
  return out;
}

std::optional<DoubleBox> ibp_node_box(const IbpPrepared& model, const Node& n,
                                      std::span<const DoubleBox* const> parents) {
  if (n.parents.empty()) return std::nullopt;  // inputs and constants: no step from parents
  return std::visit([&](const auto& p) { return node_box(p, n, parents); }, model.impl().p);
}

Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 std::string_view arith, const EvalOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(IbpPrepared p, IbpPrepared::prepare(g, payload, arith));
  return run_ibp_double(p, inputs, options);
}

Result<DoubleIbp> run_ibp_double(const Graph& g, const Payload<double>& payload, std::span<const DoubleBox> inputs,
                                 const ArithSpec& arith, const EvalOptions& options) {
  DENOTE_ASSIGN_OR_RETURN(IbpPrepared p, IbpPrepared::prepare(g, payload, arith));
  return run_ibp_double(p, inputs, options);
}

}  // namespace denote
