// The typed reference interpreter (include/denote/typed/interp.h). Storage-only ops and binary-format
// arithmetic reuse the existing eval rules on a one-node graph whose inputs are the node's actual
// parents: storage ops run over F64Context on element indices (exact below 2^53), which then pick
// the element words; binary ops run over BinaryContext.
#include "denote/typed/interp.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/typed/cast.h"
#include "denote/typed/int_ops.h"

namespace denote::typed {

namespace {

using Parents = std::vector<const TypedTensor*>;

Status node_error(const Node& n, const std::string& what) {
  return error_status(fmt::format("IR eval: node {}: {} ({})", n.id, what, summary(n)));
}

Status check_shape_rule(const Node& n, const Parents& parents, int64_t max_elements) {
  std::vector<Shape> shapes;
  for (const TypedTensor* p : parents) shapes.push_back(p->shape);
  auto inferred = infer_shape(n, shapes);
  if (!inferred.ok())
    return inferred.message().rfind("IR ", 0) == 0 ? inferred.status() : node_error(n, inferred.message());
  if (*inferred != n.out_shape)
    return node_error(n, "produced shape mismatch: produced=" + to_string(*inferred) +
                             ", declared=" + to_string(n.out_shape));
  if (numel(*inferred) > max_elements)
    return node_error(n, fmt::format("{} elements exceed the evaluation limit of {}", numel(*inferred), max_elements));
  return ok_status();
}

// The node alone, fed by one input node per parent (ids 0..k-1), itself with id k.
Graph mini_graph(const Node& n, const Parents& parents) {
  Graph g;
  for (size_t k = 0; k < parents.size(); ++k)
    g.nodes.push_back(Node{static_cast<int64_t>(k), {}, Op::Input, NoAttrs{}, parents[k]->shape});
  Node c = n;
  c.id = static_cast<int64_t>(parents.size());
  c.parents.clear();
  for (size_t k = 0; k < parents.size(); ++k) c.parents.push_back(static_cast<int64_t>(k));
  g.nodes.push_back(std::move(c));
  return g;
}

// An error of the one-node graph, told about the real node.
Status remap_error(const Status& s, const Graph& mini, const Node& n) {
  const Node& c = mini.nodes.back();
  const std::string prefix = fmt::format("IR eval: node {}: ", c.id), suffix = fmt::format(" ({})", summary(c));
  const std::string& m = s.message();
  if (m.starts_with(prefix) && m.ends_with(suffix) && m.size() >= prefix.size() + suffix.size())
    return node_error(n, m.substr(prefix.size(), m.size() - prefix.size() - suffix.size()));
  return node_error(n, m);
}

Result<TypedTensor> eval_storage(const Node& n, const Parents& parents, const TypedOptions& o) {
  const Graph g = mini_graph(n, parents);
  std::vector<Tensor<double>> idx;
  std::vector<std::pair<const TypedTensor*, int64_t>> owner;  // global index -> (parent, local index)
  for (const TypedTensor* p : parents) {
    std::vector<double> d;
    for (int64_t i = 0; i < p->size(); ++i) {
      d.push_back(static_cast<double>(owner.size()));
      owner.emplace_back(p, i);
    }
    idx.emplace_back(p->shape, std::move(d));
  }
  F64Context ctx;
  EvalOptions eo;
  eo.max_elements = o.max_elements;
  auto table = denote_all(g, Payload<double>{}, std::span<const Tensor<double>>(idx), ctx, eo);
  if (!table.ok()) return remap_error(table.status(), g, n);
  const Tensor<double>& r = table->back();
  const DType& t = parents[0]->dtype;
  const size_t l = limb_count(t);
  TypedTensor out{t, r.shape, std::vector<uint64_t>(r.data.size() * l, 0)};
  for (size_t i = 0; i < r.data.size(); ++i) {
    const auto& [p, j] = owner[static_cast<size_t>(r.data[i])];
    const auto src = p->element(j);
    std::copy(src.begin(), src.end(), out.limbs.begin() + static_cast<std::ptrdiff_t>(i * l));
  }
  return out;
}

// The node's own parameter records, re-keyed to the one-node graph's id and rounded to the format.
Payload<FpWord> node_payload(const Model& m, const Node& n, int64_t id, const BinaryContext& ctx) {
  Payload<double> p;
  if (auto* r = find_record(m.payload.linear, n.id)) p.linear[id] = *r;
  if (auto* r = find_record(m.payload.conv, n.id)) p.conv[id] = *r;
  if (auto* r = find_record(m.payload.batch_norm, n.id)) p.batch_norm[id] = *r;
  if (auto* r = find_record(m.payload.layernorm, n.id)) p.layernorm[id] = *r;
  return convert_payload<FpWord>(p, [&](double v) { return ctx.from_double(v); });
}

Result<TypedTensor> eval_binary(const Model& m, const Node& n, const Parents& parents, const TypedOptions& o,
                                uint32_t& flags) {
  const DType& t = parents[0]->dtype;
  const Graph g = mini_graph(n, parents);
  BinaryContext ctx(t.format, o.rounding);
  std::vector<Tensor<FpWord>> in;
  for (const TypedTensor* p : parents) {
    std::vector<FpWord> d;
    for (uint64_t w : p->limbs) d.push_back(FpWord{w});
    in.emplace_back(p->shape, std::move(d));
  }
  EvalOptions eo;
  eo.max_elements = o.max_elements;
  const Payload<FpWord> payload = node_payload(m, n, g.nodes.back().id, ctx);
  auto table = denote_all(g, payload, std::span<const Tensor<FpWord>>(in), ctx, eo);
  flags |= ctx.flags();
  if (!table.ok()) return remap_error(table.status(), g, n);
  TypedTensor out{t, table->back().shape, {}};
  for (const FpWord& w : table->back().data) out.limbs.push_back(w.bits);
  return out;
}

// clamp_min's bound as a word of the int dtype: an integer in its range.
Result<TypedTensor> clamp_bound(const Node& n, const TypedTensor& x) {
  const double b = std::get<ClampAttrs>(n.attrs).bound;
  if (!std::isfinite(b) || b != std::trunc(b) || std::fabs(b) >= 0x1p63)
    return node_error(n, fmt::format("clamp_min bound {} is not an integer of {}", b, dtype_name(x.dtype)));
  const int64_t v = static_cast<int64_t>(b);
  Element e{0, false, v < 0, Word::of(v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v))};
  auto w = write(x.dtype, e);
  if (!w.ok()) return node_error(n, fmt::format("clamp_min bound {}: {}", b, w.message()));
  std::vector<Word> ws(static_cast<size_t>(x.size()), *w);
  return load(x.dtype, x.shape, ws);
}

Result<TypedTensor> eval_int(const Node& n, const Parents& parents) {
  const TypedTensor& a = *parents[0];
  if (Status s = check_int_op(n.op, a.dtype); !s.ok()) return node_error(n, s.message());
  std::optional<TypedTensor> bound;
  if (n.op == Op::ClampMin) {
    DENOTE_ASSIGN_OR_RETURN(bound, clamp_bound(n, a));
  }
  const TypedTensor* b = bound ? &*bound : parents.size() > 1 ? parents[1] : nullptr;
  auto r = apply_tensors(n.op, a, b);
  if (!r.ok()) return node_error(n, r.message());
  return r;
}

Result<TypedTensor> eval_cast(const Node& n, const TypedTensor& x, uint32_t& flags) {
  const CastAttrs& c = std::get<CastAttrs>(n.attrs);
  auto target = parse_dtype(c.dtype);
  if (!target.ok()) return node_error(n, "cast target: " + target.message());
  const std::optional<Rounding> mode = parse_rounding(c.rounding);
  if (!mode) return node_error(n, fmt::format("cast: unknown rounding mode '{}'", c.rounding));
  auto r = cast_tensor(x, *target, *mode, flags);
  if (!r.ok()) return node_error(n, r.message());
  return r;
}

Result<TypedTensor> eval_source(const TypedModel& m, const Node& n, std::span<const TypedTensor> inputs,
                                size_t& next_input) {
  const TypedTensor* v = nullptr;
  if (n.op == Op::Input) {
    if (next_input >= inputs.size()) return node_error(n, "no input tensor supplied");
    v = &inputs[next_input++];
    auto t = m.input_dtypes.find(n.id);
    if (t == m.input_dtypes.end()) return node_error(n, "the input has no dtype");
    if (!(v->dtype == t->second))
      return node_error(n, fmt::format("input dtype mismatch: expected {}, got {}", dtype_name(t->second),
                                       dtype_name(v->dtype)));
  } else {
    auto c = m.consts.find(n.id);
    if (c == m.consts.end()) return node_error(n, "missing typed const payload (dtype and words)");
    v = &c->second;
  }
  if (v->shape != n.out_shape || v->size() != numel(n.out_shape))
    return node_error(n, fmt::format("shape mismatch: expected {}, got {}", to_string(n.out_shape),
                                     to_string(v->shape)));
  return *v;
}

Result<TypedTensor> eval_one(const TypedModel& m, const Node& n, const Parents& parents, const TypedOptions& o,
                             uint32_t& flags) {
  if (has_flag(n.op, kFlagRandom) || n.op == Op::Custom || parents.empty())
    return node_error(n, fmt::format("{} is not available in typed execution", op_tag(n.op)));
  if (n.op == Op::Cast) return eval_cast(n, *parents[0], flags);
  for (const TypedTensor* p : parents)
    if (!(p->dtype == parents[0]->dtype))
      return node_error(n, fmt::format("parents have different dtypes ({} and {}); insert a cast",
                                       dtype_name(parents[0]->dtype), dtype_name(p->dtype)));
  if (has_flag(n.op, kFlagStorageOnly)) return eval_storage(n, parents, o);
  if (parents[0]->dtype.is_binary()) return eval_binary(m.model, n, parents, o, flags);
  return eval_int(n, parents);
}

}  // namespace

Result<TypedRun> eval_typed(const TypedModel& m, std::span<const TypedTensor> inputs, const TypedOptions& o) {
  const Graph& g = m.model.graph;
  DENOTE_RETURN_IF_ERROR(check_well_formed(g));
  if (inputs.size() != g.input_ids().size())
    return error_status(fmt::format("IR eval: expected {} input tensors, got {}", g.input_ids().size(), inputs.size()));
  TypedRun run;
  run.table.reserve(g.size());
  size_t next_input = 0;
  Parents parents;
  for (const Node& n : g.nodes) {
    parents.clear();
    for (int64_t p : n.parents) parents.push_back(&run.table[static_cast<size_t>(p)]);
    DENOTE_RETURN_IF_ERROR(check_shape_rule(n, parents, o.max_elements));
    Result<TypedTensor> v = n.op == Op::Input || n.op == Op::Const ? eval_source(m, n, inputs, next_input)
                                                                   : eval_one(m, n, parents, o, run.flags);
    if (!v.ok()) return v.status();
    run.table.push_back(std::move(*v));
  }
  return run;
}

}  // namespace denote::typed
