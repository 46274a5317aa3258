// Precision policies lowered to typed graphs (include/denote/typed/policy.h): one pass over the node
// array in id order, each node mapped to the node holding its value in the accumulation format.
#include "denote/typed/policy.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "denote/scalar/binary_ops.h"
#include "denote/typed/dtype.h"

namespace denote {
namespace {

Status policy_error(const Node& n, const std::string& what) {
  return Status::error(ErrorCode::kUnsupported, what)
      .with_node(n.id, fmt::format("policy: node {}: {} ({})", n.id, what, summary(n)));
}

// Whether every value of `s` is a value of `a` (precision, both exponent ends, and its specials).
bool holds(const BinaryFormat& a, const BinaryFormat& s) {
  return a.precision() >= s.precision() && a.emax() >= s.emax() && a.emin() - a.frac_bits <= s.emin() - s.frac_bits &&
         (a.has_inf() || !s.has_inf()) && (a.has_nan() || !s.has_nan()) && a.storage_bits() <= 64;
}

struct Lowering {
  const Model& m;
  const PrecisionPolicy& p;
  TypedModel out;
  std::vector<int64_t> value;   // old id -> new id of its value in the accumulation format
  std::vector<int64_t> stored;  // old id -> new id of its storage-format value (-1: none made)
  // old id -> the format its value is held in; nullptr: a one-element constant (torch's Python
  // scalar), which no op rounds to its own format
  std::vector<const BinaryFormat*> format;
  // old id -> an interior piece of a torch call (held in the accumulation format, not a torch value:
  // no operand rule applies to it, and a torch value moved out of it is rounded)
  std::vector<bool> interior;

  typed::DType acc() const { return typed::DType::binary(p.accumulate); }
  std::string rounding() const { return std::string(rounding_name(p.rounding)); }
  const BinaryFormat& storage_of(const Node& n) const {
    if (!p.node_storage.empty()) return p.node_storage[static_cast<size_t>(n.id)];
    if (auto it = p.node_formats.find(n.id); it != p.node_formats.end()) return it->second;
    if (auto it = p.op_storage.find(n.op); it != p.op_storage.end()) return it->second;
    return p.storage;
  }
  bool materialized(const Node& n) const {
    return p.materialized.empty() || p.materialized[static_cast<size_t>(n.id)];
  }

  int64_t add(Op op, std::vector<int64_t> parents, Attrs attrs, Shape shape) {
    const auto id = static_cast<int64_t>(out.model.graph.nodes.size());
    out.model.graph.nodes.push_back(Node{id, std::move(parents), op, std::move(attrs), std::move(shape)});
    return id;
  }
  int64_t cast(int64_t from, const BinaryFormat& to) {
    const Shape shape = out.model.graph.nodes[static_cast<size_t>(from)].out_shape;
    return add(Op::Cast, {from}, CastAttrs{to.name, rounding()}, shape);
  }
  // A value of the accumulation format rounded to `f` and held in the accumulation format again.
  std::pair<int64_t, int64_t> round_to(int64_t from, const BinaryFormat& f) {
    const int64_t s = cast(from, f);
    return {s, cast(s, p.accumulate)};
  }
  double rounded(double v, const BinaryFormat& f) const {
    FpEnv env{p.rounding, 0, {}};
    return word_to_double(f, fp_from_double(f, env, v, false));
  }
  void round_all(std::vector<double>& v, const BinaryFormat& f) const {
    for (double& x : v) x = rounded(x, f);
  }
  void copy_payload(int64_t old_id, int64_t id, const BinaryFormat& f);
  std::vector<int64_t> operands(const Node& n, const BinaryFormat& f);
  void push(int64_t v, int64_t s, const BinaryFormat* f, bool inside = false) {
    value.push_back(v);
    stored.push_back(s);
    format.push_back(f);
    interior.push_back(inside);
  }
  Status lower_layout(const Node& n, const BinaryFormat& f);
  Status lower(const Node& n);
};

void Lowering::copy_payload(int64_t old_id, int64_t id, const BinaryFormat& f) {
  const Payload<double>& from = m.payload;
  Payload<double>& to = out.model.payload;
  if (auto* r = find_record(from.linear, old_id)) {
    auto& c = to.linear[id] = *r;
    round_all(c.weight, f), round_all(c.bias, f);
  }
  if (auto* r = find_record(from.conv, old_id)) {
    auto& c = to.conv[id] = *r;
    round_all(c.weight, f), round_all(c.bias, f);
  }
  if (auto* r = find_record(from.batch_norm, old_id)) {
    auto& c = to.batch_norm[id] = *r;
    round_all(c.gamma, f), round_all(c.beta, f), round_all(c.mean, f), round_all(c.var, f);
  }
  if (auto* r = find_record(from.layernorm, old_id)) {
    auto& c = to.layernorm[id] = *r;
    round_all(c.gamma, f), round_all(c.beta, f);
  }
}

// The parents' values, each rounded to `f` first where it is held in a format `f` does not hold.
std::vector<int64_t> Lowering::operands(const Node& n, const BinaryFormat& f) {
  std::vector<int64_t> ids;
  for (int64_t q : n.parents) {
    const auto k = static_cast<size_t>(q);
    ids.push_back(format[k] == nullptr || interior[k] || holds(f, *format[k]) ? value[k]
                                                                              : round_to(value[k], f).second);
  }
  return ids;
}

// A layout op moves values: its format is the parents' widest (a moved scalar stays a scalar); a torch
// value it moves out of an interior piece (keepdim's reshape after a sum) is rounded to its format.
Status Lowering::lower_layout(const Node& n, const BinaryFormat& f) {
  std::vector<int64_t> ids;
  const BinaryFormat* held = nullptr;
  bool inside = false;
  for (int64_t q : n.parents) {
    const auto k = static_cast<size_t>(q);
    ids.push_back(value[k]);
    inside = inside || interior[k];
    if (format[k] != nullptr && !interior[k] && (held == nullptr || !holds(*held, *format[k]))) held = format[k];
  }
  const int64_t id = add(n.op, ids, n.attrs, n.out_shape);
  if (!inside) {
    push(id, -1, held);
  } else if (materialized(n)) {
    auto [s, v] = round_to(id, f);
    push(v, s, &f);
  } else {
    push(id, -1, &p.accumulate, true);
  }
  return ok_status();
}

Status Lowering::lower(const Node& n) {
  const BinaryFormat& f = storage_of(n);
  if (n.op == Op::Input) {
    const int64_t in = add(Op::Input, {}, n.attrs, n.out_shape);
    out.input_dtypes[in] = typed::DType::binary(f);
    push(cast(in, p.accumulate), in, &f);
    return ok_status();
  }
  if (n.op == Op::Const) {
    const ConstRecord<double>* r = find_record(m.payload.consts, n.id);
    if (r == nullptr) return policy_error(n, "a const without a payload value");
    const int64_t c = add(Op::Const, {}, n.attrs, n.out_shape);
    typed::TypedTensor t{acc(), n.out_shape, {}};
    for (double v : r->values) {
      FpEnv env{p.rounding, 0, {}};
      t.limbs.push_back(fp_from_double(p.accumulate, env, v, false));
    }
    // One element: a Python scalar in torch, kept in opmath by every op that reads it (nullptr).
    push(c, -1, t.limbs.size() == 1 ? nullptr : &p.accumulate);
    out.consts[c] = std::move(t);
    return ok_status();
  }
  const OpInfo& info = op_info(n.op);
  if (info.attr == AttrKind::Cast || info.attr == AttrKind::Custom || has_flag(n.op, kFlagRandom))
    return policy_error(n, fmt::format("{} has no meaning under a precision policy", op_tag(n.op)));
  if (has_flag(n.op, kFlagStorageOnly)) return lower_layout(n, f);
  const int64_t id = add(n.op, operands(n, f), n.attrs, n.out_shape);
  copy_payload(n.id, id, f);
  if (!materialized(n)) {  // not a torch value: no operand rule applies to it
    push(id, -1, &p.accumulate, true);
    return ok_status();
  }
  auto [s, v] = round_to(id, f);
  push(v, s, &f);
  return ok_status();
}

}  // namespace

Result<PrecisionPolicy> make_policy(std::string_view storage, std::string_view accumulate, Rounding rounding) {
  PrecisionPolicy p;
  p.rounding = rounding;
  Result<BinaryFormat> s = parse_format(storage);
  if (!s.ok()) return s.status().with_field("storage");
  Result<BinaryFormat> a = parse_format(accumulate);
  if (!a.ok()) return a.status().with_field("accumulate");
  if (!holds(*a, *s))
    return error_status(fmt::format("accumulation format {} does not hold every {} value (it needs at least its "
                                    "precision, exponent range and specials)",
                                    a->name, s->name))
        .with_field("accumulate");
  p.storage = *s;
  p.accumulate = *a;
  return p;
}

Status set_node_storage(PrecisionPolicy& p, std::span<const std::string> formats) {
  p.node_storage.clear();
  for (size_t k = 0; k < formats.size(); ++k) {
    Result<BinaryFormat> f = parse_format(formats[k]);
    if (!f.ok()) return error_status(fmt::format("node {}: {}", k, f.status().message())).with_field("node_storage");
    if (!holds(p.accumulate, *f))
      return error_status(fmt::format("node {}: accumulation format {} does not hold every {} value", k,
                                      p.accumulate.name, f->name))
          .with_field("node_storage");
    p.node_storage.push_back(*f);
  }
  return ok_status();
}

namespace {

Result<BinaryFormat> held_format(const PrecisionPolicy& p, const nlohmann::json& v, const std::string& key) {
  if (!v.is_string()) return error_status(fmt::format("policy: {}: expected a format name", key)).with_field(key);
  Result<BinaryFormat> f = parse_format(v.get<std::string>());
  if (!f.ok()) return error_status(fmt::format("policy: {}: {}", key, f.status().message())).with_field(key);
  if (!holds(p.accumulate, *f))
    return error_status(fmt::format("policy: {}: accumulation format {} does not hold every {} value", key,
                                    p.accumulate.name, f->name))
        .with_field(key);
  return f;
}

Status read_overrides(PrecisionPolicy& p, const nlohmann::json& doc) {
  for (const char* group : {"ops", "nodes"}) {
    if (!doc.contains(group)) continue;
    if (!doc[group].is_object())
      return error_status(fmt::format("policy: {}: expected an object of formats", group)).with_field(group);
    for (const auto& [k, v] : doc[group].items()) {
      const std::string key = std::string(group) + "." + k;
      DENOTE_ASSIGN_OR_RETURN(BinaryFormat f, held_format(p, v, key));
      if (std::string_view(group) == "ops") {
        const std::optional<Op> op = op_from_tag(k);
        if (!op) return error_status(fmt::format("policy: {}: unknown op '{}'", key, k)).with_field(key);
        p.op_storage[*op] = f;
      } else {
        if (k.empty() || k.size() > 18 || k.find_first_not_of("0123456789") != std::string::npos)
          return error_status(fmt::format("policy: {}: expected a node id", key)).with_field(key);
        p.node_formats[std::stoll(k)] = f;
      }
    }
  }
  return ok_status();
}

}  // namespace

Result<PrecisionPolicy> parse_policy_json(std::string_view text) {
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) return error_status("policy: expected a JSON object");
  for (const auto& [k, v] : doc.items())
    if (k != "storage" && k != "accumulate" && k != "rounding" && k != "ops" && k != "nodes")
      return error_status(fmt::format("policy: unknown key '{}' (expected storage, accumulate, rounding, ops, nodes)",
                                      k))
          .with_field(k);
  for (const char* key : {"storage", "accumulate"})
    if (!doc.contains(key) || !doc[key].is_string())
      return error_status(fmt::format("policy: {}: expected a format name", key)).with_field(key);
  Rounding mode = Rounding::NearestEven;
  if (doc.contains("rounding")) {
    const std::optional<Rounding> r = doc["rounding"].is_string() ? parse_rounding(doc["rounding"].get<std::string>())
                                                                  : std::nullopt;
    if (!r) return error_status("policy: rounding: expected nearest-even, toward-zero, upward, downward or "
                                "nearest-away").with_field("rounding");
    mode = *r;
  }
  DENOTE_ASSIGN_OR_RETURN(PrecisionPolicy p, make_policy(doc["storage"].get<std::string>(),
                                                         doc["accumulate"].get<std::string>(), mode));
  DENOTE_RETURN_IF_ERROR(read_overrides(p, doc));
  return p;
}

Result<LoweredPolicy> lower_policy(const Model& m, const PrecisionPolicy& p) {
  const size_t n = m.graph.size();
  for (const auto& [id, f] : p.node_formats)
    if (id >= static_cast<int64_t>(n))
      return error_status(fmt::format("policy: nodes.{}: the model has {} nodes", id, n))
          .with_field("nodes." + std::to_string(id));
  if ((!p.node_storage.empty() && p.node_storage.size() != n) || (!p.materialized.empty() && p.materialized.size() != n))
    return error_status(fmt::format("policy: {} node formats and {} materialized flags for a model of {} nodes",
                                    p.node_storage.size(), p.materialized.size(), n))
        .with_field("node_storage");
  Lowering l{m, p, {}, {}, {}, {}, {}};
  for (const Node& node : m.graph.nodes) DENOTE_RETURN_IF_ERROR(l.lower(node));
  for (int64_t o : m.output_ids) {
    const auto k = static_cast<size_t>(o);
    int64_t& s = l.stored[k];
    if (s < 0) s = l.cast(l.value[k], l.storage_of(m.graph.nodes[k]));
    l.out.model.output_ids.push_back(s);
  }
  LoweredPolicy out{p, std::move(l.out), {}};
  for (size_t k = 0; k < l.value.size(); ++k) out.node_of.push_back(l.stored[k] >= 0 ? l.stored[k] : l.value[k]);
  return out;
}

Result<PolicyValues> run_policy(const LoweredPolicy& l, std::span<const Tensor<double>> inputs,
                                std::span<const int64_t> ids, const typed::TypedOptions& o) {
  PolicyValues out;
  std::vector<typed::TypedTensor> in;
  const std::vector<int64_t> ids_in = l.tm.model.graph.input_ids();
  if (ids_in.size() != inputs.size())
    return error_status(fmt::format("the model has {} input(s), got {}", ids_in.size(), inputs.size()))
        .with_field("input");
  for (size_t k = 0; k < inputs.size(); ++k) {
    FpEnv env{l.policy.rounding, 0, {}};
    const typed::DType& t_in = l.tm.input_dtypes.at(ids_in[k]);
    typed::TypedTensor t{t_in, inputs[k].shape, {}};
    t.limbs.reserve(inputs[k].data.size());
    for (double v : inputs[k].data) t.limbs.push_back(fp_from_double(t_in.format, env, v, false));
    if (!env.error.empty()) return error_status(fmt::format("input {}: {}", k, env.error)).with_field("input");
    out.flags |= env.flags;
    in.push_back(std::move(t));
  }
  DENOTE_ASSIGN_OR_RETURN(typed::TypedRun run, typed::eval_typed(l.tm, in, o));
  out.flags |= run.flags;
  for (int64_t id : ids) {
    if (id < 0 || static_cast<size_t>(id) >= l.node_of.size())
      return error_status(ErrorCode::kInternal, fmt::format("internal: run_policy: node {} is not in the model", id));
    const typed::TypedTensor& t = run.table[static_cast<size_t>(l.node_of[static_cast<size_t>(id)])];
    std::vector<double> v;
    v.reserve(t.limbs.size());
    for (uint64_t w : t.limbs) v.push_back(word_to_double(t.dtype.format, w));
    out.values.emplace_back(t.shape, std::move(v));
  }
  return out;
}

}  // namespace denote
