// Branch and bound's frontier hook and verify_subdomain (include/denote/verify/frontier.h, issue 21),
// without MPI: a hook that searches the bottom boxes of the stack "elsewhere" (here, in the same
// process, with verify_subdomain) gives verify() the same answer as the search alone; the halves of a
// case's box decide like the whole box; bad jobs and boxes are errors.
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "denote/io/onnx.h"
#include "denote/verify/verify.h"

namespace denote {
namespace {

const std::string kAcas = std::string(DENOTE_SOURCE_DIR) + "/tests/data/acasxu/";

struct Instance {
  Model model;
  VnnProperty prop;
};

Instance load(const std::string& net, const std::string& prop) {
  auto m = load_model_onnx_file(kAcas + "ACASXU_run2a_" + net + "_batch_2000.onnx");
  EXPECT_TRUE(m.ok()) << m.message();
  auto p = load_vnnlib_file(kAcas + prop);
  EXPECT_TRUE(p.ok()) << p.message();
  return {std::move(*m), std::move(*p)};
}

// Takes the bottom box of the stack after every `every`-th batch (when the stack has two or more; at
// most `most` boxes), and searches it at once with verify_subdomain, as another process would.
class SearchElsewhere final : public FrontierHook {
 public:
  SearchElsewhere(const Instance& in, const VerifyOptions& o, int every, int most)
      : in_(in), o_(o), every_(every), most_(most) {}
  int taken = 0;
  int64_t remote_domains = 0;

  FrontierNews between_batches(int job, FrontierStack& stack, Deadline) override {
    FrontierNews n;
    if (++calls_ % every_ != 0 || stack.size() < 2 || taken >= most_) return n;
    const FrontierBox b = stack.take_bottom();
    ++taken;
    VerifyOptions o = o_;
    o.frontier = nullptr;
    auto r = verify_subdomain(in_.model, in_.prop, job, b, o);
    EXPECT_TRUE(r.ok()) << r.message();
    if (!r.ok()) return n.undecided = true, n;
    n.domains = r->stats.domains;
    remote_domains += r->stats.domains;
    if (r->result == VerifyResult::Sat) n.candidates.push_back(r->witness->x);
    if (r->result != VerifyResult::Sat && r->result != VerifyResult::Unsat) n.undecided = true;
    return n;
  }
  FrontierNews when_empty(int, FrontierStack&, Deadline) override { return {}; }
  void finish(int) override { ++finished; }
  int finished = 0;

 private:
  const Instance& in_;
  VerifyOptions o_;
  int every_, most_;
  int calls_ = 0;
};

VerifyOptions options() {
  VerifyOptions o;
  o.timeout_s = 60;
  return o;
}

// Unsat (1_2 property 4) with a box taken after every third batch; sat (1_3 property 2, found by a
// probe after 267 boxes alone; 3_2 property 2 served until its search took 18 s with the
// two-candidate split) with one box taken after the first batch (searched to the end synchronously
// here, where another rank would be stopped by the sat).
TEST(Frontier, AHookThatSearchesBoxesElsewhereGivesTheSameAnswer) {
  for (const auto& [net, prop, every] : {std::tuple{"1_2", "prop_4.vnnlib", 3}, std::tuple{"1_3", "prop_2.vnnlib", 1}}) {
    SCOPED_TRACE(std::string(net) + " " + prop);
    const Instance in = load(net, prop);
    auto alone = verify(in.model, in.prop, options());
    ASSERT_TRUE(alone.ok()) << alone.message();
    ASSERT_GT(alone->stats.domains, 8) << "the instance needs branch and bound";
    SearchElsewhere hook(in, options(), every, every == 1 ? 1 : 1000);
    VerifyOptions o = options();
    o.frontier = &hook;
    auto shared = verify(in.model, in.prop, o);
    ASSERT_TRUE(shared.ok()) << shared.message();
    EXPECT_EQ(shared->result, alone->result);
    EXPECT_GT(hook.taken, 0);
    EXPECT_GE(hook.finished, 1);
    // The domains bounded elsewhere are counted in the stats.
    EXPECT_GE(shared->stats.domains, hook.remote_domains);
    if (shared->result == VerifyResult::Sat) {
      ASSERT_TRUE(shared->witness.has_value());
      bool ok = false;
      for (const VnnCase& c : in.prop.cases)
        for (const auto& conj : c.output) {
          const WitnessCheck w = check_witness(in.model, c, conj, shared->witness->x, ArithSpec::f32());
          ok = ok || (w.in_box && w.holds_arith && w.holds_exact);
        }
      EXPECT_TRUE(ok) << "the witness does not re-check";
    }
  }
}

TEST(Frontier, TheHalvesOfACaseBoxDecideLikeTheWholeBox) {
  const Instance in = load("1_2", "prop_4.vnnlib");
  ASSERT_EQ(frontier_jobs(in.prop), 1);
  auto whole = verify(in.model, in.prop, options());
  ASSERT_TRUE(whole.ok()) << whole.message();
  ASSERT_EQ(whole->result, VerifyResult::Unsat);
  const VnnCase& c = in.prop.cases[0];
  FrontierBox lo{c.lo_out, c.hi_out}, hi{c.lo_out, c.hi_out};
  const double mid = c.lo_out[0] + (c.hi_out[0] - c.lo_out[0]) / 2;
  lo.hi[0] = mid;
  hi.lo[0] = mid;
  for (const FrontierBox& b : {lo, hi}) {
    auto r = verify_subdomain(in.model, in.prop, 0, b, options());
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r->result, VerifyResult::Unsat);
    EXPECT_GE(r->stats.domains, 1);
  }
}

TEST(Frontier, BadJobsAndBoxesAreErrors) {
  const Instance in = load("1_2", "prop_4.vnnlib");
  const VnnCase& c = in.prop.cases[0];
  const FrontierBox whole{c.lo_out, c.hi_out};
  auto job = verify_subdomain(in.model, in.prop, 5, whole, options());
  ASSERT_FALSE(job.ok());
  EXPECT_NE(job.message().find("verify: job 5: the property has 1 jobs"), std::string::npos) << job.message();
  FrontierBox outside = whole;
  outside.hi[1] = c.hi_out[1] + 1;
  auto out = verify_subdomain(in.model, in.prop, 0, outside, options());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("subdomain input 1:"), std::string::npos) << out.message();
  FrontierBox short_box{{0.0}, {0.0}};
  auto size = verify_subdomain(in.model, in.prop, 0, short_box, options());
  ASSERT_FALSE(size.ok());
  EXPECT_NE(size.message().find("the case has 5 inputs"), std::string::npos) << size.message();
}

}  // namespace
}  // namespace denote
