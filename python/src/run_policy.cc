// Model.run under a precision policy (run_policy.h): the library's PolicyRunner (include/denote/typed/
// policy.h), prepared once per request and cached on the model.
#include "run_policy.h"

#include <fmt/format.h>

namespace denote::python {

namespace {

// The model's prepared runner for the request, made once (cached by the request's text).
std::shared_ptr<const PolicyRunner> runner_of(PyModel& self, const PolicyRequest& r) {
  const std::string key = fmt::format("{}/{}/{}/{}", r.arith, r.accumulate, rounding_name(r.rounding), r.policy_json);
  std::lock_guard<std::mutex> lock(self.cache_mutex);
  auto it = self.policies.find(key);
  if (it != self.policies.end()) return it->second;
  Result<PolicyRunner> p = PolicyRunner::prepare(self.model(), r);
  if (!p.ok() && !p.status().has_node()) raise_invalid(p.status().message(), p.status().field());
  return self.policies[key] = std::make_shared<const PolicyRunner>(unwrap(std::move(p)));
}

}  // namespace

PolicyRun run_policy(PyModel& self, const py::args& inputs, const std::string& storage, const std::string& accumulate,
                     const std::string& rounding, bool all_nodes, int64_t max_bytes, const std::string& policy_json) {
  if (self.typed()) raise_invalid("accumulate: a typed model takes each value's dtype; leave accumulate unset",
                                  "accumulate");
  const std::optional<Rounding> mode = parse_rounding(rounding);
  if (!mode) raise_invalid(fmt::format("rounding {}: expected nearest-even, toward-zero, upward, downward or "
                                       "nearest-away", rounding), "rounding");
  PolicyRequest r{storage, accumulate, !policy_json.empty(), policy_json, *mode, {}, self.capture_materialized};
  if (storage.empty() && policy_json.empty()) r.node_formats = self.capture_formats;
  const std::shared_ptr<const PolicyRunner> runner = runner_of(self, r);
  const size_t n_inputs = self.model().graph.input_ids().size();
  if (inputs.size() != n_inputs)
    raise_invalid(fmt::format("run: the model has {} input(s), got {}", n_inputs, inputs.size()), "inputs");
  std::vector<Tensor<double>> in;
  for (size_t k = 0; k < inputs.size(); ++k) in.push_back(to_tensor(inputs[k], Label{"input", static_cast<int64_t>(k)}));
  PolicyRun out;
  out.ids = all_nodes ? std::vector<int64_t>() : self.model().output_ids;
  if (all_nodes)
    for (size_t id = 0; id < self.model().graph.size(); ++id) out.ids.push_back(static_cast<int64_t>(id));
  Result<PolicyValues> values = Status::error(ErrorCode::kInternal, "internal: policy run did not run");
  {
    py::gil_scoped_release release;
    values = runner->run(in, out.ids, max_bytes);
  }
  PolicyValues v = unwrap(std::move(values));
  for (Tensor<double>& t : v.values) out.arrays.push_back(to_numpy(std::move(t)));
  out.flags = v.flags;
  return out;
}

}  // namespace denote::python
