// The cost of verify's exact witness re-check (docs/VERIFY.md, "Soundness"; docs/PERF.md, "Exact
// witness re-check"): the real network's outputs at one point enclosed by IBP over MPFR endpoints at
// 256 bits (enclose_real, what verify runs since issue 47), against the round-to-nearest MPFR
// evaluation at 256 bits it replaced (denote over RealContext, rounded to doubles before the
// comparison: not a proof), and the f32 evaluation every candidate gets first. Networks from
// tests/data: ACAS Xu 1_1 (5-50x6-5) and mnistfc 256x2 (784-256-256-10), at the centre of their boxes.
//
//   build/bin/witness_bench --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "denote/bounds/interval_real.h"
#include "denote/eval/eval.h"
#include "denote/io/onnx.h"

namespace {

using namespace denote;

struct Net {
  Model m;
  std::vector<Tensor<double>> x;
};

const Net& net(const std::string& which) {
  static const Net acas = [] {
    auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
    if (!m.ok()) std::fprintf(stderr, "%s\n", m.message().c_str()), std::exit(1);
    const Shape s = m->graph.nodes[static_cast<size_t>(m->graph.input_ids()[0])].out_shape;
    return Net{std::move(*m), {Tensor<double>(s, {0.64, 0.0, 0.0, 0.475, -0.475})}};
  }();
  static const Net mnist = [] {
    auto m = load_model_onnx_file(std::string(DENOTE_SOURCE_DIR) + "/tests/data/mnistfc/mnist-net_256x2.onnx");
    if (!m.ok()) std::fprintf(stderr, "%s\n", m.message().c_str()), std::exit(1);
    const Shape s = m->graph.nodes[static_cast<size_t>(m->graph.input_ids()[0])].out_shape;
    std::vector<double> v(static_cast<size_t>(numel(s)));
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i % 17) / 17.0;
    return Net{std::move(*m), {Tensor<double>(s, std::move(v))}};
  }();
  return which == "acas" ? acas : mnist;
}

void enclosure(benchmark::State& st, const std::string& which) {
  const Net& n = net(which);
  const int64_t out = n.m.output_ids[0];
  for (auto _ : st) {
    auto r = enclose_real(n.m.graph, n.m.payload, std::span<const Tensor<double>>(n.x), std::span<const int64_t>(&out, 1));
    if (!r.ok() || !(*r)[0]) st.SkipWithError("no enclosure");
    benchmark::DoNotOptimize(r);
  }
}

void nearest(benchmark::State& st, const std::string& which) {
  const Net& n = net(which);
  RealContext ctx(256);
  for (auto _ : st) {
    const auto p = convert_payload<RealScalar>(n.m.payload, [&](double v) { return ctx.from_double(v); });
    std::vector<RealScalar> d;
    for (double v : n.x[0].data) d.push_back(ctx.from_double(v));
    std::vector<Tensor<RealScalar>> in = {Tensor<RealScalar>(n.x[0].shape, std::move(d))};
    auto y = denote::denote(n.m.graph, p, std::span<const Tensor<RealScalar>>(in), n.m.output_ids[0], ctx);
    benchmark::DoNotOptimize(y);
  }
}

void f32(benchmark::State& st, const std::string& which) {
  const Net& n = net(which);
  const auto p = convert_payload<float>(n.m.payload, [](double v) { return static_cast<float>(v); });
  F32Context ctx;
  for (auto _ : st) {
    std::vector<Tensor<float>> in = {Tensor<float>(n.x[0].shape, std::vector<float>(n.x[0].data.begin(), n.x[0].data.end()))};
    auto y = denote::denote(n.m.graph, p, std::span<const Tensor<float>>(in), n.m.output_ids[0], ctx);
    benchmark::DoNotOptimize(y);
  }
}

BENCHMARK_CAPTURE(enclosure, acas, std::string("acas"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(nearest, acas, std::string("acas"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(f32, acas, std::string("acas"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(enclosure, mnist, std::string("mnist"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(nearest, mnist, std::string("mnist"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(f32, mnist, std::string("mnist"))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
