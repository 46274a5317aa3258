// VNN-LIB 2.0 (src/verify/vnnlib_v2.cc; the standard's grammar: github.com/VNNLIB/VNNLIB-Standard,
// grammar.cf): the version line, one network's input and output tensors, indexed variables, n-ary
// arithmetic and == / !=. Each 2.0 property reads to the same normal form as the 1.0 file written by hand;
// every refusal names line:column and what was expected.
#include <gtest/gtest.h>

#include <random>
#include <regex>
#include <string>

#include "denote/verify/vnnlib.h"
#include "unit/cli_run.h"

namespace denote {
namespace {

void expect_same(const VnnProperty& a, const VnnProperty& b) {
  ASSERT_EQ(a.num_inputs, b.num_inputs);
  ASSERT_EQ(a.num_outputs, b.num_outputs);
  ASSERT_EQ(a.cases.size(), b.cases.size());
  for (size_t c = 0; c < a.cases.size(); ++c) {
    const VnnCase &x = a.cases[c], &y = b.cases[c];
    EXPECT_EQ(x.lo_out, y.lo_out);
    EXPECT_EQ(x.hi_out, y.hi_out);
    EXPECT_EQ(x.lo_in, y.lo_in);
    EXPECT_EQ(x.hi_in, y.hi_in);
    EXPECT_EQ(x.lo_strict, y.lo_strict);
    EXPECT_EQ(x.hi_strict, y.hi_strict);
    ASSERT_EQ(x.output.size(), y.output.size());
    for (size_t d = 0; d < x.output.size(); ++d) {
      ASSERT_EQ(x.output[d].size(), y.output[d].size());
      for (size_t k = 0; k < x.output[d].size(); ++k) {
        EXPECT_EQ(x.output[d][k].coef, y.output[d][k].coef);
        EXPECT_EQ(x.output[d][k].rhs_down, y.output[d][k].rhs_down);
        EXPECT_EQ(x.output[d][k].rhs_up, y.output[d][k].rhs_up);
        EXPECT_EQ(x.output[d][k].strict, y.output[d][k].strict);
      }
    }
  }
}

TEST(VnnlibV2, TensorsReadAsTheOneZeroVariables) {
  // A [2, 2] input (row-major: X[1, 0] is X_2) and a [3] output; the standard's example forms.
  const std::string v2 = R"((vnnlib-version <2.0>)
; comments as in 1.0
(declare-network acc
  (declare-input X float32 [2, 2] "input_0")
  (declare-output Y Real [3]))
(assert (>= X[0, 0] -1.0))
(assert (<= X[0,0] 1.0))
(assert (and (>= X[0, 1] 0) (<= X[0, 1] 0.5) (>= X[1, 0] -0.5) (<= X[1, 0] 0.5)))
(assert (<= (* -1.0 X[1, 1]) 0.25))
(assert (<= X[1, 1] 0.25))
(assert (or (<= Y[0] Y[1]) (and (<= (+ Y[2] (* 2 Y[0])) 3) (> (- Y[1] Y[2] 1.5) 0))))
)";
  const std::string v1 = R"((declare-const X_0 Real) (declare-const X_1 Real) (declare-const X_2 Real)
(declare-const X_3 Real) (declare-const Y_0 Real) (declare-const Y_1 Real) (declare-const Y_2 Real)
(assert (>= X_0 -1.0))
(assert (<= X_0 1.0))
(assert (and (>= X_1 0) (<= X_1 0.5) (>= X_2 -0.5) (<= X_2 0.5)))
(assert (<= (* -1.0 X_3) 0.25))
(assert (<= X_3 0.25))
(assert (or (<= Y_0 Y_1) (and (<= (+ Y_2 (* 2 Y_0)) 3) (> (- Y_1 Y_2 1.5) 0))))
)";
  auto a = parse_vnnlib(v2, "v2.vnnlib");
  auto b = parse_vnnlib(v1, "v1.vnnlib");
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ(a->num_inputs, 4);
  EXPECT_EQ(a->num_outputs, 3);
  expect_same(*a, *b);
}

TEST(VnnlibV2, ScalarTensorsAndEqualities) {
  // A scalar output (shape []) named without indices; == is two bounds, != two strict alternatives.
  auto a = parse_vnnlib(R"((vnnlib-version <2.1>)
(declare-network n (declare-input X Real [2]) (declare-output Y Real []))
(assert (== X[0] 0.5))
(assert (>= X[1] 0) ) (assert (<= X[1] 1))
(assert (!= Y 3))
)");
  auto b = parse_vnnlib(R"((declare-const X_0 Real) (declare-const X_1 Real) (declare-const Y_0 Real)
(assert (<= X_0 0.5)) (assert (>= X_0 0.5))
(assert (>= X_1 0)) (assert (<= X_1 1))
(assert (or (< Y_0 3) (> Y_0 3)))
)");
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  expect_same(*a, *b);
}

TEST(VnnlibV2, TheCliDecidesATwoZeroProperty) {
  // VNN-COMP 2021's test_nano (unsat, as published) with its property in 2.0 form: the same answer.
  const std::string data = std::string(DENOTE_SOURCE_DIR) + "/tests/data/";
  const testing::CliRun r = testing::run_cli("verify " + data + "vnncomp2021_test/test_nano.onnx " + data + "vnnlib2/test_nano_v2.vnnlib");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out.substr(0, 6), "unsat\n") << r.out;
}

TEST(VnnlibV2, RefusalsNameTheLineAndWhatWasExpected) {
  const std::string net = "(declare-network n (declare-input X Real [2, 3]) (declare-output Y Real [2]))\n";
  struct Case {
    std::string text, want;
  };
  const Case cases[] = {
      {"(vnnlib-version <3.0>)\n", "f:1:17: VNN-LIB version <3.0>; expected <2.x>"},
      {"(vnnlib-version 2.0)\n", "f:1:17: version '2.0'; expected <major.minor>"},
      {"(declare-const X_0 Real)\n(vnnlib-version <2.0>)\n", "f:2:2: (vnnlib-version ...) after another command"},
      {"(declare-network n (declare-input X Real [1]) (declare-output Y Real [1]))\n",
       "(declare-network ...) without a version line"},
      {"(vnnlib-version <2.0>)\n" + net + net, "f:3:1: a second (declare-network ...)"},
      {"(vnnlib-version <2.0>)\n(declare-network n (declare-input X Real [1]) (declare-hidden H Real [1] \"h\"))\n",
       "(declare-hidden ...) in network n"},
      {"(vnnlib-version <2.0>)\n(declare-network n (declare-input X Real [1]))\n",
       "network n declares 1 input and 0 output tensors"},
      {"(vnnlib-version <2.0>)\n(declare-network n (declare-input X Real [0]) (declare-output Y Real [1]))\n",
       "dimension '0'; expected a positive integer"},
      {"(vnnlib-version <2.0>)\n" + net + "(assert (<= X[2, 0] 1))\n", "f:3:15: index '2' of X (shape [2, 3])"},
      {"(vnnlib-version <2.0>)\n" + net + "(assert (<= X[1] 1))\n", "1 of 2 indices for X"},
      {"(vnnlib-version <2.0>)\n" + net + "(assert (<= X 1))\n", "X without indices; expected one index per dimension"},
      {"(vnnlib-version <2.0>)\n" + net + "(assert (<= Z[0] 1))\n", "f:3:13: unknown symbol 'Z'"},
      {"(vnnlib-version <2.0>)\n(declare-const X_0 Real)\n", "(declare-const ...) in a VNN-LIB 2.0 file"},
      {"(vnnlib-version <2.0>)\n(declare-network n (declare-input X Real [1] \"x)\n", "unterminated string"},
  };
  for (const Case& c : cases) {
    auto r = parse_vnnlib(c.text, "f");
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_NE(r.message().find(c.want), std::string::npos) << c.text << "\n" << r.message();
  }
  // 1.0 files are read as before: '[' is not a token there.
  auto v1 = parse_vnnlib("(declare-const X_0 Real)\n(assert (<= X_0[0] 1))\n", "f");
  ASSERT_FALSE(v1.ok());
  EXPECT_NE(v1.message().find("unexpected character '['"), std::string::npos) << v1.message();
}

TEST(VnnlibV2, MutatedFilesGiveValuesOrLocatedErrors) {
  // Random edits of a 2.0 file (brackets, commas, strings and the version line included): every result is a
  // normal form with consistent sizes, or an error naming file:line:column and what was expected.
  const std::string base = R"((vnnlib-version <2.0>)
(declare-network acc (declare-input X float32 [2, 2] "in") (declare-output Y Real [3]))
(assert (and (>= X[0, 0] -1.0) (<= X[0, 0] 1.0) (>= X[0, 1] 0) (<= X[0, 1] 0.5)))
(assert (and (>= X[1, 0] -0.5) (<= X[1, 0] 0.5) (== X[1, 1] 0.25)))
(assert (or (<= Y[0] Y[1]) (!= (+ Y[2] (* 2 Y[0])) 3) (< (- Y[1]) -1.5)))
)";
  ASSERT_TRUE(parse_vnnlib(base, "t.vnnlib").ok());
  const std::regex format(R"(t\.vnnlib:[0-9]+:[0-9]+: .+; expected .+)");
  const std::string alphabet = "()[],\"XY0123456789.-+*<=>!; \n<2.0>andor";
  std::mt19937 rng(17);
  int ok = 0;
  for (int n = 0; n < 3000; ++n) {
    std::string s = base;
    for (int k = 0, edits = 1 + static_cast<int>(rng() % 4); k < edits; ++k) {
      const size_t at = rng() % s.size();
      switch (rng() % 3) {
        case 0: s[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: s.erase(at, 1 + rng() % 6); break;
        default: s.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    auto r = parse_vnnlib(s, "t.vnnlib");
    if (!r.ok()) {
      EXPECT_TRUE(std::regex_match(r.message(), format)) << r.message();
      continue;
    }
    ++ok;
    for (const VnnCase& c : r->cases) {
      ASSERT_EQ(static_cast<int64_t>(c.lo_out.size()), r->num_inputs);
      for (size_t i = 0; i < c.lo_out.size(); ++i) EXPECT_LE(c.lo_out[i], c.hi_out[i]) << s;
      for (const auto& conj : c.output)
        for (const VnnAtom& atom : conj) EXPECT_EQ(static_cast<int64_t>(atom.coef.size()), r->num_outputs) << s;
    }
  }
  EXPECT_GT(ok, 30);  // edits inside numbers and whitespace keep some files valid (89 of 3000 with seed 17)
}

}  // namespace
}  // namespace denote
