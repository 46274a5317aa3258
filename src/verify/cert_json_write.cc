// Certificates written as JSON (docs/CERTIFICATES.md): every double in its shortest round-trip form, so
// the checker (src/certify/cert_json.cc reads it) sees the bits the search used.
#include <nlohmann/json.hpp>

#include "denote/verify/verify.h"

namespace denote {

using nlohmann::json;
using certify::Certificate;
using certify::Slopes;
using certify::Split;
using certify::TreeNode;
using certify::Job;

std::string certificate_json(const Certificate& c) {
  json jobs = json::array();
  auto ids = [](const std::map<int64_t, std::vector<int64_t>>& m) {
    json o = json::object();
    for (const auto& [id, v] : m) o[std::to_string(id)] = v;
    return o;
  };
  auto with_slopes = [&](json node, const Slopes& s) {
    if (!s.one.empty() || !s.zero.empty()) node["slopes"] = {{"one", ids(s.one)}, {"zero", ids(s.zero)}};
    return node;
  };
  for (const Job& job : c.jobs) {
    json tree = json::array();
    for (const TreeNode& tn : job.tree) {
      if (!tn.is_leaf) {
        if (tn.split.kind == Split::Kind::Input)
          tree.push_back(with_slopes({{"input", tn.split.index}, {"at", tn.split.at}}, tn.slopes));
        else
          tree.push_back(with_slopes({{"relu", tn.split.index}, {"elem", tn.split.elem}}, tn.slopes));
        continue;
      }
      json leaf = {{"lambda", tn.leaf.lambda}};
      if (!tn.leaf.mu.empty()) {
        json mu = json::object();
        for (const auto& [id, v] : tn.leaf.mu) {
          json pairs = json::array();
          for (const auto& [e, x] : v) pairs.push_back({e, x});
          mu[std::to_string(id)] = std::move(pairs);
        }
        leaf["mu"] = std::move(mu);
      }
      tree.push_back(with_slopes({{"leaf", std::move(leaf)}}, tn.slopes));
    }
    jobs.push_back({{"case", job.case_index}, {"conjunction", job.conjunction}, {"tree", std::move(tree)}});
  }
  json doc = {{"format", "denote.certificate"}, {"version", c.version}, {"jobs", std::move(jobs)}};
  return doc.dump() + "\n";
}

}  // namespace denote
