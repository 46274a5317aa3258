// IBP, CROWN and alpha-CROWN (run_crown, include/denote/bounds/crown.h) on ACAS Xu 1_1 and mnistfc
// 256x2, the cases of bench/lirpa_crown.py (auto_LiRPA's side; bench/compare_crown.sh runs both).
// Networks and boxes come from tests/data/lirpa/crown_golden.json (written by
// tests/golden/gen_lirpa_golden.py): the ONNX files, the input boxes of prop_1/prop_2 (ACAS Xu)
// and prop_0_0.03 (mnistfc), and the C matrices. Rows (single-threaded, arith f32 as auto_LiRPA's
// float32 run; time per call):
//   load/<net>                       read the .onnx file into a checked model (auto_LiRPA's "build")
//   <method>/<case>                  run_crown for the case's C, method ibp | crown | alpha-crown
//                                    (alpha-crown: 20 bound evaluations, auto_LiRPA's default)
//   prepare/<net>                    IbpPrepared::prepare (once per model; auto_LiRPA's "build" too)
//   <method>+prep/<case>             run_crown with Subdomain::prepared once (the call that
//                                    branch and bound repeats per subdomain)
// Before timing, each row's bounds are printed once to stderr next to auto_LiRPA's float64 bounds
// from the golden file, with the smallest margin (ours minus theirs, lower side; theirs minus ours,
// upper side): >= 0 means at least as tight.
//
//   build/bin/crown_bench --benchmark_repetitions=5
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "denote/base/allocator.h"
#include "denote/bounds/crown.h"
#include "denote/io/onnx.h"

#ifndef DENOTE_SOURCE_DIR
#define DENOTE_SOURCE_DIR "."
#endif

namespace {

using namespace denote;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "crown_bench: %s\n", what.c_str());
  std::exit(1);
}

std::string source_dir() {
  const char* env = std::getenv("DENOTE_SOURCE_DIR");
  return env ? env : DENOTE_SOURCE_DIR;
}

struct Case {
  std::string name, net;
  DoubleBox box;
  SpecMatrix spec;
  nlohmann::json lirpa;  // results of the golden case
};

Model load(const std::string& rel) {
  auto m = load_model_onnx_file(source_dir() + "/" + rel);
  if (!m.ok()) die(rel + ": " + m.message());
  return std::move(*m);
}

std::vector<Case> cases() {
  std::ifstream f(source_dir() + "/tests/data/lirpa/crown_golden.json");
  if (!f) die("cannot open tests/data/lirpa/crown_golden.json");
  const nlohmann::json g = nlohmann::json::parse(f);
  std::vector<Case> out;
  for (const auto& c : g["cases"]) {
    const std::string name = c["name"];
    if (name.rfind("six_node", 0) == 0 || name.find("/identity") != std::string::npos) continue;
    Case k;
    k.name = name.substr(0, name.find('/'));
    k.net = c["network"];
    k.box.lo = c["input"]["lo"].get<std::vector<double>>();
    k.box.hi = c["input"]["hi"].get<std::vector<double>>();
    for (const auto& row : c["C"]) {
      for (double v : row) k.spec.c.push_back(v);
      ++k.spec.rows;
    }
    k.spec.cols = static_cast<int64_t>(c["C"][0].size());
    k.lirpa = c["results"];
    out.push_back(std::move(k));
  }
  return out;
}

struct Loaded {
  Case c;
  Model model;
  std::shared_ptr<const IbpPrepared> prep;  // set once the vector holding the models is final
};

std::vector<Loaded>& loaded() {
  static std::vector<Loaded> all = [] {
    std::vector<Loaded> v;
    for (Case& c : cases()) {
      Model m = load(c.net);
      c.box.shape = m.graph.nodes[static_cast<size_t>(m.graph.input_ids()[0])].out_shape;
      v.push_back({std::move(c), std::move(m)});
    }
    for (Loaded& l : v) {
      auto p = IbpPrepared::prepare(l.model.graph, l.model.payload, "f32");
      if (!p.ok()) die(l.c.name + ": " + p.message());
      l.prep = std::make_shared<const IbpPrepared>(std::move(*p));
    }
    return v;
  }();
  return all;
}

// Intermediate bounds: CROWN's passes (the default), forward linear bounds only, or both.
enum class Inter { Crown, Forward, Both };

CrownOptions options(BoundMethod method, Inter inter) {
  CrownOptions o;
  o.method = method;
  o.arith = ArithSpec::f32();
  o.intermediate_crown = inter != Inter::Forward;
  o.forward_intermediate = inter != Inter::Crown;
  return o;
}

Result<CrownResult> bound(const Loaded& l, BoundMethod method, bool prepared = false, Inter inter = Inter::Crown) {
  Subdomain where;
  if (prepared) where.prepared = *l.prep;
  return run_crown(l.model.graph, l.model.payload, std::span<const DoubleBox>(&l.c.box, 1), l.model.output_ids[0],
                   &l.c.spec, options(method, inter), where);
}

std::string lirpa_name(BoundMethod m) { return m == BoundMethod::Ibp ? "IBP" : m == BoundMethod::Crown ? "CROWN" : "alpha-CROWN"; }

void report(const Loaded& l, BoundMethod method, const CrownResult& r) {
  for (const auto& res : l.c.lirpa) {
    if (res["method"] != lirpa_name(method) || res["dtype"] != "float64") continue;
    const auto lo = res["lo"].get<std::vector<double>>(), hi = res["hi"].get<std::vector<double>>();
    double margin = INFINITY;
    for (size_t k = 0; k < lo.size(); ++k) margin = std::min({margin, r.spec_lo[k] - lo[k], hi[k] - r.spec_hi[k]});
    std::fprintf(stderr, "%-12s %-11s row 0: denote [%.9g, %.9g] auto_LiRPA [%.9g, %.9g]; smallest margin %+.3e\n",
                 l.c.name.c_str(), std::string(bound_method_name(method)).c_str(), r.spec_lo[0], r.spec_hi[0], lo[0],
                 hi[0], margin);
  }
}

void BM_Bound(benchmark::State& state, size_t index, BoundMethod method, bool prepared, Inter inter) {
  const Loaded& l = loaded()[index];
  for (auto _ : state) {
    auto r = bound(l, method, prepared, inter);
    if (!r.ok()) {
      state.SkipWithError(r.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(r->spec_lo.data());
  }
}

void BM_Load(benchmark::State& state, std::string rel) {
  for (auto _ : state) {
    Model m = load(rel);
    benchmark::DoNotOptimize(m.graph.nodes.data());
  }
}

void BM_Prepare(benchmark::State& state, size_t index) {
  const Loaded& l = loaded()[index];
  for (auto _ : state) {
    auto p = IbpPrepared::prepare(l.model.graph, l.model.payload, "f32");
    if (!p.ok()) {
      state.SkipWithError(p.message().c_str());
      return;
    }
    benchmark::DoNotOptimize(p->dense_linear_nodes());
  }
}

void register_all() {
  const BoundMethod methods[] = {BoundMethod::Ibp, BoundMethod::Crown, BoundMethod::AlphaCrown};
  std::vector<std::string> nets;
  for (size_t i = 0; i < loaded().size(); ++i) {
    const Loaded& l = loaded()[i];
    if (std::find(nets.begin(), nets.end(), l.c.net) == nets.end()) {
      nets.push_back(l.c.net);
      const std::string short_name = l.c.name.substr(0, l.c.name.find("_prop"));
      benchmark::RegisterBenchmark(("load/" + short_name).c_str(), BM_Load, l.c.net)->Unit(benchmark::kMillisecond);
      benchmark::RegisterBenchmark(("prepare/" + short_name).c_str(), BM_Prepare, i)->Unit(benchmark::kMillisecond);
    }
    for (BoundMethod m : methods) {
      for (bool prepared : {false, true}) {
        auto r = bound(l, m, prepared);
        if (!r.ok()) die(l.c.name + ": " + r.message());
        if (!prepared) report(l, m, *r);
        const std::string row = std::string(bound_method_name(m)) + (prepared ? "+prep/" : "/") + l.c.name;
        benchmark::RegisterBenchmark(row.c_str(), BM_Bound, i, m, prepared, Inter::Crown)->Unit(benchmark::kMillisecond);
      }
    }
    // CROWN with forward linear intermediate bounds (small inputs only: ACAS Xu), alone and before
    // CROWN's own intermediate passes.
    if (numel(l.c.box.shape) <= 64)
      for (Inter inter : {Inter::Forward, Inter::Both}) {
        auto r = bound(l, BoundMethod::Crown, true, inter);
        if (!r.ok()) die(l.c.name + ": " + r.message());
        std::fprintf(stderr, "%-12s crown/%s row 0: [%.9g, %.9g]\n", l.c.name.c_str(),
                     inter == Inter::Forward ? "forward" : "forward+crown", r->spec_lo[0], r->spec_hi[0]);
        const std::string row = std::string(inter == Inter::Forward ? "crown-forward" : "crown-forward+crown") +
                                "+prep/" + l.c.name;
        benchmark::RegisterBenchmark(row.c_str(), BM_Bound, i, BoundMethod::Crown, true, inter)
            ->Unit(benchmark::kMillisecond);
      }
  }
}

}  // namespace

int main(int argc, char** argv) {
  denote::tune_allocator_for_throughput();  // include/denote/base/allocator.h
  benchmark::Initialize(&argc, argv);
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
