// The typed reference interpreter (include/denote/typed/interp.h) as a pass of the graph walker
// (src/eval/walk.h). Storage-only ops and binary-format arithmetic call the op table's eval rule
// for the node itself: storage ops run over F64Context on element indices (exact below 2^53),
// which then pick the element words; binary ops run over BinaryContext.
#include "denote/typed/interp.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>

#include "denote/typed/cast.h"
#include "denote/typed/int_ops.h"
#include "../eval/node_rule.h"
#include "../eval/walk.h"

namespace denote::typed {

namespace {

using Parents = std::span<const TypedTensor* const>;

// A typed rule's error; the walker attributes it to the node.
Status node_error(const Node&, const std::string& what, ErrorCode code = ErrorCode::kEval) {
  return Status::error(code, what);
}

Result<TypedTensor> eval_storage(const Node& n, Parents parents, const Shape& out_shape, const EvalOptions& eo) {
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
  std::vector<const Tensor<double>*> ptrs;
  for (const Tensor<double>& t : idx) ptrs.push_back(&t);
  F64Context ctx;
  const Payload<double> none;
  DENOTE_ASSIGN_OR_RETURN(Tensor<double> r, detail::apply_table_rule(ctx, rules::EvalArgs<double>{
                                                                              n, ptrs, none, out_shape, nullptr, eo}));
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
Payload<FpWord> node_payload(const Model& m, const Node& n, const BinaryContext& ctx) {
  const int64_t id = n.id;
  Payload<double> p;
  if (auto* r = find_record(m.payload.linear, n.id)) p.linear[id] = *r;
  if (auto* r = find_record(m.payload.conv, n.id)) p.conv[id] = *r;
  if (auto* r = find_record(m.payload.batch_norm, n.id)) p.batch_norm[id] = *r;
  if (auto* r = find_record(m.payload.layernorm, n.id)) p.layernorm[id] = *r;
  return convert_payload<FpWord>(p, [&](double v) { return ctx.from_double(v); });
}

Result<TypedTensor> eval_binary(const Model& m, const Node& n, Parents parents, const Shape& out_shape,
                                const TypedOptions& o, const EvalOptions& eo, uint32_t& flags) {
  const DType& t = parents[0]->dtype;
  BinaryContext ctx(t.format, o.rounding);
  std::vector<Tensor<FpWord>> in;
  for (const TypedTensor* p : parents) {
    std::vector<FpWord> d;
    for (uint64_t w : p->limbs) d.push_back(FpWord{w});
    in.emplace_back(p->shape, std::move(d));
  }
  std::vector<const Tensor<FpWord>*> ptrs;
  for (const Tensor<FpWord>& x : in) ptrs.push_back(&x);
  const Payload<FpWord> payload = node_payload(m, n, ctx);
  auto r = detail::apply_table_rule(ctx, rules::EvalArgs<FpWord>{n, ptrs, payload, out_shape, nullptr, eo});
  flags |= ctx.flags();
  if (!r.ok()) return r.status();
  TypedTensor out{t, r->shape, {}};
  for (const FpWord& w : r->data) out.limbs.push_back(w.bits);
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

Result<TypedTensor> eval_int(const Node& n, Parents parents, const TypedOptions& o) {
  const TypedTensor& a = *parents[0];
  if (Status s = check_int_op(n.op, a.dtype); !s.ok()) return node_error(n, s.message());
  std::optional<TypedTensor> bound;
  if (op_info(n.op).attr == AttrKind::Clamp) {  // clamp_min: the bound is an attribute
    DENOTE_ASSIGN_OR_RETURN(bound, clamp_bound(n, a));
  }
  const TypedTensor* b = bound ? &*bound : parents.size() > 1 ? parents[1] : nullptr;
  auto r = apply_tensors(n.op, a, b, o.max_pow_work);
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

Result<TypedTensor> eval_source(const TypedModel& m, const Node& n, const TypedTensor* supplied) {
  const TypedTensor* v = supplied;
  if (n.op == Op::Input) {
    auto t = m.input_dtypes.find(n.id);
    if (t == m.input_dtypes.end()) return node_error(n, "the input has no dtype");
    if (!(v->dtype == t->second))
      return node_error(n, fmt::format("input dtype mismatch: expected {}, got {}", dtype_name(t->second),
                                       dtype_name(v->dtype)))
          .with_field("input");
  } else {
    auto c = m.consts.find(n.id);
    if (c == m.consts.end()) return node_error(n, "missing typed const payload (dtype and words)").with_field("words");
    v = &c->second;
  }
  if (v->shape != n.out_shape || v->size() != numel(n.out_shape))
    return node_error(n, fmt::format("shape mismatch: expected {}, got {}", to_string(n.out_shape),
                                     to_string(v->shape)));
  return *v;
}

Result<TypedTensor> eval_one(const TypedModel& m, const Node& n, Parents parents, const Shape& out_shape,
                             const TypedOptions& o, const EvalOptions& eo, uint32_t& flags) {
  if (has_flag(n.op, kFlagRandom) || op_info(n.op).attr == AttrKind::Custom || parents.empty())
    return node_error(n, fmt::format("{} is not available in typed execution", op_tag(n.op)), ErrorCode::kUnsupported);
  if (op_info(n.op).attr == AttrKind::Cast) return eval_cast(n, *parents[0], flags);
  for (const TypedTensor* p : parents)
    if (!(p->dtype == parents[0]->dtype))
      return node_error(n, fmt::format("parents have different dtypes ({} and {}); insert a cast",
                                       dtype_name(parents[0]->dtype), dtype_name(p->dtype)))
          .with_field("parents");
  if (has_flag(n.op, kFlagStorageOnly)) return eval_storage(n, parents, out_shape, eo);
  if (parents[0]->dtype.is_binary()) return eval_binary(m.model, n, parents, out_shape, o, eo, flags);
  return eval_int(n, parents, o);
}

// The typed interpreter as a walker pass.
struct TypedPass {
  using Value = TypedTensor;
  const TypedModel& m;
  const TypedOptions& o;
  const EvalOptions& eo;
  uint32_t& flags;

  static const Shape& shape_of(const Value& v) { return v.shape; }
  static bool well_sized(const Value& v) {
    return v.limbs.size() == static_cast<size_t>(numel(v.shape)) * limb_count(v.dtype);
  }
  // The widest dtype of the model's inputs and constants bounds every value's limbs (casts can
  // widen, so at least one limb per element is counted).
  int64_t bytes_per_element() const {
    size_t limbs = 1;
    for (const auto& [id, t] : m.input_dtypes) limbs = std::max(limbs, limb_count(t));
    for (const auto& [id, c] : m.consts) limbs = std::max(limbs, limb_count(c.dtype));
    return static_cast<int64_t>(limbs * sizeof(uint64_t));
  }
  Result<Value> visit(const Node& n, Parents parents, const Shape& out_shape, const Value* supplied) {
    if (n.op == Op::Input || n.op == Op::Const) return eval_source(m, n, supplied);
    return eval_one(m, n, parents, out_shape, o, eo, flags);
  }
};

}  // namespace

Result<TypedRun> eval_typed(const TypedModel& m, std::span<const TypedTensor> inputs, const TypedOptions& o) {
  TypedRun run;
  walk::Config cfg;
  cfg.options.max_elements = o.max_elements;
  cfg.options.max_bytes = o.max_bytes;
  TypedPass pass{m, o, cfg.options, run.flags};
  std::vector<bool> present;
  DENOTE_RETURN_IF_ERROR(walk::forward(m.model.graph, pass, inputs, cfg, run.table, present));
  return run;
}

}  // namespace denote::typed
