// denote verify MODEL PROP.vnnlib [--timeout S] [--arith f32|f64] [--out FILE] [--json]: decides one
//   VNN-COMP instance (include/denote/verify/verify.h) and prints the VNN-COMP result: `sat` with the
//   witness as ((X_0 v) ... (Y_0 v) ...), or `unsat`, `unknown`, `timeout`. Exit 0 whatever the answer.
// denote verify --instances FILE.csv [--root DIR] [--jobs N] [--out results.csv] [--json]: every line
//   `onnx,vnnlib,timeout` of a VNN-COMP benchmark CSV (N instances at once), a results CSV (instance,
//   result, seconds) and a summary.
// Under `mpirun -np N` (a build with DENOTE_MPI) both run across ranks: tools/denote/mpi/.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "cli.h"
#include "denote/base/deadline.h"
#include "denote/bounds/crown.h"
#include "denote/verify/verify.h"
#include "verify_cli.h"

namespace denote::cli {

namespace {

std::string exact(double v) { return fmt::format("{:.17g}", v); }

}  // namespace

// The VNN-COMP result text: the answer, and for sat the witness, one pair per line.
std::string result_text(const VerifyOutcome& r) {
  std::string s = std::string(verify_result_name(r.result)) + "\n";
  if (!r.witness) return s;
  const auto& w = *r.witness;
  // An input the box pins to a decimal no value of the arithmetic reaches: the exact decimal, at which
  // the real network was checked (a runtime reading it gets the nearest value, x[i], checked too).
  auto x_at = [&w](size_t i) { return i < w.x_exact.size() && !w.x_exact[i].empty() ? w.x_exact[i] : exact(w.x[i]); };
  for (size_t i = 0; i < w.x.size(); ++i) s += fmt::format("{}(X_{} {})\n", i ? " " : "(", i, x_at(i));
  for (size_t j = 0; j < w.y.size(); ++j) s += fmt::format(" (Y_{} {})\n", j, exact(w.y[j]));
  return s + ")\n";
}

namespace {
std::string list(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + json_number(v[i]);
  return s + "]";
}
}  // namespace

std::string result_json(const VerifyOutcome& r) {
  const VerifyStats& st = r.stats;
  std::string w = "null";
  if (r.witness) {
    std::string texts = "[";
    for (size_t i = 0; i < r.witness->x_exact.size(); ++i)
      texts += fmt::format("{}\"{}\"", i ? ", " : "", r.witness->x_exact[i]);  // decimals of the file: no escapes
    w = fmt::format("{{\"x\": {}, \"y\": {}, \"x_exact\": {}], \"semantics\": \"{}\", \"outside\": {}}}",
                    list(r.witness->x), list(r.witness->y), texts, r.witness->semantics, json_number(r.witness->outside));
  }
  return fmt::format(
      "{{\"result\": \"{}\", \"time_s\": {}, \"witness\": {}, \"stats\": {{\"decided_by\": \"{}\", \"falsify_s\": {}, "
      "\"bounds_s\": {}, \"bab_s\": {}, \"bab_bounds_s\": {}, \"bab_probe_s\": {}, \"threads\": {}, \"samples\": {}, \"pgd_steps\": {}, \"domains\": {}, \"crown_calls\": {}, "
      "\"alpha_calls\": {}, \"combined\": {}, \"disagreements\": {}, \"intermediate\": \"{}\"}}, \"note\": \"{}\"}}",
      verify_result_name(r.result), json_number(st.total_s), w, st.decided_by, json_number(st.falsify_s),
      json_number(st.bounds_s), json_number(st.bab_s), json_number(st.bab_bounds_s), json_number(st.bab_probe_s),
      st.threads, st.samples, st.pgd_steps, st.domains, st.crown_calls,
      st.alpha_calls, st.combined, st.disagreements, st.intermediate, r.note);
}

Result<LoadedInstance> load_instance(const std::string& model_path, const std::string& prop_path,
                                     std::chrono::steady_clock::time_point deadline) {
  std::vector<int32_t> types;
  auto m = load_checked_model(model_path, &types);
  if (!m.ok()) return m.status();
  VnnlibLimits limits;
  limits.deadline = deadline;
  auto p = load_vnnlib_file(prop_path, limits);
  if (!p.ok()) return p.status();
  return LoadedInstance{std::move(*m), std::move(*p), arith_of_onnx_inputs(types).value_or(ArithSpec::f32())};
}

VerifyOptions verify_options(const VerifyCliOptions& o, double timeout, const LoadedInstance& in) {
  VerifyOptions vo = o.verify;
  if (o.arith == "auto") vo.arith = in.file_arith;
  vo.timeout_s = timeout;
  vo.split = parse_split_mode(o.split).value_or(SplitMode::Auto);
  vo.bab_score = o.bab_score == "worse" ? SplitScore::Worse : SplitScore::Better;
  vo.max_bytes = std::max<int64_t>(1, o.max_bytes / (o.instances.empty() ? 1 : std::max(1, o.jobs)));
  vo.threads = o.threads > 0 ? o.threads
               : o.instances.empty() ? static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))
                                     : 1;
  return vo;
}

namespace {

Result<VerifyOutcome> run_one(const std::string& model_path, const std::string& prop_path, double timeout,
                              const VerifyCliOptions& o) {
  // The load (model, property and its normal form) counts against the instance's timeout: what is
  // left goes to verify(); nothing left is a timeout with the load's time.
  const auto start = std::chrono::steady_clock::now();
  auto in = load_instance(model_path, prop_path, deadline_after(start, timeout));
  const bool late = !in.ok() && in.status().field() == "deadline";
  if (!in.ok() && !late) return in.status();
  const double loaded = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (late || !(timeout > loaded)) {
    VerifyOutcome out;
    out.result = VerifyResult::Timeout;
    out.stats.total_s = loaded;
    out.note = fmt::format("loading the model and the property took {:.3f} s of the {} s timeout", loaded, timeout);
    return out;
  }
  auto r = verify(in->model, in->property, verify_options(o, timeout - loaded, *in));
  if (r.ok()) r->stats.total_s += loaded;
  return r;
}

}  // namespace

namespace {

// Writes the whole text and closes the file, checking every step (a full disk or /dev/full fails at
// the flush, not at the write).
Status write_whole_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  if (!f) return error_status("--out " + path + ": cannot open the file for writing");
  f << text;
  f.flush();
  f.close();
  if (!f) return error_status(fmt::format("--out {}: writing {} bytes failed (disk full or not writable)", path, text.size()));
  return ok_status();
}

// Standard output flushed and checked (`denote verify ... > /dev/full` is an error, not exit 0).
int finish_stdout(const std::string& text) {
  std::cout << text;
  std::cout.flush();
  if (!std::cout) return fail("cannot write the result to standard output");
  return kExitOk;
}

}  // namespace

int print_outcome(const VerifyCliOptions& o, const VerifyOutcome& r) {
  const std::string text = result_text(r);
  if (!o.out.empty())
    if (Status w = write_whole_file(o.out, text); !w.ok()) return fail(w.message());
  return finish_stdout(o.json ? result_json(r) + "\n" : text);
}

namespace {

// --check-only (VNN-COMP's prepare_instance.sh): the model and the property load and fit each other.
int check_one(const VerifyCliOptions& o) {
  auto in = load_instance(o.model, o.property, std::chrono::steady_clock::time_point::max());
  if (!in.ok()) return fail(in.message());
  if (Status s = check_instance(in->model, in->property, o.verify); !s.ok()) return fail(s.message());
  return finish_stdout(fmt::format("ok: {} inputs, {} outputs, {} case{}\n", in->property.num_inputs,
                                   in->property.num_outputs, in->property.cases.size(),
                                   in->property.cases.size() == 1 ? "" : "s"));
}

// --certificate: the unsat answer's certificate written to the file (nothing for another answer).
int write_certificate(const VerifyCliOptions& o, const VerifyOutcome& r) {
  if (r.result != VerifyResult::Unsat) return kExitOk;
  if (!r.certificate) return fail("--certificate " + o.certificate + ": no certificate was made: " + r.certificate_error);
  if (Status w = write_whole_file(o.certificate, certificate_json(*r.certificate)); !w.ok())
    return fail("--certificate " + o.certificate + ": " + w.message());
  return kExitOk;
}

int verify_one(const VerifyCliOptions& o) {
  if (o.check_only) return check_one(o);
  auto r = run_one(o.model, o.property, o.verify.timeout_s, o);
  if (!r.ok()) return fail(r.message());
  const int printed = print_outcome(o, *r);
  if (printed != kExitOk || o.certificate.empty()) return printed;
  return write_certificate(o, *r);
}

}  // namespace

namespace {

constexpr std::uintmax_t kMaxCsvBytes = 64u << 20;

std::string trim(std::string_view v) {
  const size_t a = v.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return "";
  return std::string(v.substr(a, v.find_last_not_of(" \t\r") - a + 1));
}

// A field without its surrounding blanks and, if quoted, without the quotes ("" inside is ").
std::string field(std::string_view v) {
  std::string t = trim(v);
  if (t.size() < 2 || t.front() != '"' || t.back() != '"') return t;
  std::string out;
  for (size_t i = 1; i + 1 < t.size(); ++i) {
    out += t[i];
    if (t[i] == '"' && t[i + 1] == '"') ++i;
  }
  return out;
}

// Splits at commas outside double quotes.
std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    if (ch == ',' && !quoted) out.emplace_back();
    else out.back() += ch;
  }
  for (auto& f : out) f = field(f);
  return out;
}

// A number of seconds: the whole field (no trailing text such as `5abc`), > 0 (inf allowed: no limit).
bool parse_seconds(const std::string& t, double& out) {
  if (t.empty()) return false;
  char* end = nullptr;
  out = std::strtod(t.c_str(), &end);
  return end == t.c_str() + t.size() && out > 0;
}

}  // namespace

Result<std::vector<Instance>> read_csv(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) return error_status("--instances " + path + ": cannot open the file");
  if (!std::filesystem::is_regular_file(st))
    return error_status("--instances " + path + ": not a regular file; expected a CSV file of onnx,vnnlib,timeout lines");
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxCsvBytes)
    return error_status(fmt::format("--instances {}: file of {} bytes; expected at most {} bytes", path, size, kMaxCsvBytes));
  std::ifstream f(path);
  if (!f) return error_status("--instances " + path + ": cannot open the file");
  std::vector<Instance> out;
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    if (trim(line).empty()) continue;
    const std::vector<std::string> v = split_csv(line);
    if (v.size() != 3 || v[0].empty() || v[1].empty())
      return error_status(fmt::format("{}:{}: expected onnx,vnnlib,timeout (3 fields), got {} field{}", path, n,
                                      v.size(), v.size() == 1 ? "" : "s"));
    Instance in{v[0], v[1], 0};
    if (!parse_seconds(v[2], in.timeout)) {
      // A header row (`onnx,vnnlib,timeout`): a first line whose timeout field is a word.
      if (out.empty() && n == 1 && std::isalpha(static_cast<unsigned char>(v[2][0]))) continue;
      return error_status(fmt::format("{}:{}: timeout '{}': expected a number of seconds > 0", path, n, v[2]));
    }
    out.push_back(std::move(in));
  }
  if (f.bad()) return error_status("--instances " + path + ": error reading the file");
  return out;
}

std::filesystem::path campaign_root(const VerifyCliOptions& o) {
  return o.root.empty() ? std::filesystem::path(o.instances).parent_path() : std::filesystem::path(o.root);
}

// A CSV path, or that path with ".gz" where only the compressed file exists: VNN-COMP's instance CSVs
// name net.onnx and prop.vnnlib, its repositories hold net.onnx.gz and prop.vnnlib.gz.
std::string instance_path(const std::filesystem::path& root, const std::string& rel) {
  const std::filesystem::path p = root / rel;
  std::error_code ec;
  if (!std::filesystem::exists(p, ec) && std::filesystem::exists(p.string() + ".gz", ec)) return p.string() + ".gz";
  return p.string();
}

InstanceResult run_instance(const VerifyCliOptions& o, const std::filesystem::path& root, const Instance& in) {
  auto r = run_one(instance_path(root, in.onnx), instance_path(root, in.vnnlib), in.timeout, o);
  InstanceResult out;
  out.result = r.ok() ? std::string(verify_result_name(r->result)) : "error";
  out.seconds = r.ok() ? r->stats.total_s : 0;
  if (r.ok()) out.falsify_s = r->stats.falsify_s, out.bounds_s = r->stats.bounds_s, out.bab_s = r->stats.bab_s;
  if (!r.ok()) out.error = "error: " + in.onnx + " " + in.vnnlib + ": " + r.message() + "\n";
  return out;
}

std::string instance_line(const Instance& in, const InstanceResult& r) {
  return fmt::format("{},{},{},{:.3f}\n", in.onnx, in.vnnlib, r.result, r.seconds);
}

int print_campaign(const VerifyCliOptions& o, const std::vector<Instance>& list, const std::vector<InstanceResult>& rs,
                   const std::string& workers) {
  std::map<std::string, int> counts;
  std::string csv;
  double total = 0, falsify = 0, bounds = 0, bab = 0;
  for (size_t i = 0; i < list.size(); ++i) {
    ++counts[rs[i].result];
    total += rs[i].seconds;
    falsify += rs[i].falsify_s, bounds += rs[i].bounds_s, bab += rs[i].bab_s;
    csv += instance_line(list[i], rs[i]);
    std::cerr << rs[i].error;
  }
  if (!o.out.empty())
    if (Status w = write_whole_file(o.out, csv); !w.ok()) return fail(w.message());
  std::string text;
  if (o.json) {
    std::string c;
    for (const auto& [k, v] : counts) c += fmt::format("{}\"{}\": {}", c.empty() ? "" : ", ", k, v);
    text = fmt::format(
        "{{\"instances\": {}, \"counts\": {{{}}}, \"total_s\": {}, \"stages_s\": {{\"falsify\": {}, \"bounds\": {}, "
        "\"bab\": {}}}}}\n",
        list.size(), c, json_number(total), json_number(falsify), json_number(bounds), json_number(bab));
  } else {
    text = csv;
    for (const auto& [k, v] : counts) text += fmt::format("{}: {}\n", k, v);
    text += fmt::format("total: {} instances, {:.2f} s of instance time ({})\n", list.size(), total, workers);
    text += fmt::format("stages: falsification {:.2f} s, whole-box bounds {:.2f} s, branch and bound {:.2f} s\n",
                        falsify, bounds, bab);
  }
  return finish_stdout(text);
}

namespace {

int verify_csv(const VerifyCliOptions& o) {
  auto list = read_csv(o.instances);
  if (!list.ok()) return fail(list.message());
  const std::filesystem::path root = campaign_root(o);
  // Instances run on --jobs threads (each instance on one: its answer does not depend on the count);
  // lines are printed in the CSV's order.
  const size_t n = list->size();
  std::vector<InstanceResult> results(n);
  std::atomic<size_t> next{0}, done{0};
  std::mutex progress;
  const bool tty = ::isatty(STDERR_FILENO);
  // The journal: every decided line is appended to --out (flushed) as it is decided, so a killed
  // campaign keeps what it decided; at the end --out is rewritten in the CSV's order.
  std::ofstream journal;
  if (!o.out.empty()) {
    journal.open(o.out, std::ios::binary | std::ios::trunc);
    if (!journal) return fail("--out " + o.out + ": cannot open the file for writing");
  }
  bool journal_failed = false;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      const Instance& in = (*list)[i];
      results[i] = run_instance(o, root, in);
      const size_t k = ++done;
      std::lock_guard<std::mutex> lock(progress);
      if (journal.is_open() && !(journal << instance_line(in, results[i]) << std::flush)) journal_failed = true;
      if (tty)
        std::fprintf(stderr, "\r[%zu/%zu] %s %s: %s   ", k, n, in.onnx.c_str(), in.vnnlib.c_str(), results[i].result.c_str());
    }
  };
  std::vector<std::thread> pool;
  for (int t = 0; t < std::max(1, o.jobs); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  if (tty) std::fprintf(stderr, "\n");
  if (journal.is_open()) journal.close();
  if (journal_failed) return fail("--out " + o.out + ": writing a decided line failed (disk full or not writable)");
  return print_campaign(o, *list, results, fmt::format("{} jobs", o.jobs));
}

}  // namespace

void add_verify(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("verify", "decide a VNN-COMP instance (ONNX + VNN-LIB): sat with a witness, unsat, unknown, timeout");
  auto o = std::make_shared<VerifyCliOptions>();
  sub->add_option("model", o->model, "model file (.onnx or .json)");
  sub->add_option("property", o->property, "VNN-LIB property file");
  sub->add_option("--instances", o->instances, "a VNN-COMP benchmark CSV (onnx,vnnlib,timeout per line)");
  sub->add_option("--root", o->root, "directory the CSV's paths are relative to (default: the CSV's directory)");
  VerifyOptions& v = o->verify;  // the library's defaults are the command's (printed by --help)
  sub->add_option("--timeout", v.timeout_s, "seconds for one instance")->capture_default_str();
  sub->add_option("--arith", o->arith,
                  "the network's arithmetic: auto (the ONNX file's: f64 where its inputs are DOUBLE, else f32), f32 or f64")
      ->capture_default_str();
  sub->add_option("--split", o->split,
                  "what branch and bound splits: auto (default: relu phases when more than 16 inputs are open), "
                  "input or relu");
  sub->add_option("--beta-iters", v.beta_iters, "relu splitting: alpha-beta-CROWN steps per subdomain (0: CROWN only)")
      ->capture_default_str();
  sub->add_option("--bab-candidates", v.bab_candidates,
                  "relu splitting: split candidates scored per subdomain to pick the split (0: automatic, 48, or "
                  "64 on networks with a conv)")
      ->capture_default_str();
  sub->add_option("--bab-refresh", v.bab_refresh,
                  "relu splitting: nodes after a subdomain's newest split whose intermediate bounds CROWN "
                  "recomputes (-1: automatic, 2 on networks without a conv, 0 with one)")
      ->capture_default_str();
  sub->add_option("--bab-score", o->bab_score,
                  "relu splitting: a candidate's score is its better half's bound (better, default) or its worse "
                  "half's (worse)")
      ->capture_default_str();
  sub->add_flag("--forward-bounds", v.forward_bounds,
                "input splitting: forward linear bounds in the input before CROWN's intermediate passes (inputs "
                "of at most 64 elements)");
  sub->add_option("--intermediate", v.intermediate,
                  "intermediate bounds of every bound pass: auto (CROWN, forward bounds for a conjunction whose "
                  "whole-box CROWN pass runs past a quarter of the time left or the memory budget), crown, "
                  "forward, forward+crown or ibp (CROWN-IBP)")
      ->capture_default_str();
  sub->add_flag_callback("--no-combine", [o] { o->verify.combine_atoms = false; },
                "input splitting: refute a conjunction by single atoms only, not also by a combination of its "
                "atoms' linear bounds (docs/VERIFY.md)");
  sub->add_option("--bab-alpha-iters", v.bab_alpha_iters,
                  "input splitting: alpha-CROWN steps for the boxes CROWN leaves open, once the search has bounded "
                  "--bab-alpha-after subdomains (0: CROWN only)")
      ->capture_default_str();
  sub->add_option("--bab-alpha-after", v.bab_alpha_after,
                  "input splitting: subdomains bounded by CROWN alone before --bab-alpha-iters applies")
      ->capture_default_str();
  sub->add_flag_callback("--bab-alpha-no-intermediate", [o] { o->verify.bab_alpha_intermediate = false; },
                         "input splitting: the open boxes' alpha-CROWN optimises the final rows' slopes only");
  sub->add_option("--seed", v.seed, "seed of the falsification's random points")->capture_default_str();
  sub->add_option("--witness-tolerance", v.witness_tolerance,
                  "also accept a witness within this distance of the box (every input) that satisfies the property "
                  "in the arithmetic alone, as VNN-COMP's scoring does (1e-4); the answer says so (0: exact box)")
      ->capture_default_str();
  sub->add_option("--jobs", o->jobs, "--instances: instances decided at once, one thread each (default 2)");
  sub->add_option("--threads", o->threads,
                  "threads of one instance's branch and bound (default: every core; 1 with --instances)");
  sub->add_option("--rank-grace", o->rank_grace,
                  "under mpirun: seconds past an instance's timeout before its rank counts as lost (default 10)");
  sub->add_option("--out", o->out, "also write the result (the results CSV with --instances) to FILE");
  sub->add_flag("--json", o->json, "one JSON document on stdout");
  sub->add_option("--certificate", o->certificate,
                  "with an unsat answer, write its certificate to FILE (check it with `denote check-certificate`)");
  sub->add_flag("--check-only", o->check_only,
                "load the model and the property and check that they fit (counts, options); no search (exit 0: ok)");
  add_max_memory_option(sub, o->max_memory);
  sub->callback([&cmd, o] {
    cmd.run = [o] {
      const auto budget = max_memory_bytes(o->max_memory);
      if (!budget.ok()) return usage_error(budget.message());
      o->max_bytes = *budget;
      const Result<ArithSpec> arith = parse_arith_name(o->arith == "auto" ? "f32" : o->arith, /*allow_real=*/false);
      if (!arith.ok() || !(arith->is_f32() || arith->is_f64()))
        return usage_error("--arith " + o->arith + ": expected auto, f32 or f64");
      o->verify.arith = *arith;  // auto: f32 until the model says (verify_options)
      if (o->check_only && !o->instances.empty())
        return usage_error("--check-only goes with MODEL PROPERTY, not with --instances");
      const VerifyOptions& v = o->verify;
      if (!valid_intermediate(v.intermediate))
        return usage_error("--intermediate " + v.intermediate + ": expected auto, crown, forward, forward+crown or ibp");
      if (!parse_split_mode(o->split)) return usage_error("--split " + o->split + ": expected auto, input or relu");
      if (o->bab_score != "better" && o->bab_score != "worse")
        return usage_error("--bab-score " + o->bab_score + ": expected better or worse");
      if (v.beta_iters < 0 || v.beta_iters > 1000)
        return usage_error(fmt::format("--beta-iters {}: expected 0 to 1000", v.beta_iters));
      if (v.bab_candidates < 0 || v.bab_candidates > 1000)
        return usage_error(fmt::format("--bab-candidates {}: expected 0 to 1000", v.bab_candidates));
      if (v.bab_refresh < -1 || v.bab_refresh > 1000)
        return usage_error(fmt::format("--bab-refresh {}: expected -1 to 1000", v.bab_refresh));
      if (v.bab_alpha_iters < 0 || v.bab_alpha_iters > 1000)
        return usage_error(fmt::format("--bab-alpha-iters {}: expected 0 to 1000", v.bab_alpha_iters));
      if (!(v.witness_tolerance >= 0 && v.witness_tolerance <= 1))
        return usage_error(fmt::format("--witness-tolerance {}: expected a distance from 0 to 1", v.witness_tolerance));
      if (v.bab_alpha_after < 0)
        return usage_error(fmt::format("--bab-alpha-after {}: expected a count >= 0", v.bab_alpha_after));
      if (!(o->verify.timeout_s > 0))
        return usage_error(fmt::format("--timeout {}: expected a number of seconds > 0", o->verify.timeout_s));
      if (o->jobs < 1 || o->jobs > 256) return usage_error(fmt::format("--jobs {}: expected 1 to 256", o->jobs));
      if (o->threads < 0 || o->threads > 256)
        return usage_error(fmt::format("--threads {}: expected 1 to 256 (0: the default)", o->threads));
      if (!(o->rank_grace > 0))
        return usage_error(fmt::format("--rank-grace {}: expected a number of seconds > 0", o->rank_grace));
      if (!o->root.empty() && o->instances.empty()) return usage_error("--root applies to --instances only");
      if (!o->instances.empty() && !o->model.empty()) return usage_error("--instances replaces MODEL PROP.vnnlib");
      if (!o->certificate.empty() && !o->instances.empty()) return usage_error("--certificate goes with MODEL PROP.vnnlib, not --instances");
      o->verify.certificate = !o->certificate.empty();
      if (o->instances.empty() && (o->model.empty() || o->property.empty()))
        return usage_error("verify needs MODEL PROP.vnnlib or --instances FILE.csv");
#ifdef DENOTE_HAVE_MPI
      if (mpi_launched()) return verify_mpi(*o);
#endif
      return o->instances.empty() ? verify_one(*o) : verify_csv(*o);
    };
  });
}

}  // namespace denote::cli
