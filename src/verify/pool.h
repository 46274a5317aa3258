// Internal: a small persistent worker pool for branch and bound (src/verify/verify.cc): run(n, f)
// calls f(0) ... f(n-1) on the pool's threads and the caller's, and returns when all are done.
// One pool per verify() call; the workers sleep between batches.
#pragma once

#include <cstdint>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace denote::verify_detail {

class WorkerPool {
 public:
  explicit WorkerPool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { loop(); });
  }
  ~WorkerPool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int n, const std::function<void(int)>& f) {
    if (workers_.empty() || n <= 1) {
      for (int i = 0; i < n; ++i) f(i);
      return;
    }
    uint64_t gen;
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &f;
      n_ = n;
      next_ = 0;
      pending_ = n;
      gen = ++generation_;
    }
    wake_.notify_all();
    work(gen);
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    job_ = nullptr;
  }

 private:
  // Tasks are taken under the lock, and only for the batch the thread woke for (tasks last about
  // a millisecond; the lock costs nothing next to them).
  void work(uint64_t gen) {
    for (;;) {
      int i;
      const std::function<void(int)>* job;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (generation_ != gen || next_ >= n_) return;
        i = next_++;
        job = job_;
      }
      (*job)(i);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
  void loop() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      work(seen);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* job_ = nullptr;
  int n_ = 0, next_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

}  // namespace denote::verify_detail
