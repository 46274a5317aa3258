// denote sample MODEL (--center T --eps E | --box LO HI) [--samples N] [--seed S] [--arith A] [--json]:
// sampled containment of point evaluations in the IBP boxes; exit 1 with the counterexample.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include <fmt/format.h>

#include "cli_bounds.h"
#include "context_values.h"
#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/scalar/arith.h"

namespace denote::cli {

// lo*(1-t) + hi*t rather than lo + t*(hi - lo): hi - lo overflows on a box wider than the largest
// double (and inf - inf is NaN at the corners), the weighted form does not.
std::vector<Tensor<double>> sample_point(const std::vector<DoubleBox>& boxes, int64_t k, uint64_t seed) {
  std::vector<Tensor<double>> out;
  uint64_t counter = 0;
  for (const DoubleBox& b : boxes) {
    std::vector<double> v;
    for (size_t i = 0; i < b.lo.size(); ++i, ++counter) {
      const double lo = b.lo[i], hi = b.hi[i];
      double x;
      if (k == 0) x = lo;
      else if (k == 1) x = hi;
      else {
        const double t = k == 2 ? 0.5
                                : static_cast<double>(splitmix64(splitmix64(seed + static_cast<uint64_t>(k)) + counter) >> 11) *
                                      0x1p-53;
        x = lo == hi ? lo : lo * (1 - t) + hi * t;
        if (std::isinf(lo) || std::isinf(hi) || !std::isfinite(x)) x = std::isinf(lo) ? (std::isinf(hi) ? 0.0 : hi) : lo;
      }
      v.push_back(std::clamp(x, lo, hi));
    }
    out.emplace_back(b.shape, std::move(v));
  }
  return out;
}

namespace {

template <class Ctx>
Status check_point(Ctx& ctx, const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                   const std::vector<Tensor<double>>& x, const DoubleIbp& boxes, const EvalOptions& options,
                   SampleOutcome& o) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const std::vector<Tensor<S>> in, cli::tensors_in(ctx, x, "input"));
  auto table = denote_all(g, payload, std::span<const Tensor<S>>(in), ctx, options);
  if (!table.ok()) {
    // Running out of the memory budget says nothing about the boxes: an error, not a counterexample.
    if (table.status().code() == ErrorCode::kResource) return table.status();
    o.failed = true;
    o.error = table.message();
    return ok_status();
  }
  for (size_t id = 0; id < boxes.boxes.size(); ++id) {
    if (!boxes.boxes[id]) continue;
    const DoubleBox& b = *boxes.boxes[id];
    for (size_t i = 0; i < b.lo.size(); ++i) {
      const double y = ctx.to_double((*table)[id].data[i]);
      if (!(y >= b.lo[i] && y <= b.hi[i])) {
        o.failed = true;
        o.node = static_cast<int64_t>(id);
        o.element = static_cast<int64_t>(i);
        o.y = y;
        return ok_status();
      }
    }
  }
  return ok_status();
}

template <class Ctx>
Status sample_with(Ctx& ctx, const Graph& g, const Payload<double>& payload, const std::vector<DoubleBox>& inputs,
                 const DoubleIbp& boxes, int64_t n, uint64_t seed, const EvalOptions& options,
                 const std::function<void(int64_t, int64_t)>& progress, SampleOutcome& o) {
  using S = typename Ctx::Scalar;
  DENOTE_ASSIGN_OR_RETURN(const Payload<S> p, cli::payload_in(ctx, payload));
  for (int64_t k = 0; k < n; ++k) {
    const auto x = sample_point(inputs, k, seed);
    DENOTE_RETURN_IF_ERROR(check_point(ctx, g, p, x, boxes, options, o));
    ++o.samples;
    if (progress) progress(k + 1, n);
    if (o.failed) {
      o.index = k;
      for (const auto& t : x) o.x.insert(o.x.end(), t.data.begin(), t.data.end());
      return ok_status();
    }
    ++o.contained;
  }
  return ok_status();
}

}  // namespace

Result<SampleOutcome> sample_containment(const Graph& g, const Payload<double>& payload,
                                         const std::vector<DoubleBox>& inputs, const DoubleIbp& boxes,
                                         std::string_view arith, int64_t n, uint64_t seed,
                                         const EvalOptions& options,
                                         const std::function<void(int64_t, int64_t)>& progress) {
  SampleOutcome o;
  DENOTE_ASSIGN_OR_RETURN(ArithSpec spec, parse_arith_name(arith, /*allow_real=*/false));
  DENOTE_RETURN_IF_ERROR(visit_arith(
      spec, [&](auto& ctx) { return sample_with(ctx, g, payload, inputs, boxes, n, seed, options, progress, o); }));
  return o;
}

namespace {

struct SampleOptions {
  BoxOptions box;
  int64_t samples = 1000;
  uint64_t seed = 0;
};

void print_outcome(const SampleOutcome& s, const SampleOptions& o) {
  auto xs = [&] {
    std::string out = "[";
    for (size_t i = 0; i < s.x.size(); ++i) out += (i ? ", " : "") + json_number(s.x[i]);
    return out + "]";
  };
  if (o.box.json) {
    std::string ce = "null";
    if (s.failed)
      ce = fmt::format("{{\"sample\": {}, \"x\": {}, \"node\": {}, \"element\": {}, \"y\": {}, \"error\": \"{}\"}}",
                       s.index, xs(), s.node, s.element, json_number(s.y), json_escape(s.error));
    std::cout << fmt::format("{{\"samples\": {}, \"contained\": {}, \"counterexample\": {}}}\n", s.samples,
                             s.contained, ce);
    return;
  }
  if (!s.failed) {
    std::cout << fmt::format("consistency: {}/{} samples inside every node box (arith {}, seed {})\n", s.contained,
                             s.samples, o.box.arith, o.seed);
    return;
  }
  std::cout << fmt::format("consistency: FAILED at sample {} x = {}\n", s.index, xs());
  if (!s.error.empty()) std::cout << "  evaluation error: " << s.error << "\n";
  else std::cout << fmt::format("  node {} element {}: y = {} lies outside its box\n", s.node, s.element, json_number(s.y));
}

// A progress bar on stderr when it is a terminal (quiet when piped): redrawn at most every 1/8 s.
class ProgressBar {
 public:
  explicit ProgressBar(bool on) : on_(on), last_(std::chrono::steady_clock::now()) {}
  void operator()(int64_t k, int64_t n) {
    if (!on_) return;
    const auto now = std::chrono::steady_clock::now();
    if (k < n && now - last_ < std::chrono::milliseconds(125)) return;
    last_ = now;
    const int width = 30, filled = static_cast<int>(width * k / n);
    std::cerr << fmt::format("\rsample [{}{}] {}/{}", std::string(filled, '#'), std::string(width - filled, '.'), k, n)
              << (k == n ? "\n" : "") << std::flush;
    drawn_ = k < n;
  }
  ~ProgressBar() {
    if (drawn_) std::cerr << "\n";
  }

 private:
  bool on_, drawn_ = false;
  std::chrono::steady_clock::time_point last_;
};

int run_sample(SampleOptions& o) {
  if (o.samples < 1 || o.samples > kMaxSamples)
    return usage_error(fmt::format("--samples {}: expected 1 to {}", o.samples, kMaxSamples));
  auto budget = check_box_usage(o.box);
  if (!budget.ok()) return usage_error(budget.message());
  auto m = load_box_model(o.box);
  if (!m.ok()) return fail(m.message());
  auto boxes = parse_boxes(m->graph, o.box);
  if (!boxes.ok()) return fail(boxes.message());
  EvalOptions options;
  set_max_bytes(options, *budget);
  auto r = run_ibp_double(m->graph, m->payload, *boxes, o.box.arith, options);
  if (!r.ok()) return fail(r.message());
  Result<SampleOutcome> s = error_status("unreachable");
  {
    ProgressBar bar(::isatty(STDERR_FILENO) != 0);
    s = sample_containment(m->graph, m->payload, *boxes, *r, o.box.arith, o.samples, o.seed, options,
                           [&bar](int64_t k, int64_t n) { bar(k, n); });
  }
  if (!s.ok()) return fail(s.message());
  print_outcome(*s, o);
  return s->failed ? kExitInvalid : kExitOk;
}

}  // namespace

void add_sample(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("sample", "sampled containment of point evaluations in the IBP boxes");
  auto o = std::make_shared<SampleOptions>();
  add_box_options(sub, o->box);
  sub->add_option("--samples", o->samples,
                  fmt::format("number of points (default 1000, at most {}); a progress bar on a terminal", kMaxSamples));
  sub->add_option("--seed", o->seed, "seed of the points (default 0)");
  sub->callback([&cmd, o] { cmd.run = [o] { return run_sample(*o); }; });
}

}  // namespace denote::cli
