// The adjoint identity <v, J u> = <J^T v, u> on 10,000 random graphs over every op (the generator
// of tests/property/random_graph_gen.h): forward mode (jvp) and reverse mode (vjp) are two
// independent sets of rules that must be the same linear map, at every node of every graph,
// including the PyTorch conventions at kinks and ties (both modes make the same choice). Graphs
// whose evaluation fails (log's domain) are skipped; a graph whose gradient must pass through an
// op without a derivative must say so, naming that node, in both modes.
#include <gtest/gtest.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "denote/autodiff/grad.h"
#include "denote/eval/eval.h"
#include "denote/io/text.h"
#include "random_graph_gen.h"

namespace denote {
namespace {

using random_graphs::Generator;
using random_graphs::Rng;

constexpr int kGraphs = 10'000;

std::vector<Op> evaluable_ops() {
  std::vector<Op> ops;
  for (const OpInfo& info : kOpTable)
    if (info.op != Op::Custom) ops.push_back(info.op);  // custom bodies: no derivative, covered below
  return ops;
}

Tensor<double> random_like(Rng& rng, const Shape& s) {
  Tensor<double> t = Tensor<double>::filled(s, 0.0);
  for (double& v : t.data) v = rng.real(-1, 1);
  return t;
}

struct Dots {
  double value = 0, magnitude = 0;
  void add(double a, double b) {
    value += a * b;
    magnitude += std::fabs(a * b);
  }
};

TEST(AdjointProperty, ForwardAndReverseModeAreTheSameLinearMap) {
  const std::vector<Op> ops = evaluable_ops();
  Rng rng(0xad10);
  F64Context ctx;
  int checked = 0, no_derivative = 0;
  for (int i = 0; i < kGraphs; ++i) {
    Generator gen(rng, ops, true);
    gen.build(static_cast<int>(rng.range(1, 10)));
    const Model& m = gen.model();
    const int64_t out = m.output_ids[0];
    const std::vector<Tensor<double>>& x = gen.inputs();
    std::vector<Tensor<double>> u;
    for (const auto& t : x) u.push_back(random_like(rng, t.shape));
    EvalOptions options;
    options.max_elements = int64_t{1} << 20;
    auto t = jvp(m.graph, m.payload, std::span<const Tensor<double>>(x), std::span<const Tensor<double>>(u), out, ctx,
                 options);
    GradOptions go;
    go.eval = options;
    const Tensor<double> v = random_like(rng, m.graph.nodes[static_cast<size_t>(out)].out_shape);
    auto g = vjp(m.graph, m.payload, std::span<const Tensor<double>>(x), out, &v, ctx, go);
    if (!t.ok() || !g.ok()) {
      const std::string msg = !t.ok() ? t.message() : g.message();
      if (msg.find("has no derivative") != std::string::npos) {
        ++no_derivative;
        continue;
      }
      // The only other failure a generated graph may have: log's domain, in both modes.
      EXPECT_NE(msg.find("log: input contains values <= 0"), std::string::npos) << msg;
      EXPECT_EQ(t.ok(), g.ok()) << msg;
      continue;
    }
    Dots lhs, rhs;
    for (size_t k = 0; k < v.data.size(); ++k) lhs.add(v.data[k], t->tangent.data[k]);
    for (size_t j = 0; j < x.size(); ++j)
      for (size_t k = 0; k < u[j].data.size(); ++k) rhs.add(g->inputs[j].data[k], u[j].data[k]);
    if (!std::isfinite(lhs.magnitude) || !std::isfinite(rhs.magnitude)) continue;
    ++checked;
    EXPECT_NEAR(lhs.value, rhs.value, 1e-9 * (1 + lhs.magnitude + rhs.magnitude))
        << "graph " << i << "\n" << format_listing(m.graph);
    if (HasFailure()) return;
  }
  std::cout << "[ note ] adjoint identity checked on " << checked << " graphs; " << no_derivative
            << " needed a gradient through an op without a derivative\n";
  EXPECT_GT(checked, kGraphs / 2);
}

}  // namespace
}  // namespace denote
