// Certificates as JSON (docs/CERTIFICATES.md), read with errors that name the path. (The writer is
// verify's, src/verify/cert_json_write.cc: it is no part of what a checked proof rests on.)
#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "denote/certify/certificate.h"

namespace denote::certify {

namespace {

using nlohmann::json;

Status bad(std::string_view file, const std::string& path, const std::string& what) {
  return error_status(ErrorCode::kInvalidInput, fmt::format("{}: {}: {}", file, path, what)).with_field(path);
}

bool get_int(const json& o, const char* key, int64_t& v) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number_integer()) return false;
  v = it->get<int64_t>();
  return true;
}

bool get_doubles(const json& a, std::vector<double>& v) {
  if (!a.is_array()) return false;
  v.clear();
  v.reserve(a.size());
  for (const json& x : a) {
    if (!x.is_number()) return false;
    v.push_back(x.get<double>());
  }
  return true;
}

Status parse_leaf(const json& l, const std::string& path, std::string_view file, Leaf& leaf) {
  if (!l.is_object()) return bad(file, path, "expected an object {\"lambda\": [...], \"mu\": {...}}");
  auto lam = l.find("lambda");
  if (lam == l.end() || !get_doubles(*lam, leaf.lambda)) return bad(file, path + ".lambda", "expected an array of numbers");
  auto mu = l.find("mu");
  if (mu == l.end()) return ok_status();
  if (!mu->is_object()) return bad(file, path + ".mu", "expected an object of relu node ids to [element, multiplier] pairs");
  for (auto it = mu->begin(); it != mu->end(); ++it) {
    int64_t id = -1;
    const std::string& key = it.key();
    if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
      return bad(file, path + ".mu", fmt::format("key '{}': expected a node id", key));
    id = std::stoll(key);
    const json& pairs = it.value();
    Multipliers& m = leaf.mu[id];
    if (!pairs.is_array()) return bad(file, path + ".mu." + key, "expected an array of [element, multiplier] pairs");
    for (const json& e : pairs) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number_integer() || !e[1].is_number())
        return bad(file, path + ".mu." + key, "expected an array of [element, multiplier] pairs");
      m.push_back({e[0].get<int64_t>(), e[1].get<double>()});
    }
  }
  return ok_status();
}

Status parse_ids(const json& o, const std::string& path, std::string_view file, std::map<int64_t, std::vector<int64_t>>& out) {
  if (!o.is_object()) return bad(file, path, "expected an object of relu node ids to arrays of elements");
  for (auto it = o.begin(); it != o.end(); ++it) {
    const std::string& key = it.key();
    if (key.empty() || key.size() > 18 || key.find_first_not_of("0123456789") != std::string::npos)
      return bad(file, path, fmt::format("key '{}': expected a node id", key));
    std::vector<int64_t>& v = out[std::stoll(key)];
    if (!it.value().is_array()) return bad(file, path + "." + key, "expected an array of elements");
    for (const json& e : it.value()) {
      if (!e.is_number_integer()) return bad(file, path + "." + key, "expected an array of elements");
      v.push_back(e.get<int64_t>());
    }
  }
  return ok_status();
}

Status parse_slopes(const json& n, const std::string& path, std::string_view file, Slopes& s) {
  auto it = n.find("slopes");
  if (it == n.end()) return ok_status();
  if (!it->is_object()) return bad(file, path + ".slopes", "expected {\"one\": {...}, \"zero\": {...}}");
  for (const char* k : {"one", "zero"})
    if (auto f = it->find(k); f != it->end()) {
      Status st = parse_ids(*f, path + ".slopes." + k, file, k[0] == 'o' ? s.one : s.zero);
      if (!st.ok()) return st;
    }
  return ok_status();
}

Status parse_node(const json& n, const std::string& path, std::string_view file, TreeNode& tn) {
  if (!n.is_object()) return bad(file, path, "expected an object (a split or a leaf)");
  if (Status s = parse_slopes(n, path, file, tn.slopes); !s.ok()) return s;
  if (auto l = n.find("leaf"); l != n.end()) {
    tn.is_leaf = true;
    return parse_leaf(*l, path + ".leaf", file, tn.leaf);
  }
  tn.is_leaf = false;
  if (get_int(n, "input", tn.split.index)) {
    tn.split.kind = Split::Kind::Input;
    auto at = n.find("at");
    if (at == n.end() || !at->is_number()) return bad(file, path + ".at", "expected a number");
    tn.split.at = at->get<double>();
    return ok_status();
  }
  if (get_int(n, "relu", tn.split.index)) {
    tn.split.kind = Split::Kind::Relu;
    if (!get_int(n, "elem", tn.split.elem)) return bad(file, path + ".elem", "expected an integer");
    return ok_status();
  }
  return bad(file, path, "expected {\"input\": i, \"at\": x}, {\"relu\": id, \"elem\": e} or {\"leaf\": {...}}");
}

}  // namespace

Result<Certificate> parse_certificate(std::string_view text, std::string_view file) {
  json doc = json::parse(text.begin(), text.end(), nullptr, false);
  if (doc.is_discarded()) return bad(file, "(document)", "not valid JSON");
  if (!doc.is_object()) return bad(file, "(document)", "expected an object");
  auto fmt_it = doc.find("format");
  if (fmt_it == doc.end() || *fmt_it != "denote.certificate")
    return bad(file, "format", "expected \"denote.certificate\"");
  Certificate c;
  int64_t version = 0;
  if (!get_int(doc, "version", version)) return bad(file, "version", "expected an integer");
  c.version = static_cast<int>(version);
  auto jobs = doc.find("jobs");
  if (jobs == doc.end() || !jobs->is_array()) return bad(file, "jobs", "expected an array");
  for (size_t k = 0; k < jobs->size(); ++k) {
    const json& j = (*jobs)[k];
    const std::string path = fmt::format("jobs[{}]", k);
    Job job;
    if (!j.is_object() || !get_int(j, "case", job.case_index) || !get_int(j, "conjunction", job.conjunction))
      return bad(file, path, "expected {\"case\": i, \"conjunction\": k, \"tree\": [...]}");
    auto tree = j.find("tree");
    if (tree == j.end() || !tree->is_array()) return bad(file, path + ".tree", "expected an array");
    job.tree.resize(tree->size());
    for (size_t i = 0; i < tree->size(); ++i) {
      Status s = parse_node((*tree)[i], fmt::format("{}.tree[{}]", path, i), file, job.tree[i]);
      if (!s.ok()) return s;
    }
    c.jobs.push_back(std::move(job));
  }
  return c;
}

}  // namespace denote::certify
