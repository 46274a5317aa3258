// The compiled plan's thread pool (see thread_pool.h). A job is published by bumping generation_;
// every worker acknowledges every job (acked_), so the caller returns only when no worker still
// reads the job's fields, and the next job can overwrite them.
#include "thread_pool.h"

#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define DENOTE_PAUSE() _mm_pause()
#else
#define DENOTE_PAUSE() ((void)0)
#endif

namespace denote::detail {

namespace {

constexpr int kSpins = 20000;  // pause iterations before a waiting worker sleeps (tens of microseconds)

}  // namespace

ThreadPool::ThreadPool(int threads) {
  for (int w = 1; w < threads; ++w) workers_.emplace_back([this, w] { worker_loop(w); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::run_chunks(int worker) {
  for (;;) {
    const int64_t c = next_.fetch_add(1, std::memory_order_relaxed);
    if (c >= count_) break;
    fn_(ctx_, c, worker);
    done_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::worker_loop(int worker) {
  uint64_t seen = 0;
  for (;;) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpins) {
      DENOTE_PAUSE();
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
    }
    seen = generation_.load(std::memory_order_acquire);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (stop_) return;
    }
    run_chunks(worker);
    acked_.fetch_add(1, std::memory_order_release);
  }
}

void ThreadPool::parallel_for(int64_t n, ChunkFn fn, void* ctx) {
  if (workers_.empty() || n <= 1) {
    for (int64_t c = 0; c < n; ++c) fn(ctx, c, 0);
    return;
  }
  fn_ = fn;
  ctx_ = ctx;
  count_ = n;
  next_.store(0, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  acked_.store(0, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  run_chunks(0);
  const int want = static_cast<int>(workers_.size());
  while (done_.load(std::memory_order_acquire) < n || acked_.load(std::memory_order_acquire) < want) DENOTE_PAUSE();
}

}  // namespace denote::detail
