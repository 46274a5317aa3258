// Ctrl-C during a long call (verify, CROWN bounds): the call runs on a helper thread while the
// calling thread waits with the GIL released and, every 50 ms, lets Python run its signal handlers
// (PyErr_CheckSignals). When a handler raises (KeyboardInterrupt for Ctrl-C), denote::stop_request()
// is set, so the call's next deadline check ends it as if its deadline had passed; once it has
// returned the flag is cleared and the handler's exception is raised. The stop request is process-
// wide: a call running on another Python thread at that moment stops too.
#pragma once

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include <pybind11/pybind11.h>

#include "denote/base/deadline.h"

namespace denote::python {

// f: C++ only (it must not touch Python objects: it runs without the GIL on another thread).
template <class F>
auto run_interruptible(F&& f) -> decltype(f()) {
  namespace py = pybind11;
  std::optional<decltype(f())> result;
  std::exception_ptr failure;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false, interrupted = false;
  {
    py::gil_scoped_release release;
    std::thread worker([&] {
      try {
        result.emplace(f());
      } catch (...) {
        failure = std::current_exception();
      }
      std::lock_guard<std::mutex> lock(mu);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> lock(mu);
    while (!cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return done; })) {
      if (interrupted) continue;
      lock.unlock();
      {
        py::gil_scoped_acquire acquire;
        if (PyErr_CheckSignals() != 0) interrupted = true;  // the handler's exception stays set
      }
      if (interrupted) stop_request().store(true);
      lock.lock();
    }
    lock.unlock();
    worker.join();
  }
  if (interrupted) {
    stop_request().store(false);
    throw py::error_already_set();
  }
  if (failure) std::rethrow_exception(failure);
  return std::move(*result);
}

}  // namespace denote::python
