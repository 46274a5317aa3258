// The differential harness (SPEC-PLANNING.md "Evidence"): every executable capsule of every available
// provider runs against the reference (the generic evaluator, denote_all) on generated inputs for
// its op and several shapes, in f64 and f32.
//  - Both policies exact (no reduction, or fixed-left with the same accumulation format): bit-identical.
//  - Otherwise (OpenBLAS's implementation-defined summation order): each output y_i computed from k
//    products w*x plus a bias obeys |y_i - exact_i| <= gamma(k+1) M_i with M_i = sum |w||x| + |b|
//    and gamma(n) = n u / (1 - n u) (Higham, Accuracy and Stability of Numerical Algorithms, 3.1),
//    for both the reference and the candidate, so |cand - ref| <= 2 gamma(k+1) M_i. M_i is computed
//    by the reference evaluator in f64 on |inputs| and |parameters|, and widened by (1 + 2 gamma_64(k+1))
//    for its own rounding.
//  - Non-finite values: NaN exactly where the reference has NaN, infinities with the reference's sign.
// A failing comparison prints the capsule, value type, case (op, shapes, attrs), element index, both
// values, M_i and the tolerance. Every case runs twice per value type: through execute_plan (the
// ordinary kernels) and through a compiled plan (denote/plan/compiled.h: the prepared kernels, with
// the bias in the GEMM's output pass); fused epilogues (linear/conv + relu, tanh) get their own cases.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

#include <fmt/format.h>

#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"
#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/plan/registry.h"
#include "denote/providers/providers.h"

namespace denote {
namespace {

struct Case {
  std::string label;
  Model model;
  std::vector<Tensor<double>> inputs;
  int64_t node = 0;   // the node under test (the last one)
  int64_t terms = 0;  // products per output element (k), 0 for elementwise ops
};

class Draw {
 public:
  explicit Draw(uint64_t seed) : gen_(seed) {}
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(gen_.next() >> 11) * 0x1p-53; }
  std::vector<double> values(int64_t n, double bound = 2.0) {
    std::vector<double> v(static_cast<size_t>(n));
    for (double& x : v) x = uniform(-bound, bound);
    return v;
  }

 private:
  SplitMix64 gen_;
};

Tensor<double> random_tensor(Draw& d, const Shape& s) { return Tensor<double>(s, d.values(numel(s))); }

Case finish(GraphBuilder& b, int64_t node, std::string label, std::vector<Tensor<double>> inputs, int64_t terms) {
  auto m = b.build({node});
  EXPECT_TRUE(m.ok()) << label << ": " << m.message();
  return Case{std::move(label), m.ok() ? *m : Model{}, std::move(inputs), node, terms};
}

std::vector<Case> linear_cases(Draw& d) {
  const std::vector<std::pair<Shape, int64_t>> shapes = {
      {{1}, 1}, {{7}, 5}, {{1, 17}, 33}, {{4, 64}, 10}, {{2, 3, 300}, 7}, {{0, 5}, 3}, {{2, 0}, 3}, {{9, 1000}, 2}};
  std::vector<Case> out;
  for (const auto& [x_shape, n_out] : shapes) {
    GraphBuilder b;
    const int64_t in = x_shape.back();
    const int64_t y = b.linear(b.input(x_shape), n_out, d.values(n_out * in), d.values(n_out));
    out.push_back(finish(b, y, fmt::format("linear x{} out={}", to_string(x_shape), n_out),
                         {random_tensor(d, x_shape)}, in));
  }
  return out;
}

std::vector<Case> matmul_cases(Draw& d) {
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{3, 4}, {4, 5}}, {{4}, {4, 6}},         {{5, 4}, {4}},        {{4}, {4}},
      {{2, 3, 8}, {8, 2}}, {{2, 1, 3, 8}, {4, 8, 5}}, {{1, 130}, {130, 1}}, {{33, 70}, {70, 40}}};
  std::vector<Case> out;
  for (const auto& [a, c] : shapes) {
    GraphBuilder b;
    const int64_t lhs = b.input(a);  // (separate statements: argument order is unspecified)
    const int64_t y = b.binary(Op::Matmul, lhs, b.input(c));
    out.push_back(finish(b, y, fmt::format("matmul {} x {}", to_string(a), to_string(c)),
                         {random_tensor(d, a), random_tensor(d, c)}, a.back()));
  }
  return out;
}

struct ConvSpec {
  Shape x;
  int64_t channel_axis, out_channels, groups;
  std::vector<int64_t> kernel, stride, padding, dilation, padding_after;
};

std::vector<Case> conv_cases(Draw& d) {
  const std::vector<ConvSpec> specs = {
      {{2, 3, 11}, 1, 4, 1, {3}, {1}, {1}, {}, {}},
      {{2, 4, 9, 8}, 1, 6, 2, {3, 2}, {2, 1}, {1, 0}, {1, 2}, {}},
      {{1, 2, 7, 6}, 1, 3, 1, {3, 3}, {1, 1}, {2, 1}, {}, {0, 1}},
      {{1, 2, 5, 4, 3}, 1, 3, 1, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {}, {}},
      {{3, 10, 10}, 0, 2, 1, {3, 3}, {1, 1}, {0, 0}, {}, {}},
      {{2, 1, 28, 28}, 1, 16, 1, {3, 3}, {1, 1}, {0, 0}, {}, {}},
  };
  std::vector<Case> out;
  for (const ConvSpec& s : specs) {
    ConvConfig c;
    c.window = WindowConfig{static_cast<int64_t>(s.kernel.size()), s.kernel, s.stride, s.padding};
    c.dilation = s.dilation;
    c.padding_after = s.padding_after;
    c.groups = s.groups;
    c.channel_axis = s.channel_axis;
    c.in_channels = s.x[static_cast<size_t>(s.channel_axis)];
    c.out_channels = s.out_channels;
    int64_t taps = c.in_channels / c.groups;
    for (int64_t k : s.kernel) taps *= k;
    GraphBuilder b;
    const int64_t y = b.conv(b.input(s.x), c, d.values(c.out_channels * taps), d.values(c.out_channels));
    out.push_back(finish(b, y,
                         fmt::format("conv x{} axis={} out={} groups={} kernel={} stride={} pad={} dil={} pad_after={}",
                                     to_string(s.x), s.channel_axis, s.out_channels, s.groups, to_string(s.kernel),
                                     to_string(s.stride), to_string(s.padding), to_string(s.dilation),
                                     to_string(s.padding_after)),
                         {random_tensor(d, s.x)}, taps));
  }
  return out;
}

std::vector<Case> elementwise_cases(Draw& d, Op op) {
  std::vector<Case> out;
  for (const Shape& s : {Shape{}, Shape{7}, Shape{3, 5}, Shape{2, 3, 4}}) {
    GraphBuilder b;
    const int64_t lhs = b.input(s);
    const int64_t y = b.binary(op, lhs, b.input(s));
    out.push_back(finish(b, y, fmt::format("{} {}", op_tag(op), to_string(s)),
                         {random_tensor(d, s), random_tensor(d, s)}, 0));
  }
  return out;
}

// Generated cases for a backend op; empty when the harness has no generator (a test failure).
std::vector<Case> cases_for(BackendOp op, uint64_t seed) {
  Draw d(seed);
  switch (op) {
    case BackendOp::Linear: return linear_cases(d);
    case BackendOp::Matmul: return matmul_cases(d);
    case BackendOp::Conv: return conv_cases(d);
    case BackendOp::Add: return elementwise_cases(d, Op::Add);
    case BackendOp::Sub: return elementwise_cases(d, Op::Sub);
    case BackendOp::Mul: return elementwise_cases(d, Op::MulElem);
    default: return {};
  }
}

// The same case with non-finite inputs: NaN, +inf and -inf in the first input.
Case with_specials(Case c) {
  std::vector<double>& x = c.inputs[0].data;
  if (x.size() < 3) return c;
  x[0] = std::numeric_limits<double>::quiet_NaN();
  x[x.size() / 2] = std::numeric_limits<double>::infinity();
  x[x.size() - 1] = -std::numeric_limits<double>::infinity();
  c.label += " with NaN/inf inputs";
  return c;
}

// A linear case where a zero weight meets an infinite input: the reference computes 0 * inf = NaN.
Case zero_weight_times_inf() {
  GraphBuilder b;
  std::vector<double> w = {0.0, 1.0, 2.0, 0.5, 0.0, -1.0};  // [2, 3]; column 0 is zero in row 0
  const int64_t y = b.linear(b.input({3}), 2, w, {0.25, -0.25});
  return finish(b, y, "linear 0 * inf", {Tensor<double>{{3}, {std::numeric_limits<double>::infinity(), 1.0, 2.0}}},
                3);
}

double gamma(int64_t n, double u) { return static_cast<double>(n) * u / (1.0 - static_cast<double>(n) * u); }

template <class S>
std::vector<Tensor<S>> narrow_inputs(const std::vector<Tensor<double>>& in) {
  std::vector<Tensor<S>> out;
  for (const auto& t : in) out.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  return out;
}

// sum |w||x| + |b| per output: the reference in f64 on the absolute values of the S-rounded data.
template <class S>
Tensor<double> magnitudes(const Case& c) {
  auto abs_s = [](double v) { return std::fabs(static_cast<double>(static_cast<S>(v))); };
  const Payload<double> p = convert_payload<double>(c.model.payload, abs_s);
  std::vector<Tensor<double>> in;
  for (const auto& t : c.inputs) {
    Tensor<double> a = t;
    for (double& v : a.data) v = abs_s(v);
    in.push_back(std::move(a));
  }
  F64Context ctx;
  auto table = denote_all(c.model.graph, p, std::span<const Tensor<double>>(in), ctx);
  EXPECT_TRUE(table.ok()) << table.message();
  return table.ok() ? (*table)[c.node] : Tensor<double>{};
}

template <class S>
std::string compare_element(S ref, S got, bool exact, double tol) {
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) == std::isnan(got) ? "" : "NaN mismatch";
  if (std::isinf(ref) || std::isinf(got)) return ref == got ? "" : "infinity mismatch";
  if (exact) return std::memcmp(&ref, &got, sizeof(S)) == 0 ? "" : "bits differ";
  return std::fabs(static_cast<double>(got) - static_cast<double>(ref)) <= tol ? "" : "outside the tolerance";
}

// Compares a candidate's output with the reference's, element by element (bit for bit when `exact`,
// else within 2 gamma(k+1) M_i); adds to `differing` the finite outputs whose bits differ.
template <class S>
void compare_outputs(const Case& c, const Tensor<S>& r, const Tensor<S>& g, const std::string& name, bool exact,
                     int& differing) {
  ASSERT_EQ(g.shape, r.shape) << name;
  const Tensor<double> mag = exact ? Tensor<double>{} : magnitudes<S>(c);
  const double u = std::numeric_limits<S>::epsilon() / 2;
  const double bound_factor = 2 * gamma(c.terms + 1, u) * (1 + 2 * gamma(c.terms + 1, 0x1p-53));
  for (size_t i = 0; i < r.data.size(); ++i) {
    const double tol = exact ? 0.0 : bound_factor * mag.data[i];
    const std::string why = compare_element(r.data[i], g.data[i], exact, tol);
    if (std::isfinite(r.data[i]) && r.data[i] != g.data[i]) ++differing;
    ASSERT_EQ(why, "") << fmt::format("element {}: reference {:.17g}, {} {:.17g}, |diff| {:.3g}, M {:.6g}, k {}, "
                                      "tolerance {:.3g}",
                                      i, static_cast<double>(r.data[i]), name, static_cast<double>(g.data[i]),
                                      std::fabs(static_cast<double>(g.data[i]) - static_cast<double>(r.data[i])),
                                      exact ? 0.0 : mag.data[i], c.terms, tol);
  }
}

// Runs one case through the capsule (execute_plan, then a compiled plan) against the reference.
template <class S>
void run_case(const Case& c, const KernelCapsule& cap, const KernelCapsule& ref_cap, int& differing) {
  const char* type = std::is_same_v<S, double> ? "f64" : "f32";
  SCOPED_TRACE(fmt::format("capsule {} ({}), case: {}", cap.name, type, c.label));
  const std::vector<Tensor<S>> in = narrow_inputs<S>(c.inputs);
  const Payload<S> payload = convert_payload<S>(c.model.payload, [](double v) { return static_cast<S>(v); });
  std::conditional_t<std::is_same_v<S, double>, F64Context, F32Context> ctx;
  auto want = denote_all(c.model.graph, payload, std::span<const Tensor<S>>(in), ctx);
  GraphKernelPlan plan{"cpu", {PlanEntry{c.node, cap.op, cap}}};
  for (int64_t id = 0; id < c.node; ++id) ASSERT_FALSE(backend_op_of(c.model.graph.nodes[id].op));
  auto bound = bind_plan(plan, standard_handlers());
  ASSERT_TRUE(bound.ok()) << bound.message();
  auto got = execute_plan<S>(*bound, c.model.graph, payload, in);
  ASSERT_EQ(got.ok(), want.ok()) << (got.ok() ? want.message() : got.message());
  ASSERT_TRUE(want.ok()) << "a generated case must evaluate: " << want.message();
  const bool exact = bit_identical_policies(ref_cap.numerics, cap.numerics);
  compare_outputs<S>(c, (*want)[c.node], (*got)[c.node], cap.name, exact, differing);
  const int64_t outputs[] = {c.node};
  auto compiled = compile_plan<S>(*bound, c.model.graph, payload, outputs);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  ASSERT_TRUE(compiled->run(in).ok());
  compare_outputs<S>(c, (*want)[c.node], compiled->outputs()[0], cap.name + " (compiled)", exact, differing);
}

TEST(PlanDifferential, EveryExecutableCapsuleAgainstTheReference) {
  auto registered = standard_registry();
  ASSERT_TRUE(registered.ok()) << registered.message();
  const CapsuleRegistry here = registered->available(detect_environment());
  int capsules = 0, runs = 0;
  for (const KernelCapsule* cap : here.catalog()) {
    if (cap->provider == "reference") continue;
    const KernelCapsule* ref_cap = here.find(fmt::format("reference.{}", backend_op_name(cap->op)));
    ASSERT_NE(ref_cap, nullptr) << cap->name;
    std::vector<Case> cases = cases_for(cap->op, 0x5eed0000u + static_cast<uint64_t>(cap->op));
    ASSERT_FALSE(cases.empty()) << "the harness has no generator for " << cap->name;
    const size_t plain = cases.size();
    for (size_t i = 0; i < plain; ++i) cases.push_back(with_specials(cases[i]));
    if (cap->op == BackendOp::Linear) cases.push_back(zero_weight_times_inf());
    int differing = 0;
    for (const Case& c : cases) {
      run_case<double>(c, *cap, *ref_cap, differing);
      run_case<float>(c, *cap, *ref_cap, differing);
      runs += 2;
    }
    // An implementation-defined order shows up somewhere: evidence that the provider's own kernel ran
    // rather than a fallback to the reference.
    if (cap->numerics.reduction == Reduction::ImplementationDefined) {
      EXPECT_GT(differing, 0) << cap->name << " matched the reference bit for bit everywhere";
    }
    RecordProperty(cap->name, differing);
    ++capsules;
  }
  // openblas: linear, matmul, conv, add, sub; avx2 (on CPUs with AVX2 and FMA): linear, conv.
  EXPECT_EQ(capsules, static_cast<int>(openblas_module().capsules.size() + avx2_module().capsules.size()));
  if (openblas_built()) {
    EXPECT_EQ(openblas_module().capsules.size(), 5u);
  }
  RecordProperty("capsules", capsules);
  RecordProperty("runs", runs);
}

// A contraction followed by exact 1-Lipschitz pointwise ops (relu, neg, abs): compiled with
// prefer:openblas (and prefer:avx2), the pointwise ops run in the GEMM's output pass, and the result stays within the
// contraction's tolerance (|f(a) - f(b)| <= |a - b| for these f, and f(M) = M at the last node).
std::vector<Case> fused_cases(Draw& d) {
  std::vector<Case> out;
  auto linear_chain = [&](Shape x, int64_t n_out, std::vector<Op> tail) {
    GraphBuilder b;
    int64_t y = b.linear(b.input(x), n_out, d.values(n_out * x.back()), d.values(n_out));
    for (Op op : tail) y = b.unary(op, y);
    out.push_back(finish(b, y, fmt::format("linear x{} out={} + {} pointwise", to_string(x), n_out, tail.size()),
                         {random_tensor(d, x)}, x.back()));
  };
  linear_chain({50}, 50, {Op::Relu});
  linear_chain({300, 20}, 30, {Op::Relu, Op::Neg, Op::Abs});
  linear_chain({64, 700}, 10, {Op::Relu});
  auto conv_chain = [&](Shape x, int64_t n_out, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                        std::vector<int64_t> pad) {
    ConvConfig c;
    c.window = WindowConfig{static_cast<int64_t>(kernel.size()), kernel, stride, pad};
    c.channel_axis = 1;
    c.in_channels = x[1];
    c.out_channels = n_out;
    int64_t taps = c.in_channels;
    for (int64_t k : kernel) taps *= k;
    GraphBuilder b;
    const int64_t y = b.unary(Op::Relu, b.conv(b.input(x), c, d.values(n_out * taps), d.values(n_out)));
    out.push_back(finish(b, y, fmt::format("conv x{} kernel={} stride={} pad={} + relu", to_string(x), to_string(kernel),
                                           to_string(stride), to_string(pad)),
                         {random_tensor(d, x)}, taps));
  };
  conv_chain({3, 4, 9, 9}, 8, {3, 3}, {1, 1}, {1, 1});
  conv_chain({2, 3, 11, 10}, 5, {3, 3}, {2, 2}, {1, 0});
  conv_chain({2, 8, 5, 5}, 4, {1, 1}, {1, 1}, {0, 0});
  conv_chain({1, 2, 5, 4, 3}, 3, {2, 2, 2}, {1, 1, 1}, {1, 0, 0});
  conv_chain({2, 16, 26, 26}, 32, {3, 3}, {1, 1}, {0, 0});  // 24-wide output rows, B read in place (avx2)
  conv_chain({1, 3, 20, 20}, 5, {3, 3}, {1, 1}, {1, 1});    // 20-wide rows, padded copy
  conv_chain({2, 2, 10, 18}, 2, {3, 3}, {1, 1}, {0, 0});    // two output channels (a few-rows GEMM)
  return out;
}

TEST(PlanDifferential, FusedEpiloguesWithinTheTolerance) {
  std::vector<std::string> providers;
  if (openblas_built()) providers.push_back("openblas");
  if (!avx2_module().capsules.empty()) providers.push_back("avx2");
  if (providers.empty()) GTEST_SKIP() << "no contraction provider besides the reference";
  Draw d(0x5eedf00d);
  std::vector<Case> cases = fused_cases(d);
  const size_t plain = cases.size();
  for (size_t i = 0; i < plain; ++i) cases.push_back(with_specials(cases[i]));
  for (const std::string& provider : providers)
  for (const Case& c : cases) {
    SCOPED_TRACE(provider + ": " + c.label);
    PlanPolicy policy;
    ASSERT_TRUE(parse_provider_policy("prefer:" + provider, policy).ok());
    auto registry = standard_registry();
    ASSERT_TRUE(registry.ok());
    auto plan = plan_graph(c.model.graph, registry->available(detect_environment()), policy);
    ASSERT_TRUE(plan.ok()) << plan.message();
    auto bound = bind_plan(*plan, standard_handlers());
    ASSERT_TRUE(bound.ok()) << bound.message();
    const std::vector<Tensor<float>> in = narrow_inputs<float>(c.inputs);
    const Payload<float> payload = convert_payload<float>(c.model.payload, [](double v) { return static_cast<float>(v); });
    F32Context ctx;
    auto want = denote_all(c.model.graph, payload, std::span<const Tensor<float>>(in), ctx);
    ASSERT_TRUE(want.ok()) << want.message();
    const int64_t outputs[] = {c.node};
    for (int threads : {1, 2}) {
      CompileOptions options;
      options.threads = threads;
      auto compiled = compile_plan<float>(*bound, c.model.graph, payload, outputs, options);
      ASSERT_TRUE(compiled.ok()) << compiled.message();
      EXPECT_NE(compiled->report().find(" + relu["), std::string::npos) << compiled->report();
      EXPECT_EQ(compiled->generic_steps(), 0) << compiled->report();
      ASSERT_TRUE(compiled->run(in).ok());
      int differing = 0;
      compare_outputs<float>(c, (*want)[c.node], compiled->outputs()[0], fmt::format("fused, {} threads", threads),
                             false, differing);
    }
  }
}

// The harness itself: a deliberately wrong candidate (one ulp off in one element) is caught when the
// policies promise bit-identity, and a difference beyond the bound is caught otherwise.
TEST(PlanDifferential, HarnessDetectsDifferences) {
  EXPECT_EQ(compare_element(1.0f, std::nextafter(1.0f, 2.0f), true, 0.0), "bits differ");
  EXPECT_EQ(compare_element(1.0, 1.0 + 1e-6, false, 1e-7), "outside the tolerance");
  EXPECT_EQ(compare_element(1.0, 1.0 + 1e-8, false, 1e-7), "");
  EXPECT_EQ(compare_element(std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), false,
                            1.0),
            "infinity mismatch");
  EXPECT_EQ(compare_element(std::nan(""), 0.0, false, 1.0), "NaN mismatch");
  EXPECT_EQ(compare_element(0.0, -0.0, true, 0.0), "bits differ");
  // gamma(n) for binary32: n u / (1 - n u) with u = 2^-24.
  EXPECT_NEAR(gamma(10, 0x1p-24), 10 * 0x1p-24, 1e-12);
}

}  // namespace
}  // namespace denote
