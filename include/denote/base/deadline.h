// Seconds (as users give them: --timeout, --rank-grace, VerifyOptions::timeout_s) turned into a
// steady-clock deadline without overflow. A number of seconds beyond what the clock can hold from
// `start` (about 292 years of nanoseconds in all; 1e10, 1e30 and inf among them) is no deadline at
// all (time_point::max()); zero or less is `start`; NaN is `start` too (callers refuse NaN first).
//
//   const auto deadline = deadline_after(std::chrono::steady_clock::now(), options.timeout_s);
#pragma once

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

}  // namespace denote
