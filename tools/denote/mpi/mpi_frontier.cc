// `mpirun -np N denote verify MODEL PROP.vnnlib`: one instance's branch-and-bound frontier across
// the ranks. Rank 0 runs verify() as one process does, with a FrontierHook (include/denote/verify/
// frontier.h): between its batches it hands the bottom boxes of its stack (the oldest, largest) to
// idle ranks; when its own stack is empty it asks a busy rank to give the bottom of its stack
// (kTagDonate -> kTagGift). Every other rank loads the same files and searches the boxes it gets
// with verify_subdomain (its own hook answers donation requests and sends a heartbeat each second),
// then reports unsat / sat + witness / undecided. Rank 0 re-checks every witness, and answers unsat
// only when its own boxes and every subtree searched elsewhere are closed; a rank silent for
// --rank-grace seconds is lost and its subtree counts as undecided (the answer is then unknown or
// timeout, never a wrong unsat).
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli.h"
#include "mpi/mpi_comm.h"
#include "verify_cli.h"

namespace denote::cli::mpi {

namespace {

using Clock = std::chrono::steady_clock;
using Deadline = FrontierHook::Deadline;

// A worker's answer for one box.
enum Answer : int64_t { kUnsat = 0, kSat = 1, kUndecided = 2 };

Wire box_wire(Wire w, const FrontierBox& b) { return std::move(w.f64s(b.lo).f64s(b.hi)); }

class CoordinatorHook final : public FrontierHook {
 public:
  CoordinatorHook(Comm& comm, double grace) : comm_(comm), grace_(grace), peers_(static_cast<size_t>(comm.size())) {}

  FrontierNews between_batches(int job, FrontierStack& stack, Deadline deadline) override {
    FrontierNews n;
    drain(n, stack);
    serve(job, stack, deadline, /*keep=*/1);
    return n;
  }

  FrontierNews when_empty(int job, FrontierStack& stack, Deadline deadline) override {
    FrontierNews n;
    for (int idle = 0;; ++idle) {
      drain(n, stack);
      if (!n.candidates.empty() || stack.size() > 0) return n;
      serve(job, stack, deadline, /*keep=*/0);
      if (!any_busy()) return n;  // every subtree is closed
      if (Clock::now() > deadline) return n.timeout = true, n;
      usleep(idle < 100 ? 100 : 1000);
    }
  }

  void finish(int) override {
    for (int w = 1; w < comm_.size(); ++w)
      if (peer(w).state == State::Busy && peer(w).gen == gen_) comm_.send(w, kTagStop, Wire().i64(gen_));
    ++gen_;
  }

  // Waits (up to `seconds`) for the workers to load the instance, so the search can use them at once.
  void await_ready(double seconds) {
    FrontierNews n;
    const auto t = Clock::now();
    while (seconds_since(t) < seconds) {
      bool loading = false;
      for (int w = 1; w < comm_.size(); ++w) loading = loading || peer(w).state == State::Loading;
      if (!loading) return;
      while (auto m = comm_.poll()) on_message(*m, n, nullptr);
      usleep(500);
    }
  }

  void quit_all() { comm_.end_all(2); }

  std::string report(int64_t total) const {
    std::string per;
    for (int w = 1; w < comm_.size(); ++w) {
      per += fmt::format(", rank {}: {}{}", w, peer(w).domains, peer(w).state == State::Lost ? " (lost)" : "");
    }
    return fmt::format("mpi: {} ranks; subdomains bounded: rank 0: {}{}; boxes handed out: {}, donations asked: {}; "
                       "messages sent: {}, received: {}\n",
                       comm_.size(), total - absorbed_, per, handed_, asked_, comm_.sent(), comm_.received());
  }

 private:
  enum class State { Loading, Idle, Busy, Lost, Failed };
  struct Peer {
    State state = State::Loading;
    int64_t gen = -1;           // the job generation of its current box
    bool asked = false;         // a donation request is outstanding
    Clock::time_point heard;    // its last message
    int64_t domains = 0;        // subdomains it bounded in all
  };
  Peer& peer(int w) { return peers_[static_cast<size_t>(w)]; }
  const Peer& peer(int w) const { return peers_[static_cast<size_t>(w)]; }

  bool any_busy() const {
    for (int w = 1; w < comm_.size(); ++w)
      if (peer(w).state == State::Busy && peer(w).gen == gen_) return true;
    return false;
  }

  void drain(FrontierNews& n, FrontierStack& stack) {
    while (auto m = comm_.poll()) on_message(*m, n, &stack);
    for (int w = 1; w < comm_.size(); ++w) {
      Peer& p = peer(w);
      if (p.state != State::Busy || seconds_since(p.heard) <= grace_) continue;
      p.state = State::Lost;
      if (p.gen == gen_) n.undecided = true;
      std::fprintf(stderr, "warning: mpi: rank %d silent for %.1f s (--rank-grace): lost; its subtree is not decided\n", w,
                   seconds_since(p.heard));
    }
  }

  void on_message(const Message& m, FrontierNews& n, FrontierStack* stack) {
    Peer& p = peer(m.source);
    p.heard = Clock::now();
    Wire w(m.bytes);
    if (m.tag == kTagReady && p.state == State::Loading) p.state = State::Idle;
    if (m.tag == kTagFailed) {
      p.state = State::Failed;
      std::fprintf(stderr, "warning: mpi: rank %d cannot work: %s\n", m.source, w.str().c_str());
    }
    if (m.tag == kTagGift) {
      p.asked = false;
      const int64_t gen = w.i64();
      for (int64_t k = w.i64(); k > 0 && w.ok(); --k) {
        FrontierBox b{w.f64s(), w.f64s()};
        if (w.ok() && gen == gen_ && stack) stack->push_bottom(std::move(b));
      }
    }
    if (m.tag == kTagResult) result(w, p, n);
  }

  void result(Wire& w, Peer& p, FrontierNews& n) {
    const int64_t gen = w.i64(), answer = w.i64(), domains = w.i64();
    std::vector<double> x = w.f64s();
    p.domains += domains;
    if (p.state == State::Busy || p.state == State::Lost) p.state = State::Idle;
    p.asked = false;
    if (gen != gen_ || !w.ok()) return;
    n.domains += domains;
    absorbed_ += domains;
    if (answer == kSat) n.candidates.push_back(std::move(x));
    if (answer == kUndecided) n.undecided = true;
  }

  // Boxes for idle ranks from the bottom of the stack (keeping `keep` for rank 0); when there are
  // none to spare, a donation request to one busy rank.
  void serve(int job, FrontierStack& stack, Deadline deadline, size_t keep) {
    bool hungry = keep == 0;  // rank 0 itself is idle
    for (int w = 1; w < comm_.size(); ++w) {
      Peer& p = peer(w);
      if (p.state != State::Idle) continue;
      if (stack.size() <= keep) {
        hungry = true;
        continue;
      }
      const double left = std::chrono::duration<double>(deadline - Clock::now()).count();
      comm_.send(w, kTagWork, box_wire(std::move(Wire().i64(gen_).i64(job).f64(std::max(left, 0.001))), stack.take_bottom()));
      p.state = State::Busy, p.gen = gen_, p.heard = Clock::now();
      ++handed_;
    }
    if (!hungry || seconds_since(last_ask_) < 0.001) return;  // at most one request a millisecond
    for (int w = 1; w < comm_.size(); ++w)
      if (peer(w).asked && peer(w).state == State::Busy) return;  // one request at a time
    for (int k = 0; k + 1 < comm_.size(); ++k) {
      const int w = 1 + (next_donor_ + k) % (comm_.size() - 1);
      if (peer(w).state != State::Busy || peer(w).gen != gen_) continue;
      comm_.send(w, kTagDonate, Wire().i64(gen_));
      peer(w).asked = true, ++asked_, last_ask_ = Clock::now();
      next_donor_ = w;  // the next request goes to the following rank
      return;
    }
  }

  Comm& comm_;
  double grace_;
  std::vector<Peer> peers_;
  int64_t gen_ = 0, handed_ = 0, asked_ = 0, absorbed_ = 0;
  Clock::time_point last_ask_;
  int next_donor_ = 0;
};

// A worker's hook: answers donation requests from the bottom of its stack, stops on kTagStop /
// kTagQuit, and sends a heartbeat every second.
class WorkerHook final : public FrontierHook {
 public:
  WorkerHook(Comm& comm, int64_t gen) : comm_(comm), gen_(gen), beat_(Clock::now()) {}
  bool quit = false;

  FrontierNews between_batches(int, FrontierStack& stack, Deadline) override {
    FrontierNews n;
    while (auto m = comm_.poll(0)) {
      Wire w(std::move(m->bytes));
      if (m->tag == kTagQuit) quit = true, n.stop = true;
      if (m->tag == kTagStop && w.i64() == gen_) n.stop = true;
      if (m->tag == kTagDonate && w.i64() == gen_) give(stack);
    }
    if (seconds_since(beat_) > 1) comm_.send(0, kTagAlive, Wire()), beat_ = Clock::now();
    return n;
  }
  FrontierNews when_empty(int, FrontierStack&, Deadline) override { return {}; }
  void finish(int) override {}

 private:
  void give(FrontierStack& stack) {
    Wire g;
    g.i64(gen_);
    const int64_t k = stack.size() > 1 ? 1 : 0;  // keep the top box: it is being searched next
    g.i64(k);
    for (int64_t i = 0; i < k; ++i) g = box_wire(std::move(g), stack.take_bottom());
    comm_.send(0, kTagGift, g);
  }
  Comm& comm_;
  int64_t gen_;
  Clock::time_point beat_;
};

int run_coordinator(Comm& comm, const VerifyCliOptions& o) {
  auto in = load_instance(o.model, o.property);
  if (!in.ok()) {
    CoordinatorHook(comm, o.rank_grace).quit_all();
    return fail(in.message());
  }
  CoordinatorHook hook(comm, o.rank_grace);
  hook.await_ready(std::min(o.verify.timeout_s, 30.0));
  VerifyOptions vo = verify_options(o, o.verify.timeout_s, *in);
  vo.frontier = &hook;
  auto r = verify(in->model, in->property, vo);
  hook.quit_all();
  if (!r.ok()) return fail(r.message());
  std::cerr << hook.report(r->stats.domains);
  return print_outcome(o, *r);
}

int run_worker(Comm& comm, const VerifyCliOptions& o) {
  auto in = load_instance(o.model, o.property);
  if (!in.ok()) {  // rank 0 reports the error (it fails to load the same files)
    comm.send(0, kTagFailed, Wire().str(in.message()));
    for (;;)
      if (auto msg = comm.wait(3600, 0); msg && msg->tag == kTagQuit) return comm.end_worker(60), kExitOk;
  }
  Watchdog dog;
  comm.send(0, kTagReady, Wire());
  for (;;) {
    auto msg = comm.wait(3600, 0);
    if (!msg) continue;
    if (msg->tag == kTagQuit) return comm.end_worker(60), kExitOk;
    if (msg->tag != kTagWork) continue;  // a stale stop or donation request
    Wire w(std::move(msg->bytes));
    const int64_t gen = w.i64(), job = w.i64();
    const double left = w.f64();
    FrontierBox box{w.f64s(), w.f64s()};
    if (!w.ok()) continue;
    WorkerHook hook(comm, gen);
    VerifyOptions vo = verify_options(o, left, *in);
    vo.frontier = &hook;
    dog.arm(left + o.rank_grace, fmt::format("rank {}: a subdomain of job {}", comm.rank(), job));
    auto r = verify_subdomain(in->model, in->property, static_cast<int>(job), box, vo);
    dog.disarm();
    const int64_t answer = !r.ok() ? kUndecided
                           : r->result == VerifyResult::Unsat ? kUnsat
                           : r->result == VerifyResult::Sat && r->witness ? kSat
                                                                           : kUndecided;
    if (!r.ok()) std::fprintf(stderr, "warning: mpi: rank %d: %s\n", comm.rank(), r.message().c_str());
    Wire d;
    d.i64(gen).i64(answer).i64(r.ok() ? r->stats.domains : 0).f64s(answer == kSat ? r->witness->x : std::vector<double>{});
    comm.send(0, kTagResult, d);
    if (hook.quit) return comm.end_worker(60), kExitOk;
  }
}

}  // namespace

int verify_frontier(Comm& comm, const VerifyCliOptions& o) {
  return comm.rank() == 0 ? run_coordinator(comm, o) : run_worker(comm, o);
}

}  // namespace denote::cli::mpi
