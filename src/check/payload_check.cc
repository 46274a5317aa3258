// The model check (check.h: diagnose_model, check_model): after the graph
// checks, every node's payload record and attributes are checked against the graph, so `check`
// refuses what evaluation would refuse for the model itself. The evaluator keeps its own checks
// (for models that were never checked); the texts are those rules' texts where they exist.
#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "../ops/normalization_eval.h"
#include "../ops/window_eval.h"
#include "denote/check/check.h"

namespace denote {

namespace {

using rules::eval_error;

// "IR graph: node {i}: {detail} ({summary})", attributed to node n.
Status at_node(const Node& n, const Status& s) {
  if (s.ok()) return s;
  return s.with_node(n.id, fmt::format("IR graph: node {}: {} ({})", n.id, s.detail(), summary(n)));
}

// Parameters must be finite: an infinite weight turns into NaN values (inf * 0, inf - inf) that no
// bound and no comparison can describe.
Status check_finite(const char* tag, const char* field, const std::vector<double>& v) {
  for (size_t k = 0; k < v.size(); ++k)
    if (!std::isfinite(v[k]))
      return eval_error(fmt::format("{}: {}[{}] is {}: parameters must be finite", tag, field, k,
                                    std::isnan(v[k]) ? "nan" : (v[k] > 0 ? "inf" : "-inf")),
                        field);
  return ok_status();
}

Status check_eps(const char* tag, double eps) {
  if (std::isfinite(eps) && eps > 0) return ok_status();
  return eval_error(fmt::format("{}: eps {} must be positive and finite", tag, eps), "eps");
}

Status check_size(const char* tag, const char* field, size_t have, int64_t expected) {
  if (static_cast<int64_t>(have) == expected) return ok_status();
  return eval_error(fmt::format("{}: {} has {} values, expected {}", tag, field, have, expected), field);
}

Status check_linear(const Model& m, const Node& n, const Shape& in) {
  const auto* r = find_record(m.payload.linear, n.id);
  if (!r) return eval_error("missing linear payload", "payload");
  if (n.out_shape.empty() || in.empty()) return ok_status();  // the shape rule reports the rank
  if (r->out_dim != n.out_shape.back())
    return eval_error(fmt::format("linear: out_dim {} differs from the last dim {} of the declared outShape {}",
                                  r->out_dim, n.out_shape.back(), to_string(n.out_shape)),
                      "out_dim");
  if (r->in_dim != in.back())
    return eval_error(fmt::format("linear: in_dim {} differs from the last dim {} of the input shape {}", r->in_dim,
                                  in.back(), to_string(in)),
                      "in_dim");
  const std::optional<int64_t> wcount = checked_mul(r->out_dim, r->in_dim);
  if (!wcount) return eval_error("linear: out_dim * in_dim overflows", "weight");
  DENOTE_RETURN_IF_ERROR(check_size("linear", "weight", r->weight.size(), *wcount));
  DENOTE_RETURN_IF_ERROR(check_size("linear", "bias", r->bias.size(), r->out_dim));
  DENOTE_RETURN_IF_ERROR(check_finite("linear", "weight", r->weight));
  return check_finite("linear", "bias", r->bias);
}

Status check_conv(const Model& m, const Node& n, const Shape& in) {
  const auto* r = find_record(m.payload.conv, n.id);
  DENOTE_RETURN_IF_ERROR(rules::check_conv_record(n, r, in));
  DENOTE_RETURN_IF_ERROR(check_finite("conv", "weight", r->weight));
  return check_finite("conv", "bias", r->bias);
}

Status check_batch_norm(const Model& m, const Node& n, const Shape&) {
  const auto* r = find_record(m.payload.batch_norm, n.id);
  if (!r) return eval_error("missing batch_norm_eval payload", "payload");
  DENOTE_RETURN_IF_ERROR(rules::check_batch_norm_record(*r, n.id, std::get<BatchNormAttrs>(n.attrs).channels));
  DENOTE_RETURN_IF_ERROR(check_eps("batch_norm_eval", r->eps));
  for (const auto& [field, v] : {std::pair{"gamma", &r->gamma}, {"beta", &r->beta}, {"mean", &r->mean}, {"var", &r->var}})
    DENOTE_RETURN_IF_ERROR(check_finite("batch_norm_eval", field, *v));
  return ok_status();
}

Status check_layernorm(const Model& m, const Node& n, const Shape& in) {
  const auto* r = find_record(m.payload.layernorm, n.id);
  if (!r) return ok_status();  // optional: no affine map
  const int64_t axis = std::get<AxisAttrs>(n.attrs).axis;
  if (axis < 0 || static_cast<size_t>(axis) > in.size()) return ok_status();  // the shape rule reports it
  const Shape suffix(in.begin() + axis, in.end());
  if (r->normalized_shape != suffix)
    return eval_error(fmt::format("layernorm: normalized_shape {} differs from the input's shape {} from axis {}",
                                  to_string(r->normalized_shape), to_string(suffix), axis),
                      "normalized_shape");
  const int64_t width = numel(suffix);
  DENOTE_RETURN_IF_ERROR(check_size("layernorm", "gamma", r->gamma.size(), width));
  DENOTE_RETURN_IF_ERROR(check_size("layernorm", "beta", r->beta.size(), width));
  DENOTE_RETURN_IF_ERROR(check_eps("layernorm", r->eps));
  DENOTE_RETURN_IF_ERROR(check_finite("layernorm", "gamma", r->gamma));
  return check_finite("layernorm", "beta", r->beta);
}

Status check_const(const Model& m, const Node& n, const Shape&) {
  const auto* r = find_record(m.payload.consts, n.id);
  if (!r) return eval_error("missing const payload", "payload");
  return check_size("const", "values", r->values.size(), numel(n.out_shape));
}

Status check_custom(const Model& m, const Node& n, const Shape&) {
  if (find_record(m.payload.custom, n.id)) return ok_status();
  return eval_error("custom: no body (a custom node's body is code, which a file cannot carry)", "payload");
}

// The int / uint / bool names typed execution has, with typed::parse_dtype's texts: bool, then
// "int" or "uint" and a width "W" or "(W)" of at most 9 digits, 1 <= W <= 65536. The typed layer
// sits above this one (it includes check.h), so the rule is restated here rather than included;
// typed_value_test.cc checks that both accept and refuse the same names with the same texts.
constexpr int64_t kMaxCastIntWidth = 65536;  // typed::kMaxIntWidth

std::string int_dtype_error(std::string_view text) {
  if (text == "bool") return "";
  const bool u = text.starts_with("uint");
  std::string_view rest = text.substr(u ? 4 : 3);
  if (rest.size() > 2 && rest.front() == '(' && rest.back() == ')') rest = rest.substr(1, rest.size() - 2);
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string_view::npos)
    return fmt::format("malformed dtype '{}' (expected int8, uint16, int(W) or uint(W))", text);
  int64_t width = 0;
  for (char c : rest) width = width * 10 + (c - '0');
  if (width < 1) return fmt::format("int width {} is unsupported (expected >= 1)", width);
  if (width > kMaxCastIntWidth) return fmt::format("int width {} is unsupported (at most {})", width, kMaxCastIntWidth);
  return "";
}

// A cast's target must be what cast_target accepts (a known rounding mode and a binary format
// name) and, for an int / uint / bool target, a dtype typed execution has. A float model's run
// refuses any target it cannot do; valid integer targets stay legal here since `run
// --input-words` runs them.
Status check_cast(const Model&, const Node& n, const Shape&) {
  const CastAttrs& c = std::get<CastAttrs>(n.attrs);
  auto target = cast_target(c);
  if (!target.ok()) {
    const std::string& d = target.status().detail();
    return eval_error(d.starts_with("cast:") ? d : "cast: " + d, target.status().field());
  }
  if (target->format) return ok_status();
  const std::string e = int_dtype_error(c.dtype);
  return e.empty() ? ok_status() : eval_error("cast: " + e, "dtype");
}

// The per-op model checks, told apart by op (== comparisons, not a switch over the table).
struct ModelRule {
  Op op;
  Status (*check)(const Model&, const Node&, const Shape& parent0);
};
constexpr ModelRule kModelRules[] = {
    {Op::Linear, &check_linear},       {Op::Conv, &check_conv},     {Op::BatchNormEval, &check_batch_norm},
    {Op::Layernorm, &check_layernorm}, {Op::Const, &check_const},   {Op::Custom, &check_custom},
    {Op::Cast, &check_cast},
};

// Checks of node i of a graph that passed its own structural and shape checks.
Status check_node_model(const Model& m, size_t i, bool typed_const) {
  const Node& n = m.graph.nodes[i];
  if (typed_const && n.op == Op::Const) return ok_status();
  static const Shape kNone;
  const Shape& parent0 = n.parents.empty() ? kNone : m.graph.nodes[n.parents[0]].out_shape;
  for (const ModelRule& rule : kModelRules)
    if (rule.op == n.op) return at_node(n, rule.check(m, n, parent0));
  return ok_status();
}

}  // namespace

std::vector<Diagnostic> diagnose_model(const Model& m, const std::set<int64_t>& typed_consts) {
  std::vector<Diagnostic> out = diagnose(m.graph);
  std::set<int64_t> flagged;
  for (const Diagnostic& d : out) flagged.insert(d.node);
  if (flagged.contains(-1)) return out;
  for (size_t i = 0; i < m.graph.nodes.size(); ++i) {
    if (flagged.contains(static_cast<int64_t>(i))) continue;
    const Status s = check_node_model(m, i, typed_consts.contains(static_cast<int64_t>(i)));
    if (!s.ok()) out.push_back({static_cast<int64_t>(i), s.message(), s});
  }
  for (int64_t id : m.output_ids)
    if (id < 0 || id >= static_cast<int64_t>(m.graph.nodes.size())) {
      const Status s = Status::error(ErrorCode::kStructure, fmt::format("IR graph: output id {} is not a node", id))
                           .with_field("output_ids");
      out.push_back({-1, s.message(), s});
    }
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return (a.node < 0 ? INT64_MAX : a.node) < (b.node < 0 ? INT64_MAX : b.node);
  });
  return out;
}

std::vector<Diagnostic> diagnose_model(const Model& m) { return diagnose_model(m, {}); }

Status check_model(const Model& m) {
  DENOTE_RETURN_IF_ERROR(check_shapes(m.graph));
  const std::vector<Diagnostic> d = diagnose_model(m);
  return d.empty() ? ok_status() : d.front().status;
}

}  // namespace denote
