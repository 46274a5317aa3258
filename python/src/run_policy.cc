// Model.run under a precision policy (run_policy.h): the lowered model cached per policy, then
// denote::run_policy (include/denote/typed/policy.h).
#include "run_policy.h"

#include <fmt/format.h>

namespace denote::python {

namespace {

// storage empty: the capture's own formats (Model.precision); policy_json: a policy file's text.
std::shared_ptr<const LoweredPolicy> lowered(PyModel& self, const std::string& storage, const std::string& accumulate,
                                             Rounding mode, const std::string& policy_json) {
  const std::string key = policy_json.empty() ? fmt::format("{}/{}/{}", storage.empty() ? "capture" : storage,
                                                            accumulate, rounding_name(mode))
                                              : "policy:" + policy_json;
  std::lock_guard<std::mutex> lock(self.cache_mutex);
  auto it = self.policies.find(key);
  if (it != self.policies.end()) return it->second;
  Result<PrecisionPolicy> p = policy_json.empty() ? make_policy(storage.empty() ? accumulate : storage, accumulate, mode)
                                                  : parse_policy_json(policy_json);
  if (!p.ok())
    raise_invalid(p.status().message(), !policy_json.empty()               ? "policy"
                                        : p.status().field() == "storage" ? "arith"
                                                                          : "accumulate");
  if (storage.empty() && policy_json.empty()) check(set_node_storage(*p, self.capture_formats));
  if (self.capture_materialized.size() == self.model().graph.size()) p->materialized = self.capture_materialized;
  return self.policies[key] = std::make_shared<const LoweredPolicy>(unwrap(lower_policy(self.model(), *p)));
}

std::shared_ptr<const MxRunner> mx_runner(PyModel& self, const std::string& spec, const std::string& accumulate,
                                          Rounding mode) {
  if (!accumulate.empty() && accumulate != "binary32")
    raise_invalid(fmt::format("accumulate {}: an MX arithmetic accumulates in binary32", accumulate), "accumulate");
  const std::string key = fmt::format("{}/{}", spec, rounding_name(mode));
  std::lock_guard<std::mutex> lock(self.cache_mutex);
  auto it = self.mx_runners.find(key);
  if (it != self.mx_runners.end()) return it->second;
  Result<MxPolicy> p = parse_mx_policy(spec);
  if (!p.ok()) raise_invalid(p.status().message(), p.status().field());
  p->rounding = mode;
  return self.mx_runners[key] = std::make_shared<const MxRunner>(unwrap(MxRunner::prepare(self.model(), *p)));
}

}  // namespace

PolicyRun run_policy(PyModel& self, const py::args& inputs, const std::string& storage, const std::string& accumulate,
                     const std::string& rounding, bool all_nodes, int64_t max_bytes, const std::string& policy_json) {
  if (self.typed()) raise_invalid("accumulate: a typed model takes each value's dtype; leave accumulate unset",
                                  "accumulate");
  const std::optional<Rounding> mode = parse_rounding(rounding);
  if (!mode) raise_invalid(fmt::format("rounding {}: expected nearest-even, toward-zero, upward, downward or "
                                       "nearest-away", rounding), "rounding");
  const bool mx = policy_json.empty() && is_mx_spec(storage);
  const std::shared_ptr<const LoweredPolicy> l = mx ? nullptr : lowered(self, storage, accumulate, *mode, policy_json);
  const std::shared_ptr<const MxRunner> runner = mx ? mx_runner(self, storage, accumulate, *mode) : nullptr;
  const size_t n_inputs = self.model().graph.input_ids().size();
  if (inputs.size() != n_inputs)
    raise_invalid(fmt::format("run: the model has {} input(s), got {}", n_inputs, inputs.size()), "inputs");
  std::vector<Tensor<double>> in;
  for (size_t k = 0; k < inputs.size(); ++k) in.push_back(to_tensor(inputs[k], Label{"input", static_cast<int64_t>(k)}));
  PolicyRun out;
  out.ids = all_nodes ? std::vector<int64_t>() : self.model().output_ids;
  if (all_nodes)
    for (size_t id = 0; id < self.model().graph.size(); ++id) out.ids.push_back(static_cast<int64_t>(id));
  typed::TypedOptions o;
  o.rounding = l ? l->policy.rounding : *mode;  // a policy file's own rounding
  o.max_bytes = max_bytes;
  Result<PolicyValues> r = Status::error(ErrorCode::kInternal, "internal: policy run did not run");
  {
    py::gil_scoped_release release;
    if (runner) r = runner->run(in, out.ids, EvalOptions{o.max_elements, o.max_bytes});
    else r = denote::run_policy(*l, in, out.ids, o);
  }
  PolicyValues v = unwrap(std::move(r));
  for (Tensor<double>& t : v.values) out.arrays.push_back(to_numpy(std::move(t)));
  out.flags = v.flags;
  return out;
}

}  // namespace denote::python
