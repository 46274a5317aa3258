// Shared pieces of `denote verify` (tools/denote/cmd_verify.cc) and its MPI campaign runner
// (tools/denote/mpi/, built when DENOTE_MPI is on): options, loading one instance, the results CSV
// and summary that one process and rank 0 print alike.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "denote/base/status.h"
#include "denote/ir/model.h"
#include "denote/verify/verify.h"

namespace denote::cli {

// The command line of `denote verify`: the library's VerifyOptions (its defaults are the CLI's; the options
// --timeout, --arith, --seed, --beta-iters, --forward-bounds, --no-combine, --bab-alpha-* write into it) and
// what only the command has.
struct VerifyCliOptions {
  VerifyOptions verify;
  std::string model, property, instances, root, out, split = "auto";
  std::string bab_score = "better";  // --bab-score: better or worse; parsed into verify.bab_score
  std::string arith = "auto";  // --arith: auto (the model file's arithmetic), f32 or f64; parsed into verify.arith
  int jobs = 2;
  int threads = 0;          // 0: every core for one instance, one thread per instance with --instances
  double rank_grace = 10;   // MPI: seconds past an instance's timeout before its rank counts as lost
  std::string max_memory = "auto";  // --max-memory: the bound passes' budget, per process
  int64_t max_bytes = 0;            // max_memory parsed (shared by --jobs instances at once)
  bool json = false;
  bool check_only = false;  // --check-only: load and check the instance, do not search
  std::string certificate;  // --certificate FILE: with an unsat answer, its certificate (docs/CERTIFICATES.md)
};

struct Instance {
  std::string onnx, vnnlib;
  double timeout = 0;
};

// One line of the results CSV: `result` is sat, unsat, unknown, timeout, error, or (MPI) lost.
struct InstanceResult {
  std::string result = "lost";
  double seconds = 0;
  double falsify_s = 0, bounds_s = 0, bab_s = 0;  // VerifyStats' stage times
  std::string error;  // "error: ..." line for stderr, or empty
};

struct LoadedInstance {
  Model model;
  VnnProperty property;
  ArithSpec file_arith = ArithSpec::f32();  // the file's own arithmetic: f64 for an ONNX file of DOUBLE inputs
};

Result<std::vector<Instance>> read_csv(const std::string& path);
// The model (shape-checked) and the property.
// The property's normal form stops at `deadline` (a kResource error with field "deadline").
Result<LoadedInstance> load_instance(const std::string& model_path, const std::string& prop_path,
                                     std::chrono::steady_clock::time_point deadline =
                                         std::chrono::steady_clock::time_point::max());
// The options of one instance: --arith auto takes the instance's file_arith.
VerifyOptions verify_options(const VerifyCliOptions& o, double timeout, const LoadedInstance& in);
// Loads and decides one CSV line (paths relative to `root`).
InstanceResult run_instance(const VerifyCliOptions& o, const std::filesystem::path& root, const Instance& in);
std::filesystem::path campaign_root(const VerifyCliOptions& o);
std::string instance_line(const Instance& in, const InstanceResult& r);  // "onnx,vnnlib,result,seconds\n"
// Writes --out (in CSV order), prints the error lines, the results and the summary (or --json).
// `workers` names what ran the instances ("2 jobs", "4 ranks").
int print_campaign(const VerifyCliOptions& o, const std::vector<Instance>& list, const std::vector<InstanceResult>& rs,
                   const std::string& workers);
// The VNN-COMP result text and the --json document of one instance; the output of single mode.
std::string result_text(const VerifyOutcome& r);
std::string result_json(const VerifyOutcome& r);
int print_outcome(const VerifyCliOptions& o, const VerifyOutcome& r);

#ifdef DENOTE_HAVE_MPI
// Whether an MPI launcher (mpirun) started this process with more than one rank (tools/denote/mpi/).
bool mpi_launched();
// `mpirun -np N denote verify ...`: instances across ranks, or one instance's frontier across ranks.
int verify_mpi(const VerifyCliOptions& o);
#endif

}  // namespace denote::cli
