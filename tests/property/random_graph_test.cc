// Property tests over seeded random graphs.
//  1. Shape rules: 10,000 random well-formed graphs over EVERY op, each node's declared shape worked
//     out by the generator itself (from SPEC-IR.md's rules, written independently of src/ops/), so
//     check_shapes must accept them all.
//  2. Soundness (the seed's theorem): 10,000 random graphs over the ops that have an evaluation rule;
//     when check_shapes and denote_all both succeed, every value has its node's declared shape. They
//     also survive a torchlean.ir.v1 round trip unchanged.
//  3. Robustness: random single-field mutations (a dim, an axis, a parent, an id, the op tag, attrs,
//     a payload record) still pass or are rejected with an error; nothing crashes or throws.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <numeric>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "denote/check/check.h"
#include "denote/base/splitmix.h"
#include "denote/eval/eval.h"
#include "denote/io/json.h"
#include "denote/io/text.h"
#include "random_graph_gen.h"
#include "unit/sanitized.h"

namespace denote {
namespace {

using random_graphs::count;
using random_graphs::Generator;
using random_graphs::kMaxNumel;
using random_graphs::Rng;

std::vector<Op> all_ops() {
  std::vector<Op> ops;
  for (const OpInfo& info : kOpTable) ops.push_back(info.op);
  return ops;
}

Result<ValueTable<double>> evaluate(const Model& m, const std::vector<Tensor<double>>& inputs, int64_t limit) {
  F64Context ctx;
  EvalOptions options;
  options.max_elements = limit;
  return denote_all(m.graph, m.payload, std::span<const Tensor<double>>(inputs), ctx, options);
}

// The ops whose evaluation rule exists: a graph built around each op must not answer
// "no evaluation rule".
std::vector<Op> evaluable_ops() {
  std::vector<Op> out;
  for (const OpInfo& info : kOpTable) {
    bool pending = false, built = false;
    for (uint64_t seed = 1; seed < 40 && !built; ++seed) {
      Rng rng(seed);
      Generator gen(rng, {info.op}, true);
      gen.build(0);
      built = gen.add_op(info.op);
      if (!built) continue;
      auto r = evaluate(gen.model(), gen.inputs(), int64_t{1} << 20);
      pending = !r.ok() && r.message().find("no evaluation rule") != std::string::npos;
    }
    if (built && !pending) out.push_back(info.op);
  }
  return out;
}

// Soundness: with check_shapes and evaluation both successful, every value has the declared shape.
void expect_values_fit(const Graph& g, const ValueTable<double>& table) {
  ASSERT_EQ(table.size(), g.nodes.size());
  for (size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(table[i].shape, g.nodes[i].out_shape) << "node " << i;
    EXPECT_EQ(table[i].data.size(), static_cast<size_t>(count(g.nodes[i].out_shape))) << "node " << i;
  }
}

// Payload equality without the (not serialized) custom bodies.
Payload<double> without_custom(Payload<double> p) {
  p.custom.clear();
  return p;
}

// ---- mutations: one field of one node (or one payload record) changes

int64_t odd_value(Rng& rng, int64_t near) {
  static const std::vector<int64_t> kOdd = {-1, 0, 1, 2, 3, int64_t{1} << 31, int64_t{1} << 40, int64_t{1} << 62,
                                            std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()};
  switch (rng.range(0, 3)) {
    case 0: return near + 1;
    case 1: return near - 1;
    default: return rng.pick(kOdd);
  }
}

void mutate_ints(Rng& rng, std::vector<int64_t>& v) {
  if (v.empty() || rng.chance(15)) v.push_back(odd_value(rng, 1));
  else if (rng.chance(15)) v.pop_back();
  else {
    int64_t& x = v[static_cast<size_t>(rng.range(0, static_cast<int64_t>(v.size()) - 1))];
    x = odd_value(rng, x);
  }
}

// Changes one field inside an attrs record.
void mutate_attr_fields(Rng& rng, Attrs& a) {
  std::visit(
      [&](auto& r) {
        using T = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<T, ValueShapeAttrs>) mutate_ints(rng, r.shape);
        else if constexpr (std::is_same_v<T, SeedAttrs>) r.seed = rng.next();
        else if constexpr (std::is_same_v<T, CustomAttrs>) {
          if (r.input_shapes.empty()) r.input_shapes.push_back({2});
          else mutate_ints(rng, r.input_shapes[0]);
        } else if constexpr (std::is_same_v<T, PermAttrs>) mutate_ints(rng, r.perm);
        else if constexpr (std::is_same_v<T, TransposeAttrs>) r.axis1 = odd_value(rng, r.axis1);
        else if constexpr (std::is_same_v<T, BroadcastAttrs>) mutate_ints(rng, rng.chance(50) ? r.from : r.to);
        else if constexpr (std::is_same_v<T, ReshapeAttrs>) mutate_ints(rng, rng.chance(50) ? r.in_shape : r.out_shape);
        else if constexpr (std::is_same_v<T, AxisAttrs>) r.axis = odd_value(rng, r.axis);
        else if constexpr (std::is_same_v<T, ClampAttrs>) r.bound = rng.chance(50) ? std::nan("") : -r.bound;
        else if constexpr (std::is_same_v<T, CastAttrs>) r.rounding = rng.chance(50) ? "" : "toward-zero";
        else if constexpr (std::is_same_v<T, WindowConfig>) {
          std::vector<int64_t>* f[] = {&r.kernel, &r.stride, &r.padding};
          if (rng.chance(20)) r.spatial_rank = odd_value(rng, r.spatial_rank);
          else mutate_ints(rng, *f[rng.range(0, 2)]);
        } else if constexpr (std::is_same_v<T, ConvConfig>) {
          std::vector<int64_t>* f[] = {&r.window.kernel, &r.window.stride, &r.window.padding, &r.dilation,
                                       &r.padding_after};
          int64_t* g[] = {&r.groups, &r.channel_axis, &r.in_channels, &r.out_channels, &r.window.spatial_rank};
          int64_t& field = *g[rng.range(0, 4)];
          if (rng.chance(50)) mutate_ints(rng, *f[rng.range(0, 4)]);
          else field = odd_value(rng, field);
        } else if constexpr (std::is_same_v<T, BatchNormAttrs>) {
          if (rng.chance(50)) r.channel_axis = odd_value(rng, r.channel_axis);
          else r.channels = odd_value(rng, r.channels);
        } else if constexpr (std::is_same_v<T, GatherAttrs>) {
          if (rng.chance(50)) r.axis = odd_value(rng, r.axis);
          else mutate_ints(rng, r.indices);
        } else if constexpr (std::is_same_v<T, HardMask>) {
          if (rng.chance(50)) mutate_ints(rng, r.shape);
          else r.allowed.push_back(1);
        }
      },
      a);
}

// Changes the size of one payload vector, or drops a record.
void mutate_payload(Rng& rng, Payload<double>& p) {
  auto resize = [&](std::vector<double>& v) { v.resize(v.empty() ? 1 : (rng.chance(50) ? v.size() - 1 : v.size() + 2)); };
  const bool first = rng.chance(50);
  switch (rng.range(0, 5)) {
    case 0:
      if (!p.consts.empty()) resize(p.consts.begin()->second.values);
      break;
    case 1:
      if (p.linear.empty()) break;
      if (first) resize(p.linear.begin()->second.weight);
      else p.linear.begin()->second.in_dim = odd_value(rng, p.linear.begin()->second.in_dim);
      break;
    case 2:
      if (p.conv.empty()) break;
      if (first) resize(p.conv.begin()->second.weight);
      else mutate_ints(rng, p.conv.begin()->second.input_spatial);
      break;
    case 3:
      if (!p.batch_norm.empty()) resize(p.batch_norm.begin()->second.var);
      break;
    case 4:
      if (p.layernorm.empty()) break;
      if (first) resize(p.layernorm.begin()->second.gamma);
      else mutate_ints(rng, p.layernorm.begin()->second.normalized_shape);
      break;
    default:
      if (!p.linear.empty()) p.linear.erase(p.linear.begin());
      else if (!p.consts.empty()) p.consts.erase(p.consts.begin());
      else p.custom.clear();
  }
}

// One single-field mutation; returns what it did (for failure messages).
std::string mutate(Rng& rng, Model& m) {
  std::vector<Node>& nodes = m.graph.nodes;
  Node& n = nodes[static_cast<size_t>(rng.range(0, static_cast<int64_t>(nodes.size()) - 1))];
  const std::string at = "node " + std::to_string(n.id) + ": ";
  switch (rng.range(0, 6)) {
    case 0: mutate_ints(rng, n.out_shape); return at + "dim";
    case 1:
      if (n.parents.empty()) n.parents.push_back(rng.range(-2, static_cast<int64_t>(nodes.size()) + 1));
      else n.parents[static_cast<size_t>(rng.range(0, static_cast<int64_t>(n.parents.size()) - 1))] =
               rng.range(-2, static_cast<int64_t>(nodes.size()) + 1);
      return at + "parent";
    case 2: n.id = odd_value(rng, n.id); return at + "id";
    case 3: n.op = static_cast<Op>(rng.range(0, kNumOps - 1)); return at + "op tag";
    case 4: n.attrs = default_attrs(static_cast<Op>(rng.range(0, kNumOps - 1))); return at + "attrs kind";
    case 5: mutate_attr_fields(rng, n.attrs); return at + "attrs field";
    default: mutate_payload(rng, m.payload); return "payload";
  }
}

// Every check and pass runs on the mutated model and reports through a Status, never a crash.
void expect_robust(const Model& m, const std::vector<Tensor<double>>& inputs, const std::string& what) {
  SCOPED_TRACE(what);
  const Status wf = check_well_formed(m.graph);
  const Status shapes = check_shapes(m.graph);
  const std::vector<Diagnostic> d = diagnose(m.graph);
  EXPECT_EQ(d.empty(), shapes.ok()) << shapes.message();
  EXPECT_EQ(infer_shapes(m.graph).ok(), shapes.ok());
  if (!wf.ok()) {
    EXPECT_FALSE(shapes.ok());
  }
  for (const Diagnostic& x : d) EXPECT_EQ(x.message.rfind("IR graph: ", 0), 0u) << x.message;
  auto table = evaluate(m, inputs, 4096);
  if (!table.ok()) {
    EXPECT_EQ(table.message().rfind("IR ", 0), 0u) << table.message();
  }
  if (table.ok() && shapes.ok()) expect_values_fit(m.graph, *table);
  auto parsed = parse_model_json(write_model_json(m));
  if (parsed.ok()) (void)diagnose(parsed->graph);
  (void)format_listing(m.graph);
}

// The sanitizer build (scripts/test.sh, second pass) runs a quarter of the graphs: the release pass
// runs all of them, and ASan + UBSan make each about 10x slower.
const int kGraphs = denote::testing::sanitized_build() ? 2'500 : 10'000;
constexpr int kMutationsPerGraph = 3;

TEST(RandomGraphs, ShapeRulesAgreeOnEveryOp) {
  Rng rng(0x5eed0001);
  const std::vector<Op> ops = all_ops();
  std::set<Op> seen;
  for (int i = 0; i < kGraphs; ++i) {
    Generator gen(rng, ops, false);
    gen.build(static_cast<int>(rng.range(1, 10)));
    const Model& m = gen.model();
    for (const Node& n : m.graph.nodes) seen.insert(n.op);
    Status s = check_shapes(m.graph);
    ASSERT_TRUE(s.ok()) << "graph " << i << ": " << s.message() << "\n" << format_listing(m.graph);
    ASSERT_TRUE(diagnose(m.graph).empty());
    for (int k = 0; k < kMutationsPerGraph; ++k) {
      Model mutated = m;
      std::string what = mutate(rng, mutated);
      expect_robust(mutated, gen.inputs(), "graph " + std::to_string(i) + ", " + what);
      if (HasFatalFailure()) return;
    }
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(kNumOps));  // every op was generated
}

TEST(RandomGraphs, CheckedAndEvaluatedValuesHaveDeclaredShapes) {
  const std::vector<Op> ops = evaluable_ops();
  ASSERT_FALSE(ops.empty());
  std::string skipped;
  for (const OpInfo& info : kOpTable)
    if (std::find(ops.begin(), ops.end(), info.op) == ops.end()) skipped += " " + std::string(info.tag);
  if (!skipped.empty()) std::cout << "[ note ] ops without an evaluation rule (skipped):" << skipped << "\n";
  Rng rng(0x5eed0002);
  int evaluated = 0;
  for (int i = 0; i < kGraphs; ++i) {
    Generator gen(rng, ops, true);
    gen.build(static_cast<int>(rng.range(1, 10)));
    const Model& m = gen.model();
    ASSERT_TRUE(check_shapes(m.graph).ok()) << check_shapes(m.graph).message() << "\n" << format_listing(m.graph);
    auto table = evaluate(m, gen.inputs(), int64_t{1} << 20);
    if (table.ok()) {
      ++evaluated;
      expect_values_fit(m.graph, *table);
    } else {
      // The only failures a checked graph may have: log's domain (and nothing else here).
      EXPECT_NE(table.message().find("log: input contains values <= 0"), std::string::npos) << table.message();
    }
    // torchlean.ir.v1 round trip (custom bodies are not serialized).
    auto back = parse_model_json(write_model_json(m));
    ASSERT_TRUE(back.ok()) << back.message();
    EXPECT_EQ(back->graph, m.graph);
    EXPECT_EQ(back->output_ids, m.output_ids);
    EXPECT_TRUE(without_custom(back->payload) == without_custom(m.payload));
    for (int k = 0; k < kMutationsPerGraph; ++k) {
      Model mutated = m;
      std::string what = mutate(rng, mutated);
      expect_robust(mutated, gen.inputs(), "graph " + std::to_string(i) + ", " + what);
    }
    if (HasFatalFailure()) return;
  }
  EXPECT_GT(evaluated, kGraphs * 3 / 4);  // the property is exercised, not vacuous
}

}  // namespace
}  // namespace denote
