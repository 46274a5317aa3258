// Compiled plans (denote/plan/compiled.h):
//  - the reference provider's prepared kernels (unary and binary elementwise, pooling, batch norm,
//    matmul with broadcast batch dims, softmax / log_softmax / hard_masked_softmax on every axis)
//    and their fused chains equal denote_all bit for bit, in f64 and f32, with NaN/inf inputs;
//  - results do not depend on the thread count (1, 2, 3) for any provider, bit for bit;
//  - reshape / flatten are views (no step), buffers are reused by liveness, and a call allocates
//    nothing once the plan is compiled (counted by a replaced global operator new; a CNN, and an
//    attention block of matmul, softmax and log_softmax);
//  - errors: bad inputs as denote_all's, payload errors at run time as execute_plan's, bad threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include <fmt/format.h>

#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/plan/compiled.h"
#include "denote/plan/native_context.h"
#include "denote/plan/registry.h"
#include "denote/program/builder.h"
#include "denote/providers/providers.h"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<int64_t> g_allocations{0};
}  // namespace

// Counts allocations while g_counting is set (the no-allocation test); otherwise plain malloc.
void* operator new(std::size_t n) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
// The nothrow forms too (std::stable_sort's temporary buffer uses them): every form that pairs
// with the deletes above must allocate with malloc, or AddressSanitizer reports a new/free mismatch.
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace denote {
namespace {

std::vector<double> draw(SplitMix64& g, int64_t n, double lo = -2.0, double hi = 2.0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = lo + (hi - lo) * static_cast<double>(g.next() >> 11) * 0x1p-53;
  return v;
}

Result<BoundPlan> bound_plan(const Graph& g, const std::string& provider) {
  PlanPolicy p;
  DENOTE_RETURN_IF_ERROR(parse_provider_policy(provider, p));
  DENOTE_ASSIGN_OR_RETURN(CapsuleRegistry r, standard_registry());
  DENOTE_ASSIGN_OR_RETURN(GraphKernelPlan plan, plan_graph(g, r.available(detect_environment()), p));
  return bind_plan(plan, standard_handlers());
}

template <class S>
std::vector<Tensor<S>> narrow(const std::vector<Tensor<double>>& in) {
  std::vector<Tensor<S>> out;
  for (const auto& t : in) out.emplace_back(t.shape, std::vector<S>(t.data.begin(), t.data.end()));
  return out;
}

template <class S>
Payload<S> narrow(const Payload<double>& p) {
  return convert_payload<S>(p, [](double v) { return static_cast<S>(v); });
}

template <class S>
bool same_bits(S a, S b) {
  return (std::isnan(a) && std::isnan(b)) || std::memcmp(&a, &b, sizeof(S)) == 0;
}

template <class S>
Result<std::vector<Tensor<S>>> compiled_outputs(const Model& m, const std::string& provider,
                                                const std::vector<Tensor<double>>& inputs, int threads, bool fuse,
                                                std::string* report = nullptr) {
  DENOTE_ASSIGN_OR_RETURN(BoundPlan bound, bound_plan(m.graph, provider));
  CompileOptions options;
  options.threads = threads;
  options.fuse = fuse;
  const Payload<S> payload = narrow<S>(m.payload);
  DENOTE_ASSIGN_OR_RETURN(CompiledPlan<S> cp, compile_plan<S>(bound, m.graph, payload, m.output_ids, options));
  const std::vector<Tensor<S>> in = narrow<S>(inputs);
  DENOTE_RETURN_IF_ERROR(cp.run(in));
  if (report) *report = cp.report();
  return cp.outputs();
}

// The reference plan compiled (fused or not, 1 or 2 threads) against denote_all, bit for bit.
template <class S>
void expect_reference_exact(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& label) {
  SCOPED_TRACE(fmt::format("{} ({})", label, std::is_same_v<S, double> ? "f64" : "f32"));
  NativeContextFor<S> ctx;
  const Payload<S> payload = narrow<S>(m.payload);
  const std::vector<Tensor<S>> in = narrow<S>(inputs);
  auto want = denote_all(m.graph, payload, std::span<const Tensor<S>>(in), ctx);
  ASSERT_TRUE(want.ok()) << want.message();
  for (int threads : {1, 2})
    for (bool fuse : {false, true}) {
      std::string report;
      auto got = compiled_outputs<S>(m, "only:reference", inputs, threads, fuse, &report);
      ASSERT_TRUE(got.ok()) << got.message();
      for (size_t k = 0; k < m.output_ids.size(); ++k) {
        const Tensor<S>& w = (*want)[static_cast<size_t>(m.output_ids[k])];
        ASSERT_EQ((*got)[k].shape, w.shape);
        for (size_t i = 0; i < w.data.size(); ++i)
          ASSERT_TRUE(same_bits((*got)[k].data[i], w.data[i]))
              << fmt::format("threads {} fuse {} output {} element {}: {} vs {}\n{}", threads, fuse, k, i,
                             (*got)[k].data[i], w.data[i], report);
      }
    }
}

std::vector<Tensor<double>> with_specials(std::vector<Tensor<double>> in) {
  std::vector<double>& x = in[0].data;
  if (x.size() >= 4) {
    x[1] = std::numeric_limits<double>::quiet_NaN();
    x[x.size() / 2] = std::numeric_limits<double>::infinity();
    x[x.size() - 2] = -std::numeric_limits<double>::infinity();
  }
  return in;
}

void expect_exact_both(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& label) {
  expect_reference_exact<double>(m, inputs, label);
  expect_reference_exact<float>(m, inputs, label);
  expect_reference_exact<double>(m, with_specials(inputs), label + " with NaN/inf");
  expect_reference_exact<float>(m, with_specials(inputs), label + " with NaN/inf");
}

Model built(GraphBuilder& b, int64_t y) {
  auto m = b.build({y});
  EXPECT_TRUE(m.ok()) << m.message();
  return m.ok() ? *m : Model{};
}

TEST(PlanCompiled, UnaryChainsEqualDenoteAll) {
  const Op ops[] = {Op::Relu, Op::Tanh,     Op::Abs, Op::Sqrt,  Op::Inv, Op::Sigmoid, Op::Exp,
                    Op::Sin,  Op::Cos,      Op::Softplus, Op::Neg, Op::Rsqrt, Op::Erf, Op::Gelu};
  SplitMix64 g(11);
  for (Op op : ops) {
    GraphBuilder b;
    const Shape s{3, 40000};  // more than one chunk
    int64_t y = b.unary(op, b.input(s));
    y = b.unary(Op::Relu, b.unary(Op::Tanh, y));  // a chain fused into the first op's step
    expect_exact_both(built(b, y), {Tensor<double>(s, draw(g, numel(s)))}, std::string(op_tag(op)));
  }
}

TEST(PlanCompiled, BinaryElementwiseEqualsDenoteAll) {
  SplitMix64 g(12);
  for (Op op : {Op::Add, Op::Sub, Op::MulElem, Op::MaxElem, Op::MinElem, Op::Div}) {
    GraphBuilder b;
    const Shape s{5, 7000};
    const int64_t x = b.input(s);
    const int64_t y = b.unary(Op::Relu, b.binary(op, x, b.input(s)));
    expect_exact_both(built(b, y), {Tensor<double>(s, draw(g, numel(s))), Tensor<double>(s, draw(g, numel(s)))},
                      std::string(op_tag(op)));
  }
}

TEST(PlanCompiled, PoolingEqualsDenoteAll) {
  struct PoolCase {
    Shape x;
    WindowConfig w;
  };
  const PoolCase cases[] = {
      {{2, 3, 8, 8}, {2, {2, 2}, {2, 2}, {0, 0}}}, {{1, 4, 9, 7}, {2, {3, 3}, {2, 1}, {1, 1}}},
      {{3, 10}, {1, {3}, {1}, {1}}},              {{1, 2, 4, 5, 6}, {3, {2, 2, 2}, {1, 2, 2}, {0, 1, 0}}},
      {{64, 16, 26, 26}, {2, {2, 2}, {2, 2}, {0, 0}}},
  };
  SplitMix64 g(13);
  for (const PoolCase& c : cases)
    for (Op op : {Op::MaxPool, Op::AvgPool}) {
      GraphBuilder b;
      const int64_t y = b.unary(Op::Relu, b.unary(op, b.input(c.x), c.w));
      expect_exact_both(built(b, y), {Tensor<double>(c.x, draw(g, numel(c.x)))},
                        fmt::format("{} x{} kernel {}", op_tag(op), to_string(c.x), to_string(c.w.kernel)));
    }
}

TEST(PlanCompiled, BatchNormEqualsDenoteAll) {
  SplitMix64 g(14);
  for (int64_t axis : {0, 1, 2}) {
    const Shape s{4, 6, 5};
    const int64_t channels = s[static_cast<size_t>(axis)];
    GraphBuilder b;
    const int64_t bn = b.add(Op::BatchNormEval, {b.input(s)}, BatchNormAttrs{axis, channels});
    b.payload().batch_norm[bn] = BatchNormRecord<double>{draw(g, channels), draw(g, channels), draw(g, channels),
                                                         draw(g, channels, 0.1, 3.0), 1e-5};
    const int64_t y = b.unary(Op::Relu, bn);
    expect_exact_both(built(b, y), {Tensor<double>(s, draw(g, numel(s)))}, fmt::format("batch_norm axis {}", axis));
  }
}

struct MatmulCase {
  Shape a, b;
};

// Matmul as torch.matmul: 1-D promotion, batch dims broadcast from either side, several chunks
// (the largest cases), then relu (fused into the matmul's output pass) and tanh.
TEST(PlanCompiled, MatmulEqualsDenoteAll) {
  const MatmulCase cases[] = {
      {{3, 4}, {4, 5}},       {{4}, {4, 6}},          {{5, 4}, {4}},         {{4}, {4}},
      {{2, 3, 8}, {8, 2}},    {{2, 1, 3, 8}, {4, 8, 5}}, {{3, 8}, {2, 8, 5}}, {{2, 3, 8}, {8}},
      {{1, 130}, {130, 1}},   {{4, 64, 32}, {32, 300}}, {{0, 4}, {4, 3}},     {{3, 0}, {0, 2}},
  };
  SplitMix64 g(20);
  for (const MatmulCase& c : cases) {
    GraphBuilder b;
    const int64_t lhs = b.input(c.a);  // (separate statements: argument order is unspecified)
    const int64_t y = b.unary(Op::Tanh, b.unary(Op::Relu, b.binary(Op::Matmul, lhs, b.input(c.b))));
    expect_exact_both(built(b, y), {Tensor<double>(c.a, draw(g, numel(c.a))), Tensor<double>(c.b, draw(g, numel(c.b)))},
                      fmt::format("matmul {} x {}", to_string(c.a), to_string(c.b)));
  }
}

// softmax and log_softmax on every axis (strided lanes included), hard_masked_softmax with a fully
// blocked row; large offsets (exp overflow without the max subtraction); relu after each.
TEST(PlanCompiled, SoftmaxEqualsDenoteAll) {
  SplitMix64 g(21);
  const Shape s{3, 5, 700};  // 2100 lanes along the last axis: several chunks
  for (Op op : {Op::Softmax, Op::LogSoftmax})
    for (int64_t axis : {0, 1, 2}) {
      GraphBuilder b;
      const int64_t y = b.unary(Op::Relu, b.unary(op, b.input(s), AxisAttrs{axis}));
      std::vector<double> x = draw(g, numel(s), -30.0, 30.0);
      x[7] = 1000.0;
      expect_exact_both(built(b, y), {Tensor<double>(s, x)}, fmt::format("{} axis {}", op_tag(op), axis));
    }
  const Shape m{4, 6};
  HardMask mask{m, std::vector<uint8_t>(24, 1)};
  for (int64_t i = 0; i < 6; ++i) mask.allowed[static_cast<size_t>(6 + i)] = 0;  // row 1 fully blocked
  mask.allowed[0] = mask.allowed[13] = mask.allowed[23] = 0;
  GraphBuilder b;
  const int64_t y = b.unary(Op::Relu, b.unary(Op::HardMaskedSoftmax, b.input(m), mask));
  expect_exact_both(built(b, y), {Tensor<double>(m, draw(g, 24, -5.0, 5.0))}, "hard_masked_softmax");
}

// An attention block without layout ops: s = x y (y broadcast over the batch), p = softmax(s),
// o = p x, log_softmax(o) along axis 1; every node has a prepared form in the reference and openblas
// providers.
Model attention_model(int64_t batch, int64_t tokens, int64_t width) {
  GraphBuilder b;
  const int64_t x = b.input({batch, tokens, width});
  const int64_t y = b.input({width, tokens});
  const int64_t s = b.binary(Op::Matmul, x, y);
  const int64_t p = b.unary(Op::Softmax, s, AxisAttrs{2});
  const int64_t o = b.binary(Op::Matmul, p, x);
  return built(b, b.unary(Op::LogSoftmax, o, AxisAttrs{1}));
}

std::vector<Tensor<double>> random_inputs(SplitMix64& g, const Model& m) {
  std::vector<Tensor<double>> in;
  for (int64_t id : m.graph.input_ids()) {
    const Shape& s = m.graph.nodes[static_cast<size_t>(id)].out_shape;
    in.emplace_back(s, draw(g, numel(s)));
  }
  return in;
}

TEST(PlanCompiled, AttentionBlockEqualsDenoteAll) {
  SplitMix64 g(22);
  const Model m = attention_model(3, 40, 16);
  expect_exact_both(m, random_inputs(g, m), "attention");
}

// A small CNN: conv, relu, max_pool, batch_norm, flatten (a view), linear, relu, linear; and an MLP.
Model cnn_model(SplitMix64& g, int64_t batch) {
  GraphBuilder b;
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {1, 1}};
  c.channel_axis = 1;
  c.in_channels = 2;
  c.out_channels = 6;
  int64_t h = b.unary(Op::Relu, b.conv(b.input({batch, 2, 12, 12}), c, draw(g, 6 * 2 * 9, -0.5, 0.5), draw(g, 6)));
  h = b.unary(Op::MaxPool, h, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  h = b.add(Op::BatchNormEval, {h}, BatchNormAttrs{1, 6});
  b.payload().batch_norm[h] = BatchNormRecord<double>{draw(g, 6), draw(g, 6), draw(g, 6), draw(g, 6, 0.5, 2.0), 1e-5};
  h = b.add(Op::Reshape, {h}, ReshapeAttrs{{batch, 6, 6, 6}, {batch, 216}});
  h = b.unary(Op::Relu, b.linear(h, 40, draw(g, 40 * 216, -0.1, 0.1), draw(g, 40)));
  return built(b, b.linear(h, 3, draw(g, 120, -0.3, 0.3), draw(g, 3)));
}

Model mlp_model(SplitMix64& g, int64_t batch) {
  GraphBuilder b;
  int64_t h = b.input({batch, 5});
  int64_t width = 5;
  for (int layer = 0; layer < 4; ++layer) {
    h = b.unary(Op::Relu, b.linear(h, 50, draw(g, 50 * width, -0.4, 0.4), draw(g, 50)));
    width = 50;
  }
  return built(b, b.linear(h, 5, draw(g, 250, -0.4, 0.4), draw(g, 5)));
}

// Only reference ops with a prepared form: max_pool, batch_norm, relu, flatten, tanh, add.
Model pointwise_model(SplitMix64& g, int64_t batch) {
  GraphBuilder b;
  const int64_t x = b.input({batch, 4, 10, 10});
  int64_t h = b.unary(Op::MaxPool, x, WindowConfig{2, {2, 2}, {2, 2}, {0, 0}});
  h = b.add(Op::BatchNormEval, {h}, BatchNormAttrs{1, 4});
  b.payload().batch_norm[h] = BatchNormRecord<double>{draw(g, 4), draw(g, 4), draw(g, 4), draw(g, 4, 0.5, 2.0), 1e-5};
  h = b.unary(Op::Relu, h);
  h = b.add(Op::Reshape, {h}, ReshapeAttrs{{batch, 4, 5, 5}, {batch, 100}});
  const int64_t t = b.unary(Op::Tanh, h);
  return built(b, b.binary(Op::Add, t, h));
}

TEST(PlanCompiled, ReferenceCnnEqualsDenoteAll) {
  SplitMix64 g(15);
  const Model m = cnn_model(g, 3);
  expect_exact_both(m, {Tensor<double>({3, 2, 12, 12}, draw(g, 3 * 2 * 144))}, "cnn");
}

// Thread-count independence, bit for bit: every provider (openblas's implementation-defined GEMM
// order included), because chunks are fixed by the shapes.
TEST(PlanCompiled, ResultsDoNotDependOnTheThreadCount) {
  SplitMix64 g(16);
  const std::vector<std::pair<Model, std::vector<Tensor<double>>>> models = [&] {
    std::vector<std::pair<Model, std::vector<Tensor<double>>>> v;
    v.emplace_back(mlp_model(g, 1024), std::vector{Tensor<double>({1024, 5}, draw(g, 5 * 1024))});
    v.emplace_back(cnn_model(g, 16), std::vector{Tensor<double>({16, 2, 12, 12}, draw(g, 16 * 288))});
    for (int64_t batch : {1, 6}) {  // one batch matrix split by rows (openblas), and several
      Model a = attention_model(batch, 96, 24);
      std::vector<Tensor<double>> in = random_inputs(g, a);
      v.emplace_back(std::move(a), std::move(in));
    }
    return v;
  }();
  std::vector<std::string> providers = {"auto"};
  if (openblas_built()) providers.push_back("prefer:openblas");
  if (!avx2_module().capsules.empty()) providers.push_back("prefer:avx2");
  for (const auto& [m, x] : models)
    for (const std::string& provider : providers) {
      auto one = compiled_outputs<float>(m, provider, x, 1, true);
      ASSERT_TRUE(one.ok()) << one.message();
      for (int threads : {2, 3}) {
        auto many = compiled_outputs<float>(m, provider, x, threads, true);
        ASSERT_TRUE(many.ok()) << many.message();
        ASSERT_EQ((*many)[0].data.size(), (*one)[0].data.size());
        for (size_t i = 0; i < (*one)[0].data.size(); ++i)
          ASSERT_TRUE(same_bits((*many)[0].data[i], (*one)[0].data[i]))
              << provider << " threads " << threads << " element " << i;
      }
    }
}

TEST(PlanCompiled, ViewsFusionAndBufferReuse) {
  if (!openblas_built()) GTEST_SKIP() << "the reference linear has no prepared form";
  SplitMix64 g(17);
  const Model m = cnn_model(g, 4);
  auto bound = bound_plan(m.graph, "prefer:openblas");
  ASSERT_TRUE(bound.ok()) << bound.message();
  const Payload<float> payload = narrow<float>(m.payload);
  auto cp = compile_plan<float>(*bound, m.graph, payload, m.output_ids);
  ASSERT_TRUE(cp.ok()) << cp.message();
  const std::string report = cp->report();
  // conv + relu, max_pool, batch_norm, linear + relu, linear: 5 steps; no reshape step (a view).
  EXPECT_NE(report.find("conv[1] + relu[2]"), std::string::npos) << report;
  EXPECT_NE(report.find("linear[6] + relu[7]"), std::string::npos) << report;
  EXPECT_EQ(report.find("reshape"), std::string::npos) << report;
  EXPECT_EQ(std::count(report.begin(), report.end(), '\n'), 6) << report;
  EXPECT_EQ(cp->generic_steps(), 0);
  // Every intermediate value alive at once would need the sum of their sizes; liveness needs less.
  int64_t all = 0;
  for (const Node& n : m.graph.nodes)
    if (n.op != Op::Input) all += numel(n.out_shape) * static_cast<int64_t>(sizeof(float));
  EXPECT_LT(cp->arena_bytes(), all);
}

TEST(PlanCompiled, NoAllocationPerCallAfterCompiling) {
  SplitMix64 g(18);
  for (const std::string provider : {"auto", "prefer:openblas"})
    for (bool attention : {false, true})
      for (int threads : {1, 2}) {
        if (provider != "auto" && !openblas_built()) continue;
        const Model m = attention ? attention_model(4, 32, 16) : provider == "auto" ? pointwise_model(g, 8) : cnn_model(g, 8);
        auto bound = bound_plan(m.graph, provider);
        ASSERT_TRUE(bound.ok());
        const Payload<float> payload = narrow<float>(m.payload);
        CompileOptions options;
        options.threads = threads;
        auto cp = compile_plan<float>(*bound, m.graph, payload, m.output_ids, options);
        ASSERT_TRUE(cp.ok()) << cp.message();
        ASSERT_EQ(cp->generic_steps(), 0) << cp->report();
        const std::vector<Tensor<float>> in = narrow<float>(random_inputs(g, m));
        ASSERT_TRUE(cp->run(in).ok());
        g_allocations = 0;
        g_counting = true;
        const Status s1 = cp->run(in);
        const Status s2 = cp->run(in);
        g_counting = false;
        ASSERT_TRUE(s1.ok() && s2.ok());
        EXPECT_EQ(g_allocations.load(), 0) << provider << ", " << threads << " threads\n" << cp->report();
      }
}

// Inputs read in place (InputView: the Python module's numpy path) give the same outputs, the same
// errors and no allocation per call.
TEST(PlanCompiled, InputViewsRunAsTensors) {
  SplitMix64 g(20);
  const Model m = cnn_model(g, 4);
  // The reference conv has no prepared form (a generic step allocates); openblas's has.
  auto bound = bound_plan(m.graph, openblas_built() ? "prefer:openblas" : "auto");
  ASSERT_TRUE(bound.ok());
  const Payload<float> payload = narrow<float>(m.payload);
  auto cp = compile_plan<float>(*bound, m.graph, payload, m.output_ids);
  ASSERT_TRUE(cp.ok()) << cp.message();
  const std::vector<Tensor<float>> in = narrow<float>(random_inputs(g, m));
  ASSERT_TRUE(cp->run(in).ok());
  const std::vector<Tensor<float>> want = cp->outputs();
  std::vector<InputView<float>> views;
  for (const Tensor<float>& t : in) views.push_back({t.shape, t.data});
  g_allocations = 0;
  g_counting = true;
  const Status s = cp->run(std::span<const InputView<float>>(views));
  g_counting = false;
  ASSERT_TRUE(s.ok()) << s.message();
  if (cp->generic_steps() == 0) {
    EXPECT_EQ(g_allocations.load(), 0) << cp->report();
  }
  const std::vector<Tensor<float>> got = cp->outputs();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) EXPECT_EQ(got[k], want[k]);
  const Shape wrong{1, 2, 3};
  const std::vector<Tensor<float>> bad_t = {Tensor<float>(wrong, std::vector<float>(6, 0.f))};
  const std::vector<InputView<float>> bad_v = {{wrong, bad_t[0].data}};
  EXPECT_EQ(cp->run(std::span<const InputView<float>>(bad_v)).message(), cp->run(bad_t).message());
  const std::vector<InputView<float>> short_v = {{in[0].shape, std::span<const float>(in[0].data).first(3)}};
  EXPECT_NE(cp->run(std::span<const InputView<float>>(short_v)).message().find("input has 3 values"), std::string::npos);
}

TEST(PlanCompiled, ErrorsAsDenoteAll) {
  if (!openblas_built()) GTEST_SKIP() << "the payload case needs the openblas linear";
  SplitMix64 g(19);
  const Model m = mlp_model(g, 2);
  auto bound = bound_plan(m.graph, "prefer:openblas");
  ASSERT_TRUE(bound.ok());
  auto cp = compile_plan<double>(*bound, m.graph, m.payload, m.output_ids);
  ASSERT_TRUE(cp.ok());
  F64Context ctx;
  for (const std::vector<Tensor<double>>& bad :
       {std::vector<Tensor<double>>{}, std::vector<Tensor<double>>{Tensor<double>({2, 4}, draw(g, 8))},
        std::vector<Tensor<double>>{Tensor<double>({2, 5}, draw(g, 9))}}) {
    auto want = denote_all(m.graph, m.payload, std::span<const Tensor<double>>(bad), ctx);
    ASSERT_FALSE(want.ok());
    EXPECT_EQ(cp->run(bad).message(), want.message());
  }
  CompileOptions zero;
  zero.threads = 0;
  EXPECT_EQ(compile_plan<double>(*bound, m.graph, m.payload, m.output_ids, zero).message(),
            "compile plan: threads 0: expected 1 to 256");
  // A payload error (linear weight of the wrong size) appears at run time, as execute_plan's.
  Payload<double> broken = m.payload;
  broken.linear.begin()->second.weight.pop_back();
  auto cb = compile_plan<double>(*bound, m.graph, broken, m.output_ids);
  ASSERT_TRUE(cb.ok()) << cb.message();
  EXPECT_EQ(cb->generic_steps(), 1);
  const std::vector<Tensor<double>> x = {Tensor<double>({2, 5}, draw(g, 10))};
  auto want = execute_plan<double>(*bound, m.graph, broken, x);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(cb->run(x).message(), want.message());
}

}  // namespace
}  // namespace denote
