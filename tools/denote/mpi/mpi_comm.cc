// tools/denote/mpi/mpi_comm.h: messages, the non-blocking sends, polling, the watchdog; and the
// entry point of `denote verify` under mpirun.
#include "mpi/mpi_comm.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>

#include "denote/base/deadline.h"
#include "verify_cli.h"

namespace denote::cli {

namespace {

int env_int(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::atoi(v) : 0;
}

}  // namespace

bool mpi_launched() {
  // Open MPI's mpirun, and the PMI variables of other launchers (MPICH's hydra, Slurm's srun).
  return env_int("OMPI_COMM_WORLD_SIZE") > 1 || env_int("PMI_SIZE") > 1 || env_int("PMIX_SIZE") > 1;
}

int verify_mpi(const VerifyCliOptions& opts) {
  VerifyCliOptions o = opts;
  if (o.threads == 0) o.threads = 1;  // one thread per rank: the ranks already use the cores
  mpi::Comm comm;
  const int rc = o.instances.empty() ? mpi::verify_frontier(comm, o) : mpi::verify_instances(comm, o);
  if (comm.abandoned()) {  // a rank is gone: MPI_Finalize would wait for it forever
    std::cout.flush();
    std::fflush(nullptr);
    std::_Exit(rc);
  }
  return rc;
}

namespace mpi {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

Wire& Wire::f64(double v) {
  const char* p = reinterpret_cast<const char*>(&v);
  b_.insert(b_.end(), p, p + sizeof v);
  return *this;
}
Wire& Wire::i64(int64_t v) {
  const char* p = reinterpret_cast<const char*>(&v);
  b_.insert(b_.end(), p, p + sizeof v);
  return *this;
}
Wire& Wire::str(const std::string& s) {
  i64(static_cast<int64_t>(s.size()));
  b_.insert(b_.end(), s.begin(), s.end());
  return *this;
}
Wire& Wire::f64s(const std::vector<double>& v) {
  i64(static_cast<int64_t>(v.size()));
  for (double x : v) f64(x);
  return *this;
}
bool Wire::take(void* out, size_t n) {
  if (!ok_ || b_.size() - at_ < n) return ok_ = false;
  std::memcpy(out, b_.data() + at_, n);
  at_ += n;
  return true;
}
double Wire::f64() {
  double v = 0;
  return take(&v, sizeof v) ? v : 0;
}
int64_t Wire::i64() {
  int64_t v = 0;
  return take(&v, sizeof v) ? v : 0;
}
std::string Wire::str() {
  const int64_t n = i64();
  if (n < 0 || static_cast<size_t>(n) > b_.size() - at_) return ok_ = false, std::string();
  std::string s(b_.data() + at_, static_cast<size_t>(n));
  at_ += static_cast<size_t>(n);
  return s;
}
std::vector<double> Wire::f64s() {
  const int64_t n = i64();
  if (n < 0 || static_cast<size_t>(n) > (b_.size() - at_) / sizeof(double)) return ok_ = false, std::vector<double>();
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = f64();
  return v;
}

struct Comm::Pending {
  std::vector<char> bytes;
  MPI_Request request = MPI_REQUEST_NULL;
};

Comm::Comm() {
  int provided = 0;
  MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
  // Errors come back as codes (a peer that died must not abort this rank from inside MPI).
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

Comm::~Comm() {
  const auto t = std::chrono::steady_clock::now();
  while (!pending_.empty() && seconds_since(t) < 2) reap(), usleep(1000);
  // Sends still pending go to a rank that is gone; their buffers are left to the process's end.
  pending_.clear();
  if (!abandoned_) MPI_Finalize();
}

void Comm::end_all(double seconds) {
  for (int w = 1; w < size_; ++w) send(w, kTagQuit, Wire());
  std::vector<bool> bye(static_cast<size_t>(size_), false);
  int left = size_ - 1;
  const auto t = std::chrono::steady_clock::now();
  while (left > 0 && seconds_since(t) < seconds) {
    auto m = poll();
    if (!m) {
      usleep(500);
      continue;
    }
    if (m->tag == kTagBye && !bye[static_cast<size_t>(m->source)]) bye[static_cast<size_t>(m->source)] = true, --left;
  }
  abandoned_ = left > 0;
  for (int w = 1; w < size_; ++w) send(w, kTagFinal, Wire().i64(abandoned_ ? 0 : 1));
}

void Comm::end_worker(double seconds) {
  send(0, kTagBye, Wire());
  const auto t = std::chrono::steady_clock::now();
  while (seconds_since(t) < seconds) {
    auto m = wait(seconds, 0);
    if (m && m->tag == kTagFinal) {
      abandoned_ = Wire(std::move(m->bytes)).i64() != 1;
      return;
    }
  }
  abandoned_ = true;  // rank 0 is gone
}

void Comm::send(int dest, int tag, const Wire& w) {
  auto* p = new Pending{w.bytes(), MPI_REQUEST_NULL};
  if (MPI_Isend(p->bytes.data(), static_cast<int>(p->bytes.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD,
                &p->request) != MPI_SUCCESS) {
    delete p;
    return;  // a dead peer: the caller finds out by its silence
  }
  pending_.push_back(p);
  ++sent_;
  reap();
}

void Comm::reap() {
  for (auto it = pending_.begin(); it != pending_.end();) {
    int done = 0;
    if (MPI_Test(&(*it)->request, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || done) {
      delete *it;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
}

std::optional<Message> Comm::poll(int source) {
  reap();
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(source < 0 ? MPI_ANY_SOURCE : source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag)
    return std::nullopt;
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  Message m{st.MPI_SOURCE, st.MPI_TAG, std::vector<char>(static_cast<size_t>(std::max(0, count)))};
  if (MPI_Recv(m.bytes.data(), count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS)
    return std::nullopt;
  ++received_;
  return m;
}

std::optional<Message> Comm::wait(double seconds, int source) {
  const auto t = std::chrono::steady_clock::now();
  for (int idle = 0;; ++idle) {
    if (auto m = poll(source)) return m;
    if (seconds_since(t) > seconds) return std::nullopt;
    usleep(idle < 100 ? 100 : 1000);  // answers come fast while a search runs; idle ranks sleep more
  }
}

Watchdog::Watchdog() : thread_([this] { loop(); }) {}

Watchdog::~Watchdog() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void Watchdog::arm(double seconds, std::string what) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    until_ = deadline_after(std::chrono::steady_clock::now(), seconds);
    what_ = std::move(what);
  }
  cv_.notify_all();
}

void Watchdog::disarm() {
  std::lock_guard<std::mutex> lock(mu_);
  until_.reset();
}

void Watchdog::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!stop_) {
    if (!until_) {
      cv_.wait(lock);
      continue;
    }
    if (std::chrono::steady_clock::now() < *until_) {
      cv_.wait_until(lock, *until_);
      continue;
    }
    std::fprintf(stderr, "error: mpi: %s ran past its timeout and --rank-grace; this rank exits\n", what_.c_str());
    std::fflush(stderr);
    std::_Exit(3);
  }
}

}  // namespace mpi
}  // namespace denote::cli
