// The precision options of `denote run` and `denote bench` (policy_cli.h).
#include "policy_cli.h"

#include <fmt/format.h>

#include "denote/io/json.h"

namespace denote::cli {

namespace {

// The request before the file is read (--arith's default f64 is no storage format when a file is given).
PolicyRequest request_of(const PolicyArgs& a) {
  PolicyRequest r;
  r.policy_given = !a.policy_path.empty();
  r.arith = r.policy_given && a.arith == "f64" ? "" : a.arith;
  r.accumulate = a.accumulate;
  r.rounding = parse_rounding(a.rounding).value_or(Rounding::NearestEven);
  return r;
}

}  // namespace

bool wants_policy(const PolicyArgs& a) {
  return !a.accumulate.empty() || !a.policy_path.empty() || is_mx_spec(a.arith);
}

std::string policy_usage_problem(const PolicyArgs& a) {
  if (!parse_rounding(a.rounding))
    return fmt::format("--rounding {}: expected nearest-even, toward-zero, upward, downward or nearest-away", a.rounding);
  if (a.provider_given)
    return "--provider: a precision policy (--accumulate, --policy, an MX --arith) runs the typed interpreter";
  const Status s = check_policy_request(request_of(a));
  return s.ok() ? "" : fmt::format("--{}: {}", s.field(), s.message());
}

Result<PolicyRunner> prepare_policy(const Model& m, const PolicyArgs& a) {
  PolicyRequest r = request_of(a);
  if (r.policy_given) {
    DENOTE_ASSIGN_OR_RETURN(r.policy_json, read_text_file(a.policy_path));
    Result<PolicyRunner> p = PolicyRunner::prepare(m, r);
    if (!p.ok() && p.status().field() == "policy") return p.status().with_prefix(a.policy_path + ": ");
    return p;
  }
  return PolicyRunner::prepare(m, r);
}

}  // namespace denote::cli
