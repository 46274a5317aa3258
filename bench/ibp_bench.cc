// Interval bound propagation (run_ibp) of two ReLU MLPs, for comparison with auto_LiRPA's IBP
// (bench/lirpa_ibp.py, bench/compare_lirpa.sh; docs/PERF.md, "Interval bound propagation").
// Workloads (random weights, fixed seed, PyTorch's default init bounds 1/sqrt(fan_in)):
//   acas   5-50x6-5 ReLU MLP (ACAS Xu size): linear 5->50, relu, 5 x (linear 50->50, relu), linear 50->5;
//          center uniform in [-1, 1], eps 0.01
//   mnist  784-256-256-10 ReLU MLP (MNIST size); center uniform in [0, 1], eps 0.01
// Weights, biases and centers are rounded to bfloat16 values (8 significant bits) once, so that the
// f64, f32 and bfloat16 runs and the .npy export (float32) all see exactly the same network.
// Rows (time per propagation, single-threaded):
//   ibp/<net>/f64, ibp/<net>/f32       run_ibp over IntervalContext<NativeEndpoints<double|float>>
//   ibp/<net>/bfloat16                 run_ibp over IntervalContext<BinaryEndpoints> (software format)
//   ibp_double/<net>/f32               run_ibp_double (CLI entry: converts the payload every call)
//   forward/<net>/f32                  denote() over F32Context at the center (the plain f32 pass)
// The interval payload and input boxes are prepared outside the timed loop. Before timing, the
// program checks once that every output box contains the f64, f32 and bfloat16 forward values at
// the center (exit 1 otherwise).
//
//   build-ib/bin/ibp_bench --benchmark_repetitions=3
//   build-ib/bin/ibp_bench --dump /tmp/ibp   # writes <net>/W<k>.npy, b<k>.npy, center.npy, eps.txt,
//                                            # ibp_f64_lo.npy/hi, ibp_f32_lo.npy/hi, forward_f32.npy, then exits
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "denote/base/allocator.h"
#include "denote/bounds/ibp.h"
#include "denote/eval/eval.h"
#include "denote/io/npy.h"
#include "denote/program/builder.h"

namespace {

using denote::GraphBuilder;
using denote::Interval;
using denote::IntervalContext;
using denote::Model;
using denote::Op;
using denote::Shape;
using denote::Tensor;

constexpr uint32_t kSeed = 20240611;
constexpr double kEps = 0.01;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "ibp_bench: %s\n", what.c_str());
  std::exit(1);
}

// The nearest bfloat16 value (ties to even) of a finite float, as a double.
double to_bfloat16_grid(double v) {
  const float f = static_cast<float>(v);
  uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof bits);
  bits = (bits + 0x7FFFu + ((bits >> 16) & 1u)) & 0xFFFF0000u;
  float r = 0;
  std::memcpy(&r, &bits, sizeof r);
  return static_cast<double>(r);
}

// Uniform values in [lo, hi] from a fixed-seed stream, rounded to the bfloat16 grid.
class Filler {
 public:
  explicit Filler(uint32_t seed) : rng_(seed) {}
  std::vector<double> uniform(int64_t count, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(static_cast<size_t>(count));
    for (double& x : v) x = to_bfloat16_grid(d(rng_));
    return v;
  }

 private:
  std::mt19937 rng_;
};

struct Net {
  std::string name;
  std::vector<int64_t> widths;  // input, hidden..., output
  Model model;
  int64_t output = -1;
  std::vector<int64_t> linear_ids;
  Tensor<double> center;
  denote::DoubleBox box;
};

// widths[0] -> widths[1] -> ... with relu after every linear but the last.
Net make_net(std::string name, std::vector<int64_t> widths, double center_lo, double center_hi) {
  Net n;
  n.name = std::move(name);
  n.widths = widths;
  GraphBuilder b;
  Filler f(kSeed);
  int64_t h = b.input(Shape{widths[0]});
  for (size_t k = 1; k < widths.size(); ++k) {
    const double bound = 1.0 / std::sqrt(static_cast<double>(widths[k - 1]));
    h = b.linear(h, widths[k], f.uniform(widths[k] * widths[k - 1], -bound, bound), f.uniform(widths[k], -bound, bound));
    n.linear_ids.push_back(h);
    if (k + 1 < widths.size()) h = b.unary(Op::Relu, h);
  }
  auto model = b.build({h});
  if (!model.ok()) die(n.name + ": " + model.message());
  n.model = std::move(*model);
  n.output = h;
  n.center = Tensor<double>(Shape{widths[0]}, Filler(kSeed + 1).uniform(widths[0], center_lo, center_hi));
  auto box = denote::box_around(n.center, kEps);
  if (!box.ok()) die(n.name + ": " + box.message());
  n.box = std::move(*box);
  return n;
}

// Everything run_ibp needs for one endpoint arithmetic, prepared once.
template <class E>
struct IbpSetup {
  using S = Interval<typename E::Value>;
  IntervalContext<E> ctx;
  denote::Payload<S> payload;
  std::vector<Tensor<S>> inputs;

  IbpSetup(const Net& n, E e) : ctx(std::move(e)) {
    payload = denote::convert_payload<S>(n.model.payload, [&](double v) { return ctx.from_double(v); });
    std::vector<S> data;
    for (size_t i = 0; i < n.box.lo.size(); ++i) data.push_back(ctx.make(n.box.lo[i], n.box.hi[i]));
    inputs.emplace_back(n.box.shape, std::move(data));
  }
};

// The output box of one propagation as doubles (outward), or exit with the reason.
template <class E>
denote::DoubleBox output_box(const Net& n, IbpSetup<E>& s) {
  auto r = denote::run_ibp(n.model.graph, s.payload, std::span<const Tensor<typename IbpSetup<E>::S>>(s.inputs), s.ctx);
  if (!r.ok()) die(n.name + ": run_ibp: " + r.message());
  const auto& box = r->boxes[static_cast<size_t>(n.output)];
  if (!box) die(n.name + ": no output box: " + r->notes[static_cast<size_t>(n.output)]);
  denote::DoubleBox out{box->shape, {}, {}};
  for (const auto& v : box->data) {
    out.lo.push_back(s.ctx.lo_double(v));
    out.hi.push_back(s.ctx.hi_double(v));
  }
  return out;
}

// Forward values at the center in f64, f32 and bfloat16 (nearest-even).
std::vector<std::vector<double>> forward_values(const Net& n) {
  std::vector<std::vector<double>> out;
  {
    denote::F64Context ctx;
    auto y = denote::denote(n.model.graph, n.model.payload, std::span<const Tensor<double>>(&n.center, 1), n.output, ctx);
    if (!y.ok()) die(n.name + ": f64 forward: " + y.message());
    out.push_back(y->data);
  }
  {
    denote::F32Context ctx;
    auto p = denote::convert_payload<float>(n.model.payload, [](double v) { return static_cast<float>(v); });
    const Tensor<float> x(n.center.shape, std::vector<float>(n.center.data.begin(), n.center.data.end()));
    auto y = denote::denote(n.model.graph, p, std::span<const Tensor<float>>(&x, 1), n.output, ctx);
    if (!y.ok()) die(n.name + ": f32 forward: " + y.message());
    out.emplace_back(y->data.begin(), y->data.end());
  }
  {
    auto f = denote::parse_format("bfloat16");
    if (!f.ok()) die(f.message());
    denote::BinaryContext ctx(*f);
    auto p = denote::convert_payload<denote::FpWord>(n.model.payload, [&](double v) { return ctx.from_double(v); });
    std::vector<denote::FpWord> xs;
    for (double v : n.center.data) xs.push_back(ctx.from_double(v));
    const Tensor<denote::FpWord> x(n.center.shape, std::move(xs));
    auto y = denote::denote(n.model.graph, p, std::span<const Tensor<denote::FpWord>>(&x, 1), n.output, ctx);
    if (!y.ok()) die(n.name + ": bfloat16 forward: " + y.message());
    std::vector<double> v;
    for (const auto& w : y->data) v.push_back(ctx.to_double(w));
    out.push_back(std::move(v));
  }
  return out;
}

void check_contains(const Net& n, const std::string& arith, const denote::DoubleBox& box,
                    const std::vector<std::vector<double>>& forwards) {
  static const char* const kNames[] = {"f64", "f32", "bfloat16"};
  double width = 0;
  for (size_t i = 0; i < box.lo.size(); ++i) {
    width = std::max(width, box.hi[i] - box.lo[i]);
    for (size_t k = 0; k < forwards.size(); ++k)
      if (!(box.lo[i] <= forwards[k][i] && forwards[k][i] <= box.hi[i]))
        die(n.name + " " + arith + ": output " + std::to_string(i) + ": the " + kNames[k] + " forward value " +
            std::to_string(forwards[k][i]) + " is outside [" + std::to_string(box.lo[i]) + ", " +
            std::to_string(box.hi[i]) + "]");
  }
  std::fprintf(stderr, "ibp_bench: %s %s: output box contains the f64, f32, bfloat16 forward values (widest %.4g)\n",
               n.name.c_str(), arith.c_str(), width);
}

void write_npy(const std::filesystem::path& p, Tensor<double> t, denote::NpyDtype dtype) {
  const denote::Status s = denote::write_npy_file(p.string(), t, dtype);
  if (!s.ok()) die(p.string() + ": " + s.message());
}

void dump_box(const std::filesystem::path& dir, const std::string& stem, const denote::DoubleBox& b) {
  write_npy(dir / (stem + "_lo.npy"), Tensor<double>(b.shape, b.lo), denote::NpyDtype::F64);
  write_npy(dir / (stem + "_hi.npy"), Tensor<double>(b.shape, b.hi), denote::NpyDtype::F64);
}

// Writes the network (float32, exact: every value is on the bfloat16 grid), the center, eps and our bounds.
void dump(const Net& n, const std::filesystem::path& root, const denote::DoubleBox& f64, const denote::DoubleBox& f32,
          const std::vector<double>& forward_f32) {
  const std::filesystem::path dir = root / n.name;
  std::filesystem::create_directories(dir);
  for (size_t k = 0; k < n.linear_ids.size(); ++k) {
    const auto& rec = n.model.payload.linear.at(n.linear_ids[k]);
    write_npy(dir / ("W" + std::to_string(k) + ".npy"), Tensor<double>(Shape{rec.out_dim, rec.in_dim}, rec.weight),
              denote::NpyDtype::F32);
    write_npy(dir / ("b" + std::to_string(k) + ".npy"), Tensor<double>(Shape{rec.out_dim}, rec.bias), denote::NpyDtype::F32);
  }
  write_npy(dir / "center.npy", n.center, denote::NpyDtype::F32);
  std::ofstream(dir / "eps.txt") << kEps << "\n";
  dump_box(dir, "ibp_f64", f64);
  dump_box(dir, "ibp_f32", f32);
  write_npy(dir / "forward_f32.npy", Tensor<double>(Shape{static_cast<int64_t>(forward_f32.size())}, forward_f32),
            denote::NpyDtype::F64);
}

template <class E>
void bm_ibp(benchmark::State& state, const Net* n, IbpSetup<E>* s) {
  using S = typename IbpSetup<E>::S;
  for (auto _ : state) {
    auto r = denote::run_ibp(n->model.graph, s->payload, std::span<const Tensor<S>>(s->inputs), s->ctx);
    if (!r.ok() || !r->boxes[static_cast<size_t>(n->output)]) {
      state.SkipWithError("run_ibp failed");
      break;
    }
    benchmark::DoNotOptimize(r->boxes.data());
    benchmark::ClobberMemory();
  }
}

void bm_ibp_double(benchmark::State& state, const Net* n) {
  for (auto _ : state) {
    auto r = denote::run_ibp_double(n->model.graph, n->model.payload, std::span<const denote::DoubleBox>(&n->box, 1), "f32");
    if (!r.ok() || !r->boxes[static_cast<size_t>(n->output)]) {
      state.SkipWithError("run_ibp_double failed");
      break;
    }
    benchmark::DoNotOptimize(r->boxes.data());
    benchmark::ClobberMemory();
  }
}

struct Forward32 {
  denote::Payload<float> payload;
  std::vector<Tensor<float>> inputs;
};

void bm_forward(benchmark::State& state, const Net* n, const Forward32* f) {
  denote::F32Context ctx;
  for (auto _ : state) {
    auto y = denote::denote(n->model.graph, f->payload, std::span<const Tensor<float>>(f->inputs), n->output, ctx);
    if (!y.ok()) {
      state.SkipWithError(y.message().c_str());
      break;
    }
    benchmark::DoNotOptimize(y->data.data());
    benchmark::ClobberMemory();
  }
}

// Removes "--dump DIR" / "--dump=DIR" from argv (Google Benchmark rejects unknown flags).
std::string take_dump_flag(int& argc, char** argv) {
  std::string dir;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--dump" && i + 1 < argc) {
      dir = argv[++i];
    } else if (a.rfind("--dump=", 0) == 0) {
      dir = a.substr(7);
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  const std::string dump_dir = take_dump_flag(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  static std::vector<Net> nets;
  nets.push_back(make_net("acas", {5, 50, 50, 50, 50, 50, 50, 5}, -1.0, 1.0));
  nets.push_back(make_net("mnist", {784, 256, 256, 10}, 0.0, 1.0));
  auto bf16 = denote::parse_format("bfloat16");
  if (!bf16.ok()) die(bf16.message());

  static std::vector<std::unique_ptr<IbpSetup<denote::NativeEndpoints<double>>>> s64;
  static std::vector<std::unique_ptr<IbpSetup<denote::NativeEndpoints<float>>>> s32;
  static std::vector<std::unique_ptr<IbpSetup<denote::BinaryEndpoints>>> sbf;
  static std::vector<std::unique_ptr<Forward32>> fwd;
  for (const Net& n : nets) {
    s64.push_back(std::make_unique<IbpSetup<denote::NativeEndpoints<double>>>(n, denote::NativeEndpoints<double>()));
    s32.push_back(std::make_unique<IbpSetup<denote::NativeEndpoints<float>>>(n, denote::NativeEndpoints<float>()));
    sbf.push_back(std::make_unique<IbpSetup<denote::BinaryEndpoints>>(n, denote::BinaryEndpoints(*bf16)));
    auto f = std::make_unique<Forward32>();
    f->payload = denote::convert_payload<float>(n.model.payload, [](double v) { return static_cast<float>(v); });
    f->inputs.emplace_back(n.center.shape, std::vector<float>(n.center.data.begin(), n.center.data.end()));
    fwd.push_back(std::move(f));

    // Soundness check, once, outside timing.
    const auto forwards = forward_values(n);
    const denote::DoubleBox b64 = output_box(n, *s64.back());
    const denote::DoubleBox b32 = output_box(n, *s32.back());
    check_contains(n, "f64", b64, forwards);
    check_contains(n, "f32", b32, forwards);
    check_contains(n, "bfloat16", output_box(n, *sbf.back()), forwards);
    if (!dump_dir.empty()) dump(n, dump_dir, b64, b32, forwards[1]);
  }
  if (!dump_dir.empty()) {
    std::fprintf(stderr, "ibp_bench: wrote the networks and bounds under %s\n", dump_dir.c_str());
    return 0;
  }
  for (size_t k = 0; k < nets.size(); ++k) {
    const Net* n = &nets[k];
    const auto unit = n->name == "acas" ? benchmark::kMicrosecond : benchmark::kMillisecond;
    benchmark::RegisterBenchmark(("ibp/" + n->name + "/f64").c_str(), bm_ibp<denote::NativeEndpoints<double>>, n,
                                 s64[k].get())->Unit(unit)->UseRealTime();
    benchmark::RegisterBenchmark(("ibp/" + n->name + "/f32").c_str(), bm_ibp<denote::NativeEndpoints<float>>, n,
                                 s32[k].get())->Unit(unit)->UseRealTime();
    benchmark::RegisterBenchmark(("ibp/" + n->name + "/bfloat16").c_str(), bm_ibp<denote::BinaryEndpoints>, n,
                                 sbf[k].get())->Unit(benchmark::kMillisecond)->UseRealTime();
    benchmark::RegisterBenchmark(("ibp_double/" + n->name + "/f32").c_str(), bm_ibp_double, n)->Unit(unit)->UseRealTime();
    benchmark::RegisterBenchmark(("forward/" + n->name + "/f32").c_str(), bm_forward, n, fwd[k].get())
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
