// The precision options of `denote run` and `denote bench` (policy_cli.h).
#include "policy_cli.h"

#include <fmt/format.h>

#include <memory>

#include "denote/io/json.h"

namespace denote::cli {

bool wants_policy(const PolicyArgs& a) {
  return !a.accumulate.empty() || !a.policy_path.empty() || is_mx_spec(a.arith);
}

namespace {

bool is_mx(const PolicyArgs& a) { return a.policy_path.empty() && is_mx_spec(a.arith); }

}  // namespace

std::string policy_usage_problem(const PolicyArgs& a) {
  const std::optional<Rounding> mode = parse_rounding(a.rounding);
  if (!mode)
    return fmt::format("--rounding {}: expected nearest-even, toward-zero, upward, downward or nearest-away", a.rounding);
  if (a.provider_given) return "--provider: a precision policy (--accumulate, --policy, an MX --arith) runs the typed "
                               "interpreter";
  if (!a.policy_path.empty())
    return a.accumulate.empty() && a.arith == "f64" ? ""
                                                    : "--policy: the policy file names its own storage and accumulation "
                                                      "formats; leave --arith and --accumulate unset";
  if (is_mx(a)) {
    Result<MxPolicy> p = parse_mx_policy(a.arith);
    if (!p.ok()) return "--arith: " + p.status().message();
    return a.accumulate.empty() || a.accumulate == "binary32" ? ""
                                                              : "--accumulate: an MX arithmetic accumulates in binary32";
  }
  Result<PrecisionPolicy> p = make_policy(a.arith, a.accumulate, *mode);
  if (!p.ok())
    return fmt::format("--{}: {}", p.status().field() == "storage" ? "arith" : "accumulate", p.status().message());
  return "";
}

Result<PolicyRunner> prepare_policy(const Model& m, const PolicyArgs& a, int64_t max_bytes) {
  const Rounding mode = *parse_rounding(a.rounding);
  if (is_mx(a)) {
    DENOTE_ASSIGN_OR_RETURN(MxPolicy p, parse_mx_policy(a.arith));
    p.rounding = mode;
    DENOTE_ASSIGN_OR_RETURN(MxRunner r, MxRunner::prepare(m, p));
    auto runner = std::make_shared<MxRunner>(std::move(r));
    EvalOptions o;
    o.max_bytes = max_bytes;
    return PolicyRunner{[runner, o](std::span<const Tensor<double>> in, std::span<const int64_t> ids) {
      return runner->run(in, ids, o);
    }};
  }
  Result<PrecisionPolicy> p = make_policy(a.arith, a.accumulate, mode);
  if (!a.policy_path.empty()) {
    DENOTE_ASSIGN_OR_RETURN(std::string text, read_text_file(a.policy_path));
    p = parse_policy_json(text);
    if (!p.ok()) return p.status().with_prefix(a.policy_path + ": ");
  }
  if (!p.ok()) return p.status();
  DENOTE_ASSIGN_OR_RETURN(LoweredPolicy l, lower_policy(m, *p));
  auto lowered = std::make_shared<LoweredPolicy>(std::move(l));
  typed::TypedOptions o;
  o.rounding = p->rounding;
  o.max_bytes = max_bytes;
  return PolicyRunner{[lowered, o](std::span<const Tensor<double>> in, std::span<const int64_t> ids) {
    return run_policy(*lowered, in, ids, o);
  }};
}

}  // namespace denote::cli
