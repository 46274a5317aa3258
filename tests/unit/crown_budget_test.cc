// CROWN's coefficient memory under --max-memory (src/bounds/crown_budget.h, issue 47): the per-row
// bound of a pass on a chain by hand; intermediate bounds chunked to fit a small budget equal the
// unchunked ones (CROWN and alpha-CROWN, f64 and f32); final rows that cannot fit, and an engine
// pass that cannot fit one pair of rows, are resource errors naming the node; the CLI's bounds and
// verify honour the option end to end.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bounds/crown_budget.h"
#include "bounds/crown_engine.h"
#include "denote/bounds/crown.h"
#include "denote/io/json.h"
#include "denote/program/builder.h"
#include "unit/lcg_values.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

std::vector<double> values(int64_t n, uint64_t seed, double scale = 0.5) { return lcg_values(n, seed, scale); }

ConvConfig conv3x3(int64_t cin, int64_t cout) {
  ConvConfig c;
  c.window = WindowConfig{2, {3, 3}, {1, 1}, {0, 0}};
  c.padding_after = {0, 0};
  c.dilation = {1, 1};
  c.channel_axis = 1;
  c.in_channels = cin;
  c.out_channels = cout;
  return c;
}

// input [1, 1, 8, 8] -> conv 1->3 -> relu -> conv 3->3 -> relu -> flatten (48) [-> linear 48->2].
Model two_conv(bool head) {
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 8, 8});
  const int64_t c1 = b.unary(Op::Relu, b.conv(x, conv3x3(1, 3), values(27, 1), values(3, 2, 0.1)));
  const int64_t c2 = b.unary(Op::Relu, b.conv(c1, conv3x3(3, 3), values(81, 3), values(3, 4, 0.1)));
  int64_t out = b.add(Op::Flatten, {c2}, ValueShapeAttrs{{1, 3, 4, 4}}, Shape{48});
  if (head) out = b.linear(out, 2, values(96, 5), values(2, 6, 0.1));
  auto m = b.build({out});
  EXPECT_TRUE(m.ok()) << m.message();
  return *m;
}

DoubleBox input_box(double eps) {
  DoubleBox box{{1, 1, 8, 8}, {}, {}};
  for (double v : values(64, 7, 1.0)) box.lo.push_back(v - eps), box.hi.push_back(v + eps);
  return box;
}

TEST(CrownBudget, PerRowNumbersOfAChainByHand) {
  // input(4) -> linear(5) -> relu -> linear(3): live intervals [3,3] [2,3] [1,2] [0,1]; the most
  // alive at once is at node 2 (5 + 5), plus a temporary of the largest node (5).
  GraphBuilder b;
  const int64_t x = b.input({4});
  const int64_t h = b.unary(Op::Relu, b.linear(x, 5, values(20, 1), values(5, 2)));
  const int64_t y = b.linear(h, 3, values(15, 3), values(3, 4));
  auto m = b.build({y});
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(crown::doubles_per_row(m->graph, y, crown::PassKind::Full, 0), 15);
  EXPECT_EQ(crown::doubles_per_row(m->graph, y, crown::PassKind::OneStep, 0), 2 * 3 + 5);
  EXPECT_EQ(crown::doubles_per_row(m->graph, y, crown::PassKind::Record, 0), 15 + 4 + 5 + 5 + 3);
  EXPECT_GT(crown::doubles_per_row(m->graph, y, crown::PassKind::Alpha, 2),
            crown::doubles_per_row(m->graph, y, crown::PassKind::Record, 0));
  crown::Budget budget;
  budget.bytes = 15 * 8 * 7 + 3;
  EXPECT_EQ(budget.rows_that_fit(m->graph, y, crown::PassKind::Full, 0), 7);
}

TEST(CrownBudget, ChunkedIntermediateBoundsEqualUnchunkedOnes) {
  const Model m = two_conv(true);
  std::vector<DoubleBox> in = {input_box(0.05)};
  for (const char* arith : {"f64", "f32"})
    for (BoundMethod method : {BoundMethod::Crown, BoundMethod::AlphaCrown}) {
      SCOPED_TRACE(::testing::Message() << arith << " " << bound_method_name(method));
      CrownOptions o;
      o.arith = *parse_arith_name(arith);
      o.method = method;
      o.alpha_iters = 5;
      auto whole = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
      o.eval.max_bytes = 100 << 10;  // 75 KiB of rows: conv2's CROWN rows come in chunks
      auto chunked = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
      ASSERT_TRUE(whole.ok()) << whole.message();
      ASSERT_TRUE(chunked.ok()) << chunked.message();
      EXPECT_GT(chunked->passes, whole->passes);  // it did chunk
      for (size_t k = 0; k < 2; ++k) {
        EXPECT_NEAR(chunked->spec_lo[k], whole->spec_lo[k], 1e-9 * (1 + std::fabs(whole->spec_lo[k])));
        EXPECT_NEAR(chunked->spec_hi[k], whole->spec_hi[k], 1e-9 * (1 + std::fabs(whole->spec_hi[k])));
      }
      for (size_t id = 0; id < m.graph.nodes.size(); ++id) {
        ASSERT_EQ(whole->boxes[id].has_value(), chunked->boxes[id].has_value());
        if (!whole->boxes[id]) continue;
        for (size_t j = 0; j < whole->boxes[id]->lo.size(); ++j) {
          EXPECT_NEAR(chunked->boxes[id]->lo[j], whole->boxes[id]->lo[j], 1e-9) << id << " " << j;
          EXPECT_NEAR(chunked->boxes[id]->hi[j], whole->boxes[id]->hi[j], 1e-9) << id << " " << j;
        }
      }
    }
}

TEST(CrownBudget, FinalRowsThatCannotFitAreAResourceErrorNamingTheNode) {
  const Model m = two_conv(false);  // 48 outputs: 96 final rows
  std::vector<DoubleBox> in = {input_box(0.05)};
  CrownOptions o;
  o.eval.max_bytes = 64 << 10;
  auto r = run_crown(m.graph, m.payload, in, m.output_ids[0], nullptr, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kResource);
  EXPECT_EQ(r.status().field(), "max-memory");
  EXPECT_NE(r.message().find("bound of the specification's rows from node " + std::to_string(m.output_ids[0])),
            std::string::npos)
      << r.message();
  EXPECT_NE(r.message().find("--max-memory budget"), std::string::npos) << r.message();
}

TEST(CrownBudget, AnEnginePassThatCannotFitOnePairLeavesNoBoundAndSaysWhy) {
  const Model m = two_conv(true);
  std::vector<DoubleBox> in = {input_box(0.05)};
  auto ibp = run_ibp_double(m.graph, m.payload, in, "f64");
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  crown::Engine eng(m.graph, m.payload, crown::EngineSetup{.max_bytes = 1024}, ibp->boxes);
  const int64_t conv2 = 3;
  ASSERT_EQ(m.graph.nodes[conv2].op, Op::Conv);
  std::vector<double> lo, hi;
  eng.bound_elements(conv2, {0, 1, 2}, false, lo, hi);
  ASSERT_EQ(lo.size(), 3u);
  for (size_t k = 0; k < 3; ++k) {
    EXPECT_EQ(lo[k], -INFINITY);
    EXPECT_EQ(hi[k], INFINITY);
  }
  EXPECT_EQ(eng.budget().node, conv2);
  EXPECT_NE(eng.budget().failure.find("intermediate bound from node 3"), std::string::npos) << eng.budget().failure;
}

// A node whose rows take more than Budget::kChunkBytes is bounded in chunks, and the deadline is
// checked between them: past it, the rows not reached keep no bound (-inf..inf, sound) and the engine says so.
TEST(CrownBudget, TheDeadlineIsCheckedBetweenChunksOfOneNode) {
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 20, 20});
  const int64_t cv = b.conv(x, conv3x3(1, 4), values(36, 1), values(4, 2, 0.1));  // 4 x 18 x 18 = 1296
  auto m = b.build({b.unary(Op::Relu, cv)});
  ASSERT_TRUE(m.ok()) << m.message();
  DoubleBox box{{1, 1, 20, 20}, {}, {}};
  for (double v : values(400, 3, 1.0)) box.lo.push_back(v - 0.05), box.hi.push_back(v + 0.05);
  std::vector<DoubleBox> in = {box};
  auto ibp = run_ibp_double(m->graph, m->payload, in, "f64");
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  std::vector<int64_t> all(1296);
  for (int64_t j = 0; j < 1296; ++j) all[static_cast<size_t>(j)] = j;
  crown::Engine eng(m->graph, m->payload, crown::EngineSetup{.deadline = std::chrono::steady_clock::now()},
                    ibp->boxes);
  std::vector<double> lo, hi;
  eng.bound_elements(cv, all, false, lo, hi);
  EXPECT_TRUE(eng.stats().late);
  const size_t first = static_cast<size_t>(eng.budget().pairs_per_chunk(m->graph, cv, crown::PassKind::Full, 0));
  ASSERT_LT(first, 1296u);
  ASSERT_EQ(lo.size(), 1296u);
  for (size_t j = 0; j < lo.size(); ++j) {
    EXPECT_EQ(std::isfinite(lo[j]), j < first) << j;
    EXPECT_EQ(std::isfinite(hi[j]), j < first) << j;
  }
  crown::Engine timely(m->graph, m->payload, crown::EngineSetup{}, ibp->boxes);
  timely.bound_elements(cv, all, false, lo, hi);
  EXPECT_FALSE(timely.stats().late);
  for (size_t j = 0; j < lo.size(); ++j) EXPECT_TRUE(std::isfinite(lo[j]) && std::isfinite(hi[j])) << j;
}

// alpha-CROWN's steps start only before the deadline: called past it, Engine::optimise takes no step
// and returns the CROWN bounds it was given (before, the first step always ran: on TinyYOLO one step on
// a node's 12,000 rows ran a verify 68 s past a 120-s timeout).
TEST(CrownBudget, AlphaStepsStartOnlyBeforeTheDeadline) {
  GraphBuilder b;
  const int64_t x = b.input({1, 1, 12, 12});
  const int64_t cv = b.conv(x, conv3x3(1, 4), values(36, 1), values(4, 2, 0.1));
  const int64_t r = b.unary(Op::Relu, cv);
  const int64_t f = b.add(Op::Flatten, {r}, ValueShapeAttrs{Shape{1, 4, 10, 10}}, Shape{400});
  auto m = b.build({b.linear(f, 2, values(800, 5, 0.1), values(2, 6, 0.1))});
  ASSERT_TRUE(m.ok()) << m.message();
  DoubleBox box{{1, 1, 12, 12}, {}, {}};
  for (double v : values(144, 3, 1.0)) box.lo.push_back(v - 0.2), box.hi.push_back(v + 0.2);
  std::vector<DoubleBox> in = {box};
  auto ibp = run_ibp_double(m->graph, m->payload, in, "f64");
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  const int64_t out = m->output_ids[0];
  const std::vector<double> C = {1, 0, 0, 1};
  const std::vector<double> crown_lower = {-100, -100};
  for (bool late : {true, false}) {
    crown::Engine eng(m->graph, m->payload, crown::EngineSetup{}, ibp->boxes);
    CrownOptions o;
    o.method = BoundMethod::AlphaCrown;
    o.alpha_iters = 5;
    o.deadline = late ? std::chrono::steady_clock::now() - std::chrono::seconds(1) : std::chrono::steady_clock::time_point::max();
    const std::vector<double> got = eng.optimise(out, C, 2, crown_lower, o);
    ASSERT_EQ(got.size(), 2u);
    if (late) {
      EXPECT_EQ(eng.stats().alpha_steps, 0);
      EXPECT_EQ(got, crown_lower);
    } else {
      EXPECT_GT(eng.stats().alpha_steps, 0);
      EXPECT_GT(got[0], -100);
    }
  }
}

TEST(CrownBudget, TheCliHonoursMaxMemoryInBoundsAndVerify) {
  using testing::run_cli;
  const std::string model = testing::write_file("budget_two_conv.json", write_model_json(two_conv(true)));
  std::string center = "[";
  for (double v : values(64, 7, 1.0)) center += (center.size() > 1 ? "," : "") + fmt::format("{:.17g}", v);
  center += "]";
  const std::string bounds = "bounds " + model + " --center '" + center + "' --eps 0.05 --method crown";
  const auto whole = run_cli(bounds);
  const auto chunked = run_cli(bounds + " --max-memory 160K");
  ASSERT_EQ(whole.code, 0) << whole.err;
  ASSERT_EQ(chunked.code, 0) << chunked.err;
  EXPECT_EQ(chunked.out, whole.out);  // six decimals: the same bounds
  const auto tiny = run_cli(bounds + " --max-memory 4K");
  EXPECT_EQ(tiny.code, 1) << tiny.out;
  EXPECT_NE(tiny.err.find("max-memory"), std::string::npos) << tiny.err;
  // verify: a property CROWN proves (Y_0 >= 1000 never holds) proves under a budget that chunks, and
  // a budget too small for any bound is an undecided answer that says why.
  std::string prop;
  for (int i = 0; i < 64; ++i) prop += fmt::format("(declare-const X_{} Real)\n", i);
  prop += "(declare-const Y_0 Real)\n(declare-const Y_1 Real)\n";
  const std::vector<double> c = values(64, 7, 1.0);
  for (int i = 0; i < 64; ++i)
    prop += fmt::format("(assert (>= X_{0} {1:.17g}))\n(assert (<= X_{0} {2:.17g}))\n", i, c[i] - 0.05, c[i] + 0.05);
  prop += "(assert (>= Y_0 1000))\n";
  const std::string vnnlib = testing::write_file("budget.vnnlib", prop);
  const std::string verify = "verify " + model + " " + vnnlib + " --arith f64 --timeout 30 --json";
  const auto proved = run_cli(verify + " --max-memory 160K");
  ASSERT_EQ(proved.code, 0) << proved.err;
  EXPECT_EQ(nlohmann::json::parse(proved.out)["result"], "unsat") << proved.out;
  const auto starved = run_cli(verify + " --max-memory 2K");
  ASSERT_EQ(starved.code, 0) << starved.err;
  const auto doc = nlohmann::json::parse(starved.out);
  EXPECT_EQ(doc["result"], "unknown") << starved.out;
  EXPECT_NE(doc["note"].get<std::string>().find("a bound failed"), std::string::npos) << starved.out;
  EXPECT_EQ(run_cli(verify + " --max-memory 0").code, 2);
}

}  // namespace
}  // namespace denote
