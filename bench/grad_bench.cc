// Reverse-mode gradients (vjp, include/denote/autodiff/grad.h) of ACAS Xu- and MNIST-sized ReLU
// MLPs, for comparison with torch.autograd (bench/torch_grad_bench.py, bench/compare_grad.sh;
// docs/PERF.md, "Gradients (issue 14)"). Issue 14's benchmark.
// Networks (`--dump` writes what the PyTorch side needs to build and check the same ones):
//   acasxu_onnx_b1  tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx through read_model_onnx: sub (input
//                   normalisation), reshape [1, 5], 6 x (linear 50, relu), linear 5; input [1, 1, 1, 5]
//   acas_b1         5-50x6-5 ReLU MLP built with GraphBuilder, input [1, 5]
//   acas_b1024      the same MLP, input [1024, 5]
//   mnist_onnx_b1   tests/data/mnistfc/mnist-net_256x2.onnx: reshape [1, 784], linear 256, relu, linear 256,
//                   relu, linear 10; input [1, 784, 1] (the file's batch is fixed at 1)
//   mnist_b1024     784-256-256-10 ReLU MLP built with GraphBuilder, input [1024, 784]
// GraphBuilder weights: fixed seed, uniform in +-1/sqrt(fan_in) (PyTorch's default init bounds);
// inputs uniform in [-1, 1] (ACAS Xu) or [0, 1] (MNIST), fixed seed.
// Rows (time per call, single-threaded; the f64 -> S payload conversion and the inputs are prepared
// outside the timed loop):
//   forward/<net>/<f32|f64>   denote_outputs of the output node (the plain forward pass)
//   grad_x/<net>/<f32|f64>    vjp wrt inputs, cotangent all ones (nullptr): d sum(y) / d x (vjp_lent:
//                             the input is lent to the tape, not copied, as PyTorch's autograd keeps a
//                             reference to it)
//   grad_x_blas, grad_p_blas  the same with GradKernels::Blas (linear nodes as OpenBLAS gemms; rows
//                             absent when the library was built without OpenBLAS)
//   grad_p/<net>/<f32|f64>    vjp wrt params (weights and biases of every linear, and the value of every
//                             const: the ACAS Xu file's input offset), cotangent all ones
//   traffic_x, traffic_p      (batch 1) only the memory traffic of grad_x / grad_p: every weight read in the
//                             forward order, read again last layer first, and for _p the weight gradients
//                             written (bm_traffic); the floor of the two gradient rows on this machine
// Counters: FLOP (2 per multiply-add of the forward linears, plus the backward products the call
// needs: dX for every linear whose input needs a gradient, dW for every linear when wrt params).
// Before a network's first row is timed, its f64 input gradient is checked against forward mode
// (jvp along unit tangents: 1^T J e_i must equal the gradient's entry i) and its last bias gradient
// against the batch size (exact: the cotangent is all ones); exit 1 on a mismatch.
//
//   /tmp/build-bench/bin/grad_bench --benchmark_repetitions=5 --benchmark_filter=acas
//   /tmp/build-bench/bin/grad_bench --dump /tmp/grad   # <net>/x.npy, grad_x.npy, grad_w<k>.npy, grad_b<k>.npy,
//                                                      # grad_const<j>.npy (f64, k = linear layers in order,
//                                                      # j = consts in order) and for the
//                                                      # GraphBuilder nets W<k>.npy, b<k>.npy; then exits
// The networks' files are looked up under DENOTE_SOURCE_DIR (set by CMake) or $DENOTE_SOURCE_DIR.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/autodiff/grad.h"
#include "denote/eval/eval.h"
#include "denote/io/npy.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"

#ifndef DENOTE_SOURCE_DIR
#define DENOTE_SOURCE_DIR "."
#endif

namespace {

using denote::F32Context;
using denote::F64Context;
using denote::GradKernels;
using denote::GradOptions;
using denote::GradWrt;
using denote::GraphBuilder;
using denote::Model;
using denote::Op;
using denote::Shape;
using denote::Tensor;

constexpr uint32_t kSeed = 20240611;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "grad_bench: %s\n", what.c_str());
  std::exit(1);
}

struct Net {
  std::string name;
  bool from_onnx = false;
  Model model;
  int64_t output = -1;
  Tensor<double> x;                 // the one input, f64
  std::vector<int64_t> linear_ids;  // in node order
  int64_t items = 0;                // batch rows per call
  double fwd_flops = 0, dx_flops = 0, dw_flops = 0;
};

std::vector<double> uniform(std::mt19937& rng, int64_t count, double lo, double hi) {
  std::uniform_real_distribution<double> d(lo, hi);
  std::vector<double> v(static_cast<size_t>(count));
  for (double& x : v) x = d(rng);
  return v;
}

// Linear ids, batch rows and FLOP counts of a finished model.
void describe(Net& n) {
  for (const denote::Node& node : n.model.graph.nodes) {
    if (node.op != Op::Linear) continue;
    const auto& rec = n.model.payload.linear.at(node.id);
    const double rows = static_cast<double>(denote::numel(node.out_shape) / rec.out_dim);
    const double products = 2.0 * rows * static_cast<double>(rec.in_dim * rec.out_dim);
    n.linear_ids.push_back(node.id);
    n.items = static_cast<int64_t>(rows);
    n.fwd_flops += products;
    n.dx_flops += products;
    n.dw_flops += products;
  }
}

// FLOPs of one call of a row (see the header).
double flops(const Net& n, const std::string& kind) {
  if (kind == "forward") return n.fwd_flops;
  if (kind == "grad_x") return n.fwd_flops + n.dx_flops;
  // wrt params: forward, dW of every linear, dX of every linear but the first (its input needs none)
  const auto& rec = n.model.payload.linear.at(n.linear_ids.front());
  const double first_dx = 2.0 * static_cast<double>(n.items * rec.in_dim * rec.out_dim);
  return n.fwd_flops + n.dw_flops + n.dx_flops - first_dx;
}

Net load_onnx(const std::string& name, const std::string& rel_path, double lo, double hi) {
  const char* env = std::getenv("DENOTE_SOURCE_DIR");
  const std::string path = std::string(env ? env : DENOTE_SOURCE_DIR) + "/" + rel_path;
  auto model = denote::load_model_onnx_file(path);
  if (!model.ok()) die(name + ": " + path + ": " + model.message());
  Net n;
  n.name = name;
  n.from_onnx = true;
  n.model = std::move(*model);
  if (n.model.output_ids.size() != 1 || n.model.graph.input_ids().size() != 1)
    die(name + ": expected one input and one output");
  n.output = n.model.output_ids[0];
  const Shape shape = n.model.graph.nodes[static_cast<size_t>(n.model.graph.input_ids()[0])].out_shape;
  std::mt19937 rng(kSeed + 1);
  n.x = Tensor<double>(shape, uniform(rng, denote::numel(shape), lo, hi));
  describe(n);
  return n;
}

// widths[0] -> widths[1] -> ... with relu after every linear but the last; input [batch, widths[0]].
Net make_mlp(const std::string& name, const std::vector<int64_t>& widths, int64_t batch, double lo, double hi) {
  GraphBuilder b;
  std::mt19937 rng(kSeed);
  int64_t h = b.input(Shape{batch, widths[0]});
  for (size_t k = 1; k < widths.size(); ++k) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(widths[k - 1]));
    auto w = uniform(rng, widths[k] * widths[k - 1], -bound, bound);
    h = b.linear(h, widths[k], std::move(w), uniform(rng, widths[k], -bound, bound));
    if (k + 1 < widths.size()) h = b.unary(Op::Relu, h);
  }
  auto model = b.build({h});
  if (!model.ok()) die(name + ": " + model.message());
  Net n;
  n.name = name;
  n.model = std::move(*model);
  n.output = h;
  std::mt19937 xrng(kSeed + 1);
  n.x = Tensor<double>(Shape{batch, widths[0]}, uniform(xrng, batch * widths[0], lo, hi));
  describe(n);
  return n;
}

const std::vector<Net>& nets() {
  static const std::vector<Net> all = [] {
    const std::vector<int64_t> acas = {5, 50, 50, 50, 50, 50, 50, 5}, mnist = {784, 256, 256, 10};
    std::vector<Net> v;
    v.push_back(load_onnx("acasxu_onnx_b1", "tests/data/acasxu/ACASXU_run2a_1_1_batch_2000.onnx", -0.5, 0.5));
    v.push_back(make_mlp("acas_b1", acas, 1, -1.0, 1.0));
    v.push_back(make_mlp("acas_b1024", acas, 1024, -1.0, 1.0));
    v.push_back(load_onnx("mnist_onnx_b1", "tests/data/mnistfc/mnist-net_256x2.onnx", 0.0, 1.0));
    v.push_back(make_mlp("mnist_b1024", mnist, 1024, 0.0, 1.0));
    return v;
  }();
  return all;
}

// A network's payload and input read once in scalar S.
template <class S>
struct Prepared {
  denote::Payload<S> payload;
  // Lent to vjp_lent on every call (moved into the tape and back, no copy), hence mutable.
  mutable std::vector<Tensor<S>> inputs;
  explicit Prepared(const Net& n) {
    payload = denote::convert_payload<S>(n.model.payload, [](double v) { return static_cast<S>(v); });
    std::vector<S> x(n.x.data.begin(), n.x.data.end());
    inputs.emplace_back(n.x.shape, std::move(x));
  }
};

template <class Ctx>
denote::Result<denote::Gradients<typename Ctx::Scalar>> gradient(const Net& n, const Prepared<typename Ctx::Scalar>& p,
                                                                 Ctx& ctx, GradWrt wrt,
                                                                 GradKernels kernels = GradKernels::Exact) {
  GradOptions o;
  o.wrt = wrt;
  o.kernels = kernels;
  using S = typename Ctx::Scalar;
  return denote::vjp_lent(n.model.graph, p.payload, std::span<Tensor<S>>(p.inputs), n.output, nullptr, ctx, o);
}

void set_counters(benchmark::State& state, const Net& n, const std::string& kind) {
  const double f = flops(n, kind);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * n.items);
  state.counters["FLOP"] = benchmark::Counter(f);
  state.counters["FLOP/s"] = benchmark::Counter(f, benchmark::Counter::kIsIterationInvariantRate);
}

void ensure_checked(const Net& n);

template <class Ctx>
void bm_forward(benchmark::State& state, const Net* n) {
  using S = typename Ctx::Scalar;
  ensure_checked(*n);
  const Prepared<S> p(*n);
  Ctx ctx;
  const int64_t outs[1] = {n->output};
  for (auto _ : state) {
    auto t = denote::denote_outputs(n->model.graph, p.payload, std::span<const Tensor<S>>(p.inputs),
                                    std::span<const int64_t>(outs, 1), ctx);
    if (!t.ok()) {
      state.SkipWithError(t.message().c_str());
      break;
    }
    benchmark::DoNotOptimize((*t)[static_cast<size_t>(n->output)].data.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *n, "forward");
}

template <class Ctx, GradWrt kWrt, GradKernels kKernels>
void bm_grad(benchmark::State& state, const Net* n) {
  using S = typename Ctx::Scalar;
  ensure_checked(*n);
  const Prepared<S> p(*n);
  Ctx ctx;
  for (auto _ : state) {
    auto g = gradient(*n, p, ctx, kWrt, kKernels);
    if (!g.ok()) {
      state.SkipWithError(g.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(g->value.data.data());
    if constexpr (kWrt == GradWrt::Inputs) benchmark::DoNotOptimize(g->inputs[0].data.data());
    if constexpr (kWrt == GradWrt::Params) benchmark::DoNotOptimize(g->params.back().values.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, *n, kWrt == GradWrt::Inputs ? "grad_x" : "grad_p");
}

// The memory traffic any exact gradient of a batch-1 call must have at least (the traffic rows): the
// forward pass reads every linear layer's weights and the input gradient's pass reads them again (last
// layer first), and wrt params the weight gradients (one of each weight's size) are written once.
// Here that traffic alone, in vector loads (an xor of the words, nothing computed) and memset, in the
// same loop and cache state as the gradient rows: the floor those rows can approach, not go below.
__attribute__((target("avx2"))) uint64_t xor_words(const void* p, size_t bytes) {
  const auto* b = static_cast<const unsigned char*>(p);
  __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;
  size_t i = 0;
  for (; i + 128 <= bytes; i += 128) {
    a0 = _mm256_xor_si256(a0, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i)));
    a1 = _mm256_xor_si256(a1, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 32)));
    a2 = _mm256_xor_si256(a2, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 64)));
    a3 = _mm256_xor_si256(a3, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + i + 96)));
  }
  const __m256i a = _mm256_xor_si256(_mm256_xor_si256(a0, a1), _mm256_xor_si256(a2, a3));
  uint64_t out = static_cast<uint64_t>(_mm256_extract_epi64(a, 0) ^ _mm256_extract_epi64(a, 1) ^
                                       _mm256_extract_epi64(a, 2) ^ _mm256_extract_epi64(a, 3));
  for (; i < bytes; ++i) out ^= b[i];
  return out;
}

template <class Ctx, GradWrt kWrt>
void bm_traffic(benchmark::State& state, const Net* n) {
  using S = typename Ctx::Scalar;
  const Prepared<S> p(*n);
  std::vector<const std::vector<S>*> w;
  std::vector<std::vector<S>> gw;
  for (int64_t id : n->linear_ids) {
    w.push_back(&p.payload.linear.at(id).weight);
    if (kWrt == GradWrt::Params) gw.emplace_back(w.back()->size());
  }
  for (auto _ : state) {
    uint64_t h = 0;
    for (const auto* v : w) h ^= xor_words(v->data(), v->size() * sizeof(S));
    for (size_t k = w.size(); k-- > 0;) {
      h ^= xor_words(w[k]->data(), w[k]->size() * sizeof(S));
      if (kWrt == GradWrt::Params) std::memset(gw[k].data(), 0, gw[k].size() * sizeof(S));
    }
    benchmark::DoNotOptimize(h);
    benchmark::ClobberMemory();
  }
}

// The f64 gradients of a network wrt inputs and wrt params, checked (see the header).
struct Reference {
  denote::Gradients<double> x, p;
};

Reference check(const Net& n) {
  const Prepared<double> p(n);
  F64Context ctx;
  auto gx = gradient(n, p, ctx, GradWrt::Inputs);
  if (!gx.ok()) die(n.name + ": vjp wrt inputs: " + gx.message());
  auto gp = gradient(n, p, ctx, GradWrt::Params);
  if (!gp.ok()) die(n.name + ": vjp wrt params: " + gp.message());
  if (gx->inputs.size() != 1 || gx->inputs[0].shape != n.x.shape) die(n.name + ": input gradient has the wrong shape");
  // A weight and a bias gradient per linear, and a value gradient per const (the ACAS Xu file's
  // input offset: wrt params covers every payload record, constants included).
  const auto linear_grads = std::count_if(gp->params.begin(), gp->params.end(), [](const auto& pg) {
    return pg.field == "weight" || pg.field == "bias";
  });
  if (static_cast<size_t>(linear_grads) != 2 * n.linear_ids.size())
    die(n.name + ": expected a weight and a bias gradient per linear");
  // d sum(y) / d b_last = number of rows, exactly.
  for (double v : gp->params.back().values)
    if (gp->params.back().field != "bias" || v != static_cast<double>(n.items))
      die(n.name + ": last bias gradient is not the batch size");
  // 1^T J e_i against the input gradient at a few coordinates i.
  const int64_t count = denote::numel(n.x.shape);
  for (int64_t i : {int64_t{0}, count / 2, count - 1}) {
    Tensor<double> e = Tensor<double>::filled(n.x.shape, 0.0);
    e.data[static_cast<size_t>(i)] = 1.0;
    std::vector<Tensor<double>> tangents{std::move(e)};
    auto d = denote::jvp(n.model.graph, p.payload, std::span<const Tensor<double>>(p.inputs),
                         std::span<const Tensor<double>>(tangents), n.output, ctx);
    if (!d.ok()) die(n.name + ": jvp: " + d.message());
    double sum = 0, scale = 0;
    for (double v : d->tangent.data) {
      sum += v;
      scale += std::abs(v);
    }
    const double g = gx->inputs[0].data[static_cast<size_t>(i)];
    if (std::abs(sum - g) > 1e-12 * std::max(1.0, scale))
      die(n.name + ": vjp and jvp disagree at input " + std::to_string(i) + ": " + std::to_string(g) + " vs " +
          std::to_string(sum));
  }
  return {std::move(*gx), std::move(*gp)};
}

// "<stem><k>.npy" (appended piecewise: GCC 12's -Wrestrict misfires on "lit" + std::to_string).
std::string npy_name(std::string stem, size_t k) {
  stem += std::to_string(k);
  stem += ".npy";
  return stem;
}

// check() once per network, on its first benchmark (outside the timed loop), so that a filtered
// run checks only what it times.
void ensure_checked(const Net& n) {
  static std::vector<const Net*> done;
  if (std::find(done.begin(), done.end(), &n) != done.end()) return;
  (void)check(n);
  done.push_back(&n);
}

void write(const std::filesystem::path& path, const Tensor<double>& t) {
  auto st = denote::write_npy_file(path.string(), t);
  if (!st.ok()) die(path.string() + ": " + st.message());
}

// --dump DIR: per network the input, the f64 gradients, and the GraphBuilder nets' weights.
int dump(const std::string& dir) {
  for (const Net& n : nets()) {
    const std::filesystem::path d = std::filesystem::path(dir) / n.name;
    std::filesystem::create_directories(d);
    const Reference r = check(n);
    write(d / "x.npy", n.x);
    write(d / "grad_x.npy", r.x.inputs[0]);
    size_t layer = 0, consts = 0;
    for (const auto& pg : r.p.params) {
      const Tensor<double> t(pg.shape, pg.values);
      if (pg.field == "weight") write(d / npy_name("grad_w", layer), t);
      if (pg.field == "bias") write(d / npy_name("grad_b", layer++), t);
      if (pg.field == "value") write(d / npy_name("grad_const", consts++), t);
    }
    if (n.from_onnx) continue;
    for (size_t k = 0; k < n.linear_ids.size(); ++k) {
      const auto& rec = n.model.payload.linear.at(n.linear_ids[k]);
      write(d / npy_name("W", k), Tensor<double>(Shape{rec.out_dim, rec.in_dim}, rec.weight));
      write(d / npy_name("b", k), Tensor<double>(Shape{rec.out_dim}, rec.bias));
    }
  }
  std::printf("grad_bench: wrote %zu networks under %s\n", nets().size(), dir.c_str());
  return 0;
}

template <class Ctx>
void register_context(const Net& n, const std::string& tag) {
  const auto unit = n.items > 1 || n.name.rfind("mnist", 0) == 0 ? benchmark::kMillisecond : benchmark::kMicrosecond;
  const std::string suffix = "/" + n.name + "/" + tag;
  benchmark::RegisterBenchmark(("forward" + suffix).c_str(), bm_forward<Ctx>, &n)->Unit(unit)->UseRealTime();
  benchmark::RegisterBenchmark(("grad_x" + suffix).c_str(), bm_grad<Ctx, GradWrt::Inputs, GradKernels::Exact>, &n)
      ->Unit(unit)
      ->UseRealTime();
  benchmark::RegisterBenchmark(("grad_p" + suffix).c_str(), bm_grad<Ctx, GradWrt::Params, GradKernels::Exact>, &n)
      ->Unit(unit)
      ->UseRealTime();
  if (n.items == 1) {
    benchmark::RegisterBenchmark(("traffic_x" + suffix).c_str(), bm_traffic<Ctx, GradWrt::Inputs>, &n)
        ->Unit(unit)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("traffic_p" + suffix).c_str(), bm_traffic<Ctx, GradWrt::Params>, &n)
        ->Unit(unit)
        ->UseRealTime();
  }
  if (!denote::grad_blas_available()) return;
  benchmark::RegisterBenchmark(("grad_x_blas" + suffix).c_str(), bm_grad<Ctx, GradWrt::Inputs, GradKernels::Blas>, &n)
      ->Unit(unit)
      ->UseRealTime();
  benchmark::RegisterBenchmark(("grad_p_blas" + suffix).c_str(), bm_grad<Ctx, GradWrt::Params, GradKernels::Blas>, &n)
      ->Unit(unit)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], "--dump") == 0) return dump(argv[i + 1]);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  for (const Net& n : nets()) {
    register_context<F32Context>(n, "f32");
    register_context<F64Context>(n, "f64");
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
