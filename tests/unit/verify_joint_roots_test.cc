// verify's stage 2 on a case with several conjunctions (src/verify/bounder.cc, bound_roots): one CROWN pass
// on their stacked rows gives each conjunction the lower bounds its own pass gives (the intermediate
// bounds do not depend on the rows), and the same verdicts. mnistfc 256x2, prop_0_0.03's box, nine
// conjunctions "y_j >= y_7" (a robustness property) plus two of two atoms each.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "denote/io/onnx.h"
#include "denote/verify/vnnlib.h"
#include "verify/bounder.h"

namespace denote {
namespace {

using verify_detail::Bounded;
using verify_detail::Bounder;
using verify_detail::Decision;
using verify_detail::Domain;

TEST(VerifyJointRoots, StackedRowsGiveEachConjunctionItsOwnBounds) {
  const std::string dir = std::string(DENOTE_SOURCE_DIR) + "/tests/data/mnistfc/";
  auto m = load_model_onnx_file(dir + "mnist-net_256x2.onnx");
  ASSERT_TRUE(m.ok()) << m.message();
  auto p = load_vnnlib_file(dir + "prop_0_0.03.vnnlib");
  ASSERT_TRUE(p.ok()) << p.message();
  ASSERT_EQ(p->cases.size(), 1u);
  VnnCase c = p->cases[0];
  // Two more conjunctions of two atoms each (an atom holds where coef . y <= rhs).
  auto atom = [](int64_t a, int64_t b, double rhs) {
    VnnAtom t;
    t.coef.assign(10, 0.0);
    t.coef[static_cast<size_t>(a)] = 1, t.coef[static_cast<size_t>(b)] = -1;
    t.rhs_down = t.rhs_up = rhs;
    return t;
  };
  c.output.push_back({atom(3, 7, 0), atom(5, 7, 0)});
  c.output.push_back({atom(7, 1, 20), atom(2, 7, -1)});
  VerifyOptions o;
  o.arith = ArithSpec::f32();
  std::vector<Bounder> bounders;
  std::vector<const VnnCase*> cases;
  for (const auto& conj : c.output) {
    bounders.push_back(Bounder{*m, conj, verify_detail::spec_of(conj, 10), o, verify_detail::atom_rhs(conj)});
    cases.push_back(&c);
  }
  verify_detail::WorkerPool pool(1);
  VerifyStats st;
  const auto deadline = verify_detail::Clock::now() + std::chrono::seconds(600);
  const std::vector<Bounded> roots = verify_detail::bound_roots(cases, bounders, pool, deadline, o, st);
  ASSERT_EQ(roots.size(), c.output.size());
  EXPECT_EQ(st.crown_calls, 1);  // one pass for the case's eleven conjunctions
  int proven = 0;
  for (size_t i = 0; i < roots.size(); ++i) {
    const Domain whole{c.lo_out, c.hi_out, nullptr};
    const Bounded own = bounders[i].bound(whole, BoundMethod::Crown);
    ASSERT_NE(own.dec, Decision::Error) << "conjunction " << i;
    ASSERT_NE(roots[i].dec, Decision::Error) << "conjunction " << i;
    EXPECT_EQ(roots[i].dec, own.dec) << "conjunction " << i;
    EXPECT_EQ(roots[i].combined, own.combined) << "conjunction " << i;
    ASSERT_EQ(roots[i].spec_lo.size(), own.spec_lo.size());
    for (size_t k = 0; k < own.spec_lo.size(); ++k)
      EXPECT_NEAR(roots[i].spec_lo[k], own.spec_lo[k], 1e-9 * (1 + std::fabs(own.spec_lo[k])))
          << "conjunction " << i << " row " << k;
    if (own.dec == Decision::Open) {
      ASSERT_EQ(roots[i].coef.size(), own.coef.size()) << "conjunction " << i;
      for (size_t k = 0; k < own.coef.size(); ++k)
        ASSERT_NEAR(roots[i].coef[k], own.coef[k], 1e-9 * (1 + std::fabs(own.coef[k]))) << i;
      EXPECT_TRUE(roots[i].boxes);
    }
    proven += roots[i].dec == Decision::Proven;
  }
  EXPECT_GT(proven, 0);  // the nine robustness rows: CROWN proves some on prop_0_0.03
  EXPECT_LT(proven, static_cast<int>(roots.size()));
}

}  // namespace
}  // namespace denote
