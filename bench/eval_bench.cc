// f32 forward passes through the generic reference evaluator (denote / denote_all with
// F32Context), for comparison with PyTorch (bench/torch_bench.py, bench/compare_pytorch.sh).
// Workloads (random weights, fixed seed, PyTorch's default init bounds 1/sqrt(fan_in)):
//   mlp_b1     5-50x6-5 ReLU MLP (ACAS Xu size), input [5]
//   mlp_b1024  the same MLP, input [1024, 5] (linear keeps leading dims)
//   cnn_b64    conv 3x3 1->16, relu, conv 3x3 16->32, relu, reshape [64, 18432], linear 10;
//              input [64, 1, 28, 28], stride 1, no padding
// Every timed call runs the whole evaluator (well-formedness check, per-node shape rules, eval
// rules); the f64 -> f32 payload conversion and the input tensors are prepared outside the loop.
// Counters: items_per_second (batch items), FLOP (per call, 2 per multiply-add of linear/conv),
// FLOP/s. The evaluator is single-threaded.
//
//   build-he/bin/eval_bench --benchmark_repetitions=5 --benchmark_filter=mlp
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/eval/eval.h"
#include "denote/program/builder.h"

namespace {

using denote::ConvConfig;
using denote::GraphBuilder;
using denote::Model;
using denote::Op;
using denote::Shape;
using denote::Tensor;

constexpr uint32_t kSeed = 20240611;

struct Workload {
  std::string name;
  Model model;                         // f64 parameters as built
  denote::Payload<float> payload;      // the same parameters read once as f32
  std::vector<Tensor<float>> inputs;   // one per input node
  int64_t output = -1;
  int64_t items = 0;                   // batch items per call
  double flops = 0;                    // per call
};

// Uniform values in [-bound, bound] from a fixed-seed stream.
class Filler {
 public:
  explicit Filler(uint32_t seed) : rng_(seed) {}
  std::vector<double> uniform(int64_t count, double bound) {
    std::uniform_real_distribution<double> d(-bound, bound);
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = d(rng_);
    return v;
  }

 private:
  std::mt19937 rng_;
};

int64_t add_linear(GraphBuilder& b, Filler& f, int64_t x, int64_t in_dim, int64_t out_dim) {
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_dim));
  return b.linear(x, out_dim, f.uniform(out_dim * in_dim, bound), f.uniform(out_dim, bound));
}

int64_t add_conv3x3(GraphBuilder& b, Filler& f, int64_t x, int64_t in_ch, int64_t out_ch) {
  ConvConfig c;
  c.window = denote::WindowConfig{2, {3, 3}, {1, 1}, {0, 0}};
  c.channel_axis = 1;
  c.in_channels = in_ch;
  c.out_channels = out_ch;
  const int64_t fan_in = in_ch * 9;
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  return b.conv(x, c, f.uniform(out_ch * fan_in, bound), f.uniform(out_ch, bound));
}

// FLOPs of one call: 2 per multiply-add of every linear and conv node (bias, relu not counted).
double count_flops(const Model& m) {
  double flops = 0;
  for (const denote::Node& n : m.graph.nodes) {
    const double out = static_cast<double>(denote::numel(n.out_shape));
    if (n.op == Op::Linear) {
      flops += 2.0 * out * static_cast<double>(m.payload.linear.at(n.id).in_dim);
    } else if (n.op == Op::Conv) {
      const auto& c = std::get<ConvConfig>(n.attrs);
      double taps = static_cast<double>(c.in_channels / c.groups);
      for (int64_t k : c.window.kernel) taps *= static_cast<double>(k);
      flops += 2.0 * out * taps;
    }
  }
  return flops;
}

// Finishes a workload: builds the model, converts the payload, draws the input in [lo, hi].
Workload finish(std::string name, GraphBuilder& b, int64_t y, Shape in_shape, int64_t items, double lo, double hi) {
  Workload w;
  w.name = std::move(name);
  auto model = b.build({y});
  if (!model.ok()) {
    std::fprintf(stderr, "eval_bench: %s: %s\n", w.name.c_str(), model.message().c_str());
    std::exit(1);
  }
  w.model = std::move(*model);
  w.payload = denote::convert_payload<float>(w.model.payload, [](double v) { return static_cast<float>(v); });
  std::mt19937 rng(kSeed + 1);
  std::uniform_real_distribution<float> d(static_cast<float>(lo), static_cast<float>(hi));
  std::vector<float> x(static_cast<size_t>(denote::numel(in_shape)));
  for (float& v : x) v = d(rng);
  w.inputs.push_back(Tensor<float>(std::move(in_shape), std::move(x)));
  w.output = y;
  w.items = items;
  w.flops = count_flops(w.model);
  return w;
}

// 5 -> 50 (x6 linear + relu) -> 5; `batch` 0 means an unbatched input [5].
Workload make_mlp(const std::string& name, int64_t batch) {
  GraphBuilder b;
  Filler f(kSeed);
  const Shape in_shape = batch == 0 ? Shape{5} : Shape{batch, 5};
  int64_t h = b.input(in_shape);
  int64_t width = 5;
  for (int layer = 0; layer < 6; ++layer) {
    h = b.unary(Op::Relu, add_linear(b, f, h, width, 50));
    width = 50;
  }
  const int64_t y = add_linear(b, f, h, 50, 5);
  return finish(name, b, y, in_shape, batch == 0 ? 1 : batch, -1.0, 1.0);
}

// [batch, 1, 28, 28] -> conv 16 -> relu -> conv 32 -> relu -> [batch, 32*24*24] -> linear 10.
Workload make_cnn(const std::string& name, int64_t batch) {
  GraphBuilder b;
  Filler f(kSeed);
  const Shape in_shape{batch, 1, 28, 28};
  int64_t h = b.input(in_shape);
  h = b.unary(Op::Relu, add_conv3x3(b, f, h, 1, 16));
  h = b.unary(Op::Relu, add_conv3x3(b, f, h, 16, 32));
  const Shape conv_out{batch, 32, 24, 24};
  const int64_t flat = 32 * 24 * 24;
  h = b.add(Op::Reshape, {h}, denote::ReshapeAttrs{conv_out, {batch, flat}});
  const int64_t y = add_linear(b, f, h, flat, 10);
  return finish(name, b, y, in_shape, batch, 0.0, 1.0);
}

void set_counters(benchmark::State& state, const Workload& w) {
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * w.items);
  state.counters["FLOP"] = benchmark::Counter(w.flops);
  state.counters["FLOP/s"] = benchmark::Counter(w.flops, benchmark::Counter::kIsIterationInvariantRate);
}

// denote(): evaluates the output's ancestors (here: every node) and returns the output.
void bm_denote(benchmark::State& state, const Workload* w) {
  denote::F32Context ctx;
  for (auto _ : state) {
    auto y = denote::denote(w->model.graph, w->payload, std::span<const Tensor<float>>(w->inputs), w->output, ctx);
    if (!y.ok()) {
      state.SkipWithError(y.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(y.value().data.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *w);
}

// denote_all(): the whole value table, every intermediate kept.
void bm_denote_all(benchmark::State& state, const Workload* w) {
  denote::F32Context ctx;
  for (auto _ : state) {
    auto table = denote::denote_all(w->model.graph, w->payload, std::span<const Tensor<float>>(w->inputs), ctx);
    if (!table.ok()) {
      state.SkipWithError(table.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(table.value().data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *w);
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static const std::vector<Workload> workloads = {make_mlp("mlp_b1", 0), make_mlp("mlp_b1024", 1024),
                                                  make_cnn("cnn_b64", 64)};
  for (const Workload& w : workloads) {
    auto* bm = benchmark::RegisterBenchmark(("denote/" + w.name).c_str(), bm_denote, &w);
    bm->Unit(w.items > 1 ? benchmark::kMillisecond : benchmark::kMicrosecond)->UseRealTime();
  }
  // denote_all at batch 1, where the per-call overhead is largest.
  benchmark::RegisterBenchmark("denote_all/mlp_b1", bm_denote_all, &workloads[0])
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
