// The kernels layer (src/kernels/) at every SIMD level the CPU has (base/cpu.h), on the shapes the bound
// passes and the sampling chain give them: mnistfc's first layer (256 x 784) and ACAS Xu's (50 x 50).
// Each benchmark's name carries its level (`/L0`, `/L1`, `/L2`); the counters say the rate in
// multiply-adds per second (`madd/s`). Run it where a fast path is slow: the ratio of L2 (or L1) to L0
// says whether the vector copy ran at all, and at what speed, on that CPU (issue 49: mnistfc IBP
// prepared took 0.40 ms on an Intel Xeon against 0.05 ms on the Zen 5 VM). The first line printed names
// the CPU's best level and whether BLAS is built.
//   build/bin/kernels_bench --benchmark_filter=interval_matvec
// (block_gemm_mx: OCP MX's block-scaled product, docs/PERF.md "Mixed precision and OCP MX".)
#include <benchmark/benchmark.h>

#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "base/cpu.h"
#include "kernels/block_gemm.h"
#include "kernels/fused_concretize.h"
#include "kernels/gemm.h"
#include "kernels/interval_matvec.h"
#include "kernels/row_sums.h"

namespace {

using namespace denote;

std::vector<double> draw(size_t n, uint64_t seed, double lo = -1, double hi = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

// Sets the level for one benchmark run and restores the CPU's best after it.
struct AtLevel {
  explicit AtLevel(int level) { set_simd_level(level); }
  ~AtLevel() { set_simd_level(-1); }
};

template <class W>
void bm_interval_matvec(benchmark::State& state, int level, int64_t rows, int64_t n) {
  AtLevel at(level);
  const std::vector<double> wd = draw(static_cast<size_t>(rows * n), 1);
  const std::vector<W> w(wd.begin(), wd.end());
  const std::vector<double> mid = draw(static_cast<size_t>(n), 2, 0, 1), rad(static_cast<size_t>(n), 0.03);
  std::vector<double> mag(mid.size());
  for (size_t i = 0; i < mag.size(); ++i) mag[i] = mid[i] + rad[i];
  std::vector<double> c(static_cast<size_t>(rows)), r(c), m(c);
  for (auto _ : state) {
    kernels::interval_matvec(w.data(), rows, n, mid.data(), rad.data(), mag.data(), c.data(), r.data(), m.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["madd/s"] = benchmark::Counter(3.0 * static_cast<double>(rows * n), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("copy " + std::to_string(kernels::interval_matvec_level()));
}

void bm_gemm_nn(benchmark::State& state, int level, int64_t m, int64_t n, int64_t k) {
  AtLevel at(level);
  const std::vector<double> a = draw(static_cast<size_t>(m * k), 3), b = draw(static_cast<size_t>(k * n), 4);
  std::vector<double> c(static_cast<size_t>(m * n));
  for (auto _ : state) {
    kernels::gemm_nn(m, n, k, a.data(), b.data(), c.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.counters["madd/s"] =
      benchmark::Counter(static_cast<double>(m * n * k), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernels::blas_in_use() ? "blas" : "loops");
}

void bm_sgemm(benchmark::State& state, int level, int64_t rows, int64_t out, int64_t in) {
  AtLevel at(level);
  const std::vector<double> xd = draw(static_cast<size_t>(rows * in), 5), wd = draw(static_cast<size_t>(out * in), 6);
  const std::vector<float> x(xd.begin(), xd.end()), w(wd.begin(), wd.end());
  std::vector<float> y(static_cast<size_t>(rows * out));
  for (auto _ : state) {
    kernels::gemm<float>(false, true, rows, out, in, x.data(), w.data(), 0.0f, y.data(), out);
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["madd/s"] =
      benchmark::Counter(static_cast<double>(rows * out * in), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(kernels::blas_in_use() ? "blas" : "loops");
}

// OCP MX's block-scaled product (E4M3 integers, blocks of 32, power-of-two factors), rows x out x in.
void bm_block_gemm(benchmark::State& state, int level, int64_t rows, int64_t out, int64_t in) {
  AtLevel at(level);
  const int64_t blocks = (in + 31) / 32;
  std::vector<double> a = draw(static_cast<size_t>(rows * in), 9, -448, 448), b = draw(static_cast<size_t>(out * in), 10, -448, 448);
  for (double& v : a) v = static_cast<double>(static_cast<int64_t>(v));
  for (double& v : b) v = static_cast<double>(static_cast<int64_t>(v));
  const std::vector<double> sa(static_cast<size_t>(rows * blocks), 0x1p-12), sb(static_cast<size_t>(out * blocks), 0x1p-9);
  const kernels::BlockPanel p = kernels::pack_block_panel(b.data(), sb.data(), out, in, 32);
  std::vector<float> y(static_cast<size_t>(rows * out));
  bool inexact = false;
  for (auto _ : state) {
    benchmark::DoNotOptimize(kernels::block_gemm_f32(a.data(), sa.data(), rows, p, y.data(), inexact));
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["madd/s"] =
      benchmark::Counter(static_cast<double>(rows * out * in), benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel("copy " + std::to_string(kernels::block_gemm_level()));
}

void bm_concretize_rows(benchmark::State& state, int level, int64_t rows, int64_t m) {
  AtLevel at(level);
  const std::vector<double> a = draw(static_cast<size_t>(rows * m), 7), lo = draw(static_cast<size_t>(m), 8, -1, 0);
  const std::vector<double> hi = draw(static_cast<size_t>(m), 9, 0, 1);
  for (auto _ : state) {
    double sum = 0, mag = 0, terms = 0;
    for (int64_t r = 0; r < rows; ++r) kernels::concretize_row(a.data() + r * m, lo.data(), hi.data(), m, sum, mag, terms);
    benchmark::DoNotOptimize(sum);
  }
  state.counters["madd/s"] = benchmark::Counter(static_cast<double>(rows * m), benchmark::Counter::kIsIterationInvariantRate);
}

void bm_fused(benchmark::State& state, int level, int64_t rows, int64_t k, int64_t m) {
  AtLevel at(level);
  const std::vector<double> as = draw(static_cast<size_t>(rows * k), 10), w = draw(static_cast<size_t>(k * m), 11);
  const std::vector<double> lo = draw(static_cast<size_t>(m), 12, -1, 0), hi = draw(static_cast<size_t>(m), 13, 0, 1);
  std::vector<double> sum(static_cast<size_t>(rows)), mag(sum), terms(sum);
  for (auto _ : state) {
    kernels::product_concretize_rows(as.data(), rows, k, w.data(), m, lo.data(), hi.data(), sum.data(), mag.data(),
                                     terms.data());
    benchmark::DoNotOptimize(sum.data());
  }
  state.counters["madd/s"] =
      benchmark::Counter(static_cast<double>(rows * k * m), benchmark::Counter::kIsIterationInvariantRate);
}

void bm_sign_rows(benchmark::State& state, int level, size_t out, size_t in, size_t k) {
  AtLevel at(level);
  const std::vector<double> W = draw(out * in, 14), R = draw(in * k, 15), S = draw(in * k, 16);
  std::vector<double> acc(out * k);
  for (auto _ : state) {
    kernels::sign_rows(W.data(), out, in, R.data(), S.data(), k, acc.data());
    benchmark::DoNotOptimize(acc.data());
  }
  state.counters["madd/s"] =
      benchmark::Counter(static_cast<double>(out * in * k), benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (int level = 0; level <= cpu_simd_level(); ++level) {
    const std::string L = "/L" + std::to_string(level);
    benchmark::RegisterBenchmark(("interval_matvec_f32w/mnistfc_256x784" + L).c_str(),
                                 [level](benchmark::State& s) { bm_interval_matvec<float>(s, level, 256, 784); });
    benchmark::RegisterBenchmark(("interval_matvec_f64w/mnistfc_256x784" + L).c_str(),
                                 [level](benchmark::State& s) { bm_interval_matvec<double>(s, level, 256, 784); });
    benchmark::RegisterBenchmark(("interval_matvec_f64w/acasxu_50x50" + L).c_str(),
                                 [level](benchmark::State& s) { bm_interval_matvec<double>(s, level, 50, 50); });
    benchmark::RegisterBenchmark(("gemm_nn/crown_rows_512x256x256" + L).c_str(),
                                 [level](benchmark::State& s) { bm_gemm_nn(s, level, 512, 256, 256); });
    benchmark::RegisterBenchmark(("gemm_f32/sampling_256x256x784" + L).c_str(),
                                 [level](benchmark::State& s) { bm_sgemm(s, level, 256, 256, 784); });
    benchmark::RegisterBenchmark(("block_gemm_mx/mnistfc_256x256x784" + L).c_str(),
                                 [level](benchmark::State& s) { bm_block_gemm(s, level, 256, 256, 784); });
    benchmark::RegisterBenchmark(("concretize_row/20x784" + L).c_str(),
                                 [level](benchmark::State& s) { bm_concretize_rows(s, level, 20, 784); });
    benchmark::RegisterBenchmark(("fused_concretize/20x5x50" + L).c_str(),
                                 [level](benchmark::State& s) { bm_fused(s, level, 20, 5, 50); });
    benchmark::RegisterBenchmark(("sign_rows/50x50x16" + L).c_str(),
                                 [level](benchmark::State& s) { bm_sign_rows(s, level, 50, 50, 16); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::printf("kernels_bench: CPU best level %d (avx2 %d, avx2+fma %d, avx512f %d), BLAS built %d\n",
              denote::cpu_simd_level(), denote::cpu_avx2(), denote::cpu_avx2_fma(), denote::cpu_avx512f(),
              denote::kernels::blas_built());
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
