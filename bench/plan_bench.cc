// f32 forward passes through a bound kernel plan (policy prefer:openblas: linear and conv on
// OpenBLAS, relu / reshape on the reference provider), next to the same GEMMs called on OpenBLAS
// directly (the bound the plan cannot beat). The workloads are eval_bench's (and
// bench/torch_bench.py's): the same architectures, seeds and init bounds.
//   plan/<w>   execute_plan<float> of the bound plan (structural check, per-node driver, kernels);
//              planning and binding happen once, outside the timed loop
//   gemms/<w>  only the BLAS calls the plan makes (sgemv / sgemm with the same shapes; conv: the
//              GEMM over a pre-built im2col matrix), no bias, relu or im2col
//   compiled/<w>/threads:N  the same bound plan compiled (denote/plan/compiled.h: prepared kernels,
//              fused bias + relu, arena buffers, views) and run on N threads (1, 2)
//   avx2/<w>/threads:N      the same compiled with prefer:avx2 (linear and conv on the avx2 provider's
//              FMA GEMM: packed weights, implicit-GEMM conv), on CPUs with AVX2 and FMA
//   avx2_ymm/<w>/threads:N  the same with the avx2 provider's AVX-512 kernel switched off (CPUs with
//              AVX-512 only: the 256-bit kernels that AVX2-only CPUs run)
//   gemms/<w>/threads:N     the GEMMs alone with OpenBLAS on N threads (the bound at N threads)
// OpenBLAS runs single-threaded inside the plans (the provider's default): the compiled plan's
// threads split its chunks.
//
//   build/bin/plan_bench --benchmark_repetitions=5 --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/program/builder.h"
#include "denote/plan/compiled.h"
#include "denote/plan/executor.h"
#include "denote/plan/registry.h"
#include "base/cpu.h"  // avx2_ymm: the AVX-512 kernels switched off (level 1)

namespace {

using denote::GraphBuilder;
using denote::Op;
using denote::Shape;
using denote::Tensor;

constexpr uint32_t kSeed = 20240611;

// One GEMM of the plan: C[m, n] = A[m, k] B[k, n] (B transposed for linear layers).
struct Gemm {
  int m, n, k;
  bool trans_b;
};

struct Workload {
  std::string name;
  denote::Model model;
  denote::Payload<float> payload;
  std::vector<Tensor<float>> inputs;
  std::vector<Gemm> gemms;
  int64_t items = 0;
  double flops = 0;
};

std::vector<double> uniform(std::mt19937& rng, int64_t n, double bound) {
  std::uniform_real_distribution<double> d(-bound, bound);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = d(rng);
  return v;
}

int64_t add_linear(GraphBuilder& b, std::mt19937& rng, Workload& w, int64_t x, int64_t lead, int64_t in, int64_t out) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in));
  w.gemms.push_back({static_cast<int>(lead), static_cast<int>(out), static_cast<int>(in), true});
  w.flops += 2.0 * static_cast<double>(lead * in * out);
  return b.linear(x, out, uniform(rng, out * in, bound), uniform(rng, out, bound));
}

int64_t add_conv3x3(GraphBuilder& b, std::mt19937& rng, Workload& w, int64_t x, int64_t batch, int64_t in_ch,
                    int64_t out_ch, int64_t out_hw) {
  denote::ConvConfig c;
  c.window = denote::WindowConfig{2, {3, 3}, {1, 1}, {0, 0}};
  c.channel_axis = 1;
  c.in_channels = in_ch;
  c.out_channels = out_ch;
  const int64_t fan_in = in_ch * 9;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  for (int64_t l = 0; l < batch; ++l)
    w.gemms.push_back({static_cast<int>(out_ch), static_cast<int>(out_hw * out_hw), static_cast<int>(fan_in), false});
  w.flops += 2.0 * static_cast<double>(batch * out_ch * out_hw * out_hw * fan_in);
  return b.conv(x, c, uniform(rng, out_ch * fan_in, bound), uniform(rng, out_ch, bound));
}

void finish(Workload& w, GraphBuilder& b, int64_t y, Shape in_shape, double lo, double hi) {
  auto m = b.build({y});
  if (!m.ok()) {
    std::fprintf(stderr, "plan_bench: %s: %s\n", w.name.c_str(), m.message().c_str());
    std::exit(1);
  }
  w.model = std::move(*m);
  w.payload = denote::convert_payload<float>(w.model.payload, [](double v) { return static_cast<float>(v); });
  std::mt19937 rng(kSeed + 1);
  std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
  std::vector<float> x(static_cast<size_t>(denote::numel(in_shape)));
  for (float& v : x) v = d(rng);
  w.inputs.push_back(Tensor<float>(std::move(in_shape), std::move(x)));
}

Workload make_mlp(const std::string& name, int64_t batch) {
  Workload w;
  w.name = name;
  GraphBuilder b;
  std::mt19937 rng(kSeed);
  const Shape in_shape = batch == 0 ? Shape{5} : Shape{batch, 5};
  const int64_t lead = batch == 0 ? 1 : batch;
  int64_t h = b.input(in_shape), width = 5;
  for (int layer = 0; layer < 6; ++layer) {
    h = b.unary(Op::Relu, add_linear(b, rng, w, h, lead, width, 50));
    width = 50;
  }
  const int64_t y = add_linear(b, rng, w, h, lead, 50, 5);
  w.items = lead;
  finish(w, b, y, in_shape, -1.0, 1.0);
  return w;
}

Workload make_cnn(const std::string& name, int64_t batch) {
  Workload w;
  w.name = name;
  GraphBuilder b;
  std::mt19937 rng(kSeed);
  const Shape in_shape{batch, 1, 28, 28};
  int64_t h = b.input(in_shape);
  h = b.unary(Op::Relu, add_conv3x3(b, rng, w, h, batch, 1, 16, 26));
  h = b.unary(Op::Relu, add_conv3x3(b, rng, w, h, batch, 16, 32, 24));
  const int64_t flat = 32 * 24 * 24;
  h = b.add(Op::Reshape, {h}, denote::ReshapeAttrs{{batch, 32, 24, 24}, {batch, flat}});
  const int64_t y = add_linear(b, rng, w, h, batch, flat, 10);
  w.items = batch;
  finish(w, b, y, in_shape, 0.0, 1.0);
  return w;
}

void set_counters(benchmark::State& state, const Workload& w) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * w.items);
  state.counters["FLOP"] = benchmark::Counter(w.flops);
  state.counters["FLOP/s"] = benchmark::Counter(w.flops, benchmark::Counter::kIsIterationInvariantRate);
}

denote::Result<denote::BoundPlan> bound_plan(const Workload& w, const std::string& provider = "prefer:openblas") {
  auto registry = denote::standard_registry();
  denote::PlanPolicy policy;
  if (!registry.ok() || !denote::parse_provider_policy(provider, policy).ok()) std::exit(1);
  auto plan = denote::plan_graph(w.model.graph, registry->available(denote::detect_environment()), policy);
  if (!plan.ok()) return plan.status();
  return denote::bind_plan(*plan, denote::standard_handlers());
}

void bm_plan(benchmark::State& state, const Workload* w) {
  auto bound = bound_plan(*w);
  if (!bound.ok()) return state.SkipWithError(bound.message().c_str());
  for (auto _ : state) {
    auto table = denote::execute_plan<float>(*bound, w->model.graph, w->payload, w->inputs);
    if (!table.ok()) return state.SkipWithError(table.message().c_str());
    benchmark::DoNotOptimize(table.value().data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *w);
}

void bm_compiled(benchmark::State& state, const Workload* w, int threads, const std::string& provider) {
  auto bound = bound_plan(*w, provider);
  if (!bound.ok()) return state.SkipWithError(bound.message().c_str());
  denote::CompileOptions options;
  options.threads = threads;
  auto cp = denote::compile_plan<float>(*bound, w->model.graph, w->payload, w->model.output_ids, options);
  if (!cp.ok()) return state.SkipWithError(cp.message().c_str());
  for (auto _ : state) {
    denote::Status s = cp->run(w->inputs);
    if (!s.ok()) return state.SkipWithError(s.message().c_str());
    benchmark::DoNotOptimize(cp->output(0).data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *w);
}

// The plan's BLAS calls alone, on preallocated operands (gemv where the plan uses gemv: m == 1), with
// OpenBLAS on `threads` threads.
void bm_gemms(benchmark::State& state, const Workload* w, int threads) {
  openblas_set_num_threads(threads);
  std::vector<std::vector<float>> a, b, c;
  std::mt19937 rng(kSeed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  auto filled = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
  };
  for (const Gemm& g : w->gemms) {
    a.push_back(filled(static_cast<size_t>(g.m) * g.k));
    b.push_back(filled(static_cast<size_t>(g.k) * g.n));
    c.push_back(std::vector<float>(static_cast<size_t>(g.m) * g.n));
  }
  for (auto _ : state) {
    for (size_t i = 0; i < w->gemms.size(); ++i) {
      const Gemm& g = w->gemms[i];
      if (g.trans_b && g.m == 1)
        cblas_sgemv(CblasRowMajor, CblasNoTrans, g.n, g.k, 1.0f, b[i].data(), g.k, a[i].data(), 1, 0.0f, c[i].data(), 1);
      else
        cblas_sgemm(CblasRowMajor, CblasNoTrans, g.trans_b ? CblasTrans : CblasNoTrans, g.m, g.n, g.k, 1.0f,
                    a[i].data(), g.k, b[i].data(), g.trans_b ? g.k : g.n, 0.0f, c[i].data(), g.n);
    }
    benchmark::ClobberMemory();
  }
  set_counters(state, *w);
  openblas_set_num_threads(1);
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<Workload> workloads = {make_mlp("mlp_b1", 0), make_mlp("mlp_b1024", 1024),
                                                  make_cnn("cnn_b64", 64)};
  for (const Workload& w : workloads) {
    const auto unit = w.items > 1 ? benchmark::kMillisecond : benchmark::kMicrosecond;
    benchmark::RegisterBenchmark(("plan/" + w.name).c_str(), bm_plan, &w)->Unit(unit)->UseRealTime();
    const Workload* wp = &w;
    benchmark::RegisterBenchmark(("gemms/" + w.name).c_str(), [wp](benchmark::State& s) { bm_gemms(s, wp, 1); })
        ->Unit(unit)
        ->UseRealTime();
    for (int t : {1, 2}) {
      const std::string suffix = "/threads:" + std::to_string(t);
      benchmark::RegisterBenchmark(("compiled/" + w.name + suffix).c_str(),
                                   [wp, t](benchmark::State& s) { bm_compiled(s, wp, t, "prefer:openblas"); })
          ->Unit(unit)
          ->UseRealTime();
      if (denote::provider_built("avx2"))
        benchmark::RegisterBenchmark(("avx2/" + w.name + suffix).c_str(),
                                     [wp, t](benchmark::State& s) { bm_compiled(s, wp, t, "prefer:avx2"); })
            ->Unit(unit)
            ->UseRealTime();
      if (denote::provider_built("avx2") && denote::have_avx512f())
        benchmark::RegisterBenchmark(("avx2_ymm/" + w.name + suffix).c_str(),
                                     [wp, t](benchmark::State& s) {
                                       denote::set_simd_level(1);
                                       bm_compiled(s, wp, t, "prefer:avx2");
                                       denote::set_simd_level(-1);
                                     })
            ->Unit(unit)
            ->UseRealTime();
      benchmark::RegisterBenchmark(("gemms/" + w.name + suffix).c_str(), [wp, t](benchmark::State& s) { bm_gemms(s, wp, t); })
          ->Unit(unit)
          ->UseRealTime();
    }
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
