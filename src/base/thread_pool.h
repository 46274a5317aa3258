// Internal: a thread pool (the compiled plan's steps, the binary-format context's tensor kernels; in
// base/ so that scalar/ and eval/ use it without including plan/). parallel_for(n, fn) runs fn(chunk,
// worker) for every chunk in [0, n) on the calling thread (worker 0) and the pool's workers (1 .. threads - 1); chunks
// are claimed dynamically, but each chunk's work is fixed, so results never depend on which thread
// ran it. Workers spin briefly between jobs (a plan's steps follow each other within microseconds),
// then sleep.
//
//   ThreadPool pool(2);
//   pool.parallel_for(8, [](void* ctx, int64_t chunk, int worker) { ... }, &state);
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace denote::detail {

class ThreadPool {
 public:
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }
  // fn(ctx, chunk, worker) for every chunk; a plain function pointer, so a call allocates nothing.
  using ChunkFn = void (*)(void* ctx, int64_t chunk, int worker);
  void parallel_for(int64_t n, ChunkFn fn, void* ctx);

 private:
  void worker_loop(int worker);
  void run_chunks(int worker);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int64_t> next_{0};
  std::atomic<int64_t> done_{0};
  std::atomic<int> acked_{0};  // workers done with the current job
  int64_t count_ = 0;
  ChunkFn fn_ = nullptr;
  void* ctx_ = nullptr;
  bool stop_ = false;
};

}  // namespace denote::detail
