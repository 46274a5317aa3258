// denote verify (include/denote/verify/verify.h) on the VNN-COMP 2021 test benchmark (ACAS Xu 1_6 /
// 1_7 on property 3: unsat / sat per the benchmark's README; nano, tiny and small networks) and ACAS Xu
// 2_1 property 2 (sat: a counterexample exists, issue 16); every sat witness re-checked here.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include <fmt/format.h>

#include "denote/bounds/ibp.h"
#include "denote/io/onnx.h"
#include "denote/program/builder.h"
#include "denote/verify/verify.h"
#include "unit/sanitized.h"

namespace denote {
namespace {

// Copies of ../shared/data/vnncomp2021_test and the ACAS Xu properties live in tests/data (a clean clone has no ../shared).
const std::string kData = std::string(DENOTE_SOURCE_DIR) + "/tests/data";

struct VerifyRun {
  Model model;
  VnnProperty prop;
  VerifyOutcome out;
};

VerifyRun run(const std::string& onnx, const std::string& vnnlib, double timeout = 60, int threads = 1,
              bool forward_bounds = false) {
  auto m = load_model_onnx_file(kData + "/" + onnx);
  EXPECT_TRUE(m.ok()) << m.message();
  auto p = load_vnnlib_file(kData + "/" + vnnlib);
  EXPECT_TRUE(p.ok()) << p.message();
  VerifyOptions o;
  o.timeout_s = timeout;
  o.threads = threads;
  o.forward_bounds = forward_bounds;
  auto r = verify(*m, *p, o);
  EXPECT_TRUE(r.ok()) << r.message();
  return {std::move(*m), std::move(*p), r.ok() ? *r : VerifyOutcome{}};
}

// A sat answer's witness lies in some case's exact box and satisfies one of its conjunctions, in f32
// and exactly (checked again here, independently of the search).
void expect_witness(const VerifyRun& r) {
  ASSERT_TRUE(r.out.witness.has_value());
  bool ok = false;
  for (const VnnCase& c : r.prop.cases)
    for (const auto& conj : c.output) {
      const WitnessCheck w = check_witness(r.model, c, conj, r.out.witness->x, ArithSpec::f32());
      ok = ok || w.confirmed();
      if (w.holds_arith) EXPECT_EQ(w.y, r.out.witness->y);
    }
  EXPECT_TRUE(ok) << "the witness does not re-check";
}

TEST(Verify, Vnncomp2021TestBenchmarkAcasXuProperty3) {
  const VerifyRun unsat = run("vnncomp2021_test/test_unsat.onnx", "vnncomp2021_test/test_prop.vnnlib");
  EXPECT_EQ(unsat.out.result, VerifyResult::Unsat) << unsat.out.note;
  EXPECT_FALSE(unsat.out.witness.has_value());
  const VerifyRun sat = run("vnncomp2021_test/test_sat.onnx", "vnncomp2021_test/test_prop.vnnlib");
  EXPECT_EQ(sat.out.result, VerifyResult::Sat);
  expect_witness(sat);
}

// The stage times are each stage's own time: with several conjunctions open after CROWN (mnistfc image
// 0 at 0.03: nine, undecided within 3 s) they add up to at most the instance's time. (The descent
// stage once added the time since its start once per conjunction.)
TEST(Verify, StageTimesAddUpOnManyConjunctions) {
  const VerifyRun r = run("mnistfc/mnist-net_256x2.onnx", "mnistfc/prop_0_0.03.vnnlib", 3);
  const VerifyStats& st = r.out.stats;
  EXPECT_GT(st.falsify_s, 0.0);
  EXPECT_LE(st.falsify_s + st.bounds_s + st.bab_s, st.total_s + 1e-3)
      << st.falsify_s << " + " << st.bounds_s << " + " << st.bab_s << " against " << st.total_s;
}

TEST(Verify, SmallTestNetworksAreDecided) {
  for (const char* name : {"test_nano", "test_tiny", "test_small"}) {
    SCOPED_TRACE(name);
    const VerifyRun r = run(std::string("vnncomp2021_test/") + name + ".onnx", std::string("vnncomp2021_test/") + name + ".vnnlib");
    EXPECT_TRUE(r.out.result == VerifyResult::Sat || r.out.result == VerifyResult::Unsat) << r.out.note;
    if (r.out.result == VerifyResult::Sat) expect_witness(r);
  }
}

TEST(Verify, AcasXu21Property2HasACounterexample) {
  const VerifyRun r = run("acasxu/ACASXU_run2a_2_1_batch_2000.onnx", "acasxu/prop_2.vnnlib");
  EXPECT_EQ(r.out.result, VerifyResult::Sat);
  expect_witness(r);
}

TEST(Verify, SameSeedSameAnswer) {
  const VerifyRun a = run("vnncomp2021_test/test_sat.onnx", "vnncomp2021_test/test_prop.vnnlib");
  const VerifyRun b = run("vnncomp2021_test/test_sat.onnx", "vnncomp2021_test/test_prop.vnnlib");
  ASSERT_TRUE(a.out.witness && b.out.witness);
  EXPECT_EQ(a.out.witness->x, b.out.witness->x);
}

// ACAS Xu 2_2 property 3 needs a few hundred subdomains: the search (answer, subdomains, bound
// calls) is the same on one, two and three threads, as the batches fix its order.
TEST(Verify, BranchAndBoundIsTheSameOnAnyThreadCount) {
  const VerifyRun one = run("acasxu/ACASXU_run2a_2_2_batch_2000.onnx", "acasxu/prop_3.vnnlib", 120, 1);
  EXPECT_EQ(one.out.result, VerifyResult::Unsat) << one.out.note;
  EXPECT_EQ(one.out.stats.decided_by, "bab");
  EXPECT_GT(one.out.stats.domains, 50);
  EXPECT_EQ(one.out.stats.threads, 1);
  // The search's two parts are disjoint: the bounding of split candidates inside the probes counts
  // once, as bounding (it once counted in both).
  const VerifyStats& st = one.out.stats;
  EXPECT_GT(st.bab_bounds_s, 0.0);
  EXPECT_GE(st.bab_probe_s, 0.0);
  EXPECT_LE(st.bab_bounds_s + st.bab_probe_s, st.bab_s + 1e-3)
      << st.bab_bounds_s << " + " << st.bab_probe_s << " against " << st.bab_s;
  for (int t : {2, 3}) {
    const VerifyRun r = run("acasxu/ACASXU_run2a_2_2_batch_2000.onnx", "acasxu/prop_3.vnnlib", 120, t);
    EXPECT_EQ(r.out.stats.threads, t);
    EXPECT_EQ(r.out.result, one.out.result);
    EXPECT_EQ(r.out.stats.domains, one.out.stats.domains);
    EXPECT_EQ(r.out.stats.crown_calls, one.out.stats.crown_calls);
  }
}

// With forward linear bounds before CROWN's intermediate passes (VerifyOptions::forward_bounds): the
// same answers (2_2 property 3 unsat by branch and bound, 2_1 property 2 sat with a witness that
// re-checks), and the search is again the same on one and two threads.
TEST(Verify, ForwardBoundsGiveTheSameAnswers) {
  const VerifyRun one = run("acasxu/ACASXU_run2a_2_2_batch_2000.onnx", "acasxu/prop_3.vnnlib", 120, 1, true);
  EXPECT_EQ(one.out.result, VerifyResult::Unsat) << one.out.note;
  EXPECT_EQ(one.out.stats.decided_by, "bab");
  const VerifyRun two = run("acasxu/ACASXU_run2a_2_2_batch_2000.onnx", "acasxu/prop_3.vnnlib", 120, 2, true);
  EXPECT_EQ(two.out.result, VerifyResult::Unsat);
  EXPECT_EQ(two.out.stats.domains, one.out.stats.domains);
  EXPECT_EQ(two.out.stats.crown_calls, one.out.stats.crown_calls);
  const VerifyRun sat = run("acasxu/ACASXU_run2a_2_1_batch_2000.onnx", "acasxu/prop_2.vnnlib", 60, 1, true);
  EXPECT_EQ(sat.out.result, VerifyResult::Sat);
  expect_witness(sat);
}

// Every choice of intermediate bounds (VerifyOptions::intermediate, `verify --intermediate`) gives the
// same answers where it decides; looser intermediate boxes make the search visit more subdomains
// (test_unsat: CROWN's intermediate bounds decide the whole box, forward bounds split 1,701 boxes,
// IBP's run past a second).
TEST(Verify, EveryIntermediateBoundChoiceGivesTheSameAnswers) {
  auto decide = [](const std::string& onnx, const std::string& vnnlib, const char* name, double timeout) {
    auto m = load_model_onnx_file(kData + "/vnncomp2021_test/" + onnx);
    auto p = load_vnnlib_file(kData + "/vnncomp2021_test/" + vnnlib);
    EXPECT_TRUE(m.ok() && p.ok());
    VerifyOptions o;
    o.intermediate = name;
    o.timeout_s = timeout;
    auto r = verify(*m, *p, o);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? *r : VerifyOutcome{};
  };
  std::map<std::string, int64_t> domains;
  for (const char* name : {"crown", "forward", "forward+crown", "ibp", "CROWN-IBP"}) {
    EXPECT_EQ(decide("test_small.onnx", "test_small.vnnlib", name, 10).result, VerifyResult::Unsat) << name;
    EXPECT_EQ(decide("test_sat.onnx", "test_prop.vnnlib", name, 10).result, VerifyResult::Sat) << name;
    const VerifyOutcome u = decide("test_unsat.onnx", "test_prop.vnnlib", name, 1);
    EXPECT_NE(u.result, VerifyResult::Sat) << name;
    if (std::string(name).find("crown") == 0) EXPECT_EQ(u.result, VerifyResult::Unsat) << name;
    domains[name] = u.stats.domains;
  }
  EXPECT_GT(domains["forward"], domains["crown"]);
  EXPECT_GT(domains["ibp"], domains["crown"]);
  auto m = load_model_onnx_file(kData + "/vnncomp2021_test/test_small.onnx");
  auto p = load_vnnlib_file(kData + "/vnncomp2021_test/test_small.vnnlib");
  ASSERT_TRUE(m.ok() && p.ok());
  VerifyOptions bad;
  bad.intermediate = "zonotope";
  auto r = verify(*m, *p, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "intermediate");
  EXPECT_NE(r.message().find("expected auto, crown, forward, forward+crown or ibp"), std::string::npos) << r.message();
}

// intermediate "auto": a conjunction whose whole-box CROWN pass runs past a quarter of the time left is
// bounded again with forward functions and CROWN passes that stop at them (forward+crown, the input has
// at most 64 elements), and the answer says so. A 5-input relu MLP of four 2000-wide layers: CROWN's
// intermediate passes take seconds (about 3 s here in Release; crown_intermediate_work's estimate,
// 9.6e10, is under the limit that would choose forward+crown from the start).
TEST(Verify, AutoIntermediateFallsBackWhenCrownsPassRunsLong) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> normal;
  GraphBuilder b;
  int64_t h = b.input({5}), n = 5;
  for (int layer = 0; layer < 4; ++layer) {
    std::vector<double> w(static_cast<size_t>(2000 * n)), bias(2000);
    for (double& v : w) v = normal(rng) / std::sqrt(static_cast<double>(n));
    for (double& v : bias) v = 0.1 * normal(rng);
    h = b.unary(Op::Relu, b.linear(h, 2000, std::move(w), std::move(bias)));
    n = 2000;
  }
  std::vector<double> w(static_cast<size_t>(2 * n));
  for (double& v : w) v = normal(rng) / std::sqrt(static_cast<double>(n));
  auto m = b.build({b.linear(h, 2, std::move(w), {0.0, 0.0})});
  ASSERT_TRUE(m.ok()) << m.message();
  // The threshold: half IBP's upper bound of Y_0, so that IBP's boxes alone (run_crown's screen) do not
  // decide the whole box and CROWN's pass runs.
  const DoubleBox box{Shape{5}, std::vector<double>(5, -0.1), std::vector<double>(5, 0.1)};
  auto ibp = run_ibp_double(m->graph, m->payload, std::span<const DoubleBox>(&box, 1), ArithSpec::f32());
  ASSERT_TRUE(ibp.ok()) << ibp.message();
  const double ibp_hi = ibp->boxes[static_cast<size_t>(m->output_ids[0])]->hi[0];
  ASSERT_GT(ibp_hi, 0);
  std::string text = fmt::format("(declare-const Y_0 Real)(declare-const Y_1 Real)(assert (>= Y_0 {}))", ibp_hi / 2);
  for (int i = 0; i < 5; ++i)
    text += fmt::format("(declare-const X_{0} Real)(assert (>= X_{0} -0.1))(assert (<= X_{0} 0.1))", i);
  auto p = parse_vnnlib(text);
  ASSERT_TRUE(p.ok()) << p.message();
  VerifyOptions o;
  o.timeout_s = 8;
  o.samples = 16;
  auto r = verify(*m, *p, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->stats.intermediate.rfind("forward+crown", 0), 0u) << r->stats.intermediate;
  EXPECT_NE(r->result, VerifyResult::Sat);
  if (!denote::testing::sanitized_build()) EXPECT_EQ(r->result, VerifyResult::Unsat) << r->note;
  o.intermediate = "crown";  // asked for: never replaced
  o.timeout_s = 2;
  auto crown = verify(*m, *p, o);
  ASSERT_TRUE(crown.ok()) << crown.message();
  EXPECT_EQ(crown->stats.intermediate, "crown");
}

TEST(Verify, ModelAndPropertyMustAgree) {
  auto m = load_model_onnx_file(kData + "/acasxu/ACASXU_run2a_1_1_batch_2000.onnx");
  auto p = load_vnnlib_file(kData + "/vnncomp2021_test/test_nano.vnnlib");
  ASSERT_TRUE(m.ok() && p.ok());
  auto r = verify(*m, *p, VerifyOptions{});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("the property declares 1 inputs and 1 outputs, the model has 5 and 5"), std::string::npos)
      << r.message();
}

}  // namespace
}  // namespace denote
