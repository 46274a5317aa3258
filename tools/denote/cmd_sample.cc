// denote sample MODEL (--center T --eps E | --box LO HI) [--samples N] [--seed S] [--arith A] [--json]:
// sampled containment of point evaluations in the IBP boxes; exit 1 with the counterexample.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli_bounds.h"
#include "denote/base/splitmix.h"
#include "denote/check/check.h"
#include "denote/eval/eval.h"
#include "denote/scalar/arith.h"

namespace denote::cli {

namespace {

// Point k of the boxes: corners, midpoint, then uniform draws, always inside [lo, hi].
std::vector<Tensor<double>> point(const std::vector<DoubleBox>& boxes, int64_t k, uint64_t seed) {
  std::vector<Tensor<double>> out;
  uint64_t counter = 0;
  for (const DoubleBox& b : boxes) {
    std::vector<double> v;
    for (size_t i = 0; i < b.lo.size(); ++i, ++counter) {
      double t = 0.5;
      if (k == 0) t = 0;
      else if (k == 1) t = 1;
      else if (k > 2) t = static_cast<double>(splitmix64(splitmix64(seed + static_cast<uint64_t>(k)) + counter) >> 11) * 0x1p-53;
      v.push_back(std::clamp(b.lo[i] + t * (b.hi[i] - b.lo[i]), b.lo[i], b.hi[i]));
    }
    out.emplace_back(b.shape, std::move(v));
  }
  return out;
}

template <class Ctx>
Status check_point(Ctx& ctx, const Graph& g, const Payload<typename Ctx::Scalar>& payload,
                   const std::vector<Tensor<double>>& x, const DoubleIbp& boxes, SampleOutcome& o) {
  using S = typename Ctx::Scalar;
  std::vector<Tensor<S>> in;
  for (const auto& t : x) {
    std::vector<S> d;
    for (double v : t.data) d.push_back(ctx.from_double(v));
    in.emplace_back(t.shape, std::move(d));
  }
  auto table = denote_all(g, payload, std::span<const Tensor<S>>(in), ctx);
  if (!table.ok()) {
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
void sample_with(Ctx& ctx, const Graph& g, const Payload<double>& payload, const std::vector<DoubleBox>& inputs,
                 const DoubleIbp& boxes, int64_t n, uint64_t seed, SampleOutcome& o) {
  using S = typename Ctx::Scalar;
  const Payload<S> p = convert_payload<S>(payload, [&](double v) { return ctx.from_double(v); });
  for (int64_t k = 0; k < n; ++k) {
    const auto x = point(inputs, k, seed);
    (void)check_point(ctx, g, p, x, boxes, o);
    ++o.samples;
    if (o.failed) {
      o.index = k;
      for (const auto& t : x) o.x.insert(o.x.end(), t.data.begin(), t.data.end());
      return;
    }
    ++o.contained;
  }
}

}  // namespace

Result<SampleOutcome> sample_containment(const Graph& g, const Payload<double>& payload,
                                         const std::vector<DoubleBox>& inputs, const DoubleIbp& boxes,
                                         std::string_view arith, int64_t n, uint64_t seed) {
  SampleOutcome o;
  DENOTE_ASSIGN_OR_RETURN(ArithSpec spec, parse_arith_name(arith, /*allow_real=*/false));
  visit_arith(spec, [&](auto& ctx) { sample_with(ctx, g, payload, inputs, boxes, n, seed, o); });
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

int run_sample(const SampleOptions& o) {
  if (o.samples < 1) {
    std::cerr << "error: --samples must be >= 1\n";
    return kExitUsage;
  }
  auto m = load_model(o.box.path);
  if (!m.ok()) return fail(m.message());
  if (Status s = check_shapes(m->graph); !s.ok()) return fail(s.message());
  auto boxes = parse_boxes(m->graph, o.box);
  if (!boxes.ok()) return fail(boxes.message());
  auto r = run_ibp_double(m->graph, m->payload, *boxes, o.box.arith);
  if (!r.ok()) return fail(r.message());
  auto s = sample_containment(m->graph, m->payload, *boxes, *r, o.box.arith, o.samples, o.seed);
  if (!s.ok()) return fail(s.message());
  print_outcome(*s, o);
  return s->failed ? kExitInvalid : kExitOk;
}

}  // namespace

void add_sample(CLI::App& app, Command& cmd) {
  auto* sub = app.add_subcommand("sample", "sampled containment of point evaluations in the IBP boxes");
  auto o = std::make_shared<SampleOptions>();
  add_box_options(sub, o->box);
  sub->add_option("--samples", o->samples, "number of points (default 1000)");
  sub->add_option("--seed", o->seed, "seed of the points (default 0)");
  sub->callback([&cmd, o] { cmd.run = [o] { return run_sample(*o); }; });
}

}  // namespace denote::cli
