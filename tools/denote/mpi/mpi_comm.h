// The small layer over MPI that `denote verify` uses under mpirun (tools/denote/mpi/): messages are
// byte strings built by Wire, sent without blocking (MPI_Isend, kept until complete) and received by
// polling (MPI_Iprobe), so no rank ever waits inside MPI for a peer that may have died. A Watchdog
// ends a rank whose instance runs far past its timeout, so that a hung rank cannot hold up the others.
//
//   Wire w; w.i64(index).str(path);
//   comm.send(0, kTagDone, w);
//   if (auto m = comm.poll()) { Wire r(std::move(m->bytes)); int64_t i = r.i64(); ... }
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace denote::cli::mpi {

// Message tags of both protocols (instances across ranks, one instance's frontier across ranks).
enum Tag : int {
  kTagReady = 1,     // worker -> 0: ready for work (after loading)
  kTagInstance = 2,  // 0 -> worker: decide CSV line (index, onnx, vnnlib, timeout)
  kTagDone = 3,      // worker -> 0: the line's result
  kTagQuit = 4,      // 0 -> worker: no more work
  kTagWork = 5,      // 0 -> worker: search a subdomain (gen, job, seconds left, box)
  kTagResult = 6,    // worker -> 0: the subdomain's answer (gen, status, domains, witness)
  kTagDonate = 7,    // 0 -> worker: give the bottom of your stack
  kTagGift = 8,      // worker -> 0: boxes (possibly none)
  kTagStop = 9,      // 0 -> worker: the job is over
  kTagAlive = 10,    // worker -> 0: heartbeat while searching
  kTagFailed = 11,   // worker -> 0: cannot work (the instance did not load)
  kTagBye = 12,      // worker -> 0: got kTagQuit, waiting for kTagFinal
  kTagFinal = 13,    // 0 -> worker: 1: every rank answered, MPI_Finalize; 0: a rank is gone, exit without it
};

// A message body: doubles, 64-bit integers and strings, in order. Reading past the end gives 0 / ""
// and clears ok().
class Wire {
 public:
  Wire() = default;
  explicit Wire(std::vector<char> bytes) : b_(std::move(bytes)) {}
  Wire& f64(double v);
  Wire& i64(int64_t v);
  Wire& str(const std::string& s);
  Wire& f64s(const std::vector<double>& v);
  double f64();
  int64_t i64();
  std::string str();
  std::vector<double> f64s();
  bool ok() const { return ok_; }
  const std::vector<char>& bytes() const { return b_; }

 private:
  bool take(void* out, size_t n);
  std::vector<char> b_;
  size_t at_ = 0;
  bool ok_ = true;
};

struct Message {
  int source = -1, tag = 0;
  std::vector<char> bytes;
};

class Comm {
 public:
  Comm();  // MPI_Init_thread (funneled: only the thread that made the Comm calls MPI)
  ~Comm();  // MPI_Finalize (unless abandoned), after the sends complete (given up after 2 s)
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;
  int rank() const { return rank_; }
  int size() const { return size_; }
  void send(int dest, int tag, const Wire& w);
  std::optional<Message> poll(int source = -1);  // one waiting message (any source when -1), or none
  // Polls until a message from `source` arrives or `seconds` pass.
  std::optional<Message> wait(double seconds, int source = -1);
  int64_t sent() const { return sent_; }
  int64_t received() const { return received_; }
  // The end of a run. MPI_Finalize waits for every rank, so it is called only when every rank is known
  // to be alive. Rank 0: sends kTagQuit to every rank and waits up to `seconds` for their kTagBye,
  // then kTagFinal. A worker, after kTagQuit: kTagBye, then kTagFinal (up to `seconds`).
  void end_all(double seconds);
  void end_worker(double seconds);
  // When a rank is gone: the caller ends the process without MPI_Finalize (std::_Exit after flushing).
  bool abandoned() const { return abandoned_; }

 private:
  void reap();
  struct Pending;
  std::list<Pending*> pending_;
  int rank_ = 0, size_ = 1;
  int64_t sent_ = 0, received_ = 0;
  bool abandoned_ = false;
};

// Calls _exit(3) with a message on stderr when armed longer than its limit.
class Watchdog {
 public:
  Watchdog();
  ~Watchdog();
  void arm(double seconds, std::string what);
  void disarm();

 private:
  void loop();
  std::mutex mu_;
  std::condition_variable cv_;
  std::optional<std::chrono::steady_clock::time_point> until_;
  std::string what_;
  bool stop_ = false;
  std::thread thread_;
};

double seconds_since(std::chrono::steady_clock::time_point t);

}  // namespace denote::cli::mpi

namespace denote::cli {
struct VerifyCliOptions;
namespace mpi {
// `--instances` across the ranks (tools/denote/mpi/mpi_instances.cc).
int verify_instances(Comm& comm, const VerifyCliOptions& o);
// One instance's branch-and-bound frontier across the ranks (tools/denote/mpi/mpi_frontier.cc).
int verify_frontier(Comm& comm, const VerifyCliOptions& o);
}  // namespace mpi
}  // namespace denote::cli
