// Shared pieces of `denote bounds` and `denote sample`: the input-box options and their parsing.
#pragma once

#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cli.h"
#include "denote/bounds/ibp.h"

namespace denote::cli {

struct BoxOptions {
  std::string path;
  std::vector<std::string> center;  // --center, one per graph input
  double eps = std::numeric_limits<double>::quiet_NaN();  // --eps (required with --center)
  std::vector<std::string> box;     // --box LO HI, repeated per graph input
  std::string arith = "f64";
  bool json = false;
};

// Registers model, --center, --eps, --box, --arith, --json on `sub`.
void add_box_options(CLI::App* sub, BoxOptions& o);

// The input boxes the options describe (usage problems are errors too).
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
Result<SampleOutcome> sample_containment(const Graph& g, const Payload<double>& payload,
                                         const std::vector<DoubleBox>& inputs, const DoubleIbp& boxes,
                                         std::string_view arith, int64_t n, uint64_t seed);

}  // namespace denote::cli
