// Reference throughput of the machine: OpenBLAS cblas_sgemm (C = A B, row-major, square n x n),
// reported as FLOP/s (2 n^3 per call). bench/compare_pytorch.sh uses the n = 1024 rate as the
// "sgemm bound" that evaluator workloads are measured against.
//
// OpenBLAS threads: --blas_threads=N (default: std::thread::hardware_concurrency()); every size runs
// once with 1 thread and once with N (N > 1), named sgemm/<n>/threads:<t>.
//
//   build-he/bin/sgemm_bench --blas_threads=2 --benchmark_filter=1024
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

void bm_sgemm(benchmark::State& state, int n, int threads) {
  openblas_set_num_threads(threads);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  const size_t count = static_cast<size_t>(n) * static_cast<size_t>(n);
  std::vector<float> a(count), b(count), c(count, 0.0f);
  for (float& v : a) v = d(rng);
  for (float& v : b) v = d(rng);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(),
                n);
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * n * n * static_cast<double>(n);
  state.counters["FLOP"] = benchmark::Counter(flops);
  state.counters["FLOP/s"] = benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["threads"] = benchmark::Counter(threads);
}

// Removes --blas_threads=N from argv (before Google Benchmark parses the rest); returns N or 0.
int take_blas_threads(int& argc, char** argv) {
  const char* kFlag = "--blas_threads=";
  int threads = 0, out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kFlag, std::strlen(kFlag)) == 0) threads = std::atoi(argv[i] + std::strlen(kFlag));
    else argv[out++] = argv[i];
  }
  argc = out;
  return threads;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = take_blas_threads(argc, argv);
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  std::vector<int> thread_counts = {1};
  if (threads > 1) thread_counts.push_back(threads);
  for (int n : {256, 512, 1024}) {
    for (int t : thread_counts) {
      const std::string name = "sgemm/" + std::to_string(n) + "/threads:" + std::to_string(t);
      benchmark::RegisterBenchmark(name.c_str(), bm_sgemm, n, t)->Unit(benchmark::kMillisecond)->UseRealTime();
    }
  }
  benchmark::AddCustomContext("openblas", openblas_get_config());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
