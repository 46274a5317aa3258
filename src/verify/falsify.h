// Internal: the search state of one (case, conjunction) and the falsification helpers
// (src/verify/falsify.cc) that src/verify/verify.cc's branch and bound uses.
#pragma once

#include <chrono>
#include <cmath>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "denote/base/splitmix.h"
#include "denote/base/deadline.h"
#include "denote/bounds/ibp.h"
#include "denote/verify/verify.h"

namespace denote {
}

namespace denote::verify_detail {

class DenseChain;
class CertRecorder;  // src/verify/cert_record.h

struct Search {
  const Model& m;
  const VnnCase& c;
  const std::vector<VnnAtom>& conj;  // empty: no output condition (any point of the box is a witness)
  const VerifyOptions& o;
  VerifyStats& stats;
  std::optional<Witness> found;
  const Payload<float>* p32 = nullptr;  // the payload in f32, converted once per verify() (f32 networks)
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  const DenseChain* chain = nullptr;  // the network as dense layers, for batched sampling (or null)
  std::string note = "";              // why the search stopped undecided (e.g. its memory), or ""
  // The model prepared for IBP (or null): a candidate point whose IBP box (it holds the arithmetic's
  // evaluation there) puts some atom surely false skips the evaluator and the exact check (nn4sys: 2 ms
  // against 60 ms).
  const IbpPrepared* ibp = nullptr;
  // Where proven subdomains are recorded for a certificate (VerifyOptions::certificate), or null; job:
  // this search's index among verify()'s jobs.
  CertRecorder* cert = nullptr;
  int job = 0;
  bool past_deadline() const { return past(deadline); }
};

const Shape& input_shape(const Model& m);
// The memory budget of one bound pass: VerifyOptions::max_bytes (or its default) over the threads.
int64_t bound_memory(const VerifyOptions& o);
// Bytes of one set of node boxes (two doubles per element, and the vectors' headers).
int64_t boxes_bytes(const std::vector<std::optional<DoubleBox>>& boxes);
// Whether a branch and bound whose open subdomains hold `sets` sets of node boxes of `per_set` bytes fits the
// memory budget (VerifyOptions::max_bytes); if not, s.note says so and the search stops undecided.
bool search_fits(Search& s, int64_t sets, int64_t per_set);

// The first failure of a bound pass that is not the deadline (e.g. the memory budget), kept for the
// answer's note; bound passes on several threads report here.
struct BoundErrors {
  std::mutex mu;
  std::string first;
  void add(const Status& s) {
    if (s.field() == "deadline") return;
    std::lock_guard<std::mutex> lock(mu);
    if (first.empty()) first = s.message();
  }
};
// Per atom of a conjunction: its right-hand side rounded up (a lower bound above it proves the atom false).
std::vector<double> atom_rhs(const std::vector<VnnAtom>& conj);
// Whether some atom is impossible given lower bounds of its left-hand sides (> rhs; >= for a strict atom).
bool some_atom_impossible(const std::vector<VnnAtom>& conj, const std::vector<double>& lower);
// The atom whose lower bound is closest to proving it (smallest rhs - lower).
size_t closest_atom(const std::vector<VnnAtom>& conj, const std::vector<double>& lower);
// The output in the arithmetic ("f32" or "f64"); empty on an evaluation error.
std::vector<double> eval_point(const Model& m, const std::vector<double>& x, const ArithSpec& arith,
                               const Payload<float>* p32 = nullptr);
// Whether the case's exact box holds no value of the arithmetic along input i (no double in it, or
// for "f32" no float): a pinned decimal such as lo = hi = 0.1, or a box narrower than the spacing.
bool off_grid(const VnnCase& c, size_t i, const ArithSpec& arith);
// Along such an input, the decimal a witness takes exactly: the lower bound, or the upper one when
// the lower is strict; null when both are strict (no witness there).
const VnnDecimal* exact_decimal(const VnnCase& c, size_t i);
// The arithmetic's value nearest that decimal (within one spacing); NaN where there is none.
double near_value(const VnnCase& c, size_t i, const ArithSpec& arith);
// The box falsification searches in case c: [lo_in, hi_in], and along off-grid inputs the one value
// near_value (the witness check then takes the exact decimal there: check_witness's x_exact).
struct SearchBox {
  std::vector<double> lo, hi;
};
SearchBox search_box(const VnnCase& c, const ArithSpec& arith);
// The candidate moved into the inward box (onto a float for f32) and checked; true when confirmed.
bool try_point(Search& s, const std::vector<double>& raw);
// Every atom of the conjunction holds at y (ny outputs of a fast evaluation in another summation
// order) up to rel * (1 + the terms' magnitude): a screen that picks candidates, never a verdict.
template <class T>
bool nearly_holds(const std::vector<VnnAtom>& conj, const T* y, size_t ny, double rel) {
  if (ny == 0) return false;
  for (const VnnAtom& a : conj) {
    double v = 0, mag = 0;
    for (size_t j = 0; j < ny && j < a.coef.size(); ++j) v += a.coef[j] * y[j], mag += std::fabs(a.coef[j] * y[j]);
    if (!(v <= a.rhs_up + rel * (1 + mag))) return false;
  }
  return true;
}
// The descents' loss at outputs y as one atom (whose gradient is the loss's): the sum of the violated
// atoms (c_k . y > rhs_k; alpha-beta-CROWN's hinge loss), or conj[worst] alone where none is violated.
VnnAtom descent_atom(const std::vector<VnnAtom>& conj, const std::vector<double>& y, size_t worst);
// The surrogate window of the descents' gradients through step ops (GradOptions::step_window): 5 on a
// graph with a step op (sign, floor, ...; is_step_op), 0 otherwise. Once per descent, not per step.
double step_window(const Graph& g);
// d (c . y) / dx at x (f64), flat; through step ops the surrogate of window w (step_window).
std::vector<double> atom_gradient(const Model& m, const VnnAtom& a, const std::vector<double>& x, double w);
// Center, s.o.samples random points, then s.o.pgd_restarts runs of signed-gradient descent on the
// violated atoms (descent_atom), inside [lo, hi]; true with s.found set when a witness is confirmed. Stops (false) at
// s.deadline.
bool falsify(Search& s, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
             bool sample = true);
// Signed-gradient descent on the violated atoms' margins from x for `steps` steps inside [lo, hi] (one of falsify's
// restarts); true with s.found set when a witness is confirmed. best (if given) is lowered to the smallest
// violation (the conjunction's largest atom margin) a step saw.
bool descend(Search& s, std::vector<double> x, const std::vector<double>& lo, const std::vector<double>& hi, int steps,
             double* best = nullptr);
// The restarts of a descent stop once `window` of them in a row have not lowered the best violation by 1% of
// its size (from restart 2 window on): where no witness exists they end near the same optimum, and on
// networks whose gradient steps are slow (VNN-COMP 2023's cGAN generators, 0.07 s a step) the remaining
// restarts took a third of an unsat instance's time.
struct RestartStall {
  int window = 2;
  double best = INFINITY;
  int restarts = 0, since = 0;
  // After a restart whose best violation was v: true when the restarts should stop.
  bool stop(double v) {
    ++restarts;
    if (v < best - 0.01 * std::fabs(best) || !std::isfinite(best)) best = std::min(best, v), since = 0;
    else ++since;
    return since >= window && restarts >= 2 * window;
  }
};
// x = a uniform random point of [lo, hi] (one draw per coordinate, in order).
void random_point(SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi, std::vector<double>& x);
// Signed-gradient descent on a disjunction: at every step on the violated atoms of the conjunction
// closest to holding (for a robustness property, the margin against the best other class), from
// `restarts` random points, steps shrinking linearly from half the box (a quarter found mnistfc
// prop_9_0.05 from 5 of 8 seeds, half from 8 of 8, with 32 restarts of 40 steps); the index of the
// search whose witness it found (set in that Search), or -1. Inside one case's box [lo, hi].
int descend_any(std::vector<Search*>& ss, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
                int restarts, int steps);
// The center and s.o.samples random points of [lo, hi] (one case's box), each evaluated once and
// tested against every search's conjunction; the index of the search that found a witness, or -1.
// With `chain` (a dense chain, src/verify/dense_chain.h) the same points are screened 256 at a time
// (sgemm: nn4sys's 336 MB learned indices read their weights once a batch, not once a point); else
// with `fast` (a compiled plan, src/verify/fast_eval.h) one at a time; only the points that nearly
// satisfy a conjunction there are checked (by the evaluator and exactly).
class FastEval;
int sample_case(std::vector<Search>& ss, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi,
                FastEval* fast = nullptr, const DenseChain* chain = nullptr);
// A 10-step descent from a random point of [lo, hi] (branch and bound's probe of an open box).
bool probe(Search& s, SplitMix64& rng, const std::vector<double>& lo, const std::vector<double>& hi);

}  // namespace denote::verify_detail
