// `mpirun -np N denote verify --instances FILE.csv`: rank 0 hands out CSV lines, longest timeout
// first, to whichever rank asks (a thread of rank 0 decides lines too); every answer is journalled to
// --out as it arrives (flushed line by line, in arrival order) and, at the end, --out is rewritten in
// the CSV's order with the summary one process prints. A rank that sends nothing for its line's
// timeout plus --rank-grace is counted as lost: its line stays `lost` (not decided, named on stderr)
// and it gets no more work; the others go on (with mpirun --enable-recovery; without it Open MPI
// ends the job when a rank dies, and the journal keeps what was decided until then).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <mutex>
#include <numeric>
#include <thread>

#include <fmt/format.h>

#include "denote/base/deadline.h"
#include "cli.h"
#include "mpi/mpi_comm.h"
#include "verify_cli.h"

namespace denote::cli::mpi {

namespace {

using Clock = std::chrono::steady_clock;

// What rank 0 knows: the queue (indices, longest timeout first), the answers, the journal.
struct Board {
  const std::vector<Instance>& list;
  std::vector<size_t> queue;  // next lines to hand out, front first
  size_t next = 0;
  std::vector<InstanceResult> results;
  std::vector<int> rank_of;  // who decided (or holds) each line; -1: nobody yet
  std::ofstream journal;
  std::mutex mu;

  explicit Board(const std::vector<Instance>& l) : list(l), results(l.size()), rank_of(l.size(), -1) {
    queue.resize(l.size());
    std::iota(queue.begin(), queue.end(), size_t{0});
    std::stable_sort(queue.begin(), queue.end(), [&](size_t a, size_t b) { return l[a].timeout > l[b].timeout; });
  }
  std::optional<size_t> take(int rank) {
    std::lock_guard<std::mutex> lock(mu);
    if (next >= queue.size()) return std::nullopt;
    const size_t i = queue[next++];
    rank_of[i] = rank;
    return i;
  }
  bool drained() {
    std::lock_guard<std::mutex> lock(mu);
    return next >= queue.size();
  }
  void record(size_t i, InstanceResult r) {
    std::lock_guard<std::mutex> lock(mu);
    if (i >= results.size() || results[i].result != "lost") return;  // a duplicate or a bad index
    results[i] = std::move(r);
    if (journal.is_open()) journal << instance_line(list[i], results[i]) << std::flush;
  }
};

enum class State { Loading, Idle, Busy, Done, Lost };

struct Peer {
  State state = State::Loading;
  size_t line = 0;
  Clock::time_point deadline;
};

void hand_out(Comm& comm, Board& b, std::vector<Peer>& peers, int w, double grace) {
  const auto i = b.take(w);
  if (!i) {  // nothing left: it waits for the end (Comm::end_all)
    peers[static_cast<size_t>(w)].state = State::Done;
    return;
  }
  const Instance& in = b.list[*i];
  Wire m;
  m.i64(static_cast<int64_t>(*i)).str(in.onnx).str(in.vnnlib).f64(in.timeout);
  comm.send(w, kTagInstance, m);
  Peer& p = peers[static_cast<size_t>(w)];
  p = Peer{State::Busy, *i, deadline_after(Clock::now(), in.timeout + grace)};
}

void on_message(Board& b, std::vector<Peer>& peers, const Message& msg) {
  Peer& p = peers[static_cast<size_t>(msg.source)];
  if (msg.tag == kTagReady) {
    if (p.state == State::Loading) p.state = State::Idle;
    return;
  }
  if (msg.tag != kTagDone) return;
  Wire w(msg.bytes);
  const auto i = static_cast<size_t>(w.i64());
  InstanceResult r;
  r.result = w.str();
  r.seconds = w.f64();
  r.error = w.str();
  r.falsify_s = w.f64();
  r.bounds_s = w.f64();
  r.bab_s = w.f64();
  if (w.ok()) b.record(i, std::move(r));
  if (p.state == State::Busy || p.state == State::Lost) p.state = State::Idle;  // a late answer: alive after all
}

// Rank 0's loop: serve requests, notice silent ranks, until every rank is done or lost.
void coordinate(Comm& comm, Board& b, std::vector<Peer>& peers, double grace) {
  for (;;) {
    while (auto msg = comm.poll()) on_message(b, peers, *msg);
    bool live = false;
    for (int w = 1; w < comm.size(); ++w) {
      Peer& p = peers[static_cast<size_t>(w)];
      if (p.state == State::Idle) hand_out(comm, b, peers, w, grace);
      if (p.state == State::Busy && Clock::now() > p.deadline) {
        p.state = State::Lost;
        const Instance& in = b.list[p.line];
        std::fprintf(stderr, "warning: mpi: rank %d sent no answer for %s %s within its timeout + --rank-grace (%.1f s); "
                     "counted as lost\n", w, in.onnx.c_str(), in.vnnlib.c_str(), in.timeout + grace);
      }
      // A rank that has not reported ready yet gets nothing once the queue is empty.
      if (p.state == State::Loading && b.drained()) p.state = State::Done;
      live = live || p.state == State::Busy || p.state == State::Idle || p.state == State::Loading;
    }
    if (!live) return;
    usleep(1000);
  }
}

int run_coordinator(Comm& comm, const VerifyCliOptions& o) {
  auto list = read_csv(o.instances);
  if (!list.ok()) {
    comm.end_all(2);
    return fail(list.message());
  }
  Board b(*list);
  if (!o.out.empty()) {
    b.journal.open(o.out, std::ios::trunc);
    if (!b.journal) return comm.end_all(2), fail("--out " + o.out + ": cannot write the file");
  }
  const auto root = campaign_root(o);
  // Rank 0 decides lines too, on a thread that never calls MPI.
  std::thread local([&] {
    while (const auto i = b.take(0)) b.record(*i, run_instance(o, root, b.list[*i]));
  });
  std::vector<Peer> peers(static_cast<size_t>(comm.size()));
  coordinate(comm, b, peers, o.rank_grace);
  local.join();
  // A lost rank that is still alive ends after its line (its answer comes too late to count).
  comm.end_all(2);
  b.journal.close();
  std::vector<Instance> lost;
  for (size_t i = 0; i < list->size(); ++i) {
    if (b.results[i].result != "lost") continue;
    const Instance& in = (*list)[i];
    b.results[i].error = b.rank_of[i] < 0 ? fmt::format("error: {} {}: not decided: no rank was left to decide it\n", in.onnx, in.vnnlib)
                                          : fmt::format("error: {} {}: not decided: rank {} was lost while deciding it\n",
                                                        in.onnx, in.vnnlib, b.rank_of[i]);
    lost.push_back(in);
  }
  const int rc = print_campaign(o, *list, b.results, fmt::format("{} ranks", comm.size()));
  if (!lost.empty()) std::fprintf(stderr, "error: mpi: %zu instance(s) not decided (see above)\n", lost.size());
  return rc;
}

int run_worker(Comm& comm, const VerifyCliOptions& o) {
  const auto root = campaign_root(o);
  Watchdog dog;
  comm.send(0, kTagReady, Wire());
  for (;;) {
    auto msg = comm.wait(3600, 0);
    if (!msg) continue;
    if (msg->tag == kTagQuit) return comm.end_worker(60), kExitOk;
    if (msg->tag != kTagInstance) continue;
    Wire w(std::move(msg->bytes));
    const int64_t i = w.i64();
    Instance in;
    in.onnx = w.str();
    in.vnnlib = w.str();
    in.timeout = w.f64();
    if (!w.ok()) continue;
    dog.arm(in.timeout + o.rank_grace, fmt::format("rank {}: {} {}", comm.rank(), in.onnx, in.vnnlib));
    const InstanceResult r = run_instance(o, root, in);
    dog.disarm();
    Wire d;
    d.i64(i).str(r.result).f64(r.seconds).str(r.error).f64(r.falsify_s).f64(r.bounds_s).f64(r.bab_s);
    comm.send(0, kTagDone, d);
  }
}

}  // namespace

int verify_instances(Comm& comm, const VerifyCliOptions& o) {
  return comm.rank() == 0 ? run_coordinator(comm, o) : run_worker(comm, o);
}

}  // namespace denote::cli::mpi
