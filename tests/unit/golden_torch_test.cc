// PyTorch-parity golden tests: every case directory under tests/data/golden/ (generated offline by
// tests/golden/gen_torch_golden.py with python3-torch 1.13) holds a torchlean.ir.v1 model, its inputs
// and PyTorch's output in float64 and float32. Each case loads the model, evaluates it with
// F64Context and F32Context and compares the output node's value with PyTorch's.
//
// Acceptance, per element (b = PyTorch's value, a = ours):
//   f64: a == b, both NaN, or |a - b| <= f64_rel * max(1, |b|)
//   f32: a == b, both NaN, ulp_distance(a, b) <= f32_ulps (on the float bit patterns, +0 == -0),
//        or |a - b| <= f32_abs (an absolute floor near zero, where ulps of a cancelled result are
//        meaningless)
// A case's bound is the loosest over the ops in its graph. Per-op bounds (kept in sync with
// tests/data/golden/README.md):
//
// | ops                                              | f64_rel | f32_ulps | f32_abs | why                           |
// |--------------------------------------------------|---------|----------|---------|-------------------------------|
// | input const rand_uniform bernoulli_mask permute  | 1e-12   | 0        | 0       | data moves, or one correctly  |
// |   transpose detach broadcast_to reshape flatten  |         |          |         |   rounded IEEE operation on   |
// |   concat add sub mul_elem div neg abs relu       |         |          |         |   both sides: bit-exact       |
// |   max_elem min_elem sqrt rsqrt inv clamp_min     |         |          |         |                               |
// |   div_trunc div_floor remainder max_pool         |         |          |         |                               |
// | exp log sin cos tanh sigmoid erf pow             | 1e-12   | 4        | 0       | glibc vs Sleef/ATen (<= 1-2   |
// |                                                  |         |          |         |   ulp each) + one rounding    |
// | softplus safe_log                                | 1e-12   | 8        | 2.5e-7  | torch: log1p(exp x), ours:    |
// |                                                  |         |          |         |   x + log1p(exp -x) for x > 0;|
// |                                                  |         |          |         |   log(y) near y ~ 1 turns 1   |
// |                                                  |         |          |         |   ulp of y into ~1.2e-7 abs   |
// | gelu                                             | 1e-12   | 8        | 5e-7    | 1 + erf(x/sqrt2) cancels for  |
// |                                                  |         |          |         |   x < 0: |x|/2 * 4 ulp(1),    |
// |                                                  |         |          |         |   |x| <= 4 (torch's f32 erf   |
// |                                                  |         |          |         |   is off by ~2 ulp near -1)   |
// | sum reduce_sum reduce_mean mse_loss avg_pool     | 1e-12   | 16       | 2e-6    | torch sums in another order   |
// |   matmul linear conv                             |         |          |         |   (vector lanes, BLAS, im2col)|
// |                                                  |         |          |         |   <= 27 O(1) terms: a near-0  |
// |                                                  |         |          |         |   result has no ulp meaning   |
// | softmax log_softmax hard_masked_softmax          | 1e-12   | 16       | 1e-6    | order of the exp sum; torch   |
// |                                                  |         |          |         |   multiplies by 1/sum; x - max|
// |                                                  |         |          |         |   - lse cancels near 0        |
// | layernorm batch_norm_eval                        | 1e-12   | 16       | 2e-6    | torch folds gamma * rstd into |
// |                                                  |         |          |         |   x * scale + shift (cancels) |
//
// The f64 bound is 1e-12 relative for every op: the f64 data are O(1) and no case is
// ill-conditioned enough for PyTorch's different algorithms to differ by more.
//
// A case whose op has no evaluation rule yet fails (the evaluator's error is the failure message).
// Set DENOTE_GOLDEN_VERBOSE=1 to print the largest deviation of every case (for tuning bounds).
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "denote/ir/model.h"

namespace denote {
namespace {

namespace fs = std::filesystem;

struct Tolerance {
  double f64_rel = 1e-12;
  int64_t f32_ulps = 0;
  double f32_abs = 0.0;
};

// Per-op bounds; see the table at the top of this file. Ops not listed get the strict default.
const std::map<std::string, Tolerance>& op_tolerances() {
  static const std::map<std::string, Tolerance> kTable = [] {
    std::map<std::string, Tolerance> t;
    for (const char* op : {"exp", "log", "sin", "cos", "tanh", "sigmoid", "erf", "pow"}) t[op] = {1e-12, 4, 0.0};
    for (const char* op : {"softplus", "safe_log"}) t[op] = {1e-12, 8, 2.5e-7};
    t["gelu"] = {1e-12, 8, 5e-7};
    for (const char* op : {"sum", "reduce_sum", "reduce_mean", "mse_loss", "avg_pool", "matmul", "linear", "conv"})
      t[op] = {1e-12, 16, 2e-6};
    for (const char* op : {"softmax", "log_softmax", "hard_masked_softmax"}) t[op] = {1e-12, 16, 1e-6};
    for (const char* op : {"layernorm", "batch_norm_eval"}) t[op] = {1e-12, 16, 2e-6};
    return t;
  }();
  return kTable;
}

Tolerance case_tolerance(const Graph& g) {
  Tolerance tol;
  for (const Node& n : g.nodes) {
    auto it = op_tolerances().find(std::string(op_tag(n.op)));
    if (it == op_tolerances().end()) continue;
    tol.f64_rel = std::max(tol.f64_rel, it->second.f64_rel);
    tol.f32_ulps = std::max(tol.f32_ulps, it->second.f32_ulps);
    tol.f32_abs = std::max(tol.f32_abs, it->second.f32_abs);
  }
  return tol;
}

// Position of a float on the number line of floats: adjacent floats differ by 1, +0 and -0 are equal.
int64_t float_order(float f) {
  const int32_t bits = std::bit_cast<int32_t>(f);
  return bits >= 0 ? int64_t{bits} : int64_t{std::numeric_limits<int32_t>::min()} - int64_t{bits};
}

int64_t ulp_distance(float a, float b) {
  const int64_t d = float_order(a) - float_order(b);
  return d < 0 ? -d : d;
}

std::string golden_dir() { return std::string(DENOTE_SOURCE_DIR) + "/tests/data/golden"; }

std::vector<std::string> list_cases() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(golden_dir(), ec))
    if (entry.is_directory() && fs::exists(entry.path() / "model.json")) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

struct Loaded {
  Model model;
  std::vector<Tensor<double>> inputs;
  Tensor<double> expected_f64, expected_f32;
};

// Reads model.json, input_<k>.npy for every input node, and both expected arrays.
Result<Loaded> load_case(const std::string& name) {
  const std::string dir = golden_dir() + "/" + name;
  Loaded c;
  DENOTE_ASSIGN_OR_RETURN(c.model, load_model_file(dir + "/model.json"));
  const size_t n_inputs = c.model.graph.input_ids().size();
  for (size_t k = 0; k < n_inputs; ++k) {
    DENOTE_ASSIGN_OR_RETURN(NpyArray a, read_npy_file(fmt::format("{}/input_{}.npy", dir, k)));
    c.inputs.push_back(std::move(a.tensor));
  }
  DENOTE_ASSIGN_OR_RETURN(NpyArray e64, read_npy_file(dir + "/expected_f64.npy"));
  DENOTE_ASSIGN_OR_RETURN(NpyArray e32, read_npy_file(dir + "/expected_f32.npy"));
  if (e64.dtype != NpyDtype::F64 || e32.dtype != NpyDtype::F32)
    return error_status("expected_f64.npy must be float64 and expected_f32.npy float32");
  c.expected_f64 = std::move(e64.tensor);
  c.expected_f32 = std::move(e32.tensor);
  return c;
}

// Collects per-element mismatches and the largest deviation seen.
struct Comparison {
  int64_t mismatches = 0;
  std::string detail;
  double max_abs = 0.0;
  double max_rel = 0.0;
  int64_t max_ulps = 0;

  void fail(size_t i, double got, double want, const std::string& how) {
    if (++mismatches <= 8) detail += fmt::format("\n  [{}] got {:.17g}, expected {:.17g} ({})", i, got, want, how);
  }
};

Comparison compare_f64(const std::vector<double>& got, const std::vector<double>& want, const Tolerance& tol) {
  Comparison c;
  for (size_t i = 0; i < want.size(); ++i) {
    const double a = got[i], b = want[i];
    if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    const double diff = std::fabs(a - b), scale = std::max(1.0, std::fabs(b));
    if (std::isfinite(diff)) {
      c.max_abs = std::max(c.max_abs, diff);
      c.max_rel = std::max(c.max_rel, diff / scale);
    }
    if (!(diff <= tol.f64_rel * scale)) c.fail(i, a, b, fmt::format("|diff| = {:.3g}, bound {:.3g}", diff, tol.f64_rel * scale));
  }
  return c;
}

Comparison compare_f32(const std::vector<float>& got, const std::vector<double>& want, const Tolerance& tol) {
  Comparison c;
  for (size_t i = 0; i < want.size(); ++i) {
    const float a = got[i], b = static_cast<float>(want[i]);  // want[i] is a widened float: exact
    if ((std::isnan(a) && std::isnan(b)) || a == b) continue;
    const bool comparable = std::isfinite(a) && std::isfinite(b);
    const int64_t ulps = comparable ? ulp_distance(a, b) : std::numeric_limits<int64_t>::max();
    const double diff = comparable ? std::fabs(double{a} - double{b}) : std::numeric_limits<double>::infinity();
    if (comparable) {
      c.max_ulps = std::max(c.max_ulps, ulps);
      c.max_abs = std::max(c.max_abs, diff);
    }
    if (!(ulps <= tol.f32_ulps || diff <= tol.f32_abs))
      c.fail(i, a, b, fmt::format("{} ulps, |diff| = {:.3g}; bound {} ulps or {:.3g}", ulps, diff, tol.f32_ulps,
                                  tol.f32_abs));
  }
  return c;
}

bool verbose() {
  const char* v = std::getenv("DENOTE_GOLDEN_VERBOSE");
  return v != nullptr && std::string(v) != "0";
}

class GoldenTorch : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTorch, MatchesPyTorch) {
  const std::string& name = GetParam();
  auto loaded = load_case(name);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const Model& m = loaded->model;
  ASSERT_EQ(m.output_ids.size(), 1u);
  const int64_t out = m.output_ids[0];
  const Tolerance tol = case_tolerance(m.graph);

  F64Context c64;
  auto t64 = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(loaded->inputs), c64);
  ASSERT_TRUE(t64.ok()) << "f64 evaluation failed: " << t64.message();
  const Tensor<double>& y64 = (*t64)[out];
  ASSERT_EQ(to_string(y64.shape), to_string(loaded->expected_f64.shape)) << "f64 output shape";
  Comparison r64 = compare_f64(y64.data, loaded->expected_f64.data, tol);
  EXPECT_EQ(r64.mismatches, 0) << "f64 vs PyTorch float64 (rel bound " << tol.f64_rel << "):" << r64.detail;

  F32Context c32;
  Payload<float> p32 = convert_payload<float>(m.payload, [](double v) { return static_cast<float>(v); });
  std::vector<Tensor<float>> in32;
  for (const Tensor<double>& t : loaded->inputs) {
    std::vector<float> d(t.data.begin(), t.data.end());
    in32.emplace_back(t.shape, std::move(d));
  }
  auto t32 = denote_all(m.graph, p32, std::span<const Tensor<float>>(in32), c32);
  ASSERT_TRUE(t32.ok()) << "f32 evaluation failed: " << t32.message();
  const Tensor<float>& y32 = (*t32)[out];
  ASSERT_EQ(to_string(y32.shape), to_string(loaded->expected_f32.shape)) << "f32 output shape";
  Comparison r32 = compare_f32(y32.data, loaded->expected_f32.data, tol);
  EXPECT_EQ(r32.mismatches, 0) << "f32 vs PyTorch float32:" << r32.detail;

  if (verbose())
    fmt::print("[golden] {:32s} f64 max abs {:.3g} rel {:.3g} | f32 max {} ulps, abs {:.3g}\n", name, r64.max_abs,
               r64.max_rel, r32.max_ulps, r32.max_abs);
}

INSTANTIATE_TEST_SUITE_P(Case, GoldenTorch, ::testing::ValuesIn(list_cases()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The data must be there: a missing or emptied directory must not pass as "no cases".
TEST(GoldenTorchData, CaseDirectoriesArePresent) {
  const std::vector<std::string> names = list_cases();
  EXPECT_GE(names.size(), 100u) << "golden cases in " << golden_dir();
  for (const std::string& n : names) {
    EXPECT_TRUE(fs::exists(golden_dir() + "/" + n + "/expected_f64.npy")) << n;
    EXPECT_TRUE(fs::exists(golden_dir() + "/" + n + "/expected_f32.npy")) << n;
  }
}

// The ulp metric itself: adjacent floats are 1 apart, across zero and at the top of a binade.
TEST(GoldenTorchData, UlpDistanceCountsFloatsBetween) {
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 2.0f)), 1);
  EXPECT_EQ(ulp_distance(1.0f, std::nextafter(1.0f, 0.0f)), 1);
  EXPECT_EQ(ulp_distance(0.0f, -0.0f), 0);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(ulp_distance(-tiny, tiny), 2);
  EXPECT_EQ(ulp_distance(2.0f, 1.0f), int64_t{1} << 23);
}

}  // namespace
}  // namespace denote
