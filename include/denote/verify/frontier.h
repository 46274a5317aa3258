// A hook into branch and bound's frontier (src/verify/verify.cc), so that a campaign runner can move
// open subdomains between processes (tools/denote/mpi/: MPI ranks). The library stays single-process:
// it only calls the hook between batches and when its own stack runs empty; what the hook does with
// the boxes it takes (send them, bound them elsewhere) is the runner's business.
//
// A subdomain travels as its input box alone (FrontierBox); the receiver bounds it afresh (without
// the parent's node boxes, which are only an optimisation). A job is the index of one (case,
// conjunction) of the property, in property order: cases in file order, each case's conjunctions in
// order (a case without an output condition counts as one job), the same on every process.
//
//   struct Give : FrontierHook { ... };           // takes boxes from the bottom of the stack
//   VerifyOptions o; o.frontier = &give;          // verify(m, p, o) calls it between batches
//   verify_subdomain(m, p, job, box, o, &worker)  // another process searches a received box
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace denote {

struct FrontierBox {
  std::vector<double> lo, hi;  // flat input box, X_0, X_1, ...
};

// The open subdomains of one search, last = top (searched next), first = bottom (the oldest and
// largest boxes: the ones to give away).
class FrontierStack {
 public:
  virtual ~FrontierStack() = default;
  virtual size_t size() const = 0;
  virtual FrontierBox take_bottom() = 0;     // precondition: size() > 0
  virtual void push_bottom(FrontierBox b) = 0;
};

// What the hook learned from elsewhere.
struct FrontierNews {
  bool stop = false;        // end this search now (the caller no longer needs its answer)
  bool undecided = false;   // a subtree searched elsewhere ended without a decision (or was lost)
  bool timeout = false;     // the deadline passed while waiting for other processes
  int64_t domains = 0;      // subdomains bounded elsewhere since the last call
  std::vector<std::vector<double>> candidates;  // witnesses found elsewhere; re-checked by the caller
};

class FrontierHook {
 public:
  using Deadline = std::chrono::steady_clock::time_point;
  virtual ~FrontierHook() = default;
  // After every batch: may take boxes from the bottom of the stack (to give away) or push some.
  virtual FrontierNews between_batches(int job, FrontierStack& stack, Deadline deadline) = 0;
  // The stack is empty: may wait for boxes or answers from elsewhere, pushing boxes to continue.
  // The search ends when this returns with the stack still empty.
  virtual FrontierNews when_empty(int job, FrontierStack& stack, Deadline deadline) = 0;
  // The search of `job` ended (any answer): subtrees still searched elsewhere are no longer needed.
  virtual void finish(int job) = 0;
};

}  // namespace denote
