// Shared pieces of `denote bounds` and `denote sample`: the input-box options and their parsing.
#pragma once

#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "denote/bounds/crown.h"
#include "denote/bounds/ibp.h"

namespace denote::cli {

struct BoxOptions {
  std::string path;
  std::vector<std::string> center;  // --center, one per graph input
  std::string eps_text;             // --eps (required with --center), parsed by check_box_usage
  bool eps_given = false;
  double eps = 0;                   // set by check_box_usage
  std::string norm = "inf";         // --norm inf|2|1: the ball around --center (2, 1: through its bounding box)
  double p = 0;                     // norm parsed by check_box_usage (infinity for inf)
  std::vector<std::string> box;     // --box LO HI, repeated per graph input
  std::string arith = "f64";        // or "auto": the file's own (load_box_model)
  std::string max_memory = "auto";  // --max-memory SIZE or auto
  bool json = false;
  bool all_nodes = false;           // bounds: every node, not only the outputs
};

// The linear-bound options of `denote bounds` (cmd_bounds_linear.cc).
struct LinearBoundOptions {
  std::string spec;  // --spec: JSON matrix or @file.npy
  int alpha_iters = 20;
  bool alpha_iters_given = false;
  bool outputs_only = false;
  bool lirpa_compatible = false;
  std::string intermediate = "crown";  // --intermediate: crown, forward, forward+crown, ibp
};

// --method crown / alpha-crown, or any method with --spec: run_crown, printed like IBP's boxes plus
// the spec's rows.
int run_linear_bounds(BoxOptions& o, BoundMethod method, const LinearBoundOptions& lb);

// Registers model, --center, --eps, --box, --arith, --max-memory, --json on `sub`.
void add_box_options(CLI::App* sub, BoxOptions& o);

// The usage checks of the box options that need no model (exit 2): exactly one of --center/--box,
// --eps present with --center and a finite number >= 0 (stored in o.eps), --arith a known name,
// --max-memory a SIZE. Returns the memory budget in bytes.
Result<int64_t> check_box_usage(BoxOptions& o);

// The model of o.path, checked; `--arith auto` becomes the file's own arithmetic there: f32 for an ONNX
// file whose inputs are all FLOAT, f64 otherwise (DOUBLE inputs; JSON, which names none).
Result<Model> load_box_model(BoxOptions& o);

// The input boxes the options describe (after check_box_usage); every message names the option,
// the corner (LO/HI) and the input node and element it concerns.
Result<std::vector<DoubleBox>> parse_boxes(const Graph& g, const BoxOptions& o);

// A string for inside JSON quotes.
std::string json_escape(const std::string& s);

// "[a, b, c]" with 6 decimals.
std::string six_decimals(const std::vector<double>& v);

}  // namespace denote::cli

namespace denote::cli {

// Sampled containment: n deterministic points of the input boxes (the lower corner, the upper
// corner, the midpoint, then splitmix64 points clamped into the box), each evaluated in `arith`
// (f64/f32 hardware, a binary format rounded to nearest-even); every node value that has a box
// must lie in it. Stops at the first counterexample.
struct SampleOutcome {
  int64_t samples = 0, contained = 0;
  bool failed = false;
  int64_t index = -1, node = -1, element = -1;
  std::vector<double> x;  // the failing point (all inputs, flattened)
  double y = 0;           // the value outside its box
  std::string error;      // an evaluation error at the failing point ("" if the value was outside)
};
// `progress(k, n)` (if set) is called after each sample; `options` bounds each evaluation.
// Point coordinates are lo*(1-t) + hi*t (exact corners at t = 0, 1), so a box wider than the
// largest double still gives finite points inside it.
Result<SampleOutcome> sample_containment(const Graph& g, const Payload<double>& payload,
                                         const std::vector<DoubleBox>& inputs, const DoubleIbp& boxes,
                                         std::string_view arith, int64_t n, uint64_t seed,
                                         const EvalOptions& options = {},
                                         const std::function<void(int64_t, int64_t)>& progress = {});

// The most samples `denote sample --samples` accepts.
inline constexpr int64_t kMaxSamples = 10'000'000;

// Point k of the boxes (exposed for tests): corners, midpoint, then uniform draws inside [lo, hi].
std::vector<Tensor<double>> sample_point(const std::vector<DoubleBox>& boxes, int64_t k, uint64_t seed);

}  // namespace denote::cli
