// diagnose_typed_model (denote/typed/check.h).
#include "denote/typed/check.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

namespace denote {

std::vector<Diagnostic> diagnose_typed_model(const TypedModel& tm) {
  std::set<int64_t> typed_consts;
  for (const auto& [id, v] : tm.consts) typed_consts.insert(id);
  std::vector<Diagnostic> out = diagnose_model(tm.model, typed_consts);
  std::set<int64_t> flagged;
  for (const Diagnostic& d : out) flagged.insert(d.node);
  for (const Node& n : tm.model.graph.nodes) {
    if (n.op != Op::Cast || flagged.contains(n.id) || !std::holds_alternative<CastAttrs>(n.attrs)) continue;
    auto t = typed::parse_dtype(std::get<CastAttrs>(n.attrs).dtype);
    if (t.ok()) continue;
    const std::string what = "cast: " + t.message();
    const Status s = Status::error(ErrorCode::kEval, what)
                         .with_field("dtype")
                         .with_node(n.id, fmt::format("IR graph: node {}: {} ({})", n.id, what, summary(n)));
    out.push_back({n.id, s.message(), s});
  }
  std::stable_sort(out.begin(), out.end(), [](const Diagnostic& a, const Diagnostic& b) {
    return (a.node < 0 ? INT64_MAX : a.node) < (b.node < 0 ? INT64_MAX : b.node);
  });
  return out;
}

}  // namespace denote
