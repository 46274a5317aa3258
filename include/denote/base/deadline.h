// Seconds (as users give them: --timeout, --rank-grace, VerifyOptions::timeout_s) turned into a
// steady-clock deadline without overflow. A number of seconds beyond what the clock can hold from
// `start` (about 292 years of nanoseconds in all; 1e10, 1e30 and inf among them) is no deadline at
// all (time_point::max()); zero or less is `start`; NaN is `start` too (callers refuse NaN first).
//
//   const auto deadline = deadline_after(std::chrono::steady_clock::now(), options.timeout_s);
//   if (past(deadline)) return timeout;
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>

namespace denote {

inline std::chrono::steady_clock::time_point deadline_after(std::chrono::steady_clock::time_point start,
                                                            double seconds) {
  using Clock = std::chrono::steady_clock;
  if (!(seconds > 0)) return start;
  const double room = std::chrono::duration<double>(Clock::time_point::max() - start).count();
  // Below `room` by a margin that covers the double's rounding of both sides.
  if (!(seconds < room * 0.999)) return Clock::time_point::max();
  return start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

// A request to stop every deadline-bound computation of this process at its next deadline check,
// as if each deadline had passed: the Python module sets it when Ctrl-C arrives during a call and
// clears it when the call has returned (python/src/interrupt.h). The CLI never sets it.
inline std::atomic<bool>& stop_request() {
  static std::atomic<bool> flag{false};
  return flag;
}

// Whether `deadline` has passed, or a stop was requested.
inline bool past(std::chrono::steady_clock::time_point deadline) {
  return stop_request().load(std::memory_order_relaxed) || std::chrono::steady_clock::now() > deadline;
}

}  // namespace denote
