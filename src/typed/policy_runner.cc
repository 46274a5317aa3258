// One parse of a run's precision options and its prepared runner (include/denote/typed/policy.h,
// PolicyRequest, PolicyRunner), shared by the CLI and Python.
#include <fmt/format.h>

#include "denote/typed/policy.h"

namespace denote {

Status check_policy_request(const PolicyRequest& r) {
  if (r.policy_given) {
    if (r.arith.empty() && r.accumulate.empty()) return ok_status();
    return error_status("a policy file names its own storage and accumulation formats; leave arith and accumulate "
                        "unset")
        .with_field("policy");
  }
  if (is_mx_spec(r.arith)) {
    DENOTE_RETURN_IF_ERROR(parse_mx_policy(r.arith).status());
    if (r.accumulate.empty() || r.accumulate == "binary32") return ok_status();
    return error_status(fmt::format("accumulate {}: an MX arithmetic accumulates in binary32", r.accumulate))
        .with_field("accumulate");
  }
  if (r.arith.empty() && r.node_formats.empty())
    return error_status("a policy needs a storage format (arith)").with_field("arith");
  Result<PrecisionPolicy> p = make_policy(r.arith.empty() ? r.accumulate : r.arith, r.accumulate, r.rounding);
  if (p.ok()) return ok_status();
  const Status& e = p.status();
  return Status::error(e.code(), e.message()).with_field(e.field() == "storage" ? "arith" : e.field());
}

namespace {

Result<PrecisionPolicy> policy_of(const PolicyRequest& r) {
  if (!r.policy_given) return make_policy(r.arith.empty() ? r.accumulate : r.arith, r.accumulate, r.rounding);
  Result<PrecisionPolicy> p = parse_policy_json(r.policy_json);
  if (!p.ok()) return error_status(p.status().message()).with_field("policy");
  return p;
}

}  // namespace

Result<PolicyRunner> PolicyRunner::prepare(const Model& m, const PolicyRequest& r) {
  DENOTE_RETURN_IF_ERROR(check_policy_request(r));
  PolicyRunner out;
  if (!r.policy_given && is_mx_spec(r.arith)) {
    DENOTE_ASSIGN_OR_RETURN(MxPolicy p, parse_mx_policy(r.arith));
    p.rounding = r.rounding;
    DENOTE_ASSIGN_OR_RETURN(MxRunner runner, MxRunner::prepare(m, p));
    out.mx_ = std::make_shared<const MxRunner>(std::move(runner));
    return out;
  }
  DENOTE_ASSIGN_OR_RETURN(PrecisionPolicy p, policy_of(r));
  if (!r.policy_given && r.arith.empty()) DENOTE_RETURN_IF_ERROR(set_node_storage(p, r.node_formats));
  if (r.materialized.size() == m.graph.size()) p.materialized = r.materialized;
  DENOTE_ASSIGN_OR_RETURN(LoweredPolicy l, lower_policy(m, p));
  out.lowered_ = std::make_shared<const LoweredPolicy>(std::move(l));
  return out;
}

Result<PolicyValues> PolicyRunner::run(std::span<const Tensor<double>> inputs, std::span<const int64_t> ids,
                                       int64_t max_bytes) const {
  if (mx_) {
    EvalOptions o;
    o.max_bytes = max_bytes;
    return mx_->run(inputs, ids, o);
  }
  typed::TypedOptions o;
  o.rounding = lowered_->policy.rounding;
  o.max_bytes = max_bytes;
  return run_policy(*lowered_, inputs, ids, o);
}

}  // namespace denote
