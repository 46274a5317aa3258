// The long soundness run of interval bound propagation: 20,000 random graphs with wider boxes,
// every box point-checked against MPFR (200 bits), f64, f32 and bfloat16 evaluations; more than
// 10^7 point checks (DENOTE_LONG_SCALE=N multiplies the graph count). The default suite runs the
// same check on 400 graphs (tests/unit/ibp_random_test.cc).
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "unit/ibp_random_graphs.h"

namespace denote {
namespace {

TEST(IbpLong, TwentyThousandRandomGraphsContainEveryEvaluatedPoint) {
  const char* scale_env = std::getenv("DENOTE_LONG_SCALE");
  const int scale = scale_env ? std::max(1, std::atoi(scale_env)) : 1;
  ibp_test::RandomGraphStats st;
  ibp_test::check_random_graphs(20261201, 20000 * scale, /*wide=*/true, st);
  if (HasFatalFailure()) return;
  EXPECT_GT(st.checks, 10000000);
  EXPECT_LT(st.skipped, 2500 * scale);
  std::cout << "[ibp-long] " << st.checks << " point checks, " << st.skipped << " points skipped (no exact value), "
            << st.none << " of " << st.nodes << " node boxes absent\n";
}

}  // namespace
}  // namespace denote
