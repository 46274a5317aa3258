// PyTorch autograd goldens for reverse mode (include/denote/autodiff/grad.h), all generated offline
// with Debian's python3-torch 1.13 in float64:
//
// - GoldenGrad/<case>: every case directory under tests/data/golden/ that holds cotangent.npy
//   (tests/golden/gen_torch_grad_golden.py; the graphs and inputs are those of the forward goldens,
//   tests/unit/golden_torch_test.cc). vjp in F64Context with that cotangent C must give
//   grad_input_<k>.npy = d sum(C * y) / d input k for every input; jvp is checked against the same
//   gradients through the adjoint identity <C, J t> = sum_k <grad_k, t_k>.
// - GoldenGradNets: the ACAS Xu networks (tests/data/acasxu/grad_golden.json) and the mnistfc
//   784-256-256-10 network (tests/data/mnistfc/grad_golden.json) from
//   tests/golden/gen_torch_grad_nets.py, imported with denote's ONNX importer; the gradient of
//   sum(C * y) with respect to the input at a few fixed points.
//
// Acceptance, per element (b = PyTorch's value, a = ours): a == b (equal infinities included), both
// NaN, or |a - b| <= rel * max(1, |b|), rel = 1e-12 for every case. No case needs a looser bound (the
// largest deviation seen, 1.8e-15, is in tests/data/golden/README.md): the data are O(1), PyTorch's
// different summation orders (BLAS, im2col, vector lanes) move results by a few ulps, and the ReLU
// networks are evaluated away from their kinks (the generator requires every pre-activation to be at
// least 1e-6 from 0), where the gradient is a product of the weight matrices.
//
// Cases without gradient files are the ones the generator skips, each listed in kSkipped below with
// its reason; a case directory that is neither is a failure (nothing is skipped silently).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "denote/autodiff/grad.h"
#include "denote/check/check.h"
#include "denote/io/json.h"
#include "denote/io/npy.h"
#include "denote/io/onnx.h"
#include "denote/ir/model.h"

namespace denote {
namespace {

namespace fs = std::filesystem;

constexpr double kRel = 1e-12;

// Forward golden cases that have no gradient golden, and why (the generator's summary lists the same).
const std::map<std::string, std::string>& skipped_cases() {
  static const std::map<std::string, std::string> kSkipped = [] {
    std::map<std::string, std::string> s;
    const std::string stream = "expected value from the Python splitmix64 stream, not PyTorch (random source)";
    for (const char* c : {"rand_uniform", "rand_uniform_seed_wrap", "bernoulli_mask_p03", "bernoulli_mask_p0",
                          "bernoulli_mask_p1", "bernoulli_mask_p_above1"})
      s[c] = stream;
    for (const char* c : {"max_pool2d_oversized", "max_pool1d_oversized", "avg_pool2d_oversized",
                          "avg_pool1d_oversized"})
      s[c] = "hand value (empty output): PyTorch raises for a window larger than the padded input";
    s["mse_loss_empty"] = "hand value: PyTorch's mean of nothing is NaN, the IR divides by 1";
    s["const_only"] = "no input to differentiate with respect to";
    return s;
  }();
  return kSkipped;
}

std::string golden_dir() { return std::string(DENOTE_SOURCE_DIR) + "/tests/data/golden"; }

std::vector<std::string> case_dirs(bool with_grad_only) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(golden_dir(), ec)) {
    if (!entry.is_directory() || !fs::exists(entry.path() / "model.json")) continue;
    if (with_grad_only && !fs::exists(entry.path() / "cotangent.npy")) continue;
    names.push_back(entry.path().filename());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct GradCase {
  Model model;
  std::vector<Tensor<double>> inputs;
  Tensor<double> cotangent;
  std::vector<Tensor<double>> grads;  // PyTorch's, one per input
};

Result<Tensor<double>> read_f64(const std::string& path) {
  DENOTE_ASSIGN_OR_RETURN(NpyArray a, read_npy_file(path));
  if (a.dtype != NpyDtype::F64) return error_status(path + ": expected float64");
  return std::move(a.tensor);
}

Result<GradCase> load_grad_case(const std::string& name) {
  const std::string dir = golden_dir() + "/" + name;
  GradCase c;
  DENOTE_ASSIGN_OR_RETURN(c.model, load_model_file(dir + "/model.json"));
  const size_t n_inputs = c.model.graph.input_ids().size();
  for (size_t k = 0; k < n_inputs; ++k) {
    DENOTE_ASSIGN_OR_RETURN(Tensor<double> x, read_f64(fmt::format("{}/input_{}.npy", dir, k)));
    DENOTE_ASSIGN_OR_RETURN(Tensor<double> g, read_f64(fmt::format("{}/grad_input_{}.npy", dir, k)));
    c.inputs.push_back(std::move(x));
    c.grads.push_back(std::move(g));
  }
  if (fs::exists(fmt::format("{}/grad_input_{}.npy", dir, n_inputs)))
    return error_status(fmt::format("{}: more grad_input files than the model's {} inputs", name, n_inputs));
  DENOTE_ASSIGN_OR_RETURN(c.cotangent, read_f64(dir + "/cotangent.npy"));
  return c;
}

// Largest deviations and the first few mismatches.
struct Comparison {
  int64_t checked = 0;
  int64_t mismatches = 0;
  int64_t non_finite = 0;  // elements where both sides agree on an infinity or a NaN
  double max_abs = 0.0;
  double max_rel = 0.0;
  std::string detail;
  int64_t first_bad = -1;  // flat index of the first mismatch

  void add(const std::string& where, const std::vector<double>& got, const std::vector<double>& want, double rel) {
    if (got.size() != want.size()) {
      ++mismatches;
      detail += fmt::format("\n  {}: {} values, expected {}", where, got.size(), want.size());
      return;
    }
    for (size_t i = 0; i < want.size(); ++i) {
      ++checked;
      const double a = got[i], b = want[i];
      if ((std::isnan(a) && std::isnan(b)) || a == b) {
        if (!std::isfinite(b)) ++non_finite;
        continue;
      }
      const double diff = std::fabs(a - b), scale = std::max(1.0, std::fabs(b));
      if (std::isfinite(diff)) {
        max_abs = std::max(max_abs, diff);
        max_rel = std::max(max_rel, diff / scale);
      }
      if (!(diff <= rel * scale) && first_bad < 0) first_bad = static_cast<int64_t>(i);
      if (!(diff <= rel * scale) && ++mismatches <= 8)
        detail += fmt::format("\n  {}[{}]: got {:.17g}, expected {:.17g} (|diff| = {:.3g}, bound {:.3g})", where, i,
                              a, b, diff, rel * scale);
    }
  }
};

// For an elementwise case (every input shaped like the output), the inputs at the first mismatch.
std::string elementwise_inputs(const GradCase& c, int64_t i) {
  if (i < 0) return "";
  std::string s = fmt::format("\n  inputs at [{}]:", i);
  for (const Tensor<double>& x : c.inputs) {
    if (x.shape != c.cotangent.shape) return "";
    s += fmt::format(" {:.17g}", x.data[static_cast<size_t>(i)]);
  }
  return s;
}

class GoldenGrad : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenGrad, MatchesPyTorchAutograd) {
  const std::string& name = GetParam();
  auto c = load_grad_case(name);
  ASSERT_TRUE(c.ok()) << c.message();
  const Model& m = c->model;
  ASSERT_EQ(m.output_ids.size(), 1u);
  F64Context ctx;
  auto g = vjp(m.graph, m.payload, std::span<const Tensor<double>>(c->inputs), m.output_ids[0], &c->cotangent, ctx);
  ASSERT_TRUE(g.ok()) << "vjp failed: " << g.message();
  ASSERT_EQ(g->inputs.size(), c->grads.size());
  Comparison r;
  for (size_t k = 0; k < c->grads.size(); ++k) {
    EXPECT_EQ(to_string(g->inputs[k].shape), to_string(c->grads[k].shape)) << "gradient of input " << k;
    r.add(fmt::format("grad_input_{}", k), g->inputs[k].data, c->grads[k].data, kRel);
  }
  EXPECT_EQ(r.mismatches, 0) << name << ": vjp vs torch.autograd (rel bound " << kRel << "):" << r.detail
                             << elementwise_inputs(*c, r.first_bad);
  fmt::print("[golden-grad] {:30s} inputs {} values {:4d} max abs {:.3g} rel {:.3g}{}\n", name, c->grads.size(),
             r.checked, r.max_abs, r.max_rel, r.non_finite ? fmt::format(" (+{} equal non-finite)", r.non_finite) : "");
}

// Forward mode against the same PyTorch gradients, through the adjoint identity
// <C, J t> = sum_k <grad_k, t_k> for a fixed tangent t (values in [-1, 1]). Bound: 1e-12 times the
// sum of the absolute terms of both sides. The tangent is 0 where an input is not finite or PyTorch's
// gradient is not (NaN inputs, sqrt at 0, pow's poles: the VJP test above checks those); a case whose J t is still not finite there
// (inf * 0) has no finite inner product and is left to the VJP test above.
TEST_P(GoldenGrad, JvpAdjointMatchesPyTorchAutograd) {
  const std::string& name = GetParam();
  auto c = load_grad_case(name);
  ASSERT_TRUE(c.ok()) << c.message();
  const Model& m = c->model;
  std::vector<Tensor<double>> tangents;
  double rhs = 0.0, scale = 0.0;
  bool finite = true;
  // Elementwise cases: an element where any input or gradient is not finite gets no direction in any
  // input (max_elem(NaN, 1) must not be probed through its finite operand either).
  std::vector<bool> poisoned(c->cotangent.data.size(), false);
  const bool elementwise = std::all_of(c->inputs.begin(), c->inputs.end(),
                                       [&](const Tensor<double>& x) { return x.shape == c->cotangent.shape; });
  for (size_t k = 0; elementwise && k < c->inputs.size(); ++k)
    for (size_t i = 0; i < poisoned.size(); ++i)
      if (!std::isfinite(c->inputs[k].data[i]) || !std::isfinite(c->grads[k].data[i])) poisoned[i] = true;
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (size_t k = 0; k < c->inputs.size(); ++k) {
    Tensor<double> t = c->inputs[k];
    for (size_t i = 0; i < t.data.size(); ++i) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      t.data[i] = static_cast<double>(state >> 11) * 0x1p-52 - 1.0;
      const double g = c->grads[k].data[i], x = c->inputs[k].data[i];
      if (!std::isfinite(g) || !std::isfinite(x) || (elementwise && poisoned[i])) t.data[i] = 0.0;
      if (t.data[i] == 0.0) continue;
      rhs += g * t.data[i];
      scale += std::fabs(g * t.data[i]);
    }
    tangents.push_back(std::move(t));
  }
  F64Context ctx;
  auto d = jvp(m.graph, m.payload, std::span<const Tensor<double>>(c->inputs),
               std::span<const Tensor<double>>(tangents), m.output_ids[0], ctx);
  ASSERT_TRUE(d.ok()) << "jvp failed: " << d.message();
  ASSERT_EQ(to_string(d->tangent.shape), to_string(c->cotangent.shape));
  double lhs = 0.0;
  for (size_t i = 0; i < d->tangent.data.size(); ++i) {
    finite = finite && std::isfinite(d->tangent.data[i]);
    lhs += c->cotangent.data[i] * d->tangent.data[i];
    scale += std::fabs(c->cotangent.data[i] * d->tangent.data[i]);
  }
  if (!finite) {
    fmt::print("[golden-grad] {:30s} jvp adjoint: not checked (J t is not finite)\n", name);
    return;
  }
  EXPECT_LE(std::fabs(lhs - rhs), kRel * std::max(1.0, scale))
      << name << ": <C, jvp(t)> = " << fmt::format("{:.17g}", lhs) << ", <torch grad, t> = "
      << fmt::format("{:.17g}", rhs);
}

INSTANTIATE_TEST_SUITE_P(Case, GoldenGrad, ::testing::ValuesIn(case_dirs(true)),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The data must be there, and every forward case without gradient files must be a documented skip.
TEST(GoldenGradData, EveryCaseHasGradientsOrADocumentedReason) {
  const std::vector<std::string> all = case_dirs(false), with = case_dirs(true);
  EXPECT_GE(with.size(), 95u) << "gradient goldens in " << golden_dir();
  for (const std::string& n : all) {
    const bool has = std::binary_search(with.begin(), with.end(), n);
    const bool skipped = skipped_cases().count(n) > 0;
    EXPECT_NE(has, skipped) << n << (has ? ": has gradient files but is listed as skipped"
                                         : ": no gradient files and no documented reason");
  }
  for (const auto& [n, why] : skipped_cases())
    EXPECT_TRUE(std::find(all.begin(), all.end(), n) != all.end()) << n << " (skipped: " << why << ") is gone";
}

// ---- the ACAS Xu and mnistfc networks

void check_net_file(const fs::path& json_path, size_t min_nets) {
  std::ifstream f(json_path);
  ASSERT_TRUE(f.good()) << json_path;
  const nlohmann::json doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc.at("format"), "denote.grad_golden.v1");
  ASSERT_GE(doc.at("nets").size(), min_nets);
  for (const auto& [file, net] : doc.at("nets").items()) {
    SCOPED_TRACE(file);
    auto m = load_model_onnx_file((json_path.parent_path() / file).string());
    ASSERT_TRUE(m.ok()) << m.message();
    ASSERT_TRUE(check_shapes(m->graph).ok()) << check_shapes(m->graph).message();
    ASSERT_EQ(m->graph.input_ids().size(), 1u);
    ASSERT_EQ(m->output_ids.size(), 1u);
    const Shape in_shape = net.at("input_shape").get<std::vector<int64_t>>();
    const Shape out_shape = net.at("output_shape").get<std::vector<int64_t>>();
    Comparison r;
    for (size_t k = 0; k < net.at("points").size(); ++k) {
      const auto& p = net.at("points")[k];
      std::vector<Tensor<double>> in{Tensor<double>{in_shape, p.at("input").get<std::vector<double>>()}};
      const Tensor<double> cot{out_shape, p.at("cotangent").get<std::vector<double>>()};
      F64Context ctx;
      auto g = vjp(m->graph, m->payload, std::span<const Tensor<double>>(in), m->output_ids[0], &cot, ctx);
      ASSERT_TRUE(g.ok()) << "point " << k << ": " << g.message();
      ASSERT_EQ(g->inputs.size(), 1u);
      EXPECT_EQ(g->inputs[0].shape, in_shape);
      EXPECT_EQ(g->value.shape, out_shape);
      r.add(fmt::format("point {} output", k), g->value.data, p.at("output").get<std::vector<double>>(), kRel);
      r.add(fmt::format("point {} gradient", k), g->inputs[0].data, p.at("grad_input").get<std::vector<double>>(),
            kRel);
    }
    EXPECT_EQ(r.mismatches, 0) << file << ": vjp vs torch.autograd (rel bound " << kRel << "):" << r.detail;
    fmt::print("[golden-grad] {:34s} points {} values {:5d} max abs {:.3g} rel {:.3g}\n", file,
               net.at("points").size(), r.checked, r.max_abs, r.max_rel);
  }
}

TEST(GoldenGradNets, AcasXuMatchesPyTorchAutograd) {
  check_net_file(fs::path(DENOTE_SOURCE_DIR) / "tests/data/acasxu/grad_golden.json", 4);
}

TEST(GoldenGradNets, MnistFcMatchesPyTorchAutograd) {
  check_net_file(fs::path(DENOTE_SOURCE_DIR) / "tests/data/mnistfc/grad_golden.json", 1);
}

}  // namespace
}  // namespace denote
